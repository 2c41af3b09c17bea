"""mx.nd.contrib.foreach / while_loop / cond: MXNet 1.9.1's semantics (stacking, padding,
structures) against plain Python loops over NumPy, gradients through them to the third
order against the same loops unrolled by hand, and clear errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

C = mx.nd.contrib


def test_foreach_stacks_outputs_and_threads_states():
    data = np.arange(12.0).reshape(4, 3)
    step = lambda x, s: ([x * s[0], x + 1], [s[0] + x])     # noqa: E731
    outs, states = C.foreach(step, mx.nd.array(data), [mx.nd.ones(3)])
    s, want0, want1 = np.ones(3), [], []
    for row in data:
        want0.append(row * s)
        want1.append(row + 1)
        s = s + row
    np.testing.assert_allclose(outs[0].asnumpy(), want0)
    np.testing.assert_allclose(outs[1].asnumpy(), want1)
    np.testing.assert_allclose(states[0].asnumpy(), s)


def test_foreach_over_a_list_of_arrays_and_a_single_output():
    a, b = mx.nd.array([[1.0], [2.0]]), mx.nd.array([[10.0], [20.0]])
    outs, state = C.foreach(lambda xs, s: (xs[0] * xs[1] + s, xs[1]), [a, b], mx.nd.zeros(1))
    assert outs.shape == (2, 1)
    np.testing.assert_allclose(outs.asnumpy().ravel(), [1 * 10 + 0, 2 * 20 + 10])
    np.testing.assert_allclose(state.asnumpy(), [20.0])


def test_while_loop_pads_to_max_iterations_with_zeros():
    cond = lambda i, s: i <= 5                          # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])       # noqa: E731
    outs, (i, s) = C.while_loop(cond, func, [mx.nd.array([0], dtype="int64"),
                                             mx.nd.array([1], dtype="int64")],
                                max_iterations=10)
    got = outs[0].asnumpy().ravel()
    np.testing.assert_array_equal(got, [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert outs[0].dtype == np.int64
    assert int(i.asscalar()) == 6 and int(s.asscalar()) == 16


def test_while_loop_stops_at_max_iterations_and_returns_a_single_var():
    outs, x = C.while_loop(lambda x: x < 100, lambda x: (x * 2, x * 2), mx.nd.array([1.0]),
                           max_iterations=3)
    np.testing.assert_array_equal(outs.asnumpy().ravel(), [2.0, 4.0, 8.0])
    assert isinstance(x, mx.nd.NDArray) and x.asscalar() == 8.0


def test_while_loop_that_never_runs_returns_no_outputs():
    outs, xs = C.while_loop(lambda x: x > 5, lambda x: ([x], [x]), [mx.nd.array([1.0])],
                            max_iterations=4)
    assert outs == [] and xs[0].asscalar() == 1.0


def test_cond_picks_a_branch():
    x = mx.nd.array([3.0])
    assert C.cond(x > 2, lambda: x * 2, lambda: x - 2).asscalar() == 6.0
    assert C.cond(x > 5, lambda: x * 2, lambda: [x - 2, x])[0].asscalar() == 1.0


def _third_derivative(f, x0):
    x = mx.nd.array([x0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = f(x)
        (d1,) = mx.autograd.grad(y, [x], create_graph=True)
        (d2,) = mx.autograd.grad(d1, [x], create_graph=True)
    d2.backward()
    return d1.asscalar(), d2.asscalar(), x.grad.asscalar()


def test_gradients_through_loops_and_branches_to_the_third_order():
    def loop(x):
        outs, (s,) = C.foreach(lambda d, st: (d * st[0], [st[0] * x + d]),
                               mx.nd.array([[1.0], [2.0], [3.0]], dtype="float64"), [x])
        return outs.sum() + s.sum()

    def by_hand(x):          # the same three steps unrolled: s1 = x*x + 1, ...
        s, total = x, 0.0
        for d in (1.0, 2.0, 3.0):
            total = total + d * s
            s = s * x + d
        return total + s

    def while_(x):
        outs, (k, v) = C.while_loop(lambda k, v: k < 3, lambda k, v: ([v * v], [k + 1, v * x]),
                                    [mx.nd.array([0.0], dtype="float64"), x],
                                    max_iterations=5)
        return outs[0].sum()

    def while_by_hand(x):
        return x ** 2 + x ** 4 + x ** 6

    def branch(x):
        return C.cond(x > 0, lambda: x ** 3, lambda: x * 2)

    x0 = 0.7
    np.testing.assert_allclose(_third_derivative(loop, x0),
                               _third_derivative(lambda x: by_hand(x).sum(), x0), rtol=1e-12)
    np.testing.assert_allclose(_third_derivative(while_, x0),
                               _third_derivative(lambda x: while_by_hand(x).sum(), x0),
                               rtol=1e-12)
    np.testing.assert_allclose(_third_derivative(branch, x0), (3 * x0 ** 2, 6 * x0, 6.0))


@pytest.mark.parametrize("call,match", [
    (lambda: C.foreach(lambda x, s: (x, s), [mx.nd.ones((2, 1)), mx.nd.ones((3, 1))],
                       []), "same length"),
    (lambda: C.foreach(lambda x, s: (x, s), "data", []), "foreach: data"),
    (lambda: C.foreach(lambda x, s: (mx.nd.ones(int(x.asscalar()) + 1), s),
                       mx.nd.array([0.0, 1.0]), []), "step 1 gave shape"),
    (lambda: C.while_loop(lambda x: x < 3, lambda x: ([x], [x + 1]), [mx.nd.zeros(1)]),
     "max_iterations"),
    (lambda: C.while_loop(lambda x: x < 3, lambda x: ([x], [x, x]), [mx.nd.zeros(1)],
                          max_iterations=2), "2 loop variables for 1"),
    (lambda: C.cond(mx.nd.ones(2), lambda: 1, lambda: 2), "scalar"),
])
def test_bad_use_is_an_mxnet_error(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
