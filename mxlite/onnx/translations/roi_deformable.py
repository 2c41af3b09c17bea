"""DeformablePSROIPooling, its differentiated samplers and their scatter.

Every bin takes sample_per_part**2 samples (a static count): their positions are computed
for all rois, output channels, bins and samples at once from the rois and trans (float64
element-wise arithmetic, trans read at each bin's class and part by Gather), the four taps
of each sample read from the flattened data by Gather (or added into it by ScatterElements
add), as mxlite's ``_dpsroi_*`` computes them."""
import numpy as np

from ...ops.correlation import _Lay, _group_of, _part_of, _std
from ..table import translates
from .roi_common import Arith, roi_columns, spatial_scale, to_dtype, work_dtype


def _layout(node, ctx, data_shape):
    a = node.attrs
    r = ctx.shape(node.inputs[1])[0]
    n, c, h, w = data_shape
    part = a.part_size or a.pooled_size
    ncls = 1 if a.no_trans else ctx.shape(node.inputs[2])[1] // 2
    return _Lay(n, c, h, w, r, a.output_dim, a.pooled_size, a.group_size, part,
                a.sample_per_part, ncls, a.output_dim // ncls)


def _trans_offsets(ctx, trans, lay, dtype):
    """trans[r, 2 * class(o) + (0, 1), part(i), part(j)] as float64 (R, O, P, P) pairs."""
    part = ctx.int64s(_part_of(lay, dtype), base="part")
    cls = np.arange(lay.o) // lay.per_class
    t = ctx.cast(trans, np.float64)
    out = []
    for a in (0, 1):
        v = ctx.node("Gather", [t, ctx.int64s(2 * cls + a, base="cls")], axis=1)
        v = ctx.node("Gather", [v, part], axis=2)
        out.append(ctx.node("Gather", [v, part], axis=3))
    return out


def _taps(m, pos, size, order, factor):
    """[(pixel, weight)] of the two taps along one axis at positions ``pos`` clamped into
    the map: bilinear weights (order 0) or their derivative -factor, +factor (order 1)."""
    pos = m.op("Clip", pos, 0.0, float(size - 1))
    low = m.floor(pos)
    high = m.add(low, m.mask(m.gt(pos, low)))
    if order == 0:
        frac = m.sub(pos, low)
        return [(low, m.sub(1.0, frac)), (high, frac)]
    return [(low, m.sub(0.0, factor)), (high, factor)]


def _samples(ctx, node, ins, lay, dtype):
    """(flat tap positions (4, R, O, P, P, S) int64, their float64 weights, the bins' sample
    count (R, O, P, P) float64) of the samples S = sample_per_part**2 of every bin."""
    a = node.attrs
    m = Arith(ctx)
    b, x1, y1, x2, y2 = roi_columns(ctx, ins[1])
    scale, std = spatial_scale(a), _std(a)
    start_w = m.sub(m.mul(m.c_round(x1), scale), 0.5)
    start_h = m.sub(m.mul(m.c_round(y1), scale), 0.5)
    roi_w = m.max(m.sub(m.sub(m.mul(m.add(m.c_round(x2), 1.0), scale), 0.5), start_w), 0.1)
    roi_h = m.max(m.sub(m.sub(m.mul(m.add(m.c_round(y2), 1.0), scale), 0.5), start_h), 0.1)
    col = [ctx.node("Unsqueeze", [v, ctx.int64s([2, 3])])
           for v in (start_w, start_h, roi_w, roi_h)]                    # (R, 1, 1, 1)
    start_w, start_h, roi_w, roi_h = col
    k = np.arange(lay.p, dtype=np.float64)
    wstart = m.add(start_w, m.mul(m.div(roi_w, float(lay.p)), k[None, None, None, :]))
    hstart = m.add(start_h, m.mul(m.div(roi_h, float(lay.p)), k[None, None, :, None]))
    fx, fy = m.mul(std, roi_w), m.mul(std, roi_h)
    if not a.no_trans:
        tx, ty = _trans_offsets(ctx, ins[2], lay, dtype)
        wstart, hstart = m.add(wstart, m.mul(tx, fx)), m.add(hstart, m.mul(ty, fy))
    every = np.ones((1, lay.o, 1, 1))            # (R, O, P, P) even without trans
    wstart, hstart = m.mul(wstart, every), m.mul(hstart, every)
    gh = _group_of(lay, dtype)
    chan = ((np.arange(lay.o)[:, None, None] * lay.g + gh[None, :, None]) * lay.g
            + gh[None, None, :]).astype(np.float64)
    batch = ctx.cast(ctx.node("Unsqueeze", [b, ctx.int64s([2, 3])]), np.float64)
    base = m.mul(m.add(m.mul(m.max(batch, 0.0), float(lay.c)), chan[None]),
                 float(lay.h * lay.w))
    ih, iw = (v.ravel().astype(np.float64) for v in np.meshgrid(
        np.arange(lay.spp), np.arange(lay.spp), indexing="ij"))
    last = ctx.int64s([-1])
    sub_w = m.div(roi_w, float(lay.p * lay.spp))
    sub_h = m.div(roi_h, float(lay.p * lay.spp))
    x = m.add(ctx.node("Unsqueeze", [wstart, last]),
              m.mul(iw, ctx.node("Unsqueeze", [sub_w, last])))           # (R, O, P, P, S)
    y = m.add(ctx.node("Unsqueeze", [hstart, last]),
              m.mul(ih, ctx.node("Unsqueeze", [sub_h, last])))
    live = m.ge(ctx.node("Unsqueeze", [batch, last]), 0.0)
    valid = m.mask(m.ge(x, -0.5), m.le(x, lay.w - 0.5), m.ge(y, -0.5), m.le(y, lay.h - 0.5),
                   live)
    seen = m.op("ReduceSum", valid, ctx.int64s([-1]), keepdims=0)
    base5 = ctx.node("Unsqueeze", [base, last])
    ordx, ordy = (a.dx, a.dy) if "dx" in a else (0, 0)
    at, wt = [], []
    for py, wy in _taps(m, y, lay.h, ordy, ctx.node("Unsqueeze", [fy, last])):
        for px, wx in _taps(m, x, lay.w, ordx, ctx.node("Unsqueeze", [fx, last])):
            at.append(m.add(base5, m.add(m.mul(py, float(lay.w)), px)))
            wt.append(m.mul(m.mul(wy, wx), valid))
    return at, wt, seen


def _stack(ctx, values):
    return ctx.node("Concat", [ctx.node("Unsqueeze", [v, ctx.int64s([0])]) for v in values],
                    axis=0)


def _pool(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    work = work_dtype(dtype)
    lay = _layout(node, ctx, ctx.shape(node.inputs[0]))
    at, wt, seen = _samples(ctx, node, ins, lay, dtype)
    m = Arith(ctx, work)
    flat = ctx.node("Reshape", [to_dtype(ctx, ins[0], dtype, work), ctx.int64s([-1])])
    taps = ctx.node("Gather", [flat, m.index(_stack(ctx, at))])         # (4, R, O, P, P, S)
    acc = ctx.node("ReduceSum", [m.mul(taps, ctx.cast(_stack(ctx, wt), work)),
                                 ctx.int64s([0, 5])], keepdims=0)
    count = ctx.cast(seen, work)
    out = m.div(acc, m.max(count, 1.0))
    to_dtype(ctx, out, work, dtype, outs[:1])
    if len(outs) > 1:
        to_dtype(ctx, count, work, dtype, outs[1:2])


_OPS = ["Cast", "Split", "Unsqueeze", "Gather", "Mul", "Add", "Sub", "Div", "Max", "Sign",
        "Abs", "Floor", "Clip", "Greater", "GreaterOrEqual", "LessOrEqual", "And", "ReduceSum",
        "Concat", "Reshape"]
_NOTES = ("the sample_per_part squared samples of every bin at once, their taps read by Gather; a "
          "batch index past the data or a non-finite coordinate (MXNetErrors in mxlite) are "
          "undefined in ONNX")


@translates("_contrib_DeformablePSROIPooling", onnx_ops=_OPS, notes=_NOTES)
def _deformable_psroi_pooling(ctx, node, ins, outs):
    _pool(ctx, node, ins, outs)


@translates("_dpsroi_sample", onnx_ops=_OPS, notes=_NOTES)
def _dpsroi_sample(ctx, node, ins, outs):
    _pool(ctx, node, ins, outs)


@translates("_dpsroi_scatter", onnx_ops=_OPS + ["ScatterElements"],
            notes="the taps of every bin's samples as in DeformablePSROIPooling's translation, "
                  "added into the map by ScatterElements add; a batch index past the data or a "
                  "non-finite coordinate (MXNetErrors in mxlite) are undefined in ONNX")
def _dpsroi_scatter(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    work = work_dtype(dtype)
    shape = tuple(node.attrs.data_shape)
    lay = _layout(node, ctx, shape)
    at, wt, seen = _samples(ctx, node, ins, lay, dtype)
    m = Arith(ctx, work)
    share = m.div(to_dtype(ctx, ins[0], dtype, work), m.max(ctx.cast(seen, work), 1.0))
    values = m.mul(ctx.cast(_stack(ctx, wt), work),
                   ctx.node("Unsqueeze", [share, ctx.int64s([0, 5])]))
    zeros = ctx.const(np.zeros(int(np.prod(shape)), work), base="dps_grad")
    grad = ctx.node("ScatterElements", [zeros, m.index(ctx.node("Reshape", [
        _stack(ctx, at), ctx.int64s([-1])])), ctx.node("Reshape", [values, ctx.int64s([-1])])],
        axis=0, reduction="add")
    to_dtype(ctx, ctx.node("Reshape", [grad, ctx.int64s(shape)]), work, dtype, outs[:1])
