"""Export cases generated from the gradient table's specs (tests/gradspecs): every
translated operator with a spec row is exported as the spec calls it, at the spec's shapes
and sampling domains and in its dtype (float64), run in onnxruntime and compared with
``mx.nd``. A call the exporter refuses must refuse for a reason listed in ``REFUSED``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from gradspecs import all_specs
from mxlite.onnx import translations  # noqa: F401  (fills TRANSLATIONS)
from mxlite.onnx.table import TRANSLATIONS

SPECS = all_specs()


def _inputs(spec, rng):
    """The spec's inputs in float64, the gradient table's dtype."""
    if spec.sample is not None:
        return [np.asarray(a, np.float64) for a in spec.sample(rng)]
    return [rng.uniform(*spec.domain(i), size=s) for i, s in enumerate(spec.shapes)]


def _symbolic_call(spec, names):
    """The spec's call with ``F = mx.sym``, or None where it uses NDArray-only API."""
    try:
        out = spec.call(mx.sym, *[mx.sym.var(n) for n in names])
    except (AttributeError, TypeError, mx.MXNetError):
        return None
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    if not isinstance(out, mx.sym.Symbol):
        return None
    try:        # a call written for NDArrays only (symbol arithmetic does not broadcast)
        out.infer_shape(**{n: s for n, s in zip(names, spec.shapes)})
    except mx.MXNetError:
        return None
    return out


def _rows():
    rows = []
    for name in sorted(SPECS):
        spec = SPECS[name]
        names = [f"in{i}" for i in range(len(spec.shapes))]
        sym = _symbolic_call(spec, names)
        if sym is None:
            continue
        from mxlite.symbol.graph import topo_order
        ops = {n.op.name for n in topo_order(sym._outputs) if n.op is not None}
        if name in ops and ops <= set(TRANSLATIONS):
            rows.append(name)
    return rows


ROWS = _rows()
#: rows whose call asks for something the translation refuses, and the words of the refusal
REFUSED = {"Dropout": "mode='always'"}


def test_the_generated_rows_cover_the_translated_operators_with_specs():
    assert len(ROWS) >= 60, ROWS


@pytest.mark.parametrize("name", ROWS)
def test_gradient_spec_call_exports_and_runs(name, tmp_path):
    _export_and_compare(name, tmp_path)


def _least_opset(sym):
    """The least opset the translations of ``sym``'s operators declare they need."""
    from mxlite.symbol.graph import topo_order
    return max(TRANSLATIONS[n.op.name].opset for n in topo_order(sym._outputs)
               if n.op is not None)


@pytest.mark.parametrize("name", ROWS)
def test_gradient_spec_call_exports_at_the_least_opset_it_declares(name, tmp_path):
    """A translation's ``opset`` is the least it is valid at: the model written there passes
    the full check (attributes and inputs of that opset's operator versions) and runs."""
    names = [f"in{i}" for i in range(len(SPECS[name].shapes))]
    _export_and_compare(name, tmp_path, opset_version=_least_opset(_symbolic_call(
        SPECS[name], names)))


def _export_and_compare(name, tmp_path, **kwargs):
    spec = SPECS[name]
    rng = np.random.default_rng(11)
    inputs = _inputs(spec, rng)
    names = [f"in{i}" for i in range(len(inputs))]
    sym = _symbolic_call(spec, names)
    expected = spec.call(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    aux = set(sym.list_auxiliary_states())
    params = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs)
             if n not in aux and n in sym.list_arguments()}
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    if name in REFUSED:
        with pytest.raises(mx.MXNetError, match=REFUSED[name]):
            export_and_run(sym, params, feeds, tmp_path, **kwargs)
        return
    try:
        got = export_and_run(sym, params, feeds, tmp_path, **kwargs)
    except OrtMissing as e:
        pytest.xfail(f"onnxruntime's CPU provider has no float64 kernel: {str(e)[:120]}")
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
