"""The autograd API (MXNet 1.x semantics) and its guarantees: nth order, zeros, release."""
import gc
import os
import runpy
import weakref

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "examples")


def _var(values):
    x = mx.nd.array(values, dtype="float64")
    x.attach_grad()
    return x


def test_recording_and_training_state():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert autograd.is_recording() and not autograd.is_training()
    with autograd.record(train_mode=False):
        assert not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True


def test_backward_writes_grad():
    x = _var([0.5, 1.5, -2.0])
    with autograd.record():
        y = x * x + mx.nd.sin(x)
    y.backward()
    xv = x.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * xv + np.cos(xv), rtol=1e-12)


def test_backward_with_out_grad_and_grad_req_add():
    x = mx.nd.array([1.0, 2.0], dtype="float64")
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = x * 3
        y.backward(mx.nd.array([1.0, 10.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 60.0])


def test_grad_req_write_overwrites():
    x = _var([1.0, 2.0])
    for scale in (3.0, 5.0):
        with autograd.record():
            y = x * scale
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [5.0, 5.0])


def test_third_derivative_of_sin_example():
    module = runpy.run_path(os.path.join(EXAMPLES, "third_derivative.py"))
    xs = np.linspace(-2, 2, 7)
    d1, d2, d3 = module["third_derivative_of_sin"](xs)
    np.testing.assert_allclose(d1, np.cos(xs), atol=1e-12)
    np.testing.assert_allclose(d2, -np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(d3, -np.cos(xs), atol=1e-12)


def test_hessian_vector_product_example():
    module = runpy.run_path(os.path.join(EXAMPLES, "hessian_vector.py"))
    hv, fd, err = module["main"](seed=3)
    assert err < 1e-6
    assert max(float(np.abs(h.asnumpy()).max()) for h in hv) > 1e-3   # not trivially zero


def test_head_gradient_zeros_give_zero_not_nan():
    x = _var([0.0, 1.0, 2.0])
    with autograd.record():
        y = mx.nd.sqrt(x + 1) / (x + 1)
    (g,) = autograd.grad(y, x, head_grads=mx.nd.array([0.0, 0.0, 1.0], dtype="float64"))
    gv = g.asnumpy()
    assert np.all(np.isfinite(gv)) and gv[0] == 0 and gv[1] == 0 and gv[2] != 0


def test_non_differentiable_op_gives_zero_gradient():
    x = _var([0.5, 1.5])
    with autograd.record():
        y = mx.nd.floor(x) + (x > 1)
    np.testing.assert_array_equal(autograd.grad(y, x)[0].asnumpy(), [0.0, 0.0])


def test_block_grad_to_third_order():
    x = _var([0.5, 2.0])
    with autograd.record():
        y = mx.nd.BlockGrad(x) * x * x      # treats the first factor as a constant c: c*x^2
        (d1,) = autograd.grad(y, x, create_graph=True)
        (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    xv = x.asnumpy()
    np.testing.assert_allclose(d1.asnumpy(), 2 * xv * xv)
    np.testing.assert_allclose(d2.asnumpy(), 2 * xv)
    np.testing.assert_allclose(d3.asnumpy(), 0.0)
    assert mx.nd.stop_gradient is not None


def test_backward_twice_needs_retain_graph():
    x = _var([1.0])
    with autograd.record():
        y = mx.nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(MXNetError, match="retain_graph"):
        y.backward()


def test_grad_errors_are_clear():
    x = _var([1.0, 2.0])
    plain = mx.nd.array([1.0, 2.0], dtype="float64")
    with pytest.raises(MXNetError, match="record"):
        autograd.grad(plain * 2, x)
    with autograd.record():
        y = x * 2
    with pytest.raises(MXNetError, match="attach_grad"):
        autograd.grad(y, plain)
    with pytest.raises(MXNetError, match="head_grads shape"):
        autograd.grad(y, x, head_grads=mx.nd.ones((3,), dtype="float64"))
    with pytest.raises(MXNetError, match="grad_req"):
        x.attach_grad(grad_req="sometimes")


def test_graph_is_released_after_backward():
    x = _var(np.ones(1000))
    with autograd.record():
        hidden = mx.nd.exp(x)       # saved by the next op's node for its gradient
        y = mx.nd.sin(hidden)
    ref = weakref.ref(hidden)
    del hidden
    gc.collect()
    assert ref() is not None        # the tape holds it until backward
    y.backward()
    gc.collect()
    assert ref() is None            # ... and lets it go afterwards


def test_graph_is_kept_with_retain_graph():
    x = _var([0.3])
    with autograd.record():
        y = mx.nd.sin(mx.nd.exp(x))
    y.backward(retain_graph=True)
    first = x.grad.asnumpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), first)


