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
import math
from collections import namedtuple

import numpy as np

from ..base import op_error
from .registry import OpDef, Param, register
from .shape_utils import check_alloc, check_shape

_CORR, _CORR_ADJ, _CORR_TAN = "Correlation", "_correlation_adjoint", "_correlation_tangent"
_REAL = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_CHUNK = 2 ** 22          # elements of one block's temporaries (a bounded working set)


# ---- geometry ----------------------------------------------------------------------------------
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
    th, tw = (-(-s // s1) for s in span)
    radius = md // s2
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
    return [check_shape(_CORR, _out_shape(_corr_geometry(_CORR, data, attrs)))]


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
    return [check_shape(_CORR_TAN, _out_shape(_corr_geometry(_CORR_TAN, data, attrs)))]


def _float_type(op, names):
    def infer_type(dtypes, attrs):
        dts = [np.dtype(d) for d in dtypes]
        if dts[0] not in _REAL or len(set(dts)) != 1:
            raise op_error(op, f"{', '.join(names[:len(dts)])} must be float16, float32 or "
                           f"float64 of one dtype, got {', '.join(str(d) for d in dts)}")
        return [dts[0]]
    return infer_type


# ---- the pointwise terms -------------------------------------------------------------------------
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


# ---- blocks ----------------------------------------------------------------------------------------
def _padded(xp, x, pad, work):
    """x zero-padded by ``pad`` on both spatial sides, in the work dtype (x itself when there
    is nothing to do)."""
    if pad == 0 and x.dtype == work:
        return x
    n, c, h, w = x.shape
    out = xp.zeros((n, c, h + 2 * pad, w + 2 * pad), work)
    out[:, :, pad:pad + h, pad:pad + w] = x.astype(work)
    return out


def _blocks(geo):
    """[(image slice, channel slice)]: blocks whose temporaries (the padded block, a term of
    its window region, the per-displacement sums) stay near ``_CHUNK`` elements, so no
    compute holds a padded or float32 copy of a whole input."""
    plane = (geo.h + 2 * geo.pad) * (geo.w + 2 * geo.pad)
    images = max(1, _CHUNK // (plane * max(geo.grid * geo.grid, geo.c)))
    chans = max(1, min(geo.c, _CHUNK // (plane * min(images, geo.n))))
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
        part = [_padded(xp, x[images, chans], geo.pad, work) for x in arrays]
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
        part = [_padded(xp, x[images, chans], p, work) for x in arrays]
        grad = xp.zeros(part[0].shape, work)
        fixed = [_window(a, geo) for a in part]
        for q, dy, dx in _shifts(geo):
            shifted = [_window(a, geo, dy, dx) for a in part]
            at = _window(grad, geo) if side == 1 else _window(grad, geo, dy, dx)
            at += spread[images.start][:, q:q + 1] * weight(fixed, shifted)
        xp.cast_into(out[images, chans], grad[:, :, p:p + geo.h, p:p + geo.w])


# ---- compute functions --------------------------------------------------------------------------
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


# ---- gradients ------------------------------------------------------------------------------------
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


# ---- records ----------------------------------------------------------------------------------------
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
