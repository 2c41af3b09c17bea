"""More of MXNet 1.9.1's layer operators: LRN, GroupNorm, Pad (pad), SoftmaxActivation,
SVMOutput, IdentityAttachKLSparseReg, hard_sigmoid, depth_to_space / space_to_depth,
im2col / col2im.

Their compute functions are written against the device namespace (``rctx.xp``: allocation,
views, ``strided_copy``) and the array methods NumPy and CuPy share (arithmetic in place,
``sum``, ``clip``), or hand their work to the compute function another registered operator
has on the same device (GroupNorm to InstanceNorm's, SoftmaxActivation to softmax's), so
one function serves every device. Work on large batches runs in blocks of items, so the
scratch memory stays bounded whatever the batch size.

Every gradient is a graph of registered operators: LRN's window sums are sum-Pooling over
the channel axis (whose gradient is ``_pool_backward``, whose gradient is Pooling again),
GroupNorm's is ``_norm_project`` on a (N, G, C/G * ...) view, Pad's is ``_pad_backward``
(its adjoint, whose gradient is Pad), depth_to_space and space_to_depth are each other's, as
are im2col and col2im (the convolution's column kernels). The loss layer SVMOutput keeps
MXNet's semantics (the head gradient is ignored), and IdentityAttachKLSparseReg adds a
penalty that is a constant of the data.
"""
import numpy as np

from ..base import FLOAT_DTYPES, op_error
from . import onednn
from .common import check_num_inputs, in_work_dtype, write_back
from .registry import REQUIRED, OpDef, Param, get_op, register
from .shape_utils import size_of

_FLOATS = (np.dtype("float32"), np.dtype("float64"))
_BLOCK = 1 << 22          # elements of one block of batch items (scratch memory per block)


def _blocks(n, per_item):
    """Slices of ``n`` batch items, each holding about ``_BLOCK`` elements or one item."""
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _data_backward_shape(in_shapes, out_shapes, attrs):
    """The data has the output's shape (a layer that keeps its input's shape)."""
    return [in_shapes[0] if in_shapes[0] is not None else out_shapes[0]]


def _float32_64(op, dtype, what="data"):
    dt = np.dtype(dtype)
    if dt not in _FLOATS:
        raise op_error(op, f"{what} must be float32 or float64, got {dt}")
    return dt


# ---- LRN --------------------------------------------------------------------------------------
def _lrn_shape(shapes, attrs):
    check_num_inputs("LRN", shapes, 1)
    data = tuple(shapes[0])
    if len(data) != 4:
        raise op_error("LRN", f"data must be 4-D (batch, channel, height, width), got shape "
                       f"{data}")
    if attrs.nsize < 1:
        raise op_error("LRN", f"nsize must be at least 1, got {attrs.nsize}")
    return [data]


def _lrn_type(dtypes, attrs):
    return [_float32_64("LRN", dtypes[0])]


def _lrn_half(attrs):
    """Channels each side of the window: MXNet's window is ``2 * ((nsize - 1) // 2) + 1``
    channels centred on the channel (an even nsize sums one channel fewer, and still
    divides alpha by nsize)."""
    return (attrs.nsize - 1) // 2


def _lrn_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    xp = rctx.xp
    n, c = x.shape[:2]
    half, scale = _lrn_half(attrs), attrs.alpha / attrs.nsize
    # oneDNN (float32 on the CPU, not in place): its window of 2 * half + 1 channels divides
    # its alpha by that width, MXNet's by nsize
    if not xp.may_share_memory(x, y) and onednn.run(
            xp, "lrn_forward", (x, y), 2 * half + 1, scale * (2 * half + 1), attrs.beta,
            attrs.knorm):
        return
    per = size_of(x.shape[1:])
    for b in _blocks(n, per):
        xb = x[b]
        sq = xb * xb
        s = xp.empty(sq.shape, sq.dtype)
        xp.copyto(s, sq)
        for k in range(1, min(half, c - 1) + 1):
            s[:, k:] += sq[:, :c - k]
            s[:, :c - k] += sq[:, k:]
        s *= scale
        s += attrs.knorm
        s **= -attrs.beta
        s *= xb                               # reads xb before y[b] (maybe xb) is written
        xp.copyto(y[b], s)


def _lrn_window(F, t, half, shape):
    """The sum of ``t`` (N, C, H, W) over the channels ``c - half .. c + half``: sum-Pooling
    of a (N, 1, C, H*W) view, zero-padded (its adjoint is itself)."""
    n, c, h, w = shape
    if half == 0:
        return t
    v = F.reshape(t, shape=(n, 1, c, h * w))
    s = F.Pooling(v, kernel=(2 * half + 1, 1), stride=(1, 1), pad=(half, 0), pool_type="sum")
    return F.reshape(s, shape=shape)


def _lrn_grad(F, node, ograds):
    """y = x d^-beta, d = knorm + alpha / nsize * W(x^2) (W the channel-window sum, its own
    adjoint):  dx = g d^-beta - 2 beta alpha / nsize * x * W(g x d^(-beta - 1))."""
    attrs = node.attrs
    x, g = node.inputs[0], ograds[0]
    shape = tuple(node.input_shapes[0])
    half, scale = _lrn_half(attrs), attrs.alpha / attrs.nsize
    d = _lrn_window(F, F.square(x), half, shape) * scale + attrs.knorm
    p = d ** (-attrs.beta)
    inner = _lrn_window(F, g * x * p / d, half, shape)
    return [g * p - x * inner * (2.0 * attrs.beta * scale)]