def test_detach_cuts_the_graph():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x.detach() * x
    np.testing.assert_allclose(autograd.grad(y, x)[0].asnumpy(), x.asnumpy())


def test_mark_variables():
    x = mx.nd.array([1.0, 2.0], dtype="float64")
    g = mx.nd.zeros((2,), dtype="float64")
    autograd.mark_variables([x], [g])
    with autograd.record():
        y = x * x
    autograd.backward([y])
    np.testing.assert_allclose(g.asnumpy(), [2.0, 4.0])


def test_unused_variable_gets_zero_gradient():
    x, z = _var([1.0]), _var([2.0])
    with autograd.record():
        y = x * 2
    gx, gz = autograd.grad(y, [x, z])
    assert gx.asscalar() == 2.0 and gz.asscalar() == 0.0


def test_grad_returns_a_list_even_for_one_variable():
    # MXNet's rule; with one element, grad(y, x)[0] or (g,) = ... would also "work" on an
    # NDArray, so the type is checked, not only the values
    x = _var([1.5])
    with autograd.record():
        y = x * x
    g = autograd.grad(y, x, retain_graph=True)
    assert type(g) is list and len(g) == 1 and isinstance(g[0], mx.nd.NDArray)
    np.testing.assert_allclose(g[0].asnumpy(), [3.0])
    g = autograd.grad([y], [x], create_graph=True)
    assert type(g) is list and len(g) == 1
    np.testing.assert_allclose(g[0].asnumpy(), [3.0])


def test_node_metadata_of_taped_inputs_is_their_parents_output_metadata():
    """Taped inputs' shapes/dtypes are read from the parent node on first use; they must be
    the arrays' own, through views, reshapes, casts, writes and untaped constants."""
    x = mx.nd.array(np.arange(12.0).reshape(3, 4), dtype="float64")
    x.attach_grad()
    const = mx.nd.ones((4,), dtype="float64")
    with autograd.record():
        v = x[1:3]                     # a view
        r = x.reshape((4, 3))
        c = x.astype("float32")
        y = v * const                  # taped view times an untaped constant
        x2 = x * 1.0
        x2[0] = 5.0                    # a write: x2's entry is rebased
        w = x2[0:2]
        programs = [(y, [v, const]), (r.sum(axis=0), [r]), (c * c, [c, c]),
                    (w + w, [w, w]), (mx.nd.dot(r, x), [r, x])]
    for out, inputs in programs:
        node = out._node[0]
        assert node.input_shapes == [a.shape for a in inputs], node
        assert node.input_dtypes == [a.dtype for a in inputs], node


# ---- heads with no path to a variable: MXNet refuses them, never a silent zero gradient -----
def _head_from_unrecorded_intermediate():
    x = _var([1.0, 2.0])
    hidden = x * 2                      # outside record(): not on the tape
    with autograd.record():
        return x, (hidden * hidden).sum()


def _head_from_unmarked_input():
    x = mx.nd.array([1.0, 2.0], dtype="float64")     # no attach_grad
    with autograd.record():
        return x, (x * x).sum()


def _head_from_null_grad_req():
    x = mx.nd.array([1.0, 2.0], dtype="float64")
    x.attach_grad(grad_req="null")
    with autograd.record():
        return x, (x * x).sum()


def _head_from_detached_input():
    x = _var([1.0, 2.0])
    with autograd.record():
        return x, (x.detach() * 3).sum()


NOT_DIFFERENTIABLE = [_head_from_unrecorded_intermediate, _head_from_unmarked_input,
                      _head_from_null_grad_req, _head_from_detached_input]


@pytest.mark.parametrize("make", NOT_DIFFERENTIABLE, ids=lambda f: f.__name__[10:])
def test_backward_refuses_a_head_with_no_path_to_a_variable(make):
    x, head = make()
    with pytest.raises(MXNetError, match=r"autograd.backward: cannot differentiate heads\[0\] "
                                         r"\(shape \(1,\)\).*depends on no array"):
        head.backward()
    if x.grad is not None:
        np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])   # left untouched


