"""PSROIPooling and the adjoints of ROIAlign and PSROIPooling as products with separable
weight matrices.

Both pools are separable (mxlite/ops/roi.py): per roi, a row-weight matrix Wy (bins, H) and
a column-weight matrix Wx (bins, W) such that a bin is ``Wy[i] @ data[b, channel] @
Wx[j].T``. The matrices are computed in the graph from the rois (element-wise float64
arithmetic; ROIAlign's bilinear samples added up with a ScatterElements), the batch index
folds into Wy as a one-hot over the batch, and the pool (or its adjoint) is two MatMuls
with the position-sensitive channel cells picked by Gather (or spread by one-hot
matrices)."""
import numpy as np

from ..table import translates
from .roi_common import (Arith, bilinear_corners, roi_columns, spatial_scale, to_dtype,
                         work_dtype)


# ---- the weights --------------------------------------------------------------------------
def _align_axis(ctx, lo, hi, bins, length, attrs):
    """(R, bins, length) float64: ROIAlign's weights along one axis, each bin's bilinear
    sample weights over its samples' count (mxlite's rules: a sample outside [-1, length]
    reads zero, one below 0 the first pixel, one past length - 1 the last)."""
    m = Arith(ctx)
    offset, scale = (0.5 if attrs.aligned else 0.0), spatial_scale(attrs)
    start = m.sub(m.mul(lo, scale), offset)
    size = m.sub(m.sub(m.mul(hi, scale), offset), start)
    if not attrs.aligned:
        size = m.max(size, 1.0)                 # at least one pixel, as mxlite
    step = m.div(size, float(bins))
    ratio = int(attrs.sample_ratio)
    grid = m.ceil(step) if ratio <= 0 else m.v(float(ratio))
    base = m.add(start, m.mul(step, np.arange(bins, dtype=np.float64)[None, :]))   # (R, B)
    spacing = m.div(step, grid)
    if ratio > 0:
        count, first = ratio, m.v(0.0)
    else:
        # an adaptive grid takes ceil(step) samples spaced more than half a pixel apart (or
        # one): at most 2 * (length + 1) + 1 lie in [-1, length], from ``first`` on
        count = 2 * length + 8
        first = m.sub(m.floor(m.sub(m.div(m.sub(-1.0, base), spacing), 0.5)), 1.0)
        first = m.max(first, 0.0)
    k = m.add(m.op("Unsqueeze", first, ctx.int64s([-1])) if ratio <= 0 else first,
              np.arange(count, dtype=np.float64))                               # (R, B, K)
    spacing3 = ctx.node("Unsqueeze", [spacing, ctx.int64s([-1])])
    y = m.add(ctx.node("Unsqueeze", [base, ctx.int64s([-1])]),
              m.mul(m.add(k, 0.5), spacing3))
    grid3 = ctx.node("Unsqueeze", [grid, ctx.int64s([-1])]) if ratio <= 0 else grid
    valid = m.mask(m.le(k, m.sub(grid3, 1.0)), m.ge(y, -1.0), m.le(y, float(length)))
    low, high, frac = bilinear_corners(m, y, length)
    share = m.div(valid, grid3)
    weights = [m.mul(m.sub(1.0, frac), share), m.mul(frac, share)]
    return _scatter_rows(ctx, m, [low, high], weights, bins, length)


def _scatter_rows(ctx, m, positions, weights, bins, length):
    """(R, bins, length): the (R, bins, K) ``weights`` added at their pixel ``positions``."""
    at = m.index(ctx.node("Concat", positions, axis=2))
    wt = ctx.node("Concat", weights, axis=2)
    zeros = ctx.node("Expand", [m.v(np.zeros((1, bins, length))),
                                ctx.node("Concat", [ctx.node("Shape", [wt], end=1),
                                                    ctx.int64s([bins, length])], axis=0)])
    return ctx.node("ScatterElements", [zeros, at, wt], axis=2, reduction="add")


def _psroi_axis(ctx, lo, hi, bins, length, scale):
    """(R, bins, length) float64: 1 / the bin's pixel count over the whole pixels of each
    bin of PSROIPooling (rounded roi corners, the end inclusive; an empty bin is zero)."""
    m = Arith(ctx)
    start = m.mul(m.c_round(lo), scale)
    size = m.max(m.sub(m.mul(m.add(m.c_round(hi), 1.0), scale), start), 0.1)
    step = m.div(size, float(bins))
    k = np.arange(bins, dtype=np.float64)[None, :]
    begin = m.op("Clip", m.floor(m.add(m.mul(k, step), start)), 0.0, float(length))
    end = m.op("Clip", m.ceil(m.add(m.mul(m.add(k, 1.0), step), start)), 0.0, float(length))
    unsq = [ctx.node("Unsqueeze", [v, ctx.int64s([-1])]) for v in (begin, end)]
    pix = np.arange(length, dtype=np.float64)[None, None, :]
    inside = m.mask(m.ge(pix, unsq[0]), m.lt(pix, unsq[1]))
    return m.div(inside, m.max(m.sub(unsq[1], unsq[0]), 1.0))


