"""Large-tensor rows: ROIAlign, PSROIPooling, RROIAlign and their adjoints (mxlite/ops/roi.py).

Each reads (or, for an adjoint, writes) a float32 batch of images past 2**31 elements
(8 GiB; 2048 elements per image) through a few rois, one on each image around 2**31 and
at the tail: the pooled rois (or the scattered images) equal the same op on a small batch
of those images alone. The rois share the data's dtype (MXNet's rule), and float16 holds
whole numbers exactly only up to 2048, so float16 rois cannot name the images past 2**32
elements; 2**32 float32 elements would be the whole 16 GiB peak. The ops compute one image
at a time, so the peak stays near the big array.
"""
import numpy as np

import mxlite as mx

from . import Row
from .nn import _check_items, _items, _take_items

_ALIGN = dict(pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=2)
_PS = dict(spatial_scale=1.0, output_dim=1, pooled_size=2, group_size=2)
_RROI = dict(pooled_size=(2, 2), spatial_scale=0.5, sampling_ratio=2)
_IMAGES = {"align": (2, 32, 32), "ps": (4, 16, 32), "rroi": (2, 32, 32)}   # 2048 each
_BOXES = {"align": [[3.5, 2.25, 40.0, 27.5], [-4.0, 1.0, 20.5, 13.0]],
          "ps": [[3.5, 2.25, 40.0, 27.5], [-4.0, 1.0, 20.5, 13.0]],
          "rroi": [[30.0, 20.0, 24.0, 16.0, 30.0], [10.0, 50.0, 40.0, 20.0, -90.0]]}


def _rois(images, kind):
    """One roi per image index in ``images`` (corners inside and across the border)."""
    box = _BOXES[kind]
    return mx.nd.array([[b] + box[k % 2] for k, b in enumerate(images)], dtype="float32")


_ROI_WHY = ("rois share the data's dtype and float16 cannot name an image past 2048; "
            "2**32 float32 elements are 16 GiB, the whole peak")


def _forward(op, kind, kw):
    def run(t):
        per = 2048
        shp = (t.P31 // per + 1,) + _IMAGES[kind]
        x = t.big("float32", shp[0] * per, shape=shp, fill=1)
        items = _items(t, x.size, per)
        want = op(_take_items(t, x, items), _rois(range(len(items)), kind), **kw).asnumpy()
        y = op(x, _rois(items, kind), **kw)
        t.equal(y, want, "pooled rois")
    return Row(run, "float32", "2**31", _ROI_WHY)


def _adjoint(op, kind, kw):
    def run(t):
        per = 2048
        shp = (t.P31 // per + 1,) + _IMAGES[kind]
        items = _items(t, shp[0] * per, per)
        small = (len(items),) + shp[1:]
        rows = len(items)
        g_shape = _head_shape(kind, rows, kw)
        g = mx.nd.array(np.arange(np.prod(g_shape)).reshape(g_shape) % 5 - 2, dtype="float32")
        want = op(g, _rois(range(rows), kind), data_shape=small, **kw).asnumpy()
        y = op(g, _rois(items, kind), data_shape=shp, **kw)
        t.seen(y)
        _check_items(t, y, items, want, "scattered images")
    return Row(run, "float32", "2**31", _ROI_WHY)


def _head_shape(kind, rows, kw):
    if kind in ("align", "rroi"):
        return (rows, _IMAGES[kind][0]) + tuple(kw["pooled_size"])
    return (rows, kw["output_dim"], kw["pooled_size"], kw["pooled_size"])


ROWS = {
    "_contrib_ROIAlign": _forward(mx.nd.contrib.ROIAlign, "align", _ALIGN),
    "_roi_align_adjoint": _adjoint(mx.nd._internal._roi_align_adjoint, "align", _ALIGN),
    "_contrib_PSROIPooling": _forward(mx.nd.contrib.PSROIPooling, "ps", _PS),
    "_psroi_pooling_adjoint": _adjoint(mx.nd._internal._psroi_pooling_adjoint, "ps", _PS),
    "_contrib_RROIAlign": _forward(mx.nd.contrib.RROIAlign, "rroi", _RROI),
    "_rroi_align_adjoint": _adjoint(mx.nd._internal._rroi_align_adjoint, "rroi", _RROI),
}


# ---- the deformable convolutions: float32 or float64 only (BilinearSampler's dtypes) ------
# The big array is the data, just past 2**31 float32 elements (8 GiB: 2**32 would be the
# whole 16 GiB peak), images of (16, 8, 16); a 1x1 kernel over 16 channels keeps the offsets
# (2 per position) and the output (1 filter) at 1/8 and 1/16 of it, and the compute samples
# blocks of images, so the peak stays near the data.
from .nn import batch_in  # noqa: E402

_F32_WHY = ("float32 or float64 only: 2**32 float32 elements are 16 GiB, the whole peak")
_DIMG = (16, 8, 16)
_DKW = dict(kernel=(1, 1), num_filter=1, no_bias=True)


def _pattern(n, channels):
    """(n, channels, 8, 16) offsets/masks: one dyadic pattern for every image."""
    base = mx.nd.arange(channels * 8 * 16, dtype="float32").reshape((1, channels, 8, 16))
    return mx.nd.broadcast_to((base % 7 - 3) * 0.25, shape=(n, channels, 8, 16))


def _weight():
    return mx.nd.arange(16, dtype="float32").reshape((1, 16, 1, 1)) % 5 - 2


def _dconv(x):
    return mx.nd.contrib.DeformableConvolution(x, _pattern(x.shape[0], 2), _weight(), **_DKW)


def _mdconv(x):
    return mx.nd.contrib.ModulatedDeformableConvolution(
        x, _pattern(x.shape[0], 2), _pattern(x.shape[0], 1) + 1.0, _weight(), **_DKW)


def _grid(x):
    return mx.nd._internal._deform_grid(x, kernel=(1, 1), data_shape=(x.shape[0], 1, 32, 32))


def _big(per, shape, size):
    return lambda t: (t.power(size) // per + 1,) + shape


def _deform_row(shape, call, size="2**31", why=_F32_WHY):
    row = batch_in(_big(2048, shape, size), call)
    return Row(row.run, "float32", size, why)


ROWS.update({
    "_contrib_DeformableConvolution": _deform_row(_DIMG, _dconv),
    "_contrib_ModulatedDeformableConvolution": _deform_row(_DIMG, _mdconv),
    "_deform_grid": _deform_row((2, 32, 32), _grid, "2**29",
                                "float32 or float64 only, the grid is as large as the "
                                "offsets, and its positions are built in float64 "
                                "temporaries of the grid's size: past 2**30 the row passes "
                                "the 16 GiB peak"),
})
