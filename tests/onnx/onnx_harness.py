"""Shared helpers of the ONNX tests: export a graph, run it in onnxruntime (CPU). A module
of its own name (not a conftest), so a test importing it at run time gets this one."""
import contextlib
import functools

import numpy as np
import pytest

import mxlite as mx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


#: set by ``through_import``: run_onnx runs the model by mxlite's import, not onnxruntime
_THROUGH_IMPORT = [False]


@contextlib.contextmanager
def through_import():
    """Within: ``run_onnx`` (so ``check``, ``export_and_run``, ``export_eval``) gives the
    outputs of the model imported by mxlite: an export test's own checks then judge
    mx -> ONNX -> mx."""
    _THROUGH_IMPORT[0] = True
    try:
        yield
    finally:
        _THROUGH_IMPORT[0] = False


def via_import(test):
    """The test function ``test`` (its parametrization kept) run ``through_import``."""
    @functools.wraps(test)
    def wrapped(*args, **kwargs):
        with through_import():
            return test(*args, **kwargs)
    return wrapped


def run_onnx(path, feeds):
    """Check the model (full check) and run it in onnxruntime's CPU provider (by mxlite's
    import ``through_import``)."""
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    if _THROUGH_IMPORT[0]:
        return imported_values(path, feeds)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def imported(path):
    """The model at ``path`` imported by mxlite: a function of feeds ({name: array}) giving
    its outputs (NumPy arrays), evaluated with the imported parameters."""
    sym, args, aux = mx.contrib.onnx.import_model(path)
    bound = {}                  # the executor, bound at the first feeds' shapes

    def run(feeds):
        shapes = {k: np.shape(v) for k, v in feeds.items()}
        if bound.get("shapes") != shapes:
            arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}
            bound["exe"] = sym.bind(mx.cpu(), args={
                **{k: v for k, v in arrays.items() if k in sym.list_arguments()}, **args},
                aux_states=aux)
            bound["shapes"] = shapes
        exe = bound["exe"]
        for k, v in feeds.items():
            if k in exe.arg_dict:
                exe.arg_dict[k][:] = mx.nd.array(v, dtype=v.dtype)
        return [o.asnumpy() for o in exe.forward()]
    return run


def imported_values(path, feeds):
    """The model at ``path`` imported by mxlite and evaluated on ``feeds``: its outputs."""
    return imported(path)(feeds)


def session(path):
    """A function of feeds giving the model's outputs, made once to run many times (random
    operators draw anew each run): an onnxruntime session, or ``through_import`` the model
    imported by mxlite."""
    if _THROUGH_IMPORT[0]:
        return imported(path)
    runtime = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return lambda feeds: runtime.run(None, feeds)


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


def check(fn, inputs, rtol, tmp_path, atol=None, atol_ratio=0.1, **export):
    """``fn`` built with mx.sym, exported (``export``: export_model's options) and run,
    against ``fn`` with mx.nd: shapes and dtypes equal, values within ``rtol`` (and
    ``atol``, by default ``rtol * atol_ratio``). Returns the ONNX outputs."""
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = export_and_run(out, {}, dict(zip(names, inputs)), tmp_path, **export)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol,
                                   atol=rtol * atol_ratio if atol is None else atol)
    return got


def export_eval(sym, feeds, tmp_path, opset_version=21):
    """Export ``sym`` (default opset 21: onnxruntime's random kernels), check it and run it
    once: its outputs, whose shapes and dtypes must be mxlite's (random draws differ, so
    the values are the caller's to judge)."""
    path = str(tmp_path / "m.onnx")
    names = list(feeds)
    mx.onnx.export_model(sym, {}, in_shapes=[feeds[n].shape for n in names],
                         in_types=[feeds[n].dtype for n in names], onnx_file_path=path,
                         opset_version=opset_version)
    got = run_onnx(path, feeds)
    expected = sym.eval(**{n: mx.nd.array(v, dtype=v.dtype) for n, v in feeds.items()})
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
    return got
