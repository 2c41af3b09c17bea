"""Correlation (FlowNet's cost volume) and contrib.DeformablePSROIPooling.

**Correlation** compares each K x K patch of ``data1`` with the patches of ``data2`` displaced
by up to ``max_displacement`` (on a grid of step ``stride2``): per displacement q, a term
f(data1, shifted data2) (the product, or the absolute difference) summed over channels, then
a K x K box sum taken every ``stride1`` pixels, divided by K * K * C. With P1, P2 the padded
inputs and S_q the shift by displacement q::

    out[n, q] = box_stride(sum_c f(P1, S_q P2)) / (K * K * C)

Its derivatives are two more ops of the same shape, each a loop over the displacements:
the *tangent* ``_correlation_tangent(t, data1, data2, side)`` (the derivative along a
direction t of data1 (side 1) or data2 (side 2): f replaced by t * df/da, or S_q(t) * df/db)
and its *adjoint* ``_correlation_adjoint(ograd, data1, data2, side)`` (the head gradient
spread back over each window, times df/da or df/db, shifted back for data2). The adjoint is
the gradient of Correlation, the tangent the adjoint's gradient in ``ograd`` and vice versa;
for the product, df/da = b and df/db = a are linear, so the gradients in data1 and data2 are
adjoints again with the direction substituted; for the absolute difference df/da =
sign(a - b) is piecewise constant and those gradients are zero. So every order is a graph of
these three ops.

Every compute function uses the device namespace (``rctx.xp``) and the array methods NumPy
and CuPy share, so the GPU runs them unchanged.
"""
from collections import namedtuple

import numpy as np

from ..base import op_error
from .common import run_in
from .registry import REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc

_CORR, _CORR_ADJ, _CORR_TAN = "Correlation", "_correlation_adjoint", "_correlation_tangent"
_REAL = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_CHUNK = 2 ** 22          # elements of one block's temporaries (a bounded working set)
_MAX_SHIFTS = 2 ** 16     # displacements per output position: (2 * 127 + 1)**2 at most


# ---- geometry --------------------------------------------------------------------------------
_Geo = namedtuple("_Geo", "n c h w pad k md s1 s2 radius grid th tw hr wr")


