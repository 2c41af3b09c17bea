"""Large-tensor rows: the layers of mxlite/ops/spatial.py.

Crop and the region assignments move any dtype, so their rows pass 2**32 int8 elements: a
batch of int8 items (2048 elements each) past 2**32, cropped to a smaller window (Crop,
input 4 GiB, output 3 GiB) or assigned in place as MXNet calls them (``out=lhs``: one
4 GiB array). The output items around 2**31, 2**32 and at the tail equal the same op on a
small batch of those items.
"""
import mxlite as mx

from . import Row
from .nn import _check_items, _items, _take_items

_PER = (4, 512)                         # one item: 2048 int8 elements
_REGION = dict(begin=(None, 1, 3), end=(None, 3, None), step=(None, 1, 5))


def _rhs(n):
    """The values _slice_assign writes: (n, 2, 102) int8, distinct along the item."""
    row = mx.nd.arange(2 * 102, dtype="int32").reshape((1, 2, 102)) % 11 - 5
    return mx.nd.broadcast_to(row.astype("int8"), shape=(n, 2, 102))


def _items_row(call, inplace):
    """``call(x)`` (``call(x, out=x)`` with ``inplace``) on a batch of int8 items past 2**32
    elements: the output's items around 2**31, 2**32 and at the tail equal ``call`` on those
    input items alone."""
    def run(t):
        per = _PER[0] * _PER[1]
        shp = (t.P32 // per + 1,) + _PER
        x = t.big("int8", shp[0] * per, shape=shp, fill=1)
        items = _items(t, x.size, per)
        want = call(_take_items(t, x, items)).asnumpy()
        y = call(x, out=x) if inplace else call(x)
        t.seen(y)
        _check_items(t, y, items, want, "output items")
    return Row(run, "int8")


def _crop(x, out=None):
    return mx.nd.Crop(x, h_w=(3, 511), offset=(1, 1), out=out)


def _assign(x, out=None):
    return mx.nd._internal._crop_assign(x, _rhs(x.shape[0]), out=out, **_REGION)


def _assign_scalar(x, out=None):
    return mx.nd._internal._crop_assign_scalar(x, scalar=-3, out=out, **_REGION)


ROWS = {
    "Crop": _items_row(lambda x, out=None: _crop(x.reshape((x.shape[0], 1) + _PER), out),
                       inplace=False),
    "_slice_assign": _items_row(_assign, inplace=True),
    "_slice_assign_scalar": _items_row(_assign_scalar, inplace=True),
}
