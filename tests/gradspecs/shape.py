"""Gradient specs: shape-manipulation operators (mxlite/ops/shape.py).

Every one of these operators is linear, so each call squares its output(s): the order-k
VJP then depends on the input as well as on the head gradient, and the order-2 and order-3
checks run the op's gradient, the gradient's gradient and ``mul`` together. Shapes and
parameters avoid symmetric cases (a self-inverse permutation, square planes, equal parts)
that would hide a mixed-up axis.
"""
from . import Spec


def _sq(out):
    """Square each output (one array or a list of them)."""
    if isinstance(out, (list, tuple)):
        return [o * o for o in out]
    return out * out


def _both(*outs):
    """Flatten single outputs and output lists into one list."""
    flat = []
    for o in outs:
        flat.extend(o if isinstance(o, (list, tuple)) else [o])
    return _sq(flat)


SPECS = {
    "reshape": Spec([(2, 3, 4)], lambda nd, x: _sq(nd.reshape(x, shape=(4, -1)))),
    # npx.reshape's codes: drop the size-1 axis and merge two (-2, -3, -5); split the last
    # axis right to left (-6 with a -1)
    "_npx_reshape": Spec([(2, 1, 3, 6)], lambda nd, x: _sq([
        nd._internal._npx_reshape(x, newshape=(-2, -3, -5)),
        nd._internal._npx_reshape(x, newshape=(-4, -1, 2, -6), reverse=True)])),
    "flatten": Spec([(2, 3, 4)], lambda nd, x: _sq(nd.flatten(x))),
    "expand_dims": Spec([(2, 3)], lambda nd, x: _sq(nd.expand_dims(x, axis=1))),
    "squeeze": Spec([(3, 1, 4, 1)], lambda nd, x: _sq(nd.squeeze(x, axis=1))),
    # (1, 2, 0) is not its own inverse: a gradient using the same permutation fails
    "transpose": Spec([(2, 3, 4)], lambda nd, x: _sq(nd.transpose(x, axes=(1, 2, 0)))),
    "swapaxes": Spec([(2, 3, 4)], lambda nd, x: _sq(nd.swapaxes(x, dim1=0, dim2=2))),
    "flip": Spec([(3, 4, 2)], lambda nd, x: _sq(nd.flip(x, axis=(0, 2)))),
    # reps longer than ndim: the result gains a leading axis
    "tile": Spec([(2, 3)], lambda nd, x: _sq(nd.tile(x, reps=(2, 1, 3)))),
    "repeat": Spec([(2, 3), (2, 3)], lambda nd, a, b: _both(
        nd.repeat(a, repeats=3, axis=1), nd.repeat(b, repeats=2))),
    "concat": Spec([(2, 3), (2, 1), (2, 2)],
                   lambda nd, a, b, c: _sq(nd.concat(a, b, c, dim=1))),
    "stack": Spec([(2, 3), (2, 3), (2, 3)],
                  lambda nd, a, b, c: _sq(nd.stack(a, b, c, axis=1))),
    "split": Spec([(2, 6), (3, 2)], lambda nd, a, b: _both(
        nd.split(a, num_outputs=3, axis=1), nd.split(b, num_outputs=3, axis=0,
                                                      squeeze_axis=True))),
    "slice": Spec([(5, 4, 2)], lambda nd, x: _sq(
        nd.slice(x, begin=(1, None), end=(None, 0), step=(2, -1)))),
    "slice_axis": Spec([(4, 5)], lambda nd, x: _sq(nd.slice_axis(x, axis=1, begin=1, end=-1))),
    "broadcast_to": Spec([(3, 1)], lambda nd, x: _sq(nd.broadcast_to(x, shape=(2, 3, 4)))),
    # rhs gives only a shape: its gradient is zero, which the finite differences confirm
    "broadcast_like": Spec([(1, 4), (3, 4)], lambda nd, a, b: _sq(nd.broadcast_like(a, b))),
    "reshape_like": Spec([(2, 6), (3, 4)], lambda nd, a, b: _sq(nd.reshape_like(a, b))),
    "broadcast_axis": Spec([(3, 1, 1)], lambda nd, x: _sq(
        nd.broadcast_axis(x, axis=(1, 2), size=(2, 4)))),
    # both kinds of diag: a 1-D input makes a matrix, a 3-D input gives a diagonal
    "diag": Spec([(3,), (4, 3, 5)], lambda nd, v, m: _both(
        nd.diag(v, k=-1), nd.diag(m, k=1, axis1=2, axis2=0))),
    "_slice_scatter": Spec([(2, 2, 3)], lambda nd, x: _sq(nd._internal._slice_scatter(
        x, shape=(5, 4, 3), begin=(1, None), end=(None, None), step=(2, -2)))),
    "_diag_scatter": Spec([(3, 3)], lambda nd, x: _sq(nd._internal._diag_scatter(
        x, shape=(4, 3, 5), k=1, axis1=2, axis2=0))),
}
