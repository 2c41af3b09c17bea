"""Large-tensor rows: Correlation, its tangent and adjoint (mxlite/ops/correlation.py).

The big array is a float16 batch of (16, 8, 16) images (2048 elements each) past 2**32
elements (8 GiB), passed as both data1 and data2 (and as the tangent): the ops pad and cast
one block of images and channels at a time (float32 temporaries of about 2**22 elements),
so the peak stays near the big array plus the output. With max_displacement 0 and a 1 x 1
kernel the output is sum_c a * b / 16 per pixel: the fill 1 and the markers (3, 5, 7, 9)
give sums exact in float16. The items around 2**31, 2**32 and at the tail equal the same
op on a small batch of those items.

The adjoint's output is as large as the data (8 GiB at 2**32 float16 elements), a second
big array beside it: its row stops past 2**31 (4 + 4 GiB).

Measured on CPU (2 cores, shared): Correlation 33 s, peak 9.05 GB; the tangent 36 s, 9.08 GB;
the adjoint 31 s, 8.81 GB; DeformablePSROIPooling 7 s, the sampler 12 s, the scatter 13 s,
each 8.44 GB.
"""
import numpy as np

import mxlite as mx

from . import Row
from .nn import _check_items, _items, _take_items

_IMAGE = (16, 8, 16)
_PER = 2048
_KW = dict(max_displacement=0)
_ADJ_WHY = ("the adjoint writes an output as large as its data inputs: past 2**32 float16 "
            "elements the data and the output are 16 GiB, the whole peak")


def _batch(t, size):
    n = t.power(size) // _PER + 1
    return t.big("float16", n * _PER, shape=(n,) + _IMAGE, fill=1)


def _volume_row(call):
    """A row for an op whose output is Correlation-shaped: the big batch in every data
    slot."""
    def run(t):
        x = _batch(t, "2**32")
        items = _items(t, x.size, _PER)
        small = _take_items(t, x, items)
        want = call(small).asnumpy()
        _check_items(t, call(x), items, want, "correlations")
    return Row(run, "float16")


def _correlation(x):
    return mx.nd.Correlation(x, x, **_KW)


def _tangent(x):
    return mx.nd._internal._correlation_tangent(x, x, x, side=2, **_KW)


def _adjoint_row(t):
    x = _batch(t, "2**31")
    n = x.shape[0]
    items = _items(t, x.size, _PER)
    g = mx.nd.full((n, 1) + _IMAGE[1:], 16.0, dtype="float16")   # 16 / 16: the grad is data
    small = _take_items(t, x, items)
    gs = mx.nd.full((len(items), 1) + _IMAGE[1:], 16.0, dtype="float16")
    want = mx.nd._internal._correlation_adjoint(gs, small, small, side=1, **_KW).asnumpy()
    y = mx.nd._internal._correlation_adjoint(g, x, x, side=1, **_KW)
    t.seen(y)
    _check_items(t, y, items, want, "data gradients")


ROWS = {
    "Correlation": _volume_row(_correlation),
    "_correlation_tangent": _volume_row(_tangent),
    "_correlation_adjoint": Row(_adjoint_row, "float16", "2**31", _ADJ_WHY),
}


# ---- DeformablePSROIPooling, its sampler and scatter ------------------------------------------
# A float32 batch of (8, 16, 16) images (2048 elements each) past 2**31 elements (8 GiB), one
# roi on each image around 2**31 and at the tail (the rois share the data's dtype: float16
# cannot name an image past 2048, and 2**32 float32 elements are the whole 16 GiB peak). The
# ops work a block of rois at a time, so the peak stays near the big array; the scatter's
# output is the big array, its head gradient small.
_DPS_WHY = ("rois share the data's dtype and float16 cannot name an image past 2048; "
            "2**32 float32 elements are 16 GiB, the whole peak")
_DIMG = (8, 16, 16)
_DKW = dict(spatial_scale=0.5, output_dim=2, group_size=2, pooled_size=3, part_size=2,
            sample_per_part=2, trans_std=0.25)
_BOXES = [[3.0, 2.0, 25.0, 20.0], [-4.0, 10.0, 40.0, 33.0]]


def _dps_rois(images):
    return mx.nd.array([[b] + _BOXES[k % 2] for k, b in enumerate(images)], dtype="float32")


def _dps_trans(rows):
    """One dyadic offset pattern per roi (moves samples across pixels and the map's edge)."""
    base = (mx.nd.arange(8, dtype="float32").reshape((1, 2, 2, 2)) % 5 - 2) * 0.5
    return mx.nd.broadcast_to(base, shape=(rows, 2, 2, 2))


def _dps_forward(op, **kw):
    def run(t):
        shp = (t.P31 // _PER + 1,) + _DIMG
        x = t.big("float32", shp[0] * _PER, shape=shp, fill=1)
        items = _items(t, x.size, _PER)
        small = _take_items(t, x, items)
        rows = len(items)
        want = op(small, _dps_rois(range(rows)), _dps_trans(rows), **_DKW, **kw).asnumpy()
        y = op(x, _dps_rois(items), _dps_trans(rows), **_DKW, **kw)
        t.equal(y, want, "pooled rois")
    return Row(run, "float32", "2**31", _DPS_WHY)


def _dps_scatter_row(t):
    shp = (t.P31 // _PER + 1,) + _DIMG
    items = _items(t, shp[0] * _PER, _PER)
    rows = len(items)
    g = mx.nd.array(np.arange(rows * 18).reshape(rows, 2, 3, 3) % 5 - 2, dtype="float32")
    scatter = mx.nd._internal._dpsroi_scatter
    want = scatter(g, _dps_rois(range(rows)), _dps_trans(rows), data_shape=(rows,) + _DIMG,
                   **_DKW).asnumpy()
    y = scatter(g, _dps_rois(items), _dps_trans(rows), data_shape=shp, **_DKW)
    t.seen(y)
    _check_items(t, y, items, want, "scattered images")


ROWS.update({
    "_contrib_DeformablePSROIPooling": _dps_forward(mx.nd.contrib.DeformablePSROIPooling),
    "_dpsroi_sample": _dps_forward(mx.nd._internal._dpsroi_sample, dx=1, dy=0),
    "_dpsroi_scatter": Row(_dps_scatter_row, "float32", "2**31", _DPS_WHY),
})