register(OpDef(
    "LRN", inputs=("data",),
    params=(Param("alpha", "float", 1e-4, "the variance scaling parameter alpha"),
            Param("beta", "float", 0.75, "the power parameter beta"),
            Param("knorm", "float", 2.0, "the parameter k"),
            Param("nsize", "int", REQUIRED, "normalisation window width in channels")),
    infer_shape=_lrn_shape, infer_type=_lrn_type, compute={"cpu": _lrn_compute},
    gradient=_lrn_grad, backward_shape=_data_backward_shape, in_place=True,
    doc="""Local response normalisation across channels of 4-D ``data`` (N, C, H, W):

``out[n, c] = data[n, c] / (knorm + alpha / nsize * sum(data[n, c']**2))**beta``, the sum
over the channels ``c' = c - (nsize - 1) // 2 .. c + (nsize - 1) // 2`` that exist (MXNet
1.9.1's window: an even ``nsize`` sums ``nsize - 1`` channels, and alpha is still divided
by ``nsize``). float32 or float64 (float32 on the CPU runs on oneDNN's LRN,
``docs/guide/onednn.rst``). The gradient is a graph of registered ops (the window sums are
sum-Pooling over the channel axis) and differentiates to any order.

>>> x = mx.nd.array([[[[1.0]], [[2.0]], [[2.0]]]], dtype="float64")
>>> y = mx.nd.LRN(x, nsize=3, alpha=3.0, beta=1.0, knorm=1.0)
>>> y.asnumpy().ravel().round(4).tolist()    # 1 / (1 + 5), 2 / (1 + 9), 2 / (1 + 8)
[0.1667, 0.2, 0.2222]
"""))


# ---- GroupNorm --------------------------------------------------------------------------------
def _gn_groups(data, attrs):
    g = attrs.num_groups
    if g < 1 or data[1] % g:
        raise op_error("GroupNorm", f"num_groups={g} must be positive and divide the "
                       f"{data[1]} channels of data {data}")
    return g


def _gn_shape(shapes, attrs):
    check_num_inputs("GroupNorm", shapes, 3)
    data = tuple(shapes[0])
    if len(data) < 2:
        raise op_error("GroupNorm", f"data must be (batch, channel, ...), got shape {data}")
    g = _gn_groups(data, attrs)
    for name, s in zip(("gamma", "beta"), shapes[1:]):
        if tuple(s) != (g,):
            raise op_error("GroupNorm", f"{name} must have shape ({g},) (one value per group; "
                           f"num_groups={g}), got {tuple(s)}")
    if not attrs.eps >= 0.0:
        raise op_error("GroupNorm", f"eps must be non-negative, got {attrs.eps}")
    stat = (data[0], g)
    return [data, stat, stat]


def _gn_backward_shape(in_shapes, out_shapes, attrs):
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    g = (attrs.num_groups,)
    return [data] + [g if s is None else s for s in in_shapes[1:]]


def _gn_type(dtypes, attrs):
    dt = _float32_64("GroupNorm", dtypes[0])
    for name, d in zip(("gamma", "beta"), dtypes[1:]):
        if np.dtype(d) != dt:
            raise op_error("GroupNorm", f"{name} has dtype {np.dtype(d)}, data has {dt}: all "
                           "inputs must share one float dtype")
    return [dt] * 3


