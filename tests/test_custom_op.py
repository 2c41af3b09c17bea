"""Operators written in Python: mx.operator.CustomOp / CustomOpProp / register and the one
registry record ``Custom`` (mxlite/ops/custom.py), through mx.nd, autograd (to third order),
mx.sym, executors and symbol JSON. Expected values are NumPy closed forms."""
import json

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError

X = np.array([[0.5, -1.5, 2.0], [1.0, -0.25, 3.0]])


# ---- operators used below --------------------------------------------------------------------
# the cube of the gradient table (tests/gradspecs/custom.py), registered as "gradspec_cube"
import gradspecs.custom  # noqa: E402,F401


class _SumDiff(mx.operator.CustomOp):
    """Two inputs, two outputs (a + b, a - b) and an auxiliary counter the forward bumps;
    the forward keeps a note on self that the backward reads (one instance per call)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        a, b = in_data
        self.assign(out_data[0], req[0], a + b)
        self.assign(out_data[1], req[1], a - b)
        aux[0][:] += 1
        self.note = float(is_train)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        gs, gd = out_grad
        scale = 1.0 + self.note          # 2 after a training forward
        self.assign(in_grad[0], req[0], (gs + gd) * scale)
        self.assign(in_grad[1], req[1], (gs - gd) * scale)


@mx.operator.register("test_sum_diff")
class _SumDiffProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["sum", "diff"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [[1]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _SumDiff()


class _Fill(mx.operator.CustomOp):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], np.full(out_data[0].shape, self.value))


@mx.operator.register("test_fill")
class _FillProp(mx.operator.CustomOpProp):
    seen = []

    def __init__(self, rows, value="1.5"):
        super().__init__()
        _FillProp.seen.append((rows, value))
        self.rows, self.value = int(rows), float(value)

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [(self.rows, 2)], []

    def infer_type(self, in_type):
        return [], [np.float64], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Fill(self.value)


# ---- mx.nd and autograd ----------------------------------------------------------------------
def _var(a, device=None):
    x = mx.nd.array(a, dtype="float64", ctx=device)
    x.attach_grad()
    return x


def test_forward_backward_and_third_order_through_a_custom_op(device):
    x = _var(X, device)
    with autograd.record():
        y = mx.nd.Custom(x, op_type="gradspec_cube")
        (d1,) = autograd.grad(y, x, create_graph=True)
        (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    assert y.context == device
    np.testing.assert_allclose(y.asnumpy(), X ** 3)
    np.testing.assert_allclose(d1.asnumpy(), 3 * X ** 2)
    np.testing.assert_allclose(d2.asnumpy(), 6 * X)
    np.testing.assert_allclose(d3.asnumpy(), np.full(X.shape, 6.0))


def test_two_inputs_two_outputs_aux_state_and_operator_state():
    a, b = _var(X), _var(2 * X)
    count = mx.nd.zeros((1,), dtype="float64")
    with autograd.record():
        s, d = mx.nd.Custom(a, b, count, op_type="test_sum_diff")
    np.testing.assert_allclose(s.asnumpy(), 3 * X)
    np.testing.assert_allclose(d.asnumpy(), -X)
    assert count.asnumpy()[0] == 1.0           # the forward updated its auxiliary state
    gs, gd = np.ones(X.shape), np.full(X.shape, 0.5)
    autograd.backward([s, d], [mx.nd.array(gs, dtype="float64"),
                               mx.nd.array(gd, dtype="float64")])
    # the backward read the note its own forward left (training: scale 2)
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * (gs + gd))
    np.testing.assert_allclose(b.grad.asnumpy(), 2 * (gs - gd))


def test_keyword_inputs_and_parameters_as_strings():
    a, b = mx.nd.array(X), mx.nd.array(X)
    s, _ = mx.nd.Custom(b=b, a=a, count=mx.nd.zeros((1,)), op_type="test_sum_diff")
    np.testing.assert_allclose(s.asnumpy(), 2 * X, rtol=1e-6)
    _FillProp.seen.clear()
    y = mx.nd.Custom(rows=3, value=2.5, op_type="test_fill")
    assert ("3", "2.5") in _FillProp.seen      # MXNet hands every keyword over as a string
    assert y.dtype == np.float64 and y.shape == (3, 2)
    np.testing.assert_array_equal(y.asnumpy(), np.full((3, 2), 2.5))


@pytest.mark.parametrize("call, message", [
    (lambda: mx.nd.Custom(mx.nd.ones(2), op_type="test_unregistered"), "not registered"),
    (lambda: mx.nd.Custom(mx.nd.ones(2)), "op_type"),
    (lambda: mx.nd.Custom(op_type="test_fill"), "constructor"),          # rows missing
    (lambda: mx.nd.Custom(mx.nd.ones(2), mx.nd.ones(2), op_type="gradspec_cube"), "input"),
    (lambda: mx.nd.Custom(mx.nd.ones(2), nope=mx.nd.ones(2), op_type="gradspec_cube"), "nope"),
])
def test_bad_calls_raise_mxnet_errors_naming_custom(call, message):
    with pytest.raises(MXNetError, match="Custom") as err:
        call()
    assert message in str(err.value)


def test_errors_in_user_code_are_mxnet_errors():
    class Broken(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise ZeroDivisionError("boom")

    @mx.operator.register("test_broken")
    class BrokenProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]]         # 2 lists: no auxiliary states

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Broken()

    with pytest.raises(MXNetError, match="test_broken.*forward.*ZeroDivisionError: boom"):
        mx.nd.Custom(mx.nd.ones(2), op_type="test_broken")

    @mx.operator.register("test_bad_shape")
    class BadShapeProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0], in_shape[0]], []    # one output declared

    with pytest.raises(MXNetError, match="test_bad_shape.*infer_shape returned 2 shapes "
                                         "for 1 outputs"):
        mx.nd.Custom(mx.nd.ones(2), op_type="test_bad_shape")


# ---- mx.sym, executors, JSON -----------------------------------------------------------------
def test_symbol_names_inference_executor_and_json():
    sym = mx.sym.Custom(a=mx.sym.var("a"), b=mx.sym.var("b"), op_type="test_sum_diff",
                        name="sd")
    assert sym.list_arguments() == ["a", "b"]
    assert sym.list_auxiliary_states() == ["sd_count"]     # created, as MXNet names it
    assert sym.list_outputs() == ["sd_sum", "sd_diff"]
    args, outs, aux = sym.infer_shape(a=(2, 3), b=(2, 3))
    assert (args, outs, aux) == ([(2, 3), (2, 3)], [(2, 3), (2, 3)], [(1,)])
    loaded = mx.sym.load_json(sym.tojson())
    grads = {"a": mx.nd.zeros((2, 3)), "b": mx.nd.zeros((2, 3))}
    ex = loaded.bind(mx.cpu(), args={"a": mx.nd.array(X), "b": mx.nd.array(2 * X)},
                     args_grad=grads, aux_states={"sd_count": mx.nd.zeros((1,))})
    s, d = ex.forward(is_train=True)
    np.testing.assert_allclose(s.asnumpy(), 3 * X, rtol=1e-6)
    ex.backward([mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))])
    np.testing.assert_allclose(grads["a"].asnumpy(), np.full(X.shape, 2.0))
    np.testing.assert_allclose(grads["b"].asnumpy(), np.full(X.shape, 2.0))
    assert ex.aux_dict["sd_count"].asnumpy()[0] == 1.0


def test_executor_gradient_equals_autograd():
    data = mx.sym.var("data")
    sym = mx.sym.Custom(data, op_type="gradspec_cube") * 2
    g = mx.nd.zeros(X.shape, dtype="float64")
    ex = sym.bind(mx.cpu(), args={"data": mx.nd.array(X, dtype="float64")},
                  args_grad={"data": g})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(X.shape, dtype="float64"))
    np.testing.assert_allclose(g.asnumpy(), 6 * X ** 2)


def test_json_naming_an_unregistered_op_type_is_refused():
    text = mx.sym.Custom(mx.sym.var("x"), op_type="gradspec_cube").tojson()
    graph = json.loads(text)
    for node in graph["nodes"]:
        if node["op"] == "Custom":
            node["attrs"]["op_type"] = "os.system"
    with pytest.raises(MXNetError, match="not registered"):
        mx.sym.load_json(json.dumps(graph))


def test_symbolic_second_order_is_an_error_not_a_silent_zero():
    x = mx.sym.var("x", shape=(2, 3))
    (g,) = mx.sym.grad(mx.sym.Custom(x, op_type="gradspec_cube"), ["x"])
    with pytest.raises(MXNetError, match="_backward_Custom"):
        mx.sym.grad(g, ["x"])


# ---- introspection ---------------------------------------------------------------------------
def test_registry_introspection():
    names = mx.operator.get_all_registered_operators()
    assert {"Custom", "MakeLoss", "make_loss", "sin"} <= set(names)
    args = mx.operator.get_operator_arguments("MakeLoss")
    assert args.narg == 4
    assert args.names == ["data", "grad_scale", "valid_thresh", "normalization"]
    assert args.types[0] == "NDArray-or-Symbol"
    assert args.types[1] == "float, optional, default=1.0"
    assert mx.operator.get_operator_arguments("add_n").types[0] == "NDArray-or-Symbol[]"
    with pytest.raises(MXNetError, match="nope"):
        mx.operator.get_operator_arguments("nope")
    assert ("Custom", "", True) in mx.operator.list_ops()
    assert mx.operator.get_op("Custom").name == "Custom"


def test_register_refuses_what_is_not_a_prop():
    with pytest.raises(MXNetError, match="not a CustomOpProp"):
        mx.operator.register("test_not_a_prop")(object)


def test_storage_type_defaults_are_dense():
    prop = _SumDiffProp()
    assert prop.infer_storage_type(["default", "default"]) == (
        ["default", "default"], ["default", "default"], ["default"])
    assert prop.infer_storage_type_backward(["x"] * 2, ["x"] * 2, ["x"] * 2, ["x"] * 2,
                                            ["x"]) == (["default"] * 2,) * 4 + (["default"],)
    assert prop.declare_backward_dependency([1, 2], [3, 4], [5, 6]) == [1, 2, 3, 4, 5, 6]
    assert _FillProp(rows="1").need_top_grad()
