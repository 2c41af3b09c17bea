"""Large-tensor rows: the layers of mxlite/ops/layers.py.

The float layers compute in float32 (float16 data through a float32 copy of the whole
input), so their rows pass 2**31 float32 elements (8 GiB), with one big array: the input
written over in place (LRN, GroupNorm, SoftmaxActivation, SVMOutput,
IdentityAttachKLSparseReg, hard_sigmoid), or a small input whose output is the big array
(Pad, im2col), or the other way round (_pad_backward, col2im). The permutations
(depth_to_space, space_to_depth) move any dtype: their rows pass 2**32 int8 elements, input
and output 4 GiB each. The items around 2**31 (2**32) and the last ones equal the same op
on a small batch of those items.
"""
import numpy as np

import mxlite as mx

from . import Row, elementwise
from .nn import F32_REASON, _check_items, _items, _take_items, batch_in, batch_out

_PAD_EDGE = dict(mode="edge", pad_width=(0, 0, 0, 0, 12, 12, 24, 24))   # (1, 8, 16) -> 2048
_COLS = dict(kernel=(2, 2))                                              # (1, 9, 17) -> 512


def _items_of(per, *shape):
    """A batch of items of ``shape`` (``per`` elements on the big side), just past 2**31."""
    return lambda t: (t.P31 // per + 1,) + shape


def _inplace(op, **kw):
    return lambda x, out=None: op(x, out=out, **kw)


def _group_norm(x, out=None):
    """Two groups, gamma and beta per group; in place the mean and std go to small arrays."""
    args = (mx.nd.array([1.0, 2.0]), mx.nd.array([0.0, 1.0]))
    if out is None:
        return mx.nd.GroupNorm(x, *args, num_groups=2)
    stats = [mx.nd.empty((x.shape[0], 2)) for _ in range(2)]
    return mx.nd.GroupNorm(x, *args, num_groups=2, out=[out] + stats)


def _svm(x, out=None):
    return mx.nd.SVMOutput(x, mx.nd.zeros((x.shape[0],)), out=out)


def _kl(x, out=None):
    """Inference (outside record()): the identity; the moving average is a small state and
    the hidden average a small output."""
    avg = mx.nd.full((x.shape[1],), 0.5)
    if out is None:
        return mx.nd.IdentityAttachKLSparseReg(x, avg)
    return mx.nd.IdentityAttachKLSparseReg(x, avg, out=[out, mx.nd.empty((x.shape[1],))])


def _permutation(op, shape):
    """``op`` (a permutation of each batch item) on int8 items of ``shape`` (2048 elements),
    a batch past 2**32 elements: the output items around 2**31, 2**32 and at the tail equal
    ``op`` on those items alone."""
    def run(t):
        per = int(np.prod(shape))
        shp = (t.P32 // per + 1,) + shape
        x = t.big("int8", int(np.prod(shp)), shape=shp, fill=1)
        items = _items(t, x.size, per)
        want = op(_take_items(t, x, items), block_size=2).asnumpy()
        y = op(x, block_size=2)
        t.seen(y)
        _check_items(t, y, items, want, "output items")
    return Row(run, "int8")


ROWS = {
    "LRN": batch_in(_items_of(2048, 4, 16, 32), _inplace(mx.nd.LRN, nsize=3, alpha=0.5),
                    inplace=True),
    "GroupNorm": batch_in(_items_of(2048, 4, 512), _group_norm, inplace=True),
    "SoftmaxActivation": batch_in(_items_of(2048, 2048), _inplace(mx.nd.SoftmaxActivation),
                                  inplace=True),
    "SVMOutput": batch_in(_items_of(2048, 2048), _svm, inplace=True),
    "IdentityAttachKLSparseReg": batch_in(_items_of(16, 16), _kl, inplace=True),
    "hard_sigmoid": elementwise(_inplace(mx.nd.hard_sigmoid, alpha=0.25), dtype="float32",
                                values=(-3, 5, -7, 1), size="2**31", reason=F32_REASON,
                                inplace=True),
    "Pad": batch_out(_items_of(2048, 1, 8, 16), 2048, lambda x: mx.nd.Pad(x, **_PAD_EDGE)),
    "_pad_backward": batch_in(_items_of(2048, 1, 32, 64),
                              lambda g: mx.nd._internal._pad_backward(g, **_PAD_EDGE)),
    "im2col": batch_out(_items_of(512, 1, 9, 17), 512, lambda x: mx.nd.im2col(x, **_COLS)),
    "col2im": batch_in(_items_of(512, 4, 128),
                       lambda c: mx.nd.col2im(c, output_size=(9, 17), **_COLS)),
    "depth_to_space": _permutation(mx.nd.depth_to_space, (8, 16, 16)),
    "space_to_depth": _permutation(mx.nd.space_to_depth, (2, 32, 32)),
}