def _gn_view(shape, attrs):
    """(N, G, C/G * spatial): the shape InstanceNorm normalises over its last axis."""
    g = attrs.num_groups
    return (shape[0], g, size_of(shape[1:]) // g)


def _gn_compute(rctx, ins, outs, attrs):
    x, gamma, beta = ins
    y, mean, std = outs
    v = _gn_view(x.shape, attrs)
    stat = v[:2] + (1,)
    get_op("InstanceNorm").compute[rctx.kernels](
        rctx, [x.reshape(v), gamma, beta], [y.reshape(v), mean.reshape(stat),
                                            std.reshape(stat)], attrs)


def _gn_grad(F, node, ograds):
    """On the (N, G, M) view, InstanceNorm's rule (``norm._standardize_grad``) with gamma per
    group: dbeta = sum(gy), dgamma = sum(gy * xhat) over every axis but the groups;
    dx = _norm_project(gy * gamma, xhat, 1 / std, ...) with the head gradients of the mean and
    std outputs."""
    x, gamma, _ = node.inputs
    _, mean, std = node.outputs
    gy, gmean, gstd = ograds
    shape = tuple(node.input_shapes[0])
    v = _gn_view(shape, node.attrs)
    stat = v[:2] + (1,)
    m = v[2]
    x3, gy3 = F.reshape(x, shape=v), F.reshape(gy, shape=v)
    mean3, std3 = F.reshape(mean, shape=stat), F.reshape(std, shape=stat)
    xhat = F.broadcast_div(F.broadcast_sub(x3, mean3), std3)
    wants = node.wants
    dgamma = F.sum(gy3 * xhat, axis=1, exclude=True) if wants[1] else None
    dbeta = F.sum(gy3, axis=1, exclude=True) if wants[2] else None
    dx = None
    if wants[0]:
        g = F.broadcast_mul(gy3, F.reshape(gamma, shape=(1, v[1], 1)))
        one = F.ones((1,), dtype=node.input_dtypes[0], ctx=node.context)
        dx = F._internal._norm_project(g, xhat, F.reciprocal(std3), one,
                                       F.reshape(gstd, shape=stat) / m,
                                       F.reshape(gmean, shape=stat) / m, axis=(2,))
        dx = F.reshape(dx, shape=shape)
    return [dx, dgamma, dbeta]


register(OpDef(
    "GroupNorm", inputs=("data", "gamma", "beta"),
    params=(Param("num_groups", "int", 1, "the number of channel groups"),
            Param("eps", "float", 1e-5, "added to the variance before the square root"),
            Param("output_mean_var", "bool", False, "also return the mean and the std")),
    infer_shape=_gn_shape, infer_type=_gn_type, compute={"cpu": _gn_compute},
    gradient=_gn_grad, grad_needs=("inputs", "outputs"), num_outputs=3, in_place=True,
    output_names=("output", "mean", "std"),
    num_visible_outputs=lambda attrs: 3 if attrs.output_mean_var else 1,
    backward_shape=_gn_backward_shape,
    doc="""Group normalisation (MXNet 1.9.1): the channels of ``data`` (N, C, ...) are split
into ``num_groups`` groups of C / num_groups; each (sample, group) is normalised over its
channels and spatial positions, ``(x - mean) / sqrt(var + eps)`` (biased variance), then
scaled and shifted by ``gamma[g]`` and ``beta[g]``, one value per *group* (shape
``(num_groups,)``, as MXNet 1.9.1). With ``output_mean_var`` the call returns
``[output, mean, std]``, the statistics of shape ``(N, num_groups)`` and
``std = sqrt(var + eps)``. Statistics in double, two passes (InstanceNorm's kernels on a
(N, G, C/G * ...) view). The gradient (any order) is a graph of registered ops.

>>> x = mx.nd.array([[[1.0, 3.0], [2.0, 6.0]]], dtype="float64")
>>> g, b = mx.nd.array([2.0], dtype="float64"), mx.nd.array([1.0], dtype="float64")
>>> y = mx.nd.GroupNorm(x, g, b, eps=0.0)    # mean 3, std sqrt(3.5) over all four values
>>> y.asnumpy().round(4).tolist()
[[[-1.1381, 1.0], [-0.069, 4.2071]]]
"""))


# ---- Pad (pad) and its adjoint _pad_backward --------------------------------------------------
_PAD_MODES = ("constant", "edge", "reflect")


def _pad_widths(op, data, attrs):
    """((before, after) per axis) of MXNet's flat ``pad_width`` for ``data``, checked: 4-D or
    5-D data, no padding of the first two axes, non-negative widths, reflect widths below
    the axis length, edge padding of an empty axis refused."""
    nd, pw = len(data), tuple(attrs.pad_width)
    if nd not in (4, 5):
        raise op_error(op, f"data must be 4-D or 5-D (as MXNet's Pad), got shape {data}")
    if len(pw) != 2 * nd:
        raise op_error(op, f"pad_width must hold 2 * {nd} = {2 * nd} values (before_1, after_1, "
                       f"..., before_{nd}, after_{nd}) for data {data}, got {pw}")
    widths = [(pw[2 * i], pw[2 * i + 1]) for i in range(nd)]
    if any(widths[0]) or any(widths[1]):
        raise op_error(op, f"padding on the first two axes must be zero, got pad_width {pw}")
    if any(w < 0 for pair in widths for w in pair):
        raise op_error(op, f"pad_width values must be non-negative, got {pw}")
    for ax in range(2, nd):
        lo, hi = widths[ax]
        if attrs.mode == "reflect" and max(lo, hi) >= data[ax]:
            raise op_error(op, f"reflect padding needs widths smaller than the axis length: "
                           f"axis {ax} of data {data} has {data[ax]}, pad_width {pw}")
        if attrs.mode == "edge" and (lo or hi) and data[ax] == 0:
            raise op_error(op, f"edge padding of the empty axis {ax} of data {data}")
    return widths


def _padded(data, widths):
    return tuple(d + lo + hi for d, (lo, hi) in zip(data, widths))


def _pad_shape(shapes, attrs):
    check_num_inputs("Pad", shapes, 1)
    data = tuple(shapes[0])
    return [_padded(data, _pad_widths("Pad", data, attrs))]


def _pad_float_type(op):
    def infer_type(dtypes, attrs):
        if np.dtype(dtypes[0]) not in FLOAT_DTYPES:
            raise op_error(op, f"data must have a float dtype (as MXNet), got {dtypes[0]}")
        return [dtypes[0]]
    return infer_type


def _along(ndim, ax, sl):
    """An index selecting ``sl`` along axis ``ax`` of an ``ndim``-D array."""
    return (slice(None),) * ax + (sl,)


def _pad_fill(xp, out, widths, sizes, mode):
    """Fill the padding of ``out`` from its centre (``out[lo:lo + size]`` on every axis,
    already written), one axis after the other as numpy.pad does: along axis ``ax`` the
    regions span the padded extent of the axes before it and the centre of the axes after
    it, so corners come from the regions already filled."""
    nd = out.ndim
    for ax in range(2, nd):
        lo, hi = widths[ax]
        n = sizes[ax]
        if not (lo or hi):
            continue
        # the part of out this axis fills: axes before: everything; after: the centre
        head = tuple(slice(None) for _ in range(ax))
        tail = tuple(slice(widths[a][0], widths[a][0] + sizes[a]) for a in range(ax + 1, nd))
        view = out[head + (slice(None),) + tail]
        for side, w in (("lo", lo), ("hi", hi)):
            if not w:
                continue
            dst = _along(nd, ax, slice(0, lo) if side == "lo" else
                         slice(lo + n, lo + n + hi))
            if mode == "edge":
                i = lo if side == "lo" else lo + n - 1
                src = view[_along(nd, ax, slice(i, i + 1))]
                xp.strided_copy(xp.broadcast_to(src, view[dst].shape), view[dst])
            elif side == "lo":        # reflect: out[lo - k] = out[lo + k], k = 1..w
                src = view[_along(nd, ax, slice(lo + w, lo, -1))]
                xp.strided_copy(src, view[dst])
            else:                     # out[lo + n - 1 + k] = out[lo + n - 1 - k]
                e = lo + n - 1
                src = view[_along(nd, ax, slice(e - 1, e - 1 - w if e - 1 - w >= 0 else None,
                                                -1))]
                xp.strided_copy(src, view[dst])


def _pad_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    xp = rctx.xp
    widths = _pad_widths("Pad", x.shape, attrs)
    centre = tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, widths))
    if out.size == 0:
        return
    if attrs.mode == "constant":
        out.fill(attrs.constant_value)
    if x.size:
        xp.strided_copy(x, out[centre])
    if attrs.mode != "constant":
        _pad_fill(xp, out, widths, x.shape, attrs.mode)


def _pad_adjoint_compute(rctx, ins, outs, attrs):
    """dx = P^T g: the padding regions of ``g`` added back onto the positions they were
    read from (edge: the border element; reflect: the mirrored ones), one axis after the
    other in the reverse of Pad's order, then the centre; a block of batch items at a time
    (the scratch copy stays small)."""
    g, dx = ins[0], outs[0]
    xp = rctx.xp
    data = tuple(dx.shape)
    widths = _pad_widths("_pad_backward", data, attrs)
    if dx.size == 0:
        return
    if attrs.mode == "constant":
        centre = tuple(slice(lo, lo + d) for d, (lo, _) in zip(data, widths))
        xp.strided_copy(g[centre], dx)
        return
    for b in _blocks(g.shape[0], size_of(g.shape[1:])):
        _pad_adjoint_block(xp, g[b], dx[b], widths, data, attrs.mode)


