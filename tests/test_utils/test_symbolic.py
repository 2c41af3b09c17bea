"""check_symbolic_forward/backward, check_numeric_gradient and check_consistency: they pass on
correct symbols and catch wrong values, wrong gradients and wrong grad_req handling."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops.common import same_shape, same_type
from mxlite.ops.frontend import make_function
from mxlite.ops.registry import REGISTRY, OpDef, register
from mxlite.symbol.symbol import invoke as sym_invoke
from mxlite.test_utils import (check_consistency, check_numeric_gradient, check_speed,
                               check_symbolic_backward, check_symbolic_forward, numeric_grad,
                               same_symbol_structure, simple_forward)

A, B = mx.sym.Variable("a"), mx.sym.Variable("b")


def _ab(shape=(2, 3), seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape), rng.uniform(0.5, 1.5, shape)


def test_forward_list_and_dict_forms():
    a, b = _ab()
    outs = check_symbolic_forward(A * B + 1, [a, b], [a * b + 1])
    assert outs[0].dtype == np.float32
    s = A * B + 1
    check_symbolic_forward(s, {"b": b, "a": a}, {s.list_outputs()[0]: a * b + 1})
    with pytest.raises(MXNetError, match="expected"):
        check_symbolic_forward(s, [a, b], {"nothing": a})
    check_symbolic_forward(A * B, [a, b], [a * b], dtype=np.float64, rtol=1e-12, atol=0)


def test_forward_catches_a_wrong_value():
    a, b = _ab()
    wrong = a * b
    wrong[1, 2] += 0.01
    with pytest.raises(AssertionError, match=r"EXPECTED_.*FORWARD_"):
        check_symbolic_forward(A * B, [a, b], [wrong])


def test_forward_rejects_mismatched_locations():
    a, b = _ab()
    with pytest.raises(MXNetError, match="location"):
        check_symbolic_forward(A * B, {"a": a}, [a])
    with pytest.raises(MXNetError, match="location"):
        check_symbolic_forward(A * B, [a], [a])
    with pytest.raises(MXNetError, match="dtype"):
        check_symbolic_forward(A * B, [a, b], [a * b], dtype=np.int32)


@pytest.mark.parametrize("req", ["write", "add", "null"])
def test_backward_honours_grad_req(req):
    a, b = _ab()
    g = np.random.default_rng(1).normal(size=a.shape)
    grads = check_symbolic_backward(A * B, [a, b], [g], [g * b, g * a], grad_req=req)
    assert set(grads) == {"a", "b"}
    if req == "write":
        np.testing.assert_allclose(grads["a"].asnumpy(), g * b, rtol=1e-5)


def test_backward_catches_a_wrong_gradient():
    a, b = _ab()
    g = np.ones(a.shape)
    with pytest.raises(AssertionError, match="BACKWARD_b"):
        check_symbolic_backward(A * B, [a, b], [g], {"a": g * b, "b": g * b})


def test_backward_per_argument_requests_and_dict_heads():
    a, b = _ab()
    s = A * B
    g = np.full(a.shape, 2.0)
    check_symbolic_backward(s, {"a": a, "b": b}, {s.list_outputs()[0]: g}, {"a": g * b},
                            grad_req={"a": "add", "b": "null"})
    with pytest.raises(MXNetError, match="grad_req"):
        check_symbolic_backward(s, [a, b], [g], [g * b, g * a], grad_req="sometimes")
    with pytest.raises(MXNetError, match="not arguments"):
        check_symbolic_backward(s, [a, b], [g], {"c": g})
    with pytest.raises(MXNetError, match="3 expected gradients"):
        check_symbolic_backward(s, [a, b], [g], [g, g, g])


def _wrong_square(name):
    """A square op whose registered gradient is x (half the true 2x)."""
    def compute(rctx, ins, outs, attrs):
        outs[0][...] = ins[0] * ins[0]
    op = register(OpDef(name, inputs=("data",), infer_shape=same_shape, infer_type=same_type,
                        compute={"cpu": compute},
                        gradient=lambda F, n, g: [g[0] * n.inputs[0]], doc="test op"))
    return make_function(op, sym_invoke)


def test_numeric_gradient_passes_correct_symbols():
    a, b = _ab(seed=2)
    check_numeric_gradient(mx.sym.sin(A) * B, [a, b])
    check_numeric_gradient(mx.sym.sin(A) * B, {"a": a, "b": b}, numeric_eps=1e-4, rtol=1e-6,
                           atol=1e-8, dtype=np.float64)
    check_numeric_gradient(mx.sym.exp(A) * B, [a, b], grad_nodes={"a": "add", "b": "null"})
    check_numeric_gradient(mx.sym.exp(A) * B, [a, b], grad_nodes=["b"])


def test_numeric_gradient_catches_a_wrong_gradient():
    sym_fn = _wrong_square("_t_h1_wrong_square")
    try:
        a, _ = _ab(seed=3)
        with pytest.raises(AssertionError, match="NUMERICAL_a"):
            check_numeric_gradient(sym_fn(A), [a])
    finally:
        REGISTRY.pop("_t_h1_wrong_square")


def test_numeric_gradient_refusals():
    a, b = _ab()
    with pytest.raises(MXNetError, match="too small"):
        check_numeric_gradient(A * B, [a, b], numeric_eps=1e-7)
    with pytest.raises(MXNetError, match="one output"):
        check_numeric_gradient(mx.sym.Group([A * B, A + B]), [a, b])
    with pytest.raises(MXNetError, match="grad_nodes"):
        check_numeric_gradient(A * B, [a, b], grad_nodes=["c"])
    # a sparse gradient buffer is checked too (tests/sparse/test_sparse_symbols.py)
    check_numeric_gradient(A * B, [a, b], grad_stype_dict={"a": "row_sparse"})


def test_numeric_grad_is_central_differences_of_the_sum():
    x = np.array([[0.3, -1.2, 2.0]])
    exe = (A * A * A).bind(mx.cpu(), args={"a": mx.nd.array(x, dtype="float64")})
    got = numeric_grad(exe, {"a": x}, eps=1e-3, dtype=np.float64)["a"]
    # (f(x+h/2) - f(x-h/2)) / h of x^3 is exactly 3x^2 + h^2/4
    np.testing.assert_allclose(got, 3 * x ** 2 + 1e-6 / 4, rtol=1e-9)


def test_numeric_gradient_with_aux_states():
    data = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(data, fix_gamma=False, name="bn")
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 3))
    gamma, beta = rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
    check_numeric_gradient(bn, [x, gamma, beta], aux_states=[np.zeros(3), np.ones(3)],
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-3, dtype=np.float64)


def test_check_consistency_across_dtypes():
    sym = mx.sym.tanh(A) * B
    ctx_list = [{"ctx": mx.cpu(), "a": (3, 4), "b": (3, 4),
                 "type_dict": {"a": dt, "b": dt}} for dt in (np.float64, np.float32)]
    gt = check_consistency(sym, ctx_list)
    assert gt[sym.list_outputs()[0]].dtype == np.float64
    shapes = {"a": np.zeros((3, 4)), "b": np.zeros((3, 4))}
    with pytest.raises(AssertionError):
        check_consistency(sym, ctx_list, arg_params=dict(shapes),
                          ground_truth={sym.list_outputs()[0]: mx.nd.ones((3, 4))},
                          grad_req="null")


def test_simple_forward_speed_and_structure():
    a, b = _ab()
    np.testing.assert_allclose(simple_forward(A * B, a=a, b=b), a * b, rtol=1e-6)
    assert same_symbol_structure(mx.sym.exp(A) + B, mx.sym.exp(B) + A)
    assert not same_symbol_structure(mx.sym.exp(A) + B, mx.sym.log(A) + B)
    assert not same_symbol_structure(mx.sym.exp(A), mx.sym.exp(mx.sym.exp(A)))
    assert check_speed(A * B, N=2, a=(2, 2), b=(2, 2)) >= 0
    assert check_speed(A * B, location={"a": a, "b": b}, N=1, typ="forward") >= 0
    with pytest.raises(MXNetError, match="typ"):
        check_speed(A * B, typ="backward", a=(2, 2), b=(2, 2))


def test_numeric_gradient_skips_integer_inputs_and_handles_scalars():
    data, idx = mx.sym.Variable("data"), mx.sym.Variable("idx")
    x = np.random.default_rng(5).normal(size=(4, 3))
    indices = mx.nd.array([2, 0], dtype="int32")          # an NDArray keeps its int dtype
    check_numeric_gradient(mx.sym.take(data, idx) * 2, {"data": x, "idx": indices},
                           grad_nodes=["data"], dtype=np.float64)
    exe = (A * A).bind(mx.cpu(), args={"a": mx.nd.array(np.float64(1.5), dtype="float64")})
    got = numeric_grad(exe, {"a": np.array(1.5)}, eps=1e-3, dtype=np.float64)["a"]
    assert got.shape == () and got == pytest.approx(3.0, rel=1e-9)
    grads = numeric_grad(exe, {"a": np.array(1, dtype=np.int32)}, dtype=np.float64)
    assert grads["a"] == 0
