"""Tests of the tester: check_grads must catch a wrong gradient at the order it is wrong."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.ndarray.ndarray import invoke
from mxlite.ops.common import same_shape, same_type
from mxlite.ops.frontend import make_function
from mxlite.ops.registry import REGISTRY, OpDef, register
from mxlite.test_utils import (GradientCheckError, assert_almost_equal, check_function_gradient,
                               check_grads, rand_ndarray, rand_shape_nd)


def _sin_like(name, kernel, gradient):
    """Register a test op computing ``kernel`` with FGradient ``gradient``; return its nd function."""
    def compute(rctx, ins, outs, attrs):
        outs[0][...] = kernel(ins[0])
    op = register(OpDef(name, inputs=("data",), infer_shape=same_shape, infer_type=same_type,
                        compute={"cpu": compute}, gradient=gradient, doc="test op"))
    return make_function(op, invoke)


@pytest.fixture
def chain():
    """sin -> cos -> -sin -> -cos, each op's gradient calling the next; ``wrong`` picks the
    order whose derivative is deliberately wrong (the sign flipped)."""
    made = []

    def build(wrong):
        f = {}
        signs = {k: (-1.0 if k == wrong else 1.0) for k in (1, 2, 3)}
        # f3 = -cos, whose derivative sin is plain mx.nd.sin
        f[3] = _sin_like("_t_negcos", lambda x: -np.cos(x),
                         lambda F, n, g: [g[0] * F.sin(n.inputs[0])])
        f[2] = _sin_like("_t_negsin", lambda x: -np.sin(x),
                         lambda F, n, g: [g[0] * f[3](n.inputs[0]) * signs[3]])
        f[1] = _sin_like("_t_cos", np.cos,
                         lambda F, n, g: [g[0] * f[2](n.inputs[0]) * signs[2]])
        f[0] = _sin_like("_t_sin", np.sin,
                         lambda F, n, g: [g[0] * f[1](n.inputs[0]) * signs[1]])
        made.extend(["_t_negcos", "_t_negsin", "_t_cos", "_t_sin"])
        return f[0]

    yield build
    for name in made:
        REGISTRY.pop(name, None)


def _x():
    return mx.nd.array(np.linspace(0.2, 1.3, 6).reshape(2, 3), dtype="float64")


def test_correct_chain_passes_order_three(chain):
    check_grads(chain(wrong=None), [_x()], order=3)


@pytest.mark.parametrize("wrong", [1, 2, 3])
def test_wrong_gradient_fails_at_its_order(chain, wrong):
    # the gradient of f[k-1] is the derivative used at order k (order 1 uses sin' = cos)
    f = chain(wrong=wrong)
    if wrong > 1:
        check_grads(f, [_x()], order=wrong - 1)   # lower orders still pass
    with pytest.raises(GradientCheckError, match=f"order {wrong} gradient is wrong"):
        check_grads(f, [_x()], order=3)


def test_wrong_head_gradient_dependence_is_caught():
    # a VJP that ignores the head gradient v (uses ones): random v exposes it at order 1
    def compute(rctx, ins, outs, attrs):
        outs[0][...] = ins[0] ** 2
    op = register(OpDef("_t_square_badv", inputs=("data",), infer_shape=same_shape,
                        infer_type=same_type, compute={"cpu": compute},
                        gradient=lambda F, n, g: [2 * n.inputs[0] * (g[0] * 0 + 1)], doc="t"))
    try:
        f = make_function(op, invoke)
        with pytest.raises(GradientCheckError, match="order 1"):
            check_grads(f, [_x()], order=2, zero_fraction=0.0)
    finally:
        REGISTRY.pop("_t_square_badv")


@pytest.mark.parametrize("shape", [(), (1,), (2,), (3,)])
@pytest.mark.parametrize("seed", range(8))
def test_small_outputs_never_get_an_all_zero_head_gradient(chain, shape, seed):
    # an all-zero head gradient makes <u, VJP(v)> = 0 = the finite difference: any gradient
    # would pass (a 2-element output with the default zero_fraction and seed 0 did)
    f = chain(wrong=1)
    x = mx.nd.array(np.full(shape, 0.7), dtype="float64")
    with pytest.raises(GradientCheckError, match="order 1"):
        check_grads(f, [x], order=1, seed=seed)


def test_check_function_gradient_and_helpers():
    check_function_gradient(lambda x: mx.nd.exp(x) * x, [_x()])
    shape = rand_shape_nd(3, dim=4)
    assert len(shape) == 3 and all(1 <= d <= 4 for d in shape)
    a = rand_ndarray(shape)
    assert a.shape == shape and a.dtype == np.float32
    assert_almost_equal(a, a.asnumpy())
    with pytest.raises(AssertionError, match="exceeds tolerance"):
        assert_almost_equal(a, a.asnumpy() + 1)