def _pad_adjoint_block(xp, g, dx, widths, data, mode):
    nd = g.ndim
    work = xp.empty(g.shape, g.dtype)
    xp.copyto(work, g)
    cur = work
    for ax in reversed(range(2, nd)):
        lo, hi = widths[ax]
        n = data[ax]
        if not (lo or hi):
            continue
        centre = cur[_along(nd, ax, slice(lo, lo + n))]
        if mode == "edge":
            if lo:
                first = centre[_along(nd, ax, slice(0, 1))]
                first += cur[_along(nd, ax, slice(0, lo))].sum(axis=ax, keepdims=True)
            if hi:
                last = centre[_along(nd, ax, slice(n - 1, n))]
                last += cur[_along(nd, ax, slice(lo + n, lo + n + hi))].sum(axis=ax,
                                                                            keepdims=True)
        else:
            if lo:       # out[lo - k] came from centre[k], k = 1..lo
                centre[_along(nd, ax, slice(1, lo + 1))] += \
                    cur[_along(nd, ax, slice(lo - 1, None, -1))]
            if hi:       # out[lo + n - 1 + k] came from centre[n - 1 - k], k = 1..hi
                centre[_along(nd, ax, slice(n - 1 - hi, n - 1))] += \
                    cur[_along(nd, ax, slice(lo + n + hi - 1, lo + n - 1, -1))]
        cur = centre
    xp.strided_copy(cur, dx)


def _pad_grad(F, node, ograds):
    """Pad is linear: dx = _pad_backward(g) (its adjoint; the gradient of that is Pad)."""
    a = node.attrs
    return [F._internal._pad_backward(ograds[0], mode=a.mode, pad_width=a.pad_width,
                                      constant_value=a.constant_value)]


def _pad_adjoint_shape(shapes, attrs):
    check_num_inputs("_pad_backward", shapes, 1)
    g = tuple(shapes[0])
    if len(g) not in (4, 5) or len(attrs.pad_width) != 2 * len(g):
        raise op_error("_pad_backward", f"grad must be 4-D or 5-D with pad_width of twice its "
                       f"dimensions, got shape {g} and pad_width {tuple(attrs.pad_width)}")
    pw = attrs.pad_width
    data = tuple(d - pw[2 * i] - pw[2 * i + 1] for i, d in enumerate(g))
    if any(d < 0 for d in data):
        raise op_error("_pad_backward", f"grad {g} is smaller than pad_width {tuple(pw)}")
    _pad_widths("_pad_backward", data, attrs)
    return [data]


def _pad_adjoint_grad(F, node, ograds):
    a = node.attrs
    return [F.Pad(ograds[0], mode=a.mode, pad_width=a.pad_width,
                  constant_value=a.constant_value)]


def _pad_backward_shape(in_shapes, out_shapes, attrs):
    """The padded shape from data's (Pad) or the other way round."""
    data = in_shapes[0]
    if data is None and out_shapes[0] is not None and len(out_shapes[0]) * 2 == \
            len(attrs.pad_width):
        pw = attrs.pad_width
        data = tuple(d - pw[2 * i] - pw[2 * i + 1] for i, d in enumerate(out_shapes[0]))
    return [data]


def _pad_params():
    return (Param("mode", "str", REQUIRED, "'constant' (constant_value), 'edge' (the border "
                  "values) or 'reflect' (mirrored about the border)", choices=_PAD_MODES),
            Param("pad_width", "shape", REQUIRED, "(before_1, after_1, ..., before_N, "
                  "after_N): numpy.pad's pad_width, flattened"),
            Param("constant_value", "float", 0.0, "the padding value of mode 'constant'"))


register(OpDef(
    "Pad", inputs=("data",), aliases=("pad",), params=_pad_params(),
    infer_shape=_pad_shape, infer_type=_pad_float_type("Pad"), compute={"cpu": _pad_compute},
    gradient=_pad_grad, backward_shape=_pad_backward_shape,
    doc="""Pad a 4-D or 5-D array (MXNet 1.9.1's ``Pad``): ``pad_width`` is numpy.pad's
``((before_1, after_1), ..., (before_N, after_N))`` flattened, with zero padding on the
first two axes (batch and channel), as MXNet requires. ``mode`` 'constant' fills with
``constant_value``, 'edge' repeats the border values, 'reflect' mirrors about the border
without repeating it (numpy's 'reflect'; each width must be smaller than its axis). Float
dtypes only, as MXNet. The gradient is ``_pad_backward`` (the adjoint: padding regions
added back where they were read from), whose own gradient is ``Pad``; any order.

Differs from MXNet where MXNet had no answer: a negative width is an MXNetError (MXNet
accepted one and read outside the input).

>>> x = mx.nd.array([[[[1.0, 2.0, 3.0]]]])
>>> mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 0, 0, 2, 1)).asnumpy().tolist()
[[[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]]
>>> mx.nd.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 0, 1, 1)).asnumpy().tolist()
[[[[1.0, 1.0, 2.0, 3.0, 3.0], [1.0, 1.0, 2.0, 3.0, 3.0]]]]
"""))


register(OpDef(
    "_pad_backward", inputs=("grad",), params=_pad_params(),
    infer_shape=_pad_adjoint_shape, infer_type=_pad_float_type("_pad_backward"),
    compute={"cpu": _pad_adjoint_compute}, gradient=_pad_adjoint_grad,
    doc="""The adjoint of ``Pad`` (its gradient): ``grad`` has Pad's output shape; the result
has its input shape. 'constant' takes the centre; 'edge' and 'reflect' add each padding
region onto the elements it repeated, axis by axis from the last. Its gradient is ``Pad``
with the same parameters.
"""))


# ---- SoftmaxActivation ------------------------------------------------------------------------
def _sa_axis(data, attrs):
    if attrs.mode == "channel":
        if len(data) < 3:
            raise op_error("SoftmaxActivation", f"mode='channel' needs data with at least 3 "
                           f"dimensions (batch, channel, ...), got shape {data}")
        return 1
    if len(data) < 1:
        raise op_error("SoftmaxActivation", "data must have at least one dimension, got ()")
    return len(data) - 1