def _corr_geometry(op, shape, attrs):
    """The layout of a Correlation over data of ``shape`` (MXNet's formulas: border =
    max_displacement + kernel radius; th = ceil((H + 2 pad - 2 border) / stride1); a
    displacement grid of 2 * (max_displacement // stride2) + 1 per axis). ``hr, wr`` is the
    window region of P1 the output reads: (th - 1) * stride1 + K rows from max_displacement."""
    shape = tuple(shape)
    if len(shape) != 4:
        raise op_error(op, f"data must be 4-D (batch, channel, height, width), got shape {shape}")
    k, md, s1, s2, pad = (attrs.kernel_size, attrs.max_displacement, attrs.stride1,
                          attrs.stride2, attrs.pad_size)
    if k < 1 or k % 2 == 0:
        raise op_error(op, f"kernel_size={k} must be an odd number >= 1")
    if s1 < 1 or s2 < 1:
        raise op_error(op, f"stride1={s1} and stride2={s2} must be >= 1")
    if md < 0 or pad < 0:
        raise op_error(op, f"max_displacement={md} and pad_size={pad} must be >= 0")
    n, c, h, w = shape
    border = md + (k - 1) // 2
    span = (h + 2 * pad - 2 * border, w + 2 * pad - 2 * border)
    if min(span) < 1 or c < 1:
        raise op_error(op, f"data of shape {shape} padded by {pad} is too small for kernel_size="
                       f"{k} and max_displacement={md} (each padded side must exceed 2 * "
                       f"{border}), or has no channel")
    # one padded image plane is the least a block holds (MXNet held two padded copies of
    # the whole batch): a plane past this machine's memory is an error, not a failed malloc
    check_alloc(op, (h + 2 * pad, w + 2 * pad), "float64", "padded plane")
    th, tw = (-(-s // s1) for s in span)
    radius = md // s2
    if (2 * radius + 1) ** 2 > _MAX_SHIFTS:
        raise op_error(op, f"max_displacement={md} // stride2={s2} gives {(2 * radius + 1) ** 2}"
                       f" displacements, more than {_MAX_SHIFTS} (each is one pass over the "
                       "data)")
    return _Geo(n, c, h, w, pad, k, md, s1, s2, radius, 2 * radius + 1, th, tw,
                (th - 1) * s1 + k, (tw - 1) * s1 + k)


def _out_shape(geo):
    return (geo.n, geo.grid * geo.grid, geo.th, geo.tw)


def _shifts(geo):
    """(q, dy, dx) of each displacement, in MXNet's channel order (row-major, y outer)."""
    for q in range(geo.grid * geo.grid):
        yield q, (q // geo.grid - geo.radius) * geo.s2, (q % geo.grid - geo.radius) * geo.s2


def _two_data(op, shapes, first, names):
    """The shape of data1, checked equal to data2's (MXNet never compared them and read past
    a smaller data2)."""
    a, b = (tuple(s) for s in shapes[first:first + 2])
    if a != b:
        raise op_error(op, f"{names[0]} of shape {a} and {names[1]} of shape {b} must have one "
                       "shape")
    return a


def _corr_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error(_CORR, f"takes 2 inputs (data1, data2), got {len(shapes)}")
    data = _two_data(_CORR, shapes, 0, ("data1", "data2"))
    return [check_alloc(_CORR, _out_shape(_corr_geometry(_CORR, data, attrs)), "float64")]


def _adjoint_shape(shapes, attrs):
    if len(shapes) != 3:
        raise op_error(_CORR_ADJ, f"takes 3 inputs (ograd, data1, data2), got {len(shapes)}")
    data = _two_data(_CORR_ADJ, shapes, 1, ("data1", "data2"))
    want = _out_shape(_corr_geometry(_CORR_ADJ, data, attrs))
    if tuple(shapes[0]) != want:
        raise op_error(_CORR_ADJ, f"ograd of shape {tuple(shapes[0])} must be {want}, "
                       f"Correlation's output for data of shape {data}")
    return [check_alloc(_CORR_ADJ, data, "float64", "data shape")]


def _tangent_shape(shapes, attrs):
    if len(shapes) != 3:
        raise op_error(_CORR_TAN, f"takes 3 inputs (tangent, data1, data2), got {len(shapes)}")
    data = _two_data(_CORR_TAN, shapes, 1, ("data1", "data2"))
    if tuple(shapes[0]) != data:
        raise op_error(_CORR_TAN, f"tangent of shape {tuple(shapes[0])} must have data's "
                       f"shape {data}")
    return [check_alloc(_CORR_TAN, _out_shape(_corr_geometry(_CORR_TAN, data, attrs)),
                        "float64")]


def _float_type(op, names):
    def infer_type(dtypes, attrs):
        dts = [np.dtype(d) for d in dtypes]
        if dts[0] not in _REAL or len(set(dts)) != 1:
            raise op_error(op, f"{', '.join(names[:len(dts)])} must be float16, float32 or "
                           f"float64 of one dtype, got {', '.join(str(d) for d in dts)}")
        return [dts[0]]
    return infer_type


# ---- the pointwise terms ---------------------------------------------------------------------
def _work(dtype):
    """float16 is computed in float32 (one block at a time), as the sibling pooling ops."""
    return np.dtype("float32") if dtype == np.dtype("float16") else np.dtype(dtype)


def _value(attrs, a, b):
    """f(a, b): the compared term of a pixel of data1 and its displaced pixel of data2."""
    return a * b if attrs.is_multiply else abs(a - b)


def _slope(attrs, side, a, b):
    """df/da (side 1) or df/db (side 2). For |a - b| the sign, with MXNet's tie rule:
    a == b counts as a > b (+1 for data1, -1 for data2)."""
    if attrs.is_multiply:
        return b if side == 1 else a
    sign = (a >= b).astype(a.dtype) * 2 - 1
    return sign if side == 1 else -sign


# ---- blocks ----------------------------------------------------------------------------------
def _padded(xp, x, pad, work):
    """x zero-padded by ``pad`` on both spatial sides, in the work dtype (x itself when there
    is nothing to do; one cast, no zeroed buffer, when only the dtype changes: float16 by the
    namespace's compiled cast)."""
    if pad == 0:
        return run_in(work, [x], xp)[0]
    n, c, h, w = x.shape
    out = xp.zeros((n, c, h + 2 * pad, w + 2 * pad), work)
    out[:, :, pad:pad + h, pad:pad + w] = x.astype(work)
    return out


def _padded_block(xp, arrays, images, chans, pad, work):
    """The block (images, chans) of each of ``arrays`` padded (``_padded``); an array passed
    in several slots (Correlation(x, x), a tangent along the data itself) is padded once and
    shared: the terms only read these blocks."""
    done = {}
    for x in arrays:
        if id(x) not in done:
            done[id(x)] = _padded(xp, x[images, chans], pad, work)
    return [done[id(x)] for x in arrays]


def _blocks(geo):
    """[(image slice, channel slice)]: blocks whose temporaries (the padded block, a term of
    its window region, the per-displacement sums) stay near ``_CHUNK`` elements, so no
    compute holds a padded or float32 copy of a whole input."""
    plane = (geo.h + 2 * geo.pad) * (geo.w + 2 * geo.pad)
    images = max(1, _CHUNK // (plane * max(geo.grid * geo.grid, geo.c)))
    chans = max(1, min(geo.c, _CHUNK // (plane * max(1, min(images, geo.n)))))
    return [(slice(n0, n0 + images), slice(c0, c0 + chans))
            for n0 in range(0, geo.n, images) for c0 in range(0, geo.c, chans)]


def _window(p, geo, dy=0, dx=0):
    """The window region of a padded array, shifted by (dy, dx)."""
    y0, x0 = geo.md + dy, geo.md + dx
    return p[:, :, y0:y0 + geo.hr, x0:x0 + geo.wr]


def _box_stride(m, geo):
    """sum over the K x K window at every stride1-th position of the last two axes."""
    out = 0
    ys, xs = (geo.th - 1) * geo.s1 + 1, (geo.tw - 1) * geo.s1 + 1
    for i in range(geo.k):
        for j in range(geo.k):
            out = out + m[..., i:i + ys:geo.s1, j:j + xs:geo.s1]
    return out


def _spread(xp, g, geo, work):
    """The adjoint of _box_stride: each output position's value added over its window."""
    n, q = g.shape[:2]
    out = xp.zeros((n, q, geo.hr, geo.wr), work)
    ys, xs = (geo.th - 1) * geo.s1 + 1, (geo.tw - 1) * geo.s1 + 1
    for i in range(geo.k):
        for j in range(geo.k):
            out[..., i:i + ys:geo.s1, j:j + xs:geo.s1] += g
    return out


def _volume(xp, arrays, term, geo, out, work):
    """out[n, q] = box_stride(sum_c term(fixed, shifted)) / (K K C), where ``fixed`` and
    ``shifted`` are the window regions of the padded ``arrays`` (unshifted, and shifted by
    displacement q), one block of images and channels at a time."""
    scale = 1.0 / (geo.k * geo.k * geo.c)
    sums = {}
    for images, chans in _blocks(geo):
        part = _padded_block(xp, arrays, images, chans, geo.pad, work)
        if images.start not in sums:
            sums = {images.start: xp.zeros((part[0].shape[0], geo.grid * geo.grid, geo.hr,
                                            geo.wr), work)}
        acc = sums[images.start]
        fixed = [_window(p, geo) for p in part]
        for q, dy, dx in _shifts(geo):
            acc[:, q] += term(fixed, [_window(p, geo, dy, dx) for p in part]).sum(axis=1)
        if chans.stop >= geo.c:         # the image block's last channel block
            xp.cast_into(out[images], _box_stride(acc, geo) * scale)


def _scatter(xp, g, arrays, weight, side, geo, out, work):
    """The adjoint of _volume for a term linear in one input: the spread head gradient times
    ``weight(fixed, shifted)`` added at the fixed window (side 1) or the shifted one (side
    2) of a padded block, which is then cropped into ``out``."""
    scale = 1.0 / (geo.k * geo.k * geo.c)
    p, spread = geo.pad, {}
    for images, chans in _blocks(geo):
        if images.start not in spread:
            spread = {images.start: _spread(xp, g[images].astype(work) * scale, geo, work)}
        part = _padded_block(xp, arrays, images, chans, p, work)
        grad = xp.zeros(part[0].shape, work)
        fixed = [_window(a, geo) for a in part]
        for q, dy, dx in _shifts(geo):
            shifted = [_window(a, geo, dy, dx) for a in part]
            at = _window(grad, geo) if side == 1 else _window(grad, geo, dy, dx)
            at += spread[images.start][:, q:q + 1] * weight(fixed, shifted)
        xp.cast_into(out[images, chans], grad[:, :, p:p + geo.h, p:p + geo.w])


# ---- compute functions -----------------------------------------------------------------------
def _corr_compute(rctx, ins, outs, attrs):
    geo = _corr_geometry(_CORR, ins[0].shape, attrs)
    _volume(rctx.xp, ins, lambda f, s: _value(attrs, f[0], s[1]), geo, outs[0],
            _work(outs[0].dtype))


def _tangent_compute(rctx, ins, outs, attrs):
    """side 1: sum t * df/da over the window; side 2: the shifted S_q(t) * df/db."""
    geo = _corr_geometry(_CORR_TAN, ins[1].shape, attrs)
    if attrs.side == 1:
        term = lambda f, s: f[0] * _slope(attrs, 1, f[1], s[2])      # noqa: E731
    else:
        term = lambda f, s: s[0] * _slope(attrs, 2, f[1], s[2])      # noqa: E731
    _volume(rctx.xp, ins, term, geo, outs[0], _work(outs[0].dtype))


def _adjoint_compute(rctx, ins, outs, attrs):
    """The head gradient spread over each window times df/da (into data1's window) or df/db
    (into data2's shifted window), then cropped to data's shape."""
    geo = _corr_geometry(_CORR_ADJ, ins[1].shape, attrs)
    weight = lambda f, s: _slope(attrs, attrs.side, f[0], s[1])      # noqa: E731
    _scatter(rctx.xp, ins[0], ins[1:], weight, attrs.side, geo, outs[0], _work(outs[0].dtype))


# ---- gradients -------------------------------------------------------------------------------
def _corr_params(attrs):
    return {k: attrs[k] for k in ("kernel_size", "max_displacement", "stride1", "stride2",
                                  "pad_size", "is_multiply")}


def _adj(F, g, d1, d2, side, attrs):
    return F._internal._correlation_adjoint(g, d1, d2, side=side, **_corr_params(attrs))


def _tan(F, t, d1, d2, side, attrs):
    return F._internal._correlation_tangent(t, d1, d2, side=side, **_corr_params(attrs))


def _corr_grad(F, node, ograds):
    """d out / d data1 and d data2: the adjoints of side 1 and 2."""
    d1, d2 = node.inputs
    g, a = ograds[0], node.attrs
    return [_adj(F, g, d1, d2, 1, a) if node.wants[0] else None,
            _adj(F, g, d1, d2, 2, a) if node.wants[1] else None]


def _cross(F, fixed, d1, d2, h, side, attrs, wants):
    """The gradients in (data1, data2) of sum(h * op) for an op of ``side`` linear in its
    first input ``fixed`` (an adjoint's head gradient or a tangent's direction): for the
    product, df/da = b is linear in data2 (so data2's gradient is the other side's adjoint
    with h in data1's place) and df/db = a in data1; for |a - b| the slopes are piecewise
    constant and these gradients zero (None)."""
    if not attrs.is_multiply:
        return [None, None]
    if side == 1:
        return [None, _adj(F, fixed, h, d2, 2, attrs) if wants[2] else None]
    return [_adj(F, fixed, d1, h, 1, attrs) if wants[1] else None, None]


def _adjoint_grad(F, node, ograds):
    """A(g) is linear in g with adjoint the tangent T: dg = T(h); data1/data2 by _cross."""
    g, d1, d2 = node.inputs
    h, a = ograds[0], node.attrs
    dg = _tan(F, h, d1, d2, a.side, a) if node.wants[0] else None
    return [dg] + _cross(F, g, d1, d2, h, a.side, a, node.wants)


def _tangent_grad(F, node, ograds):
    """T(t) is linear in t with adjoint A: dt = A(h); data1/data2 by _cross."""
    t, d1, d2 = node.inputs
    h, a = ograds[0], node.attrs
    dt = _adj(F, h, d1, d2, a.side, a) if node.wants[0] else None
    return [dt] + _cross(F, h, d1, d2, t, a.side, a, node.wants)


# ---- records ---------------------------------------------------------------------------------
def _corr_param_list():
    return (Param("kernel_size", "int", 1, "the patch's side K (odd)"),
            Param("max_displacement", "int", 1, "the largest displacement compared, in pixels"),
            Param("stride1", "int", 1, "the step between the compared patches of data1"),
            Param("stride2", "int", 1, "the step of the displacement grid"),
            Param("pad_size", "int", 0, "zero padding of both inputs on each spatial side"),
            Param("is_multiply", "bool", True, "compare by the product (true) or by the "
                  "absolute difference (false)"))


_SIDE = Param("side", "int", 1, "the input differentiated: 1 (data1) or 2 (data2)", choices=(1, 2))

register(OpDef(
    _CORR, inputs=("data1", "data2"), params=_corr_param_list(), infer_shape=_corr_shape,
    infer_type=_float_type(_CORR, ("data1", "data2")), compute={"cpu": _corr_compute},
    gradient=_corr_grad, grad_needs=("inputs",),
    doc="""FlowNet's correlation layer: the cost volume of two feature maps.

data1 and data2 are (N, C, H, W) of one shape and dtype (float16, float32 or float64), both
zero-padded by ``pad_size``. For each position (i, j) of the output grid (every
``stride1``-th pixel of data1 at least ``max_displacement`` + K // 2 from the padded border)
and each displacement (dy, dx) on the grid ``stride2 * [-d, d]``, d = max_displacement //
stride2, the K x K patch of data1 at that position is compared with the patch of data2
displaced by (dy, dx)::

    out[n, q, i, j] = sum over c and the patch of f(data1, displaced data2) / (K * K * C)

with f(a, b) = a * b (``is_multiply``) or |a - b|. Output (N, (2 d + 1)**2, ceil((H + 2 pad -
2 border) / stride1), ceil((W + 2 pad - 2 border) / stride1)), displacements in row-major
order (dy outer), border = max_displacement + K // 2.

MXNet 1.9.1 also listed two hidden scratch outputs (the padded inputs, transposed); a call
and a symbol show one output there as here, and mxlite keeps no copies. An even or zero
kernel_size, a zero stride, data too small for the border, or data2's shape differing from
data1's is an MXNetError (MXNet failed later, divided by zero or read out of bounds).
Differentiable in both inputs to any order (the gradients are ``_correlation_adjoint`` and
``_correlation_tangent``); for |a - b| the slope is the sign, with MXNet's rule at a tie
(+1 for data1, -1 for data2), so orders past the first are zero.

>>> a = mx.nd.arange(8).reshape((1, 2, 2, 2))
>>> mx.nd.Correlation(a, a, max_displacement=0).asnumpy().ravel().tolist()
[8.0, 13.0, 20.0, 29.0]
"""))

register(OpDef(
    _CORR_ADJ, inputs=("ograd", "data1", "data2"), params=_corr_param_list() + (_SIDE,),
    infer_shape=_adjoint_shape, infer_type=_float_type(_CORR_ADJ, ("ograd", "data1", "data2")),
    compute={"cpu": _adjoint_compute}, gradient=_adjoint_grad, grad_needs=("inputs",),
    doc="""The gradient of Correlation in data1 (``side`` 1) or data2 (``side`` 2) for the
head gradient ``ograd``: each output's head gradient spread over its patch, times df/da
(data2's displaced pixel, or the sign of a - b) or df/db (shifted back into data2). Linear
in ograd (its adjoint is ``_correlation_tangent``)."""))

register(OpDef(
    _CORR_TAN, inputs=("tangent", "data1", "data2"), params=_corr_param_list() + (_SIDE,),
    infer_shape=_tangent_shape,
    infer_type=_float_type(_CORR_TAN, ("tangent", "data1", "data2")),
    compute={"cpu": _tangent_compute}, gradient=_tangent_grad, grad_needs=("inputs",),
    doc="""The derivative of Correlation at (data1, data2) along ``tangent`` in data1
(``side`` 1) or data2 (``side`` 2): Correlation's sum with f replaced by tangent * df/da
or displaced tangent * df/db. Linear in tangent (its adjoint is ``_correlation_adjoint``)."""))


# ==== DeformablePSROIPooling ==================================================================
# Deformable position-sensitive roi pooling (Deformable ConvNets): bin (ph, pw) of output channel
# o of roi r averages ``sample_per_part``**2 bilinear samples of input channel
# (o * group + gh) * group + gw, on a grid over the bin moved by the learnt offset ``trans``
# (times trans_std and the roi's size). A sample outside [-0.5, size - 0.5] is skipped (the
# count drops), one inside is clamped into [0, size - 1].
#
# The samples' positions are affine in trans and the pooled value is linear in data, so the op
# is one member S_{0,0} of a family S_{dx,dy}(data, rois, trans): the bilinear weights
# differentiated dx times in x and dy times in y (-1, +1 per axis; zero past the first
# derivative), times (trans_std * roi size)**order. Its data adjoint is the scatter
# A_{dx,dy}(g, rois, trans); its trans gradient the sum, over the bins each trans entry moves,
# of g * S_{dx+1,dy} and g * S_{dx,dy+1} (``_to_trans``: sums and slices of registered ops).
# So every order is a graph of ``_dpsroi_sample``, ``_dpsroi_scatter`` and sums.
_DPS, _DPS_SAMPLE, _DPS_SCATTER = ("_contrib_DeformablePSROIPooling", "_dpsroi_sample",
                                   "_dpsroi_scatter")
# host tables of the bins, from the parameters only, sent to the device with from_host
HOST_CODE = {
    "_part_of": "the trans cell of each bin index, from pooled_size and part_size",
    "_group_of": "the channel group of each bin index, from pooled_size and group_size",
    "_bins": "the input channel table of the (output channel, bin) pairs, from the parameters",
    "_bin_offsets": "the class of each output channel, from output_dim and trans' shape",
}
_MAX_PER_PART = 256           # sample_per_part**2 samples per bin, one vectorised pass each
_ROI_BLOCK = 2 ** 20          # bins x samples' temporaries of one block of rois


def _dps_inputs(first):
    def list_inputs(attrs):
        return (first, "rois") if attrs.no_trans else (first, "rois", "trans")
    return list_inputs


_Lay = namedtuple("_Lay", "n c h w r o p g part spp ncls per_class")


def _dps_layout(op, data, rois, trans, attrs):
    """Check the shapes and parameters; the pooling's layout."""
    data, rois = tuple(data), tuple(rois)
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (batch, channel, height, width), got shape {data}")
    if len(rois) != 2 or rois[1] != 5:
        raise op_error(op, f"rois must be 2-D (num_rois, 5) rows of [batch_index, x1, y1, x2, "
                       f"y2], got shape {rois}")
    o, p, g, spp = attrs.output_dim, attrs.pooled_size, attrs.group_size, attrs.sample_per_part
    part = attrs.part_size or p
    if min(o, p, g, spp) < 1 or attrs.part_size < 0:
        raise op_error(op, f"output_dim={o}, pooled_size={p}, group_size={g} and sample_per_part"
                       f"={spp} must be >= 1, part_size={attrs.part_size} >= 0")
    if spp > _MAX_PER_PART:
        raise op_error(op, f"sample_per_part={spp} would take {spp * spp} samples per bin "
                       f"(at most {_MAX_PER_PART}**2)")
    if not 0.0 <= attrs.spatial_scale <= 1.0 or not 0.0 <= attrs.trans_std <= 1.0:
        raise op_error(op, f"spatial_scale={attrs.spatial_scale} and trans_std="
                       f"{attrs.trans_std} must be in [0, 1]")
    if data[1] < o * g * g:
        raise op_error(op, f"data's {data[1]} channels are fewer than output_dim * group_size**2"
                       f" = {o} * {g}**2 = {o * g * g} (MXNet read past them)")
    ncls = 1
    if not attrs.no_trans:
        trans = tuple(trans)
        ncls = trans[1] // 2 if len(trans) == 4 else 0
        if (len(trans) != 4 or trans[0] != rois[0] or trans[1] % 2 or ncls < 1
                or o % ncls or trans[2:] != (part, part)):
            raise op_error(op, f"trans must be (num_rois, 2 * classes, part_size, part_size) = "
                           f"({rois[0]}, 2 * k, {part}, {part}) with output_dim {o} a multiple "
                           f"of k, got shape {trans}")
    return _Lay(data[0], data[1], data[2], data[3], rois[0], o, p, g, part, spp, ncls, o // ncls)


def _dps_shape(op):
    def infer_shape(shapes, attrs):
        names = _dps_inputs("data")(attrs)
        if len(shapes) != len(names):
            raise op_error(op, f"takes {len(names)} inputs ({', '.join(names)}), got "
                           f"{len(shapes)}")
        lay = _dps_layout(op, shapes[0], shapes[1], None if attrs.no_trans else shapes[2],
                          attrs)
        out = check_alloc(op, (lay.r, lay.o, lay.p, lay.p), "float64")
        return [out, out] if op == _DPS else [out]
    return infer_shape


def _scatter_shape(shapes, attrs):
    names = _dps_inputs("ograd")(attrs)
    if len(shapes) != len(names):
        raise op_error(_DPS_SCATTER, f"takes {len(names)} inputs ({', '.join(names)}), got "
                       f"{len(shapes)}")
    lay = _dps_layout(_DPS_SCATTER, attrs.data_shape, shapes[1],
                      None if attrs.no_trans else shapes[2], attrs)
    want = (lay.r, lay.o, lay.p, lay.p)
    if tuple(shapes[0]) != want:
        raise op_error(_DPS_SCATTER, f"ograd of shape {tuple(shapes[0])} must be {want} for "
                       f"data_shape {tuple(attrs.data_shape)}")
    return [check_alloc(_DPS_SCATTER, tuple(attrs.data_shape), "float64", "data_shape")]


def _dps_type(op, names):
    def infer_type(dtypes, attrs):
        dts = [np.dtype(d) for d in dtypes]
        if dts[0] not in _REAL or len(set(dts)) != 1:
            raise op_error(op, f"{', '.join(names[:len(dts)])} must be float16, float32 or "
                           f"float64 of one dtype, got {', '.join(str(d) for d in dts)}")
        return [dts[0]] * (2 if op == _DPS else 1)
    return infer_type


# ---- the bins --------------------------------------------------------------------------------
def _arith(dtype):
    """The dtype MXNet's kernel did its bin arithmetic in (float16 through float32)."""
    return np.dtype("float64") if np.dtype(dtype) == np.dtype("float64") else np.dtype("float32")


def _part_of(lay, dtype):
    """floor(bin / pooled * part_size) per bin index, in MXNet's order of operations."""
    dt = _arith(dtype).type
    return np.floor(np.arange(lay.p, dtype=dt) / dt(lay.p) * dt(lay.part)).astype(np.int64)


def _group_of(lay, dtype):
    """floor(bin * group_size / pooled), clipped to the groups."""
    dt = _arith(dtype).type
    raw = np.floor(np.arange(lay.p, dtype=dt) * dt(lay.g) / dt(lay.p)).astype(np.int64)
    return raw.clip(0, lay.g - 1)


def _bins(op, xp, lay, rois, trans, attrs, dtype):
    """Per roi: batch index (device, -1 kept), roi size and the (R, O, P, P) start corner of
    each bin's sample grid (with its offset), the sub-bin steps, and the flat channel base
    (R, O, P, P) of the input channel each bin reads."""
    from .roi import _roi_columns, _round, _scale
    (x1, y1, x2, y2), _, batch = _roi_columns(op, xp, rois, lay.n)
    scale = _scale(attrs)
    start_w, start_h = _round(x1) * scale - 0.5, _round(y1) * scale - 0.5
    roi_w = ((_round(x2) + 1.0) * scale - 0.5 - start_w).clip(0.1, None)
    roi_h = ((_round(y2) + 1.0) * scale - 0.5 - start_h).clip(0.1, None)
    k = xp.arange(lay.p, np.dtype("float64"))
    col = lambda v: v[:, None, None, None]                            # noqa: E731
    wstart = col(start_w) + (col(roi_w) / lay.p) * k[None, None, None, :]
    hstart = col(start_h) + (col(roi_h) / lay.p) * k[None, None, :, None]
    if not attrs.no_trans:
        tx, ty = _bin_offsets(xp, lay, trans, dtype)
        wstart = wstart + tx * (_std(attrs) * col(roi_w))
        hstart = hstart + ty * (_std(attrs) * col(roi_h))
    gh = _group_of(lay, dtype)
    chan = ((np.arange(lay.o)[:, None, None] * lay.g + gh[None, :, None]) * lay.g
            + gh[None, None, :])
    base = (col(batch.clip(0, None)) * lay.c + xp.from_host(chan)[None]) * (lay.h * lay.w)
    return dict(batch=batch, roi_w=roi_w, roi_h=roi_h, wstart=wstart, hstart=hstart,
                sub_w=col(roi_w) / (lay.p * lay.spp), sub_h=col(roi_h) / (lay.p * lay.spp),
                base=base)


def _std(attrs):
    """trans_std as MXNet holds it (a float32 parameter, as spatial_scale)."""
    return float(np.float32(attrs.trans_std))


def _bin_offsets(xp, lay, trans, dtype):
    """trans[r, 2 * class(o) + (0, 1), part(ph), part(pw)] per bin: (tx, ty), (R, O, P, P)."""
    part = xp.from_host(_part_of(lay, dtype))
    cls = xp.from_host(np.arange(lay.o, dtype=np.int64) // lay.per_class)
    t = trans.astype(np.dtype("float64"))
    pick = lambda a: t[:, 2 * cls + a][:, :, part][:, :, :, part]    # noqa: E731
    return pick(0), pick(1)


def _axis_taps(pos, size, order, factor):
    """[(pixel, weight)] of the two taps along one axis at clamped positions ``pos``:
    the bilinear weights (order 0) or their derivative (-1, +1) times ``factor`` (order
    1); none past the first derivative. floor == ceil at whole positions, as MXNet's."""
    pos = pos.clip(0.0, size - 1.0)
    low = pos.astype(np.int64)               # pos >= 0: truncation is the floor
    high = low + (pos > low)
    if order == 0:
        return [(low, 1.0 - (pos - low)), (high, pos - low)]
    return [(low, -factor), (high, factor)] if order == 1 else []


def _samples(xp, lay, bins, blk, attrs, dx, dy):
    """Per sample (ih, iw) of every bin of the roi block ``blk``: [(flat index, weight)] of
    its taps (the weight zero where the sample is skipped) and its validity."""
    h, w = lay.h, lay.w
    rw, rh = bins["roi_w"][blk], bins["roi_h"][blk]
    fx = (_std(attrs) * rw)[:, None, None, None]
    fy = (_std(attrs) * rh)[:, None, None, None]
    live = (bins["batch"][blk] >= 0)[:, None, None, None]
    for ih in range(lay.spp):
        for iw in range(lay.spp):
            x = bins["wstart"][blk] + iw * bins["sub_w"][blk]
            y = bins["hstart"][blk] + ih * bins["sub_h"][blk]
            valid = (x >= -0.5) & (x <= w - 0.5) & (y >= -0.5) & (y <= h - 0.5) & live
            taps = [(bins["base"][blk] + (py * w + px), wy * wx * valid)
                    for py, wy in _axis_taps(y, h, dy, fy)
                    for px, wx in _axis_taps(x, w, dx, fx)]
            yield taps, valid


def _roi_blocks(lay):
    per = max(1, _ROI_BLOCK // (lay.o * lay.p * lay.p))
    return [slice(r0, r0 + per) for r0 in range(0, lay.r, per)]


def _dps_pool(xp, data, rois, trans, attrs, dx, dy, out, count=None):
    """out = S_{dx,dy}(data, rois, trans) (and the sample count), a block of rois at a time."""
    lay = _dps_layout(_DPS, data.shape, rois.shape, None if trans is None else trans.shape,
                      attrs)
    work = _work(out.dtype)
    bins = _bins(_DPS, xp, lay, rois, trans, attrs, out.dtype)
    flat = data.reshape(-1)
    for blk in _roi_blocks(lay):
        acc, seen = xp.zeros(out[blk].shape, work), xp.zeros(out[blk].shape, work)
        for taps, valid in _samples(xp, lay, bins, blk, attrs, dx, dy):
            seen += valid
            for at, wt in taps:
                acc += flat[at].astype(work) * wt.astype(work)
        xp.cast_into(out[blk], acc / seen.clip(1, None))
        if count is not None:
            xp.cast_into(count[blk], seen)


def _dps_spread(xp, g, rois, trans, attrs, dx, dy, out):
    """out = A_{dx,dy}(g, rois, trans): each bin's head gradient / its sample count added to
    the taps of its samples with their weights (float16 through a float32 buffer)."""
    lay = _dps_layout(_DPS_SCATTER, out.shape, rois.shape,
                      None if trans is None else trans.shape, attrs)
    work = _work(out.dtype)
    bins = _bins(_DPS_SCATTER, xp, lay, rois, trans, attrs, out.dtype)
    grad = out if work == out.dtype else xp.zeros(out.shape, work)
    xp.fill_zero(grad)
    flat = grad.reshape(-1)
    for blk in _roi_blocks(lay):
        seen = xp.zeros(g[blk].shape, work)
        for _, valid in _samples(xp, lay, bins, blk, attrs, 0, 0):
            seen += valid
        share = g[blk].astype(work) / seen.clip(1, None)
        for taps, _ in _samples(xp, lay, bins, blk, attrs, dx, dy):
            for at, wt in taps:
                xp.add_at(flat, (at.reshape(-1),), (share * wt.astype(work)).reshape(-1))
    if grad is not out:
        xp.cast_into(out, grad)


def _trans_of(attrs, ins):
    return None if attrs.no_trans else ins[2]


def _dps_compute(rctx, ins, outs, attrs):
    _dps_pool(rctx.xp, ins[0], ins[1], _trans_of(attrs, ins), attrs, 0, 0, outs[0], outs[1])


def _sample_compute(rctx, ins, outs, attrs):
    _dps_pool(rctx.xp, ins[0], ins[1], _trans_of(attrs, ins), attrs, attrs.dx, attrs.dy,
              outs[0])


def _scatter_compute(rctx, ins, outs, attrs):
    _dps_spread(rctx.xp, ins[0], ins[1], _trans_of(attrs, ins), attrs, attrs.dx, attrs.dy,
                outs[0])


# ---- gradients -------------------------------------------------------------------------------
_DPS_KEYS = ("spatial_scale", "output_dim", "group_size", "pooled_size", "part_size",
             "sample_per_part", "trans_std", "no_trans")


def _dps_params(attrs, dx, dy):
    return dict({k: attrs[k] for k in _DPS_KEYS}, dx=dx, dy=dy)


def _sample(F, data, rois, trans, attrs, dx, dy):
    ins = (data, rois) if trans is None else (data, rois, trans)
    return F._internal._dpsroi_sample(*ins, **_dps_params(attrs, dx, dy))


def _spread_op(F, g, rois, trans, attrs, dx, dy, data_shape):
    ins = (g, rois) if trans is None else (g, rois, trans)
    return F._internal._dpsroi_scatter(*ins, data_shape=tuple(data_shape),
                                       **_dps_params(attrs, dx, dy))


def _part_sums(F, x, axis, owner, part):
    """x's bins summed into the parts that own them along ``axis`` (zero for a part no bin
    falls in): the adjoint of reading trans at part(bin)."""
    if list(owner) == list(range(part)):
        return x
    pieces = []
    for j in range(part):
        bins = [i for i, o in enumerate(owner) if o == j]
        if bins:
            pieces.append(F.sum(F.slice_axis(x, axis=axis, begin=bins[0], end=bins[-1] + 1),
                                axis=axis, keepdims=True))
        else:
            pieces.append(F.zeros_like(F.slice_axis(x, axis=axis, begin=0, end=1)))
    return pieces[0] if part == 1 else F.concat(*pieces, dim=axis)


def _to_trans(F, gx, gy, attrs, trans_shape, dtype):
    """The gradient of trans from per-bin gradients of its x and y offsets: summed over the
    output channels of each class and the bins of each part."""
    r, two_k, part, _ = trans_shape
    lay = _Lay(0, 0, 0, 0, r, attrs.output_dim, attrs.pooled_size, attrs.group_size, part,
               attrs.sample_per_part, two_k // 2, attrs.output_dim // (two_k // 2))
    owner = _part_of(lay, dtype).tolist()
    sums = []
    for g in (gx, gy):
        s = F.sum(F.reshape(g, shape=(r, lay.ncls, lay.per_class, lay.p, lay.p)), axis=2)
        s = _part_sums(F, _part_sums(F, s, 2, owner, part), 3, owner, part)
        sums.append(F.expand_dims(s, axis=2))
    return F.reshape(F.concat(*sums, dim=2), shape=trans_shape)


def _trans_grad(F, data, rois, trans, head, attrs, dx, dy, trans_shape, dtype):
    """d/d trans of sum(head * S_{dx,dy}(data, rois, trans)): head times the sampler
    differentiated once more in x and in y (zero past the first derivative), to trans."""
    parts = [head * _sample(F, data, rois, trans, attrs, ex, ey) if max(ex, ey) <= 1
             else F.zeros_like(head) for ex, ey in ((dx + 1, dy), (dx, dy + 1))]
    return _to_trans(F, parts[0], parts[1], attrs, trans_shape, dtype)


def _orders(attrs):
    return (attrs.dx, attrs.dy) if "dx" in attrs else (0, 0)


def _pool_grad(F, node, ograds):
    """S_{dx,dy} (and the public op, S_{0,0}) is linear in data, its adjoint the scatter;
    trans by _trans_grad; the rois get none."""
    a, g = node.attrs, ograds[0]
    data, rois = node.inputs[:2]
    trans = None if a.no_trans else node.inputs[2]
    dx, dy = _orders(a)
    out = [_spread_op(F, g, rois, trans, a, dx, dy, node.input_shapes[0])
           if node.wants[0] else None, None]
    if trans is not None:
        out.append(_trans_grad(F, data, rois, trans, g, a, dx, dy, node.input_shapes[2],
                               node.input_dtypes[0]) if node.wants[2] else None)
    return out


def _spread_grad(F, node, ograds):
    """A_{dx,dy}(g) is linear in g with adjoint S_{dx,dy}; in trans, sum(H * A(g)) =
    sum(g * S(H)), whose trans gradient is _trans_grad with data H and head g."""
    a, h = node.attrs, ograds[0]
    g, rois = node.inputs[:2]
    trans = None if a.no_trans else node.inputs[2]
    out = [_sample(F, h, rois, trans, a, a.dx, a.dy) if node.wants[0] else None, None]
    if trans is not None:
        out.append(_trans_grad(F, h, rois, trans, g, a, a.dx, a.dy, node.input_shapes[2],
                               node.input_dtypes[0]) if node.wants[2] else None)
    return out


# ---- records ---------------------------------------------------------------------------------
def _dps_param_list():
    return (Param("spatial_scale", "float", REQUIRED, "the feature map's size over the image's "
                  "(the reciprocal of the total stride), in [0, 1]"),
            Param("output_dim", "int", REQUIRED, "output channels"),
            Param("group_size", "int", REQUIRED, "channel groups along each axis"),
            Param("pooled_size", "int", REQUIRED, "bins along each axis"),
            Param("part_size", "int", 0, "offset cells along each axis of trans (0: "
                  "pooled_size)"),
            Param("sample_per_part", "int", 1, "samples per bin along each axis"),
            Param("trans_std", "float", 0.0, "the offsets' scale (times the roi's size), in "
                  "[0, 1]"),
            Param("no_trans", "bool", False, "no trans input: plain position-sensitive "
                  "pooling by bilinear samples"))


_ORDERS = (Param("dx", "int", 0, "derivative order in the samples' x (0 or 1)", choices=(0, 1)),
           Param("dy", "int", 0, "derivative order in the samples' y (0 or 1)", choices=(0, 1)))
_DATA_SHAPE = Param("data_shape", "shape", REQUIRED, "the pooled data's shape (N, C, H, W)")

register(OpDef(
    _DPS, inputs=("data", "rois", "trans"), params=_dps_param_list(),
    list_inputs=_dps_inputs("data"), infer_shape=_dps_shape(_DPS),
    infer_type=_dps_type(_DPS, ("data", "rois", "trans")), compute={"cpu": _dps_compute},
    gradient=_pool_grad, grad_needs=("inputs",), num_outputs=2,
    output_names=("output", "top_count"), num_visible_outputs=1,
    doc="""Deformable position-sensitive region-of-interest pooling (Deformable ConvNets).

Each roi ``[batch_index, x1, y1, x2, y2]`` (rounded, the end inclusive, times
``spatial_scale``, less half a pixel; at least 0.1 pixels wide and high) is split into
``pooled_size`` x ``pooled_size`` bins. Bin (i, j) of output channel o averages
``sample_per_part``**2 bilinear samples of input channel ``(o * group_size + gi) *
group_size + gj`` (gi = floor(i * group_size / pooled_size)) on a regular grid from the
bin's corner, moved by ``trans[r, 2 * k + (0, 1), pi, pj] * trans_std`` times the roi's
width and height (k the class of o: output_dim / (trans.shape[1] / 2) channels each; pi =
floor(i / pooled_size * part_size)). A sample outside [-0.5, size - 0.5] is skipped, one
inside is clamped to [0, size - 1]; a bin with no sample is zero. Output (num_rois,
output_dim, pooled_size, pooled_size); data, rois and trans share one dtype (float16,
float32 or float64). ``no_trans`` drops the trans input.

The hidden second output ``top_count`` (MXNet's) holds each bin's number of samples. A roi
with a negative batch index gives zeros (MXNet read before the data); one past the data, a
non-finite coordinate, data with fewer than output_dim * group_size**2 channels, or trans
of another shape than (num_rois, 2 * k, part_size, part_size) (k dividing output_dim) is
an MXNetError (MXNet read out of bounds). Differentiable in data and trans to any order
(graphs of ``_dpsroi_sample``, ``_dpsroi_scatter`` and sums; the trans gradient jumps where
a sample crosses a pixel border or the map's edge); the rois get none.

>>> data = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> rois = mx.nd.array([[0, 1, 1, 2, 2]])
>>> mx.nd.contrib.DeformablePSROIPooling(data, rois, spatial_scale=1.0, output_dim=1,
...     group_size=1, pooled_size=1, sample_per_part=2,
...     no_trans=True).asnumpy().ravel().tolist()
[5.0]
"""))

register(OpDef(
    _DPS_SAMPLE, inputs=("data", "rois", "trans"), params=_dps_param_list() + _ORDERS,
    list_inputs=_dps_inputs("data"), infer_shape=_dps_shape(_DPS_SAMPLE),
    infer_type=_dps_type(_DPS_SAMPLE, ("data", "rois", "trans")),
    compute={"cpu": _sample_compute}, gradient=_pool_grad, grad_needs=("inputs",),
    doc="""DeformablePSROIPooling's output with each sample's bilinear weights differentiated
``dx`` times along x and ``dy`` times along y (the derivative in the samples' position, times
trans_std * the roi's width or height: the derivative in trans of the bins it moves)."""))

register(OpDef(
    _DPS_SCATTER, inputs=("ograd", "rois", "trans"),
    params=_dps_param_list() + _ORDERS + (_DATA_SHAPE,), list_inputs=_dps_inputs("ograd"),
    infer_shape=_scatter_shape, infer_type=_dps_type(_DPS_SCATTER, ("ograd", "rois", "trans")),
    compute={"cpu": _scatter_compute}, gradient=_spread_grad, grad_needs=("inputs",),
    doc="""The adjoint of ``_dpsroi_sample`` in its data: ``ograd`` (num_rois, output_dim,
pooled, pooled) divided by each bin's sample count, added into zeros of ``data_shape`` at
the taps of the bin's samples with their (differentiated) weights."""))
