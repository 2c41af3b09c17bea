"""mx.nd.CachedOp (mxlite/ndarray/_cached_op.py): a Symbol called on NDArrays in
list_inputs() order, against the same graph evaluated op by op."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError, autograd


def _conv_graph():
    return mx.sym.Convolution(kernel=(3, 3), num_filter=4, name="c") + 2


def _inputs(rng):
    return [mx.nd.array(rng.standard_normal(s)) for s in ((2, 3, 6, 6), (4, 3, 3, 3), (4,))]


def test_call_matches_the_operators():
    rng = np.random.default_rng(0)
    data, weight, bias = _inputs(rng)
    op = mx.nd.CachedOp(_conv_graph())
    want = mx.nd.Convolution(data, weight, bias, kernel=(3, 3), num_filter=4) + 2
    got = op(data, weight, bias)
    assert isinstance(got, mx.nd.NDArray)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)
    bias[:] = bias + 1                       # each call reads the arrays it is given
    np.testing.assert_allclose(op(data, weight, bias).asnumpy(), want.asnumpy() + 1,
                               rtol=1e-6, atol=1e-6)
    out = mx.nd.zeros(want.shape)
    assert op(data, weight, bias, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy() + 1, rtol=1e-6, atol=1e-6)


def test_gradients_match_the_operators():
    rng = np.random.default_rng(1)
    data, weight, bias = _inputs(rng)
    op = mx.nd.CachedOp(_conv_graph())
    grads = []
    for f in (lambda w: op(data, w, bias),
              lambda w: mx.nd.Convolution(data, w, bias, kernel=(3, 3), num_filter=4) + 2):
        w = weight.copy()
        w.attach_grad()
        with autograd.record():
            y = (f(w) * f(w)).sum()
        y.backward()
        grads.append(w.grad.asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5)


def test_several_outputs_and_aux_states_in_input_order():
    x = mx.sym.var("x")
    op = mx.nd.CachedOp(mx.sym.Group([x + 1, x * 2]))
    a, b = op(mx.nd.array([1.0, 2.0]))
    np.testing.assert_array_equal(a.asnumpy(), [2, 3])
    np.testing.assert_array_equal(b.asnumpy(), [2, 4])
    bn = mx.sym.BatchNorm(x, name="bn", fix_gamma=False)
    op = mx.nd.CachedOp(bn)
    data = mx.nd.array(np.arange(12.0).reshape(3, 4))
    ones, zeros = mx.nd.ones((4,)), mx.nd.zeros((4,))
    got = op(data, ones, zeros, zeros, ones)          # x, gamma, beta, moving mean/var
    want = mx.nd.BatchNorm(data, ones, zeros, zeros, ones, fix_gamma=False)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)


def test_bad_calls():
    op = mx.nd.CachedOp(mx.sym.var("x") + mx.sym.var("y"))
    with pytest.raises(MXNetError, match=r"takes 2 inputs \['x', 'y'\], got 1"):
        op(mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"input\(s\) \[1\] \(\['y'\]\)"):
        op(mx.nd.ones((2,)), np.ones(2))
    with pytest.raises(TypeError, match="unexpected keyword"):
        op(mx.nd.ones((2,)), mx.nd.ones((2,)), y=1)
    with pytest.raises(MXNetError, match="out= holds 2 arrays for 1 outputs"):
        op(mx.nd.ones((2,)), mx.nd.ones((2,)), out=[mx.nd.ones((2,))] * 2)


def test_static_alloc_flag_plans_the_memory_and_keeps_the_results():
    """``flags=[('static_alloc', True)]``: the graph runs over buffers kept between calls
    (one spare set after a call), with the results of the default CachedOp, and an output
    kept from the first call is not changed by the second."""
    rng = np.random.default_rng(2)
    data, weight, bias = _inputs(rng)
    graph = mx.sym.tanh(_conv_graph()) * 3
    static = mx.nd.CachedOp(graph, flags=[("static_alloc", True)])
    default = mx.nd.CachedOp(graph)
    first = static(data, weight, bias)
    kept = first.asnumpy().copy()
    np.testing.assert_array_equal(kept, default(data, weight, bias).asnumpy())
    plan = next(iter(static._graph._plans.values()))
    assert len(plan.spare_buffers) == 1
    second = static(data * 2, weight, bias)
    np.testing.assert_array_equal(second.asnumpy(), default(data * 2, weight, bias).asnumpy())
    np.testing.assert_array_equal(first.asnumpy(), kept)