def _sa_shape(shapes, attrs):
    check_num_inputs("SoftmaxActivation", shapes, 1)
    data = tuple(shapes[0])
    _sa_axis(data, attrs)
    return [data]


def _sa_type(dtypes, attrs):
    return [_float32_64("SoftmaxActivation", dtypes[0])]


def _sa_compute(rctx, ins, outs, attrs):
    ax = _sa_axis(ins[0].shape, attrs)
    softmax = get_op("softmax")
    sattrs = softmax.parse_attrs({"axis": ax})
    softmax.compute[rctx.kernels](rctx, ins, outs, sattrs)


def _sa_grad(F, node, ograds):
    """y = softmax(x) along the mode's axis:  dx = y (g - sum(g y))."""
    ax = _sa_axis(tuple(node.input_shapes[0]), node.attrs)
    y, g = node.outputs[0], ograds[0]
    return [y * F.broadcast_sub(g, F.sum(g * y, axis=ax, keepdims=True))]


register(OpDef(
    "SoftmaxActivation", inputs=("data",),
    params=(Param("mode", "str", "instance", "'instance': softmax over the last axis of each "
                  "instance; 'channel': over axis 1 at each position",
                  choices=("channel", "instance")),),
    infer_shape=_sa_shape, infer_type=_sa_type, compute={"cpu": _sa_compute},
    gradient=_sa_grad, grad_needs=("outputs",), backward_shape=_data_backward_shape,
    in_place=True,
    doc="""Softmax activation (MXNet 1.9.1, deprecated there in favour of ``softmax``):
``mode='instance'`` runs the softmax over the last axis (what MXNet 1.9.1 computes),
``mode='channel'`` over axis 1 of data with at least 3 dimensions (at each position of each
instance). float32 or float64 (MXNet 1.9.1 took float32 only). The gradient,
``y (g - sum(g y))`` along the same axis, is a graph of registered ops. (MXNet 1.9.1's
instance-mode backward summed over axis 1 instead of the last axis, which is not the
derivative of its forward for data of 3 or more dimensions; mxlite's is.)

>>> mx.nd.SoftmaxActivation(mx.nd.array([[1.0, 1.0], [0.0, 0.0]])).asnumpy().tolist()
[[0.5, 0.5], [0.5, 0.5]]
"""))


# ---- hard_sigmoid -----------------------------------------------------------------------------
def _hs_type(dtypes, attrs):
    if np.dtype(dtypes[0]) not in FLOAT_DTYPES:
        raise op_error("hard_sigmoid", f"data must have a float dtype, got {dtypes[0]}")
    return [dtypes[0]]


def _hs_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    xp = rctx.xp
    _, (xw,), target = in_work_dtype(xp, [x], out)
    flat_x, flat_t = xw.reshape(-1), target.reshape(-1)
    for b in _blocks(flat_x.size, 1):
        t = flat_x[b] * attrs.alpha
        t += attrs.beta
        t.clip(0, 1, out=t)
        xp.copyto(flat_t[b], t)
    write_back(xp, target, out)


def _hs_grad(F, node, ograds):
    """y = clip(alpha x + beta, 0, 1):  dx = g alpha where 0 < alpha x + beta < 1 (MXNet's
    rule), else 0; the mask (comparisons) has a zero derivative."""
    a = node.attrs
    t = node.inputs[0] * a.alpha + a.beta
    inside = F._internal._greater_scalar(t, scalar=0.0) * F._internal._lesser_scalar(
        t, scalar=1.0)
    return [ograds[0] * inside * a.alpha]


register(OpDef(
    "hard_sigmoid", inputs=("data",),
    params=(Param("alpha", "float", 0.2, "slope"), Param("beta", "float", 0.5, "bias")),
    infer_shape=lambda shapes, attrs: [tuple(shapes[0])], infer_type=_hs_type,
    compute={"cpu": _hs_compute}, gradient=_hs_grad, backward_shape="same", elementwise=True,
    doc="""Hard sigmoid: ``max(0, min(1, alpha * x + beta))``, element-wise, float dtypes
(float16 computed in float32). The gradient is ``alpha`` where ``0 < alpha * x + beta < 1``
and 0 elsewhere (MXNet's rule), a graph of registered ops.

>>> mx.nd.hard_sigmoid(mx.nd.array([-5.0, 0.0, 1.0, 5.0])).asnumpy().tolist()
[0.0, 0.5, 0.699999988079071, 1.0]
"""))


