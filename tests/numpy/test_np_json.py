"""Models MXNet 1.9.1 exported under ``npx.set_np()`` (its ``_np_*``/``_npi_*``/``_npx_*``
operator names; tests/fixtures/make_np_models_fixture.py) load in mxlite and compute MXNet's
outputs: values, shapes and dtypes."""
import json
import pathlib

import numpy as onp
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.symbol.numpy.json_names import TRANSLATED

FIXTURES = pathlib.Path(__file__).parent.parent / "fixtures"
CASES = json.loads((FIXTURES / "np_models_mxnet.json").read_text())
ARRAYS = onp.load(FIXTURES / "np_models_mxnet.npz")


@pytest.fixture
def np_mode():
    mx.npx.set_np()
    yield
    mx.npx.reset_np()


def _run(symbol_json, *inputs):
    sym = mx.sym.load_json(symbol_json)
    names = [v for v in sym.list_inputs() if v.startswith("data")]
    block = mx.gluon.SymbolBlock(sym, [mx.sym.var(n) for n in names])
    outs = block(*[inputs[int(n[4:])] for n in names])
    return outs if isinstance(outs, (list, tuple)) else [outs]


# the product, reduce and shape cases hold functions whose graph form needs the input's rank
# or dtype (np.dot, np.std, np.moveaxis), which a file's bare variables do not give: they
# load as deferred calls (mxlite.symbol._deferred), made when the block first runs
@pytest.mark.parametrize("case", sorted(CASES), ids=str)
def test_exported_np_case_computes_mxnets_outputs(case, np_mode):
    x, y = (mx.np.array(ARRAYS[f"{case}:{k}"]) for k in "xy")
    outs = _run(CASES[case]["symbol"], x, y)
    assert len(outs) == CASES[case]["outputs"]
    for i, out in enumerate(outs):
        ref = ARRAYS[f"{case}:out{i}"]
        assert isinstance(out, mx.np.ndarray)
        assert out.shape == ref.shape, (case, i)
        assert out.dtype == ref.dtype, (case, i)
        onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5,
                                    err_msg=f"{case} output {i}")


def test_every_np_operator_mxnet_exported_has_a_translation():
    used = {node["op"] for case in CASES.values()
            for node in json.loads(case["symbol"])["nodes"]}
    np_ops = {op for op in used if op.startswith(("_np_", "_npi_", "_npx_"))}
    assert len(np_ops) > 60
    assert not np_ops - set(TRANSLATED) - set(mx.ops.registry.REGISTRY)


def test_an_unknown_np_operator_is_a_clear_error(np_mode):
    text = json.dumps({"nodes": [{"op": "null", "name": "data", "inputs": []},
                                 {"op": "_npi_frobnicate", "name": "f", "inputs": [[0, 0, 0]]}],
                       "arg_nodes": [0], "heads": [[1, 0, 0]]})
    with pytest.raises(MXNetError, match="_npi_frobnicate"):
        mx.sym.load_json(text)


def test_a_bad_attribute_of_an_np_operator_is_a_clear_error(np_mode):
    text = json.dumps({"nodes": [{"op": "null", "name": "data", "inputs": []},
                                 {"op": "_np_reshape", "name": "r", "inputs": [[0, 0, 0]],
                                  "attrs": {"newshape": "(2, -1, -1)"}}],
                       "arg_nodes": [0], "heads": [[1, 0, 0]]})
    with pytest.raises(MXNetError, match="_np_reshape"):
        mx.sym.load_json(text)


def test_mxnets_np_network_with_parameters_loads(np_mode):
    """A Conv2D/BatchNorm/Dense network with npx/np calls, exported by MXNet 1.9.1 with its
    parameters, loads through SymbolBlock.imports and gives MXNet's outputs."""
    io = onp.load(FIXTURES / "np_net-io.npz")
    block = mx.gluon.SymbolBlock.imports(str(FIXTURES / "np_net-symbol.json"),
                                         ["data0", "data1"],
                                         str(FIXTURES / "np_net-0000.params"))
    outs = block(mx.np.array(io["x"]), mx.np.array(io["y"]))
    for i, out in enumerate(outs):
        assert isinstance(out, mx.np.ndarray)
        onp.testing.assert_allclose(out.asnumpy(), io[f"out{i}"], rtol=1e-4, atol=1e-5)
