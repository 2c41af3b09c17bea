"""Large-tensor rows: the layers of mxlite/ops/spatial.py.

Crop and the region assignments move any dtype, so their rows pass 2**32 int8 elements: a
batch of int8 items (2048 elements each) past 2**32, cropped to a smaller window (Crop,
input 4 GiB, output 3 GiB) or assigned in place as MXNet calls them (``out=lhs``: one
4 GiB array). The output items around 2**31, 2**32 and at the tail equal the same op on a
small batch of those items.

The samplers and grid generators compute in float32 or float64 only, so their rows pass
2**31 float32 elements (8 GiB) in one big array: the sampled data (BilinearSampler, its
derivative _bilinear_sampler_d, SpatialTransformer, each at a few points per item), the
scattered output (_bilinear_sampler_adjoint), the affine grid (GridGenerator, whose warp
form would need input and output of 8 GiB each) or its adjoint's input. Grid points and
coordinates are dyadic, so the items equal the small batch exactly.
"""
import mxlite as mx

from . import Row
from .nn import _check_items, _items, _take_items, batch_in, batch_out

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


_IMG = (2, 32, 32)                          # one sampled item: 2048 float32 elements
_TARGET = (17, 33)                         # an affine grid: 2 * 17 * 33 = 1122 per item


def _items_of(per, *shape):
    """A batch of items of ``shape`` (``per`` elements on the big side), just past 2**31."""
    return lambda t: (t.P31 // per + 1,) + shape


def _grid(n):
    """(n, 2, 2, 2): the same four points in every item (x, y dyadic; one past the edge)."""
    pts = mx.nd.array([[[[0.25, -0.5], [1.25, 0.0]], [[-0.75, 0.5], [0.125, 1.0]]]])
    return mx.nd.broadcast_to(pts, shape=(n, 2, 2, 2))


def _loc(n):
    return mx.nd.broadcast_to(mx.nd.array([[0.5, 0.25, 0.0, -0.25, 0.75, 0.125]]),
                              shape=(n, 6))


def _adjoint(g):
    return mx.nd._internal._bilinear_sampler_adjoint(g, _grid(g.shape[0]), dx=1,
                                                     height=_IMG[1], width=_IMG[2])


def _f32(row):
    """A float32 row past 2**31: its reason is the float32-only compute."""
    return Row(row.run, "float32", "2**31", "float32 or float64 only: 2**32 float32 elements "
               "are 16 GiB, the whole peak")


def _roi_row(op, index):
    """``op`` on float32 data (items of (2, 32, 32)) past 2**31 elements, with rois in the
    first item, the one past 2**31 and the last: equal to ``op`` on those three items alone
    (flat indices, with ``index``, shifted by the items' offsets)."""
    def run(t):
        per = 2048
        shp = (t.P31 // per + 1,) + _IMG
        x = t.big("float32", shp[0] * per, shape=shp, fill=1)
        items = [0, (t.P31 + 5) // per, shp[0] - 1]
        boxes = [[0, 1, 2, 20, 30], [0, 0, 0, 31, 31], [0, 5, 1, 9, 3]]
        rois = mx.nd.array([[b] + box[1:] for b in items for box in boxes])
        small_rois = mx.nd.array([[k] + box[1:] for k in range(3) for box in boxes])
        kw = dict(pooled_size=(3, 2), spatial_scale=1.0)
        got = op(x, rois, **kw).asnumpy()
        want = op(_take_items(t, x, items), small_rois, **kw).asnumpy()
        if index:
            shift = (mx.nd.array(items, dtype="int64").asnumpy() - range(3)) * per
            want = want + (want >= 0) * shift.repeat(len(boxes)).reshape(-1, 1, 1, 1)
        t.equal(got, want, "pooled rois")
    return _f32(Row(run, "float32"))


ROWS = {
    "Crop": _items_row(lambda x, out=None: _crop(x.reshape((x.shape[0], 1) + _PER), out),
                       inplace=False),
    "_slice_assign": _items_row(_assign, inplace=True),
    "_slice_assign_scalar": _items_row(_assign_scalar, inplace=True),
    "BilinearSampler": _f32(batch_in(_items_of(2048, *_IMG), lambda x: mx.nd.BilinearSampler(
        x, _grid(x.shape[0])))),
    "_bilinear_sampler_d": _f32(batch_in(_items_of(2048, *_IMG), lambda x: mx.nd._internal.
                                         _bilinear_sampler_d(x, _grid(x.shape[0]), dy=1))),
    "SpatialTransformer": _f32(batch_in(_items_of(2048, *_IMG), lambda x: mx.nd.
                                        SpatialTransformer(x, _loc(x.shape[0]),
                                                           target_shape=(2, 3),
                                                           transform_type="affine",
                                                           sampler_type="bilinear"))),
    "_bilinear_sampler_adjoint": _f32(batch_out(_items_of(2048, 2, 2, 2), 2048, _adjoint)),
    "GridGenerator": _f32(batch_out(_items_of(1122, 6), 1122, lambda x: mx.nd.GridGenerator(
        x, transform_type="affine", target_shape=_TARGET))),
    "_grid_generator_affine_adjoint": _f32(batch_in(
        _items_of(1122, 2, *_TARGET), lambda g: mx.nd._internal._grid_generator_affine_adjoint(
            g, target_shape=_TARGET))),
    "_contrib_AdaptiveAvgPooling2D": _f32(batch_in(_items_of(2048, *_IMG), lambda x: mx.nd.
                                                   contrib.AdaptiveAvgPooling2D(
                                                       x, output_size=(3, 5)))),
    "_adaptive_avg_pooling2d_adjoint": _f32(batch_out(
        _items_of(2048, 2, 4, 8), 2048, lambda g: mx.nd._internal.
        _adaptive_avg_pooling2d_adjoint(g, height=32, width=32))),
    "_contrib_BilinearResize2D": _f32(batch_in(_items_of(2048, *_IMG), lambda x: mx.nd.
                                               contrib.BilinearResize2D(
                                                   x, height=5, width=9, align_corners=False))),
    "_bilinear_resize2d_adjoint": _f32(batch_out(
        _items_of(2048, 2, 4, 8), 2048, lambda g: mx.nd._internal._bilinear_resize2d_adjoint(
            g, height=32, width=32))),
    "ROIPooling": _roi_row(mx.nd.ROIPooling, index=False),
    "_roi_pooling_argmax": _roi_row(mx.nd._internal._roi_pooling_argmax, index=True),
}