# ---- depth_to_space / space_to_depth ----------------------------------------------------------
def _d2s_geometry(op, data, b):
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (N, C, H, W), got shape {data}")
    if b < 1:
        raise op_error(op, f"block_size must be positive, got {b}")
    n, c, h, w = data
    if op == "depth_to_space":
        if c % (b * b):
            raise op_error(op, f"the channels of data {data} must be a multiple of "
                           f"block_size**2 = {b * b}")
        return (n, c // (b * b), h * b, w * b)
    if h % b or w % b:
        raise op_error(op, f"the height and width of data {data} must be multiples of "
                       f"block_size = {b}")
    return (n, c * b * b, h // b, w // b)


def _d2s_shape_fn(op):
    def infer_shape(shapes, attrs):
        check_num_inputs(op, shapes, 1)
        return [_d2s_geometry(op, tuple(shapes[0]), attrs.block_size)]
    return infer_shape


def _d2s_compute_fn(op):
    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        b = attrs.block_size
        n, c, h, w = x.shape
        if op == "depth_to_space":
            # x (n, b, b, c', h, w) -> out (n, c', h, b, w, b)
            v = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
            rctx.xp.strided_copy(v, out.reshape(n, c // (b * b), h, b, w, b))
        else:
            # x (n, c, h', b, w', b) -> out (n, b, b, c, h', w')
            v = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
            rctx.xp.strided_copy(v, out.reshape(n, b, b, c, h // b, w // b))
    return compute


def _d2s_grad_fn(op):
    other = "space_to_depth" if op == "depth_to_space" else "depth_to_space"

    def gradient(F, node, ograds):
        return [getattr(F, other)(ograds[0], block_size=node.attrs.block_size)]
    gradient.__doc__ = f"A permutation: the gradient is its inverse, {other}."
    return gradient


def _d2s_backward_shape_fn(op):
    other = "space_to_depth" if op == "depth_to_space" else "depth_to_space"

    def rule(in_shapes, out_shapes, attrs):
        if in_shapes[0] is None and out_shapes[0] is not None and len(out_shapes[0]) == 4:
            try:
                return [_d2s_geometry(other, tuple(out_shapes[0]), attrs.block_size)]
            except Exception:       # noqa: BLE001  (left for infer_shape to report)
                return [None]
        return [in_shapes[0]]
    return rule


_D2S_DOCS = {
    "depth_to_space": """Rearrange depth into blocks of space (MXNet 1.9.1, as ONNX's DCR
mode): data (N, C, H, W) becomes (N, C / b**2, H * b, W * b) with
``out[n, c, h * b + i, w * b + j] = data[n, (i * b + j) * (C / b**2) + c, h, w]``, b the
``block_size``. Any dtype. The gradient is ``space_to_depth`` (its inverse).

>>> x = mx.nd.arange(8).reshape((1, 4, 1, 2))
>>> mx.nd.depth_to_space(x, block_size=2).asnumpy().tolist()
[[[[0.0, 2.0, 1.0, 3.0], [4.0, 6.0, 5.0, 7.0]]]]
""",
    "space_to_depth": """Rearrange blocks of space into depth, the inverse of
``depth_to_space``: data (N, C, H, W) becomes (N, C * b**2, H / b, W / b) with
``out[n, (i * b + j) * C + c, h, w] = data[n, c, h * b + i, w * b + j]``. Any dtype. The
gradient is ``depth_to_space``.

>>> x = mx.nd.arange(8).reshape((1, 1, 2, 4))
>>> mx.nd.space_to_depth(x, block_size=2).asnumpy().ravel().tolist()
[0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0]
"""}

for _op in ("depth_to_space", "space_to_depth"):
    register(OpDef(
        _op, inputs=("data",),
        params=(Param("block_size", "int", REQUIRED, "the side of the blocks moved"),),
        infer_shape=_d2s_shape_fn(_op), infer_type=lambda dtypes, attrs: [dtypes[0]],
        compute={"cpu": _d2s_compute_fn(_op)}, gradient=_d2s_grad_fn(_op),
        backward_shape=_d2s_backward_shape_fn(_op), doc=_D2S_DOCS[_op]))


# ---- SVMOutput --------------------------------------------------------------------------------
def _svm_label_shape(data):
    """(n,) for data (n, k); (n, d2, ...) for data (n, k, d2, ...): a class per position."""
    return (data[0],) + tuple(data[2:])


def _svm_shape(shapes, attrs):
    check_num_inputs("SVMOutput", shapes, 2)
    data, label = tuple(shapes[0]), tuple(shapes[1])
    if len(data) < 2:
        raise op_error("SVMOutput", f"data must be (batch, classes, ...), got shape {data}")
    want = _svm_label_shape(data)
    if label != want:
        raise op_error("SVMOutput", f"label has shape {label}; data {data} needs {want} "
                       "(class indices)")
    return [data]


def _svm_type(dtypes, attrs):
    if np.dtype(dtypes[0]) not in FLOAT_DTYPES:
        raise op_error("SVMOutput", f"data must have a float dtype, got {dtypes[0]}")
    if np.dtype(dtypes[1]) == np.bool_:
        raise op_error("SVMOutput", "label must be numeric, got bool")
    return [dtypes[0]]


def _svm_backward_shape(in_shapes, out_shapes, attrs):
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if in_shapes[1] is not None or data is None or len(data) < 2:
        return [data, in_shapes[1]]
    return [data, _svm_label_shape(data)]


def _svm_compute(rctx, ins, outs, attrs):
    if outs[0] is not ins[0]:
        rctx.xp.copyto(outs[0], ins[0])


def _svm_grad(F, node, ograds):
    """The hinge-loss gradient (MXNet 1.9.1's), whatever the head gradient; label gets none.
    With ``hot`` the one-hot of the (truncated) label along axis 1, m the margin and C the
    regularization coefficient:
    L2-SVM  dx = 2 C (relu(m + x) (1 - hot) - relu(m - x) hot);
    L1-SVM  dx = C ((x > -m) (1 - hot) - (x < m) hot).
    A label outside [0, k) has no class: every class gets the non-label term."""
    a = node.attrs
    data, label = node.inputs
    shape = tuple(node.input_shapes[0])
    dtype = node.input_dtypes[0]
    k, nd = shape[1], len(shape)
    hot = F.one_hot(label, depth=k, dtype=dtype)
    if nd > 2:                                  # (n, d2, ..., k) -> (n, k, d2, ...)
        hot = F.transpose(hot, axes=(0, nd - 1) + tuple(range(1, nd - 1)))
    other = 1.0 - hot
    m, c = a.margin, a.regularization_coefficient
    if a.use_linear:
        wrong = F.cast(F._internal._greater_scalar(data, scalar=-m), dtype=dtype)
        right = F.cast(F._internal._lesser_scalar(data, scalar=m), dtype=dtype)
        grad = (wrong * other - right * hot) * c
    else:
        grad = (F.relu(data + m) * other - F.relu(m - data) * hot) * (2.0 * c)
    return [grad, None]


register(OpDef(
    "SVMOutput", inputs=("data", "label"),
    params=(Param("margin", "float", 1.0, "the margin the loss enforces"),
            Param("regularization_coefficient", "float", 1.0, "scale of the loss gradient"),
            Param("use_linear", "bool", False, "L1-SVM (hinge) objective; default L2-SVM "
                  "(squared hinge)")),
    infer_shape=_svm_shape, infer_type=_svm_type, backward_shape=_svm_backward_shape,
    compute={"cpu": _svm_compute}, gradient=_svm_grad, in_place=True,
    doc="""Support-vector-machine output layer (MXNet 1.9.1): the forward pass is the identity;
the gradient with respect to ``data`` (N, k) is that of the one-vs-rest hinge loss with
the class ``label`` (N,), whatever the head gradient (``backward()`` needs none); label
gets none. With m = ``margin``, C = ``regularization_coefficient`` and y the label's class:

- L2-SVM (default): ``-2 C max(0, m - x[y])`` for the label's class, ``2 C max(0, m + x[j])``
  for the others;
- L1-SVM (``use_linear``): ``-C [x[y] < m]`` and ``C [x[j] > -m]``.

A class-index label is truncated toward zero (as MXNet casts it); one outside ``[0, k)``
marks no class. Data with more than 2 axes (N, k, d2, ...) takes a label (N, d2, ...), a
class per position (MXNet 1.9.1's shape inference wanted (N, k) there and its kernel read
it incoherently). The gradient is a graph of registered ops (relu, comparisons, one_hot)
and differentiates again.

>>> x = mx.nd.array([[0.5, -0.3, 0.2]], dtype="float64"); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.SVMOutput(x, mx.nd.array([0]))
>>> y.backward()
>>> x.grad.asnumpy().round(4).tolist()
[[-1.0, 1.4, 2.4]]
"""))


# ---- IdentityAttachKLSparseReg ----------------------------------------------------------------
def _kl_shape(shapes, attrs):
    check_num_inputs("IdentityAttachKLSparseReg", shapes, 2)
    data, avg = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 2:
        raise op_error("IdentityAttachKLSparseReg", f"data must be 2-D (batch, units), got "
                       f"shape {data}")
    if avg != data[1:]:
        raise op_error("IdentityAttachKLSparseReg", f"moving_avg must have shape {data[1:]} "
                       f"(one value per unit of data {data}), got {avg}")
    return [data, avg]


def _kl_type(dtypes, attrs):
    dt = _float32_64("IdentityAttachKLSparseReg", dtypes[0])
    if np.dtype(dtypes[1]) != dt:
        raise op_error("IdentityAttachKLSparseReg", f"moving_avg has dtype "
                       f"{np.dtype(dtypes[1])}, data has {dt}: they must match")
    return [dt, dt]


def _kl_backward_shape(in_shapes, out_shapes, attrs):
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    avg = in_shapes[1]
    if avg is None and data is not None and len(data) == 2:
        avg = tuple(data[1:])
    return [data, avg]


def _kl_compute(rctx, ins, outs, attrs):
    """Identity; in training the moving average of the units' mean activations is updated
    in place, and the average the gradient uses goes to the hidden output."""
    x, moving = ins
    out, used = outs
    xp = rctx.xp
    if rctx.is_train:
        mean = x.mean(axis=0, dtype=np.float64) if x.shape[0] else \
            xp.zeros(moving.shape, np.float64)
        new = moving * attrs.momentum + (mean * (1.0 - attrs.momentum)).astype(moving.dtype)
        xp.copyto(moving, new)
    xp.copyto(used, moving)
    if out is not x:
        xp.copyto(out, x)


def _kl_grad(F, node, ograds):
    """dx = g + penalty (-rho / avg + (1 - rho) / (1 - avg)) on every row, avg the moving
    average after this call's update (the hidden output: a constant of the data, as MXNet's
    backward treats it; its own head gradient is ignored)."""
    a = node.attrs
    avg = F.BlockGrad(node.outputs[1])
    rho = a.sparseness_target
    term = (F._internal._rdiv_scalar(avg, scalar=-rho)
            + F._internal._rdiv_scalar(1.0 - avg, scalar=1.0 - rho)) * a.penalty
    n = node.input_shapes[0][0]
    return [F.broadcast_add(ograds[0], F.reshape(term, shape=(1, -1))) if n else ograds[0],
            None]


register(OpDef(
    "IdentityAttachKLSparseReg", inputs=("data", "moving_avg"),
    params=(Param("sparseness_target", "float", 0.1, "the sparseness target rho"),
            Param("penalty", "float", 0.001, "the weight of the sparseness penalty"),
            Param("momentum", "float", 0.9, "the momentum of the running average")),
    infer_shape=_kl_shape, infer_type=_kl_type, backward_shape=_kl_backward_shape,
    compute={"cpu": _kl_compute}, gradient=_kl_grad, grad_needs=("outputs",),
    num_outputs=2, output_names=("output", "avg"), num_visible_outputs=1,
    aux_inputs=("moving_avg",), mutate_inputs=("moving_avg",), in_place=True,
    var_init={"moving_avg": '["zero", {}]'},
    doc="""Identity that attaches a KL sparseness penalty to the gradient of sigmoid
activations ``data`` (batch, units) (MXNet 1.9.1). ``moving_avg`` (units,) is an auxiliary
state: in training, ``moving_avg = momentum * moving_avg + (1 - momentum) * mean(data,
axis=0)`` (in place); the data gradient is the head gradient plus
``penalty * (-rho / moving_avg + (1 - rho) / (1 - moving_avg))`` for every row, rho the
``sparseness_target``, with the average after the update. The average enters the gradient
as a constant (MXNet's rule), so the gradient differentiates again (to zero in data).

Differences from MXNet 1.9.1: the average is updated in the training forward (MXNet did it
in the backward pass), once per call; ``mx.nd`` takes ``moving_avg`` as a second input
(MXNet's ``mx.nd`` front end had no way to pass it); data must be 2-D (MXNet's kernel
flattened other shapes against a moving average of the second axis).

>>> x = mx.nd.array([[0.2, 0.6], [0.4, 0.2]], dtype="float64")
>>> avg = mx.nd.array([0.5, 0.5], dtype="float64")
>>> with mx.autograd.train_mode():
...     y = mx.nd.IdentityAttachKLSparseReg(x, avg, momentum=0.5)
>>> avg.asnumpy().round(4).tolist()
[0.4, 0.45]
"""))


# ---- im2col / col2im --------------------------------------------------------------------------
def _cols_geometry(op, image_shape, attrs):
    """(kernel, stride, dilate, pad, spatial, out spatial) of the sliding blocks of an image
    batch (N, C, *spatial): Convolution's rule."""
    from .conv import conv_geometry
    from .registry import Attrs
    return conv_geometry(op, image_shape, Attrs(attrs, layout=None))


def _im2col_shape(shapes, attrs):
    check_num_inputs("im2col", shapes, 1)
    data = tuple(shapes[0])
    kernel, _, _, _, _, out = _cols_geometry("im2col", data, attrs)
    return [(data[0], data[1] * size_of(kernel), size_of(out))]


def _col2im_image(op, cols, attrs):
    """The image shape (N, C, *output_size) of columns ``cols`` (N, C*K, L), checked."""
    size = tuple(attrs.output_size)
    kernel = tuple(attrs.kernel)
    if len(cols) != 3:
        raise op_error(op, f"data must be 3-D (N, C * prod(kernel), L), got shape {cols}")
    if len(size) != len(kernel):
        raise op_error(op, f"output_size={size} must have as many axes as kernel={kernel}")
    k = size_of(kernel)
    if k < 1 or cols[1] % k:
        raise op_error(op, f"axis 1 of data {cols} must be a multiple of prod(kernel) = {k}")
    image = (cols[0], cols[1] // k) + size
    *_, out = _cols_geometry(op, image, attrs)
    if size_of(out) != cols[2]:
        raise op_error(op, f"axis 2 of data {cols} must be the number of blocks, "
                       f"{size_of(out)} for output_size={size} (blocks {out})")
    return image


def _col2im_shape(shapes, attrs):
    check_num_inputs("col2im", shapes, 1)
    return [_col2im_image("col2im", tuple(shapes[0]), attrs)]


def _cols_type_fn(op):
    def infer_type(dtypes, attrs):
        if np.dtype(dtypes[0]) not in FLOAT_DTYPES:
            raise op_error(op, f"data must have a float dtype, got {dtypes[0]}")
        return [dtypes[0]]
    return infer_type


def _cols_run(rctx, image, cols, attrs, adjoint):
    """im2col (image -> cols (N, C*K, L)) or its adjoint col2im (cols -> image), through
    the convolution kernels' column layout (C*K, N*L), a batch chunk at a time."""
    from .._core import conv as _ck
    from .common import kernels
    from .conv import _chunks, _geom
    xp = rctx.xp
    kernel, stride, dilate, pad, in_sp, out_sp = _cols_geometry(
        "col2im" if adjoint else "im2col", image.shape, attrs)
    dev = kernels(rctx, _ck)
    n, c = image.shape[:2]
    ck, l = cols.shape[1], cols.shape[2]
    if image.size == 0 or cols.size == 0:
        if adjoint:
            xp.fill_zero(image)
        return
    for s, nb in _chunks(n, ck * l):
        buf = xp.empty((ck, nb * l), image.dtype)
        view = buf.reshape(ck, nb, l).transpose(1, 0, 2)
        geom = _geom(nb, c, in_sp, out_sp, kernel, stride, pad, dilate)
        if adjoint:
            xp.strided_copy(cols[s:s + nb], view)
            dev.col2im(buf, image[s:s + nb], geom)
        else:
            dev.im2col(image[s:s + nb], buf, geom)
            xp.strided_copy(view, cols[s:s + nb])


def _im2col_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    _, (x,), target = in_work_dtype(xp, ins, outs[0])
    _cols_run(rctx, x, target, attrs, False)
    write_back(xp, target, outs[0])


def _col2im_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    _, (cols,), target = in_work_dtype(xp, ins, outs[0])
    _cols_run(rctx, target, cols, attrs, True)
    write_back(xp, target, outs[0])


def _spatial_kw(attrs):
    return dict(kernel=attrs.kernel, stride=attrs.stride, dilate=attrs.dilate, pad=attrs.pad)


def _im2col_grad(F, node, ograds):
    """im2col is linear: its gradient is its adjoint, col2im (whose gradient is im2col)."""
    size = tuple(node.input_shapes[0][2:])
    return [F.col2im(ograds[0], output_size=size, **_spatial_kw(node.attrs))]


def _col2im_grad(F, node, ograds):
    """col2im is the adjoint of im2col: its gradient is im2col."""
    return [F.im2col(ograds[0], **_spatial_kw(node.attrs))]


def _im2col_backward_shape(in_shapes, out_shapes, attrs):
    return [in_shapes[0]]


def _cols_params(with_size):
    size = (Param("output_size", "shape", REQUIRED, "the spatial shape of the image: (w,), "
                  "(h, w) or (d, h, w)"),) if with_size else ()
    return size + (
        Param("kernel", "shape", REQUIRED, "sliding kernel size: (w,), (h, w) or (d, h, w)"),
        Param("stride", "shape", (), "stride between adjacent blocks (default 1)"),
        Param("dilate", "shape", (), "spacing between kernel taps (default 1)"),
        Param("pad", "shape", (), "zero padding on both sides of each spatial axis "
              "(default 0)"))


register(OpDef(
    "im2col", inputs=("data",), params=_cols_params(False),
    infer_shape=_im2col_shape, infer_type=_cols_type_fn("im2col"),
    compute={"cpu": _im2col_compute}, gradient=_im2col_grad,
    backward_shape=_im2col_backward_shape,
    doc="""Extract sliding blocks from an image batch (N, C, *spatial) into columns
(N, C * prod(kernel), L), L the number of block positions, as a Convolution with
``kernel``, ``stride``, ``dilate`` and ``pad`` would read them: row ``c * K + k`` holds the
input under kernel tap k of channel c for each position (0 in the padding). 1-D, 2-D and
3-D images (MXNet 1.9.1's kernels ran 2-D only), float dtypes. Uses the convolution's
im2col kernels; the gradient is ``col2im``.

>>> x = mx.nd.arange(9).reshape((1, 1, 3, 3))
>>> mx.nd.im2col(x, kernel=(2, 2)).asnumpy().tolist()
[[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
"""))


register(OpDef(
    "col2im", inputs=("data",), params=_cols_params(True),
    infer_shape=_col2im_shape, infer_type=_cols_type_fn("col2im"),
    compute={"cpu": _col2im_compute}, gradient=_col2im_grad,
    backward_shape=_im2col_backward_shape,
    doc="""Combine columns (N, C * prod(kernel), L) into an image batch (N, C, *output_size),
the adjoint of ``im2col``: each image element is the sum of the column entries that read
it (overlapping blocks add up). Parameters as ``im2col``; the gradient is ``im2col``.

>>> cols = mx.nd.ones((1, 4, 4))
>>> mx.nd.col2im(cols, output_size=(3, 3), kernel=(2, 2)).asnumpy().tolist()
[[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
"""))
