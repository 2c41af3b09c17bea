"""Shared helpers of the ONNX tests: export a graph, run it in onnxruntime (CPU). A module
of its own name (not a conftest), so a test importing it at run time gets this one."""
import numpy as np
import pytest

import mxlite as mx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def run_onnx(path, feeds):
    """Check the model (full check) and run it in onnxruntime's CPU provider."""
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def export_and_run(sym, params, feeds, tmp_path, **kwargs):
    """Export ``sym`` (data inputs in ``feeds`` order; a loss layer's label, which the
    exported graph does not read, is dropped) and run it: the ONNX outputs."""
    from mxlite.onnx.export import _unread_variables
    path = str(tmp_path / "model.onnx")
    graph = sym._cached_graph[1] if isinstance(sym, mx.gluon.HybridBlock) else sym
    unread = _unread_variables(graph)
    feeds = {n: v for n, v in feeds.items() if n not in unread}
    names = list(feeds)
    mx.onnx.export_model(sym, params, in_shapes=[feeds[n].shape for n in names],
                         in_types=[feeds[n].dtype for n in names], onnx_file_path=path,
                         **kwargs)
    return run_onnx(path, {n: np.asarray(v) for n, v in feeds.items()})