# ---- the pool and its adjoint ---------------------------------------------------------------
class Layout:
    """The channel layout: data's C channels as (O, GY, GX) cells; bin row i reads cell row
    ``rows[i]``, bin column j cell column ``cols[j]``."""

    def __init__(self, out_channels, cells, rows, cols):
        self.o, (self.gy, self.gx) = out_channels, cells
        self.rows, self.cols = list(rows), list(cols)

    def onehot(self, along):
        """(bins, cells) 0/1: which cell each bin reads along an axis."""
        owners, cells = (self.rows, self.gy) if along == 0 else (self.cols, self.gx)
        return np.eye(cells)[owners]


def _batch_rows(ctx, wy, batch, images, work):
    """Wy with the batch index folded in: (R, bins, N * H), zero for a roi of another
    image (so a negative batch index pools nothing); ``images`` the int64 values 0..N-1."""
    hit = ctx.node("Equal", [ctx.node("Unsqueeze", [batch, ctx.int64s([1, 2, 3])]),
                             ctx.node("Unsqueeze", [images, ctx.int64s([0, 1, 3])])])
    rows = ctx.node("Mul", [ctx.node("Unsqueeze", [ctx.cast(wy, work), ctx.int64s([2])]),
                            ctx.cast(hit, work)])                      # (R, B, N, H)
    return ctx.node("Reshape", [rows, ctx.int64s([0, 0, -1])])


def pool(ctx, data, wy, wx, batch, shape, lay, work):
    """(R, O, ph, pw) in ``work``: bin (r, o, i, j) = Wy[r, i] @ data[b_r, (o, rows[i],
    cols[j])] @ Wx[r, j].T, for (N, C, H, W) ``data`` of ``shape`` already in ``work`` (N
    and R may be dynamic)."""
    _, _, h, w = shape           # the batch size is read from data (a dynamic axis)
    ph, pw = len(lay.rows), len(lay.cols)
    images = ctx.node("Range", [ctx.const(np.asarray(0, np.int64)),
                                ctx.node("Squeeze", [ctx.node("Shape", [data], end=1)]),
                                ctx.const(np.asarray(1, np.int64))])
    rows = ctx.node("Transpose", [_batch_rows(ctx, wy, batch, images, work)], perm=[1, 0, 2])
    d = ctx.node("Reshape", [data, ctx.int64s([-1, lay.o, lay.gy, lay.gx, h, w])])
    d = ctx.node("Transpose", [d], perm=[2, 0, 4, 1, 3, 5])             # (GY, N, H, O, GX, W)
    d = ctx.node("Reshape", [d, ctx.int64s([lay.gy, -1, lay.o * lay.gx * w])])
    if lay.gy > 1 and lay.rows != list(range(lay.gy)):
        d = ctx.node("Gather", [d, ctx.int64s(lay.rows)], axis=0)
    s = ctx.node("MatMul", [rows, d])                                    # (ph, R, O*GX*W)
    s = ctx.node("Reshape", [s, ctx.int64s([ph, -1, lay.o, lay.gx, w])])
    if lay.gx > 1 and lay.cols != list(range(lay.gx)):
        s = ctx.node("Gather", [s, ctx.int64s(lay.cols)], axis=3)        # (ph, R, O, pw, W)
    cols = ctx.node("Unsqueeze", [ctx.cast(wx, work), ctx.int64s([0, 2])])
    s = ctx.node("ReduceSum", [ctx.node("Mul", [s, cols]), ctx.int64s([4])], keepdims=0)
    return ctx.node("Transpose", [s], perm=[1, 2, 0, 3])


def adjoint(ctx, g, wy, wx, batch, shape, lay, work):
    """(N, C, H, W) in ``work``: the adjoint of ``pool`` at the head gradient ``g`` (R, O,
    ph, pw) already in ``work``: each bin's gradient spread back with its weights and
    summed over the rois."""
    n, c, h, w = shape
    ph = len(lay.rows)
    p = ctx.node("Mul", [ctx.node("Unsqueeze", [g, ctx.int64s([-1])]),
                         ctx.node("Unsqueeze", [ctx.cast(wx, work), ctx.int64s([1, 2])])])
    if lay.cols != list(range(lay.gx)):                  # bins -> their cell columns
        p = ctx.node("MatMul", [ctx.node("Transpose", [p], perm=[0, 1, 2, 4, 3]),
                                ctx.const(lay.onehot(1).astype(work))])
        p = ctx.node("Transpose", [p], perm=[0, 1, 2, 4, 3])             # (R, O, ph, GX, W)
    f = ctx.node("Transpose", [p], perm=[0, 2, 1, 3, 4])                 # (R, ph, O, GX, W)
    f = ctx.node("Reshape", [f, ctx.int64s([-1, lay.o * lay.gx * w])])
    rows = _batch_rows(ctx, wy, batch, ctx.int64s(range(n)), work)      # (R, ph, N*H)
    rows = ctx.node("Mul", [ctx.node("Unsqueeze", [rows, ctx.int64s([2])]),
                            ctx.const(lay.onehot(0).astype(work)[None, :, :, None])])
    rows = ctx.node("Transpose", [rows], perm=[2, 3, 0, 1])              # (GY, N*H, R, ph)
    rows = ctx.node("Reshape", [rows, ctx.int64s([lay.gy, n * h, -1])])
    out = ctx.node("MatMul", [rows, f])                                   # (GY, N*H, O*GX*W)
    out = ctx.node("Reshape", [out, ctx.int64s([lay.gy, n, h, lay.o, lay.gx, w])])
    out = ctx.node("Transpose", [out], perm=[1, 3, 0, 4, 2, 5])
    return ctx.node("Reshape", [out, ctx.int64s([n, c, h, w])])


