"""FullyConnected with a ``(num_hidden, 1)`` bias, the other shape MXNet takes: the values of
the ``(num_hidden,)`` bias, the gradient in the column's shape, to order 3 (finite
differences in float64), in a graph and through ONNX's Flatten of the bias (the export
tests); an unknown bias shape is still inferred as ``(num_hidden,)``."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.test_utils import check_grads


@pytest.mark.parametrize("flatten", [True, False])
def test_a_column_bias_gives_the_row_bias_values(flatten):
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((2, 3, 4)))
    w = mx.nd.array(rng.standard_normal((5, 12 if flatten else 4)))
    b = rng.standard_normal(5)
    row = mx.nd.FullyConnected(x, w, mx.nd.array(b), num_hidden=5, flatten=flatten)
    col = mx.nd.FullyConnected(x, w, mx.nd.array(b.reshape(5, 1)), num_hidden=5,
                               flatten=flatten)
    np.testing.assert_array_equal(col.asnumpy(), row.asnumpy())


def test_a_column_bias_differentiates_to_order_3():
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(s) for s in ((2, 6), (3, 6), (3, 1))]
    check_grads(lambda x, w, b: mx.nd.FullyConnected(x, w, b * b, num_hidden=3) ** 2,
                inputs, order=3, name="FullyConnected (3, 1) bias", seed=1)


def test_the_column_bias_gradient_keeps_its_shape_in_a_graph():
    x, w, b = (mx.sym.var(n) for n in "xwb")
    y = mx.sym.FullyConnected(x, w, b, num_hidden=3)
    exe = y.simple_bind(mx.current_context(), x=(4, 2), w=(3, 2), b=(3, 1))
    exe.arg_dict["x"][:] = 1.0
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((4, 3)))
    assert exe.grad_dict["b"].shape == (3, 1)
    np.testing.assert_array_equal(exe.grad_dict["b"].asnumpy(), np.full((3, 1), 4.0))
    args, _, _ = y.infer_shape(x=(4, 2))
    assert args[2] == (3,)              # unknown: MXNet's (num_hidden,)


def test_other_bias_shapes_are_refused():
    with pytest.raises(mx.MXNetError, match=r"bias has shape \(1, 3\).*\(3,\) or \(3, 1\)"):
        mx.nd.FullyConnected(mx.nd.ones((2, 2)), mx.nd.ones((3, 2)), mx.nd.ones((1, 3)),
                             num_hidden=3)