@pytest.mark.parametrize("make", NOT_DIFFERENTIABLE, ids=lambda f: f.__name__[10:])
def test_grad_refuses_a_head_with_no_path_to_a_variable(make):
    _, head = make()
    other = _var([3.0])
    with pytest.raises(MXNetError, match=r"autograd.grad: cannot differentiate heads\[0\]"):
        autograd.grad(head, other)


def test_a_head_computed_outside_record_is_not_in_a_graph():
    x = _var([1.0])
    y = x * 2
    for call in (y.backward, lambda: autograd.grad(y, x)):
        with pytest.raises(MXNetError, match="outside autograd.record.*not in a computational"):
            call()


def test_every_head_of_a_list_must_be_differentiable():
    x = _var([1.0, 2.0])
    with autograd.record():
        good = (x * x).sum()
        constant = mx.nd.ones((3,), dtype="float64") * 2
    with pytest.raises(MXNetError, match=r"heads\[1\] \(shape \(3,\)\)"):
        autograd.backward([good, constant])
    with pytest.raises(MXNetError, match=r"heads\[1\]"):
        autograd.grad([good, constant], x)


def test_backward_refuses_when_every_variable_now_has_grad_req_null():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = (x * x).sum()
    x.attach_grad(grad_req="null")      # marked again after the head was recorded
    with pytest.raises(MXNetError, match="grad_req='null'"):
        y.backward()


def test_heads_that_mix_variables_and_constants_still_differentiate():
    x = _var([1.0, 2.0])
    frozen = mx.nd.array([3.0, 4.0], dtype="float64")
    frozen.attach_grad(grad_req="null")
    outside = mx.nd.array([5.0, 6.0], dtype="float64") * 1      # computed outside record()
    with autograd.record():
        y = (x * frozen + outside).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 4.0])
    acc = _var([1.0])
    acc.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            z = acc * acc * 3 + frozen.sum()
        z.backward()
    np.testing.assert_array_equal(acc.grad.asnumpy(), [12.0])      # 2 * 6x at x = 1


def test_second_order_through_a_hybridized_block_with_a_constant_output():
    # the replay of a hybridized call differentiates only the outputs on the tape
    class TwoOutputs(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):
            return F.sin(x) * 2, F.cos(y)
    xv = np.array([0.5, 2.0])
    for hybridize in (False, True):
        block = TwoOutputs()
        block.hybridize(hybridize)
        x = _var(xv)
        with autograd.record():
            a, _ = block(x, mx.nd.array([1.0, 2.0], dtype="float64"))
            (g,) = autograd.grad(a.sum(), [x], create_graph=True)       # 2 cos x
            s = (g * g).sum()                                           # 4 cos^2 x
        s.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), -4 * np.sin(2 * xv), rtol=1e-12)


def test_a_constant_derivative_differentiates_to_zero_not_an_error():
    # the gradient of a linear function depends on no variable: it is a constant function
    # of them, which grad(create_graph=True) keeps on the tape, so the next order is 0
    x = _var([1.0, -2.0, 0.5])
    with autograd.record():
        y = mx.nd.sum(3 * x) + mx.nd.sum(x * x)
        (g1,) = autograd.grad(y, x, create_graph=True)                  # 3 + 2x
        (g2,) = autograd.grad(mx.nd.sum(g1), x, create_graph=True)      # 2, a constant
        (g3,) = autograd.grad(mx.nd.sum(g2), x, create_graph=True)      # 0
        fourth = mx.nd.sum(g3)
    fourth.backward()
    np.testing.assert_array_equal(g1.asnumpy(), 3 + 2 * x.asnumpy())
    np.testing.assert_array_equal(g2.asnumpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(g3.asnumpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])


def test_grad_names_a_variable_with_grad_req_null():
    x, frozen = _var([1.0]), _var([2.0])
    frozen.attach_grad(grad_req="null")
    with autograd.record():
        y = x * frozen
    with pytest.raises(MXNetError, match=r"variables\[1\] \(shape \(1,\)\) does not require "
                                         r"gradient \(no attach_grad\(\), or grad_req='null'\)"):
        autograd.grad(y, [x, frozen])