# ---- the operators ---------------------------------------------------------------------------
def _psroi_layout(attrs, channels):
    pooled, group = attrs.pooled_size, attrs.group_size or attrs.pooled_size
    owner = [min(max(i * group // pooled, 0), group - 1) for i in range(pooled)]
    return Layout(channels // (group * group), (group, group), owner, owner)


def _align_layout(attrs, channels):
    ph, pw = attrs.pooled_size
    if attrs.position_sensitive:
        return Layout(channels // (ph * pw), (ph, pw), range(ph), range(pw))
    return Layout(channels, (1, 1), [0] * ph, [0] * pw)


def _psroi_weights(ctx, cols, shape, attrs):
    _, x1, y1, x2, y2 = cols
    p, scale = attrs.pooled_size, spatial_scale(attrs)
    return (_psroi_axis(ctx, y1, y2, p, shape[2], scale),
            _psroi_axis(ctx, x1, x2, p, shape[3], scale))


def _align_weights(ctx, cols, shape, attrs):
    _, x1, y1, x2, y2 = cols
    ph, pw = attrs.pooled_size
    return (_align_axis(ctx, y1, y2, ph, shape[2], attrs),
            _align_axis(ctx, x1, x2, pw, shape[3], attrs))


def _translate(ctx, node, ins, outs, weights, layout, forward):
    dtype = ctx.dtype(node.inputs[0])
    work = work_dtype(dtype)
    shape = ctx.shape(node.inputs[0]) if forward else tuple(node.attrs.data_shape)
    cols = roi_columns(ctx, ins[1])
    batch = ctx.node("Reshape", [cols[0], ctx.int64s([-1])])
    wy, wx = weights(ctx, cols, shape, node.attrs)
    lay = layout(node.attrs, shape[1])
    src = to_dtype(ctx, ins[0], dtype, work)
    fn = pool if forward else adjoint
    to_dtype(ctx, fn(ctx, src, wy, wx, batch, shape, lay, work), work, dtype, outs[:1])


_OPS = ["Cast", "Split", "Reshape", "Unsqueeze", "Mul", "Add", "Sub", "Div", "Max", "Min",
        "Floor", "Ceil", "Clip", "Sign", "Abs", "GreaterOrEqual", "Less", "And", "Equal",
        "Transpose", "Gather", "MatMul", "ReduceSum"]
_UNDEFINED = ("a batch index past the data or a non-finite coordinate (MXNetErrors in "
              "mxlite) are undefined in ONNX")


@translates("_contrib_PSROIPooling", onnx_ops=_OPS + ["Shape", "Squeeze", "Range"],
            notes="the bins as 0/1 weight matrices computed from the rois, two MatMuls; "
                  + _UNDEFINED)
def _psroi_pooling(ctx, node, ins, outs):
    _translate(ctx, node, ins, outs, _psroi_weights, _psroi_layout, forward=True)


@translates("_psroi_pooling_adjoint", onnx_ops=_OPS,
            notes="the transposed MatMuls of PSROIPooling's translation; " + _UNDEFINED)
def _psroi_pooling_adjoint(ctx, node, ins, outs):
    _translate(ctx, node, ins, outs, _psroi_weights, _psroi_layout, forward=False)


@translates("_roi_align_adjoint", onnx_ops=_OPS + ["LessOrEqual", "Concat", "Shape", "Expand",
                                                   "ScatterElements"],
            notes="ROIAlign's separable bilinear weights computed from the rois (an adaptive "
                  "grid reads at most 2 * size + 8 samples per bin, all that can fall in "
                  "the map), transposed MatMuls; with aligned=True a roi without positive "
                  "size and " + _UNDEFINED)
def _roi_align_adjoint(ctx, node, ins, outs):
    _translate(ctx, node, ins, outs, _align_weights, _align_layout, forward=False)
