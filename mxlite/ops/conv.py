"""Convolution and Deconvolution (1-D, 2-D, 3-D; channels first NCW/NCHW/NCDHW or channels
last NWC/NHWC/NDHWC), and their weight gradient.

Kernels: im2col / col2im in Cython (``mxlite/_core/conv.pyx``, int64 indices) and one BLAS
GEMM per group over the whole batch (batch chunks bound the column buffer); float32 batches
of small images on the CPU run im2col/col2im and the product fused per image instead (see
``_fused``). The compute functions serve every device: they reach the kernels through
``kernels(rctx, _k)`` (on GPU the functions of ``mxlite/cuda/ops/conv.py``, same arguments)
and the product through ``linalg._blocked_matmul`` (oneDNN's matmul for float32 on the
CPU, else ``rctx.xp.matmul``).

The three ops are closed under differentiation. With ``T(x, W, g) = <g, conv(x, W)>``:

* ``Convolution``: ``dx = Deconvolution(g, W)`` (``adj`` restores the input size),
  ``dW = _conv_weight_grad(x, g)``, ``db = sum(g)``;
* ``Deconvolution`` (the adjoint of Convolution in its data): ``dy = Convolution(h, W)``,
  ``dW = _conv_weight_grad(h, y)``, ``db = sum(h)``;
* ``_conv_weight_grad(x, g)``: ``dx = Deconvolution(g, H)``, ``dg = Convolution(x, H)``.

so gradients of any order are again these ops (each with its own FGradient).

Channels-last layouts (``layout='NHWC'``, ...; the weight is then ``(O, *kernel, I)``) run the
channels-first kernels on channels-first copies (``channels_first_compute``: one transposing
copy of each input and of the output; see benchmarks/bench_layouts.py for its cost), and each
gradient op gets the node's layout, so the graphs above hold in every layout.
"""
import functools

import numpy as np

from .._core import conv as _k
from ..base import op_error
from . import onednn
from ..base import FLOAT_DTYPES
from .common import F32, compute_dtype, in_work_dtype, kernels, write_back
from .linalg import _blocked_matmul
from .registry import REQUIRED, Attrs, OpDef, Param, register
from .shape_partial import combine, partial_rule
from .shape_utils import size_of

__all__ = ["conv_geometry", "deconv_geometry", "LAYOUTS", "check_layout", "is_channels_last",
           "arrange", "spatial_of", "channel_axis", "channels_first_compute"]

_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
LAYOUTS = tuple(_FIRST.values()) + tuple(_LAST.values())


# ---- layouts ------------------------------------------------------------------------------------
# A channels-last array is its channels-first counterpart with axis 1 moved to the end; a
# weight (O, I, *kernel) moves the same way to MXNet's (O, *kernel, I). So one permutation
# serves data, weights and outputs alike.
def check_layout(op, layout, nd, what):
    """True for the channels-last layout of ``nd`` spatial axes (NWC, NHWC, NDHWC), False
    for channels first or None (MXNet's default); MXNetError for a layout of another rank
    (``what`` names the thing that fixed the rank, e.g. ``"a 2-D kernel"``)."""
    if layout is None or layout == _FIRST[nd]:
        return False
    if layout == _LAST[nd]:
        return True
    raise op_error(op, f"layout={layout!r} does not fit {what}: {nd} spatial axes take "
                   f"{_FIRST[nd]!r} or {_LAST[nd]!r}")


def is_channels_last(layout):
    """True for NWC, NHWC and NDHWC (a layout already checked by ``check_layout``)."""
    return layout in _LAST.values()


def arrange(last, batch, channels, spatial):
    """The shape ``(batch, channels, *spatial)``, or ``(batch, *spatial, channels)`` for a
    channels-last layout (also a weight's ``(O, I, *kernel)`` / ``(O, *kernel, I)``)."""
    spatial = tuple(spatial)
    return (batch,) + spatial + (channels,) if last else (batch, channels) + spatial


def spatial_of(shape, last):
    """The spatial axes of a shape in either layout."""
    return tuple(shape[1:-1]) if last else tuple(shape[2:])


def channel_axis(last, ndim):
    """The channel axis: 1, or the last for a channels-last layout."""
    return ndim - 1 if last else 1


def _first_order(a, last=True):
    """A channels-first view of channels-last ``a`` (no copy); ``a`` itself when it is
    channels first already (``last`` False)."""
    return a.transpose((0, a.ndim - 1) + tuple(range(1, a.ndim - 1))) if last else a


def _copy(xp, src, dst):
    """``dst[...] = src`` (either a strided view): the copy kernel, or a cast where dtypes
    differ. The layout copies pass both in the channels-first order, which the kernel walks
    with the spatial axis innermost: the strided side then steps by the channel count (a
    few cache lines), not by a whole plane (a page per element: measured 2.6x slower for a
    (32, 32, 32, 32) float32 output)."""
    if src.dtype == dst.dtype:
        xp.strided_copy(src, dst)
    else:
        xp.cast_into(dst, src)


# Elements of one batch chunk of a channels-last call's channels-first copies (the largest
# per-item array times the chunk's items): the scratch stays this small whatever the batch,
# and is still in cache when the kernel reads it.
_LAYOUT_CHUNK = 1 << 21


def _moved(xp, a, dtype, last=True):
    """A C-contiguous channels-first copy of ``a`` (channels last unless ``last`` is False)
    in ``dtype``."""
    view = _first_order(a, last)
    out = xp.empty(view.shape, dtype)
    _copy(xp, view, out)
    return out


def channels_first_compute(compute, roles, summed=False, native=None):
    """The compute function of an op with a ``layout`` parameter, from its channels-first
    ``compute``. The op may take strided views (``strided_inputs``: a weight transposed in
    a graph reaches it without a copy).

    A channels-last call first tries ``native(rctx, ins, outs, attrs)`` (True when it ran)
    on the channels-first views of its arrays: oneDNN reads and writes the channels-last
    memory (and any strided input) through them, no copy made. Otherwise the inputs are
    made contiguous, and a channels-first call runs ``compute`` on them. A channels-last
    one runs ``compute`` (with ``layout=None``) on channels-first copies in the work dtype
    (the transpose and float16's cast in one pass), batch chunk by batch chunk: ``roles``
    says, per input, ``"b"`` (batched: data, head gradients; copied a chunk at a time),
    ``"w"`` (a weight, copied once) or ``"-"`` (as it is: a bias). Each chunk's outputs are
    copied back into the outputs' chunk, or, with ``summed`` (the weight gradient, a sum
    over the batch), added up over the chunks and copied back once: the index arithmetic
    stays that of the tested kernels, for one pass over each array
    (benchmarks/bench_layouts.py measures it). A large float16 call in a channels-first
    layout goes the same way (the chunk copies are its float32 casts), so no float32 copy
    of the whole array exists."""
    def run(rctx, ins, outs, attrs):
        last = is_channels_last(attrs.layout)
        if last and native is not None and native(
                rctx, [_first_order(a) if r != "-" else a for a, r in zip(ins, roles)],
                [_first_order(o) for o in outs], Attrs(attrs, layout=None)):
            return
        # the op takes strided views (a weight transposed in a graph): the kernels below
        # read contiguous arrays
        ins = [a if a is None or a.flags.c_contiguous else rctx.xp.ascontiguousarray(a)
               for a in ins]
        work = onednn.work_dtype(rctx.xp, outs[0].dtype)
        if not last and (work == outs[0].dtype or ins[0].size <= _LAYOUT_CHUNK):
            return compute(rctx, ins, outs, attrs)
        # channels last, or a large float16 call: its float32 copies a chunk at a time
        ins = [_moved(rctx.xp, a, work, last) if r == "w" else a for a, r in zip(ins, roles)]
        chunks = _chunks_of(rctx.xp, ins, roles, [] if summed else outs, work, last)
        (_summed_chunks if summed else _batched_chunks)(rctx, compute, chunks, outs,
                                                        Attrs(attrs, layout=None), work, last)
    return functools.wraps(compute)(run)     # its module names the op's family (API docs)


def _chunks_of(xp, ins, roles, outs, work, last=True):
    """``(start, stop, inputs)`` per batch chunk, the batched inputs copied channels first
    (lazily: one chunk's copies at a time). A chunk's items times the largest per-item
    array (batched inputs, ``outs``) stay under ``_LAYOUT_CHUNK``; an empty batch is one
    empty chunk."""
    n = ins[0].shape[0]
    per = max(a.size // n if n else 0 for a in [a for a, r in zip(ins, roles) if r == "b"]
              + list(outs))
    step = max(1, _LAYOUT_CHUNK // max(per, 1))
    for s in range(0, max(n, 1), step):
        yield s, s + step, [_moved(xp, a[s:s + step], work, last) if r == "b" else a
                            for a, r in zip(ins, roles)]


def _batched_chunks(rctx, compute, chunks, outs, attrs, work, last=True):
    """Each chunk computed into channels-first scratch, copied into its slice of ``outs``."""
    xp = rctx.xp
    for s, e, chunk in chunks:
        parts = [xp.empty(_first_order(o[s:e], last).shape, work) for o in outs]
        compute(rctx, chunk, parts, attrs)
        for part, o in zip(parts, outs):
            _copy(xp, part, _first_order(o[s:e], last))


def _summed_chunks(rctx, compute, chunks, outs, attrs, work, last=True):
    """The chunks' results added up (a sum over the batch), copied into ``outs[0]``."""
    xp = rctx.xp
    total = None
    for _, _, chunk in chunks:
        part = xp.empty(_first_order(outs[0], last).shape, work)
        compute(rctx, chunk, [part], attrs)
        if total is None:
            total = part
        else:
            kernels(rctx, _k).add_into(total, part)
    _copy(xp, total, _first_order(outs[0], last))


# Elements of one column buffer (im2col); larger batches are processed in chunks.
_COL_LIMIT = 1 << 24


def _spatial_params(op, attrs, names):
    """kernel and the per-axis params in ``names`` (stride, dilate, pad, adj, ...) as tuples
    of the kernel's length, filled with MXNet's defaults (stride/dilate 1, pad/adj 0)."""
    kernel = tuple(attrs.kernel)
    nd = len(kernel)
    if nd not in (1, 2, 3):
        raise op_error(op, f"kernel must have 1, 2 or 3 axes (NCW/NWC, NCHW/NHWC, "
                       f"NCDHW/NDHWC), got kernel={kernel}")
    if min(kernel) < 1:
        raise op_error(op, f"kernel sizes must be positive, got kernel={kernel}")
    check_layout(op, attrs.layout, nd, f"a {nd}-D kernel={kernel}")
    out = [kernel]
    for name in names:
        value = tuple(attrs[name])
        default = 1 if name in ("stride", "dilate") else 0
        if not value:
            value = (default,) * nd
        if len(value) != nd:
            raise op_error(op, f"{name}={value} must have as many axes as kernel={kernel}")
        if min(value) < default:
            raise op_error(op, f"{name}={value} must be >= {default} on every axis")
        out.append(value)
    return out


def _channels(op, attrs, c_in, c_out, what_in, what_out):
    g = attrs.num_group
    if g < 1:
        raise op_error(op, f"num_group must be >= 1, got {g}")
    if attrs.num_filter < 1:
        raise op_error(op, f"num_filter must be >= 1, got {attrs.num_filter}")
    if c_in % g or c_out % g:
        raise op_error(op, f"num_group={g} must divide the {what_in} ({c_in}) and the "
                       f"{what_out} ({c_out})")
    return g


def _check_data(op, shape, nd, last, what="data"):
    """MXNetError unless ``shape`` has the rank of the layout; its spatial axes."""
    if len(shape) != nd + 2:
        layout = (_LAST if last else _FIRST)[nd]
        raise op_error(op, f"{what} must be {nd + 2}-D ({layout}) for a {nd}-D kernel, "
                       f"got shape {shape}")
    return spatial_of(shape, last)


def conv_geometry(op, data_shape, attrs, out_spatial=None):
    """``(kernel, stride, dilate, pad, in_spatial, out_spatial)`` of a convolution of data
    ``(N, C, *in)`` (``(N, *in, C)`` with a channels-last ``attrs.layout``); MXNetError when
    the dilated kernel exceeds the padded input. ``out_spatial`` (given by
    ``_conv_weight_grad``) may stop short of the formula's size."""
    kernel, stride, dilate, pad = _spatial_params(op, attrs, ("stride", "dilate", "pad"))
    nd = len(kernel)
    spatial = _check_data(op, data_shape, nd, is_channels_last(attrs.layout))
    full = []
    for i in range(nd):
        span = dilate[i] * (kernel[i] - 1) + 1
        if span > spatial[i] + 2 * pad[i]:
            raise op_error(op, f"kernel={kernel} (dilate={dilate}) is larger than the padded "
                           f"input: data {data_shape} with pad={pad}")
        full.append((spatial[i] + 2 * pad[i] - span) // stride[i] + 1)
    full = tuple(full)
    if out_spatial is not None:
        if len(out_spatial) != nd or any(o > f for o, f in zip(out_spatial, full)):
            raise op_error(op, f"output gradient spatial shape {out_spatial} does not fit "
                           f"data {data_shape} (at most {full})")
        full = tuple(out_spatial)
    return kernel, stride, dilate, pad, spatial, full


def deconv_geometry(op, data_shape, attrs):
    """``(kernel, stride, dilate, pad, adj, in_spatial, out_spatial)`` of a deconvolution of
    data ``(N, C, *in)`` (or channels last, as ``attrs.layout`` says), with MXNet's rule:
    with ``target_shape`` set, the total padding ``stride*(in-1) + dilated kernel - target``
    is split as ``pad = ceil(total/2)`` and ``adj = total % 2``; otherwise ``out =
    stride*(in-1) + dilated kernel - 2*pad + adj``."""
    kernel, stride, dilate, pad, adj, target = _spatial_params(
        op, attrs, ("stride", "dilate", "pad", "adj", "target_shape"))
    nd = len(kernel)
    spatial = _check_data(op, data_shape, nd, is_channels_last(attrs.layout))
    spans = [dilate[i] * (kernel[i] - 1) + 1 for i in range(nd)]
    if any(target):
        pad, adj = [], []
        for i in range(nd):
            total = stride[i] * (spatial[i] - 1) + spans[i] - target[i]
            if total < 0:
                raise op_error(op, f"target_shape={tuple(target)} is too big for data "
                               f"{data_shape} with kernel={kernel}, stride={stride}")
            pad.append((total + 1) // 2)
            adj.append(total % 2)
        pad, adj = tuple(pad), tuple(adj)
    out = tuple(stride[i] * (spatial[i] - 1) + spans[i] - 2 * pad[i] + adj[i]
                for i in range(nd))
    if min(spatial, default=1) < 1 or min(out) < 1:
        raise op_error(op, f"data {data_shape} with kernel={kernel}, stride={stride}, "
                       f"pad={pad}, adj={adj} gives output size {out}")
    return kernel, stride, dilate, pad, adj, spatial, out


def _three(t, fill):
    """A spatial tuple padded to 3 axes with leading ``fill`` (the kernels' layout)."""
    return (fill,) * (3 - len(t)) + tuple(t)


def _geom(n, c, in_sp, out_sp, kernel, stride, pad, dilate):
    return (n, c, _three(in_sp, 1), _three(out_sp, 1), _three(kernel, 1), _three(stride, 1),
            _three(pad, 0), _three(dilate, 1))


def _float_type(op, names):
    def infer_type(dtypes, attrs):
        first = dtypes[0]
        for name, dt in zip(names, dtypes):
            if dt not in FLOAT_DTYPES:
                raise op_error(op, f"{name} must be float16, bfloat16, float32 or float64, "
                               f"got {dt}")
            if dt != first:
                raise op_error(op, f"inputs must share one dtype, got {list(map(str, dtypes))}")
        return [first]
    return infer_type


def _bias_inputs(attrs):
    return ("data", "weight") if attrs.no_bias else ("data", "weight", "bias")


def _check_arity(op, shapes, attrs):
    names = _bias_inputs(attrs)
    if len(shapes) != len(names):
        raise op_error(op, f"expected inputs {list(names)} (no_bias={attrs.no_bias}), got "
                       f"{len(shapes)} input(s)")


def _chunks(n, per_image):
    """Batch ranges ``(start, count)`` whose column buffer stays under ``_COL_LIMIT``."""
    step = max(1, min(n, _COL_LIMIT // max(per_image, 1)))
    return [(s, min(step, n - s)) for s in range(0, n, step)]


# float32 on the CPU: Convolution, Deconvolution and the weight gradient run im2col/col2im
# and their product fused (conv.pyx ``conv_forward``, ``deconv_forward``, ``weight_grad``:
# explicit-vector kernels, work items of a few images on the OpenMP threads) for batches of
# 2 or more whose per-image columns stay below this many elements (1 MiB: they are read back
# from the core's cache). Larger images go to BLAS, which blocks large products better, and a
# single image would leave the second thread idle.
_FUSED_COL_LIMIT = 1 << 18


def _fused(xp, dtype, n, per_image):
    return getattr(xp, "name", None) == "cpu" and dtype == np.float32 and n >= 2 \
        and per_image <= _FUSED_COL_LIMIT


def _axes_sum(nd, last):
    """The batch and spatial axes (a bias gradient's sum) of ``nd`` spatial axes."""
    return (0,) + (tuple(range(1, nd + 1)) if last else tuple(range(2, nd + 2)))


def _slice_to(F, x, shape):
    """``x`` cut to ``shape`` on its spatial axes (a conv output longer than needed)."""
    return F.slice(x, begin=(0,) * len(shape), end=tuple(shape))


# ---- Convolution ----------------------------------------------------------------------------
_COMMON = (
    Param("kernel", "shape", REQUIRED, "convolution kernel size: (w,), (h, w) or (d, h, w)"),
    Param("stride", "shape", (), "stride on each spatial axis (default 1)"),
    Param("dilate", "shape", (), "dilation on each spatial axis (default 1)"),
    Param("pad", "shape", (), "zero padding on both sides of each spatial axis (default 0)"),
)
_TAIL = (
    Param("cudnn_tune", "str", None, "ignored (cuDNN only)",
          choices=("off", "limited", "fastest")),
    Param("cudnn_off", "bool", False, "ignored (cuDNN only)"),
    Param("layout", "str", None, "data layout: channels first (NCW, NCHW, NCDHW; the "
          "default) or channels last (NWC, NHWC, NDHWC; the weight is then ``(O, *kernel, I)``)",
          choices=LAYOUTS),
)


def _check_params(op, shapes, attrs, axes, words):
    """MXNetError unless the weight has the shape of ``axes`` (its outer and inner channel
    axes, ``words`` naming them) with the kernel, in the layout's order, and, without
    no_bias, the bias has shape (num_filter,)."""
    data, weight, f = shapes[0], shapes[1], attrs.num_filter
    last = is_channels_last(attrs.layout)
    want = arrange(last, *axes, attrs.kernel)
    if tuple(weight) != want:
        outer, inner = words
        order = f"{outer}, *kernel, {inner}" if last else f"{outer}, {inner}, *kernel"
        raise op_error(op, f"weight has shape {weight}, expected ({order}) = {want} for "
                       f"data {data} (layout={attrs.layout})")
    if not attrs.no_bias and tuple(shapes[2]) != (f,):
        raise op_error(op, f"bias has shape {shapes[2]}, expected ({f},)")


def _fill_params(in_shapes, attrs, weight_axes):
    """Backward shape inference: the weight (``weight_axes(channels)`` with the kernel, in
    the layout's order) and bias shapes from data's and the attributes, where unknown."""
    data = in_shapes[0]
    filled = list(in_shapes)
    last = is_channels_last(attrs.layout)
    if data is not None and len(data) >= 2 and attrs.num_group > 0:
        channels = data[channel_axis(last, len(data))]
        filled[1] = filled[1] or arrange(last, *weight_axes(channels), attrs.kernel)
    if len(filled) > 2:
        filled[2] = filled[2] or (attrs.num_filter,)
    return filled


def _data_channels(shape, attrs):
    """``(channels, words)``: the data's channel count and where it was read (for errors)."""
    axis = channel_axis(is_channels_last(attrs.layout), len(shape))
    return shape[axis], f"input channels data.shape[{axis}]"


def _conv_shape(shapes, attrs):
    op = "Convolution"
    _check_arity(op, shapes, attrs)
    data = shapes[0]
    _, _, _, _, _, out_sp = conv_geometry(op, data, attrs)
    f = attrs.num_filter
    c, where = _data_channels(data, attrs)
    g = _channels(op, attrs, c, f, where, "num_filter")
    _check_params(op, shapes, attrs, (f, c // g), ("num_filter", "channels / num_group"))
    return [arrange(is_channels_last(attrs.layout), data[0], f, out_sp)]


def _conv_params_shape(in_shapes, out_shapes, attrs):
    return _fill_params(in_shapes, attrs,
                        lambda c: (attrs.num_filter, c // attrs.num_group))


@partial_rule
def _conv_data_shape(in_shapes, out_shapes, attrs):
    """The data's batch from the output's and, where the stride is 1, its spatial sizes
    (``out - 1 + dilated kernel - 2 pad``), as MXNet's rule."""
    filled = [None] * len(in_shapes)
    out = out_shapes[0]
    nd = len(attrs.kernel)
    if out is None or len(out) != nd + 2:
        return filled
    kernel, stride, dilate, pad = _spatial_params("Convolution", attrs,
                                                  ("stride", "dilate", "pad"))
    last = is_channels_last(attrs.layout)
    spatial = tuple(o - 1 + dilate[i] * (kernel[i] - 1) + 1 - 2 * pad[i]
                    if o is not None and stride[i] == 1 else None
                    for i, o in enumerate(spatial_of(out, last)))
    filled[0] = arrange(last, out[0], None, spatial)
    return filled


_conv_backward_shape = combine(_conv_params_shape, _conv_data_shape)


def _conv_forward(rctx, x, w, b, target, kernel, stride, dilate, pad, in_sp, out_sp, g):
    """target (N, F, *out) = conv(x, w) (+ b): im2col, one GEMM per group per batch chunk."""
    xp = rctx.xp
    n, c = x.shape[:2]
    f = w.shape[0]
    k, l = size_of(kernel), size_of(out_sp)
    if onednn.run(xp, "conv_forward", (x, w, b, target), stride, dilate, pad, g):
        return
    if _narrow(target.dtype):
        return _widened(_conv_forward, rctx, (x, w, b), target, kernel, stride, dilate, pad,
                        in_sp, out_sp, g)
    if _fused(xp, target.dtype, n, c * k * l):
        _k.conv_forward(x, w, b, target, _geom(n, c, in_sp, out_sp, kernel, stride, pad,
                                               dilate), g)
        return
    dev = kernels(rctx, _k)
    cg = c // g * k
    wg = w.reshape(g, f // g, cg)
    for s, nb in _chunks(n, c * k * l):
        col = xp.empty((c * k, nb * l), target.dtype)
        dev.im2col(x[s:s + nb], col, _geom(nb, c, in_sp, out_sp, kernel, stride, pad, dilate))
        tmp = xp.empty((f, nb * l), target.dtype)
        _blocked_matmul(xp, wg, col.reshape(g, cg, nb * l), tmp.reshape(g, f // g, nb * l))
        dev.fnl_to_nfl(tmp, b, target[s:s + nb], nb, f, l)


def _layer_inputs(xp, ins, out, attrs, narrow_bias=True):
    """Convolution/Deconvolution in the compute dtype: ``(data, weight, bias or None,
    target)`` (see ``in_work_dtype``; bfloat16 stays bfloat16 where oneDNN takes it,
    except, with ``narrow_bias`` False, a layer with a bias: the reference kernels add it)."""
    work = onednn.work_dtype(xp, out.dtype)
    if not narrow_bias and not attrs.no_bias:
        work = compute_dtype(out.dtype)
    _, ins, target = in_work_dtype(xp, ins, out, work)
    return ins[0], ins[1], None if attrs.no_bias else ins[2], target


def _widened(fn, rctx, arrays, target, *args):
    """``fn(rctx, *arrays, target, *args)`` in float32 for a bfloat16 problem that oneDNN
    refused (the reference kernels compute float32): float32 copies of ``arrays`` (None
    kept), the result rounded into ``target``."""
    xp = rctx.xp
    wide = [None if a is None else a.astype(F32) for a in arrays]
    tmp = xp.empty(target.shape, F32)
    fn(rctx, *wide, tmp, *args)
    xp.cast_into(target, tmp)


def _narrow(dtype):
    """True for a stored-only dtype (bfloat16 reaching a compute function: oneDNN was
    expected to take it)."""
    return compute_dtype(dtype) != dtype


def _conv_native(rctx, ins, outs, attrs):
    """Convolution by oneDNN on the channels-first views of channels-last arrays (True when
    it ran; see ``channels_first_compute``)."""
    x, w, out = ins[0], ins[1], outs[0]
    b = None if attrs.no_bias else ins[2]
    if out.size == 0:
        return False
    _, stride, dilate, pad, _, _ = conv_geometry("Convolution", x.shape, attrs)
    return onednn.run(rctx.xp, "conv_forward", (x, w, b, out), stride, dilate, pad,
                      attrs.num_group, contiguous=False)


def _conv_compute(rctx, ins, outs, attrs):
    out = outs[0]
    if out.size == 0:
        return
    xp = rctx.xp
    x, w, b, target = _layer_inputs(xp, ins, out, attrs)
    kernel, stride, dilate, pad, in_sp, out_sp = conv_geometry("Convolution", x.shape, attrs)
    _conv_forward(rctx, x, w, b, target, kernel, stride, dilate, pad, in_sp, out_sp,
                  attrs.num_group)
    write_back(xp, target, out)


def _param_grads(F, node, grads, image, conv_ograd, head, num_filter, geo):
    """``grads`` with the weight's and bias's gradients where wanted: dW =
    _conv_weight_grad(image, conv_ograd) (Convolution: (x, gy); Deconvolution: (gx, y)),
    db = the sum of ``head`` (the layer's output gradient) over batch and space."""
    if node.wants[1]:
        grads[1] = F._internal._conv_weight_grad(image, conv_ograd, num_filter=num_filter,
                                                 **geo)
    if len(node.inputs) > 2 and node.wants[2]:
        grads[2] = F.sum(head, axis=_axes_sum(len(geo["kernel"]),
                                              is_channels_last(geo["layout"])))
    return grads


def _grad_geo(attrs, kernel, stride, dilate, pad):
    """The parameters every gradient op of a layer shares (its layout included)."""
    return dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                num_group=attrs.num_group, layout=attrs.layout)


def _channels_of(shape, attrs):
    return shape[channel_axis(is_channels_last(attrs.layout), len(shape))]


def _conv_grad(F, node, ograds):
    """y = conv(x, W) + b:  dx = Deconvolution(gy, W) (adj = the rows the last window left
    out), dW = _conv_weight_grad(x, gy), db = sum of gy over batch and space."""
    a = node.attrs
    (gy,) = ograds
    x_shape = node.input_shapes[0]
    kernel, stride, dilate, pad, in_sp, out_sp = conv_geometry("Convolution", x_shape, a)
    geo = _grad_geo(a, kernel, stride, dilate, pad)
    x, w = node.inputs[0], node.inputs[1]
    grads = [None] * len(node.inputs)
    if node.wants[0]:
        adj = tuple((in_sp[i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) % stride[i]
                    for i in range(len(kernel)))
        grads[0] = F.Deconvolution(gy, w, adj=adj, num_filter=_channels_of(x_shape, a),
                                   no_bias=True, **geo)
    return _param_grads(F, node, grads, x, gy, gy, a.num_filter, geo)


register(OpDef(
    "Convolution", inputs=("data", "weight", "bias"),
    params=_COMMON + (
        Param("num_filter", "int", REQUIRED, "number of output channels"),
        Param("num_group", "int", 1, "number of groups: input channels and filters are split "
              "into num_group groups convolved separately"),
        Param("workspace", "int", 1024, "ignored (MXNet's temporary workspace in MB)"),
        Param("no_bias", "bool", False, "leave out the bias input"),
    ) + _TAIL,
    list_inputs=_bias_inputs, backward_shape=_conv_backward_shape,
    infer_shape=_conv_shape, infer_type=_float_type("Convolution", ("data", "weight", "bias")),
    compute={"cpu": channels_first_compute(_conv_compute, "bw-", native=_conv_native)},
    strided_inputs=True,
    gradient=_conv_grad,
    doc="""Convolution over 1, 2 or 3 spatial axes (data NCW, NCHW or NCDHW), MXNet semantics.

``out[n, f, o] = bias[f] + sum_{c, k} weight[f, c, k] * data_pad[n, g*C/G + c, o*stride +
k*dilate]`` for filter ``f`` of group ``g``; weight has shape ``(num_filter, C / num_group,
*kernel)``, bias ``(num_filter,)`` (left out with ``no_bias=True``). Each output size is
``(in + 2*pad - dilate*(kernel-1) - 1) // stride + 1``. float16 is computed in float32.
Computed as im2col + BLAS GEMM. Its input gradient is a ``Deconvolution`` and its weight
gradient ``_conv_weight_grad``, so gradients of every order exist.

``layout`` NWC, NHWC or NDHWC takes channels-last data ``(N, *in, C)`` and weight
``(num_filter, *kernel, C / num_group)`` and gives ``(N, *out, num_filter)``, MXNet's
shapes; MXNet 1.9.1 computed them on GPU only (its CPU refused NHWC and NDHWC, and no
device had NWC), mxlite computes all three on every device (through channels-first copies).

>>> x = mx.nd.ones((1, 4, 4, 1))         # NHWC
>>> w = mx.nd.ones((2, 3, 3, 1))         # (num_filter, kh, kw, C)
>>> mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=2, no_bias=True, layout='NHWC').shape
(1, 2, 2, 2)

>>> x = mx.nd.ones((1, 1, 4, 4))
>>> w = mx.nd.ones((2, 1, 3, 3))
>>> mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=2, pad=(1, 1), no_bias=True)[0, 0].asnumpy()
array([[4., 6., 6., 4.],
       [6., 9., 9., 6.],
       [6., 9., 9., 6.],
       [4., 6., 6., 4.]], dtype=float32)
"""))


# ---- Deconvolution ----------------------------------------------------------------------------
def _deconv_shape(shapes, attrs):
    op = "Deconvolution"
    _check_arity(op, shapes, attrs)
    data = shapes[0]
    _, _, _, _, _, _, out_sp = deconv_geometry(op, data, attrs)
    f = attrs.num_filter
    c, where = _data_channels(data, attrs)
    g = _channels(op, attrs, c, f, where, "num_filter")
    _check_params(op, shapes, attrs, (c, f // g), ("channels", "num_filter / num_group"))
    return [arrange(is_channels_last(attrs.layout), data[0], f, out_sp)]


def _deconv_backward_shape(in_shapes, out_shapes, attrs):
    return _fill_params(in_shapes, attrs,
                        lambda c: (c, attrs.num_filter // attrs.num_group))


def _deconv_forward(rctx, y, w, b, target, kernel, stride, dilate, pad, y_sp, out_sp, g):
    """target (N, F, *out) = the adjoint of conv(., w) applied to y (+ b): one GEMM per
    group per batch chunk, then col2im."""
    xp = rctx.xp
    n, cin = y.shape[:2]
    f = target.shape[1]
    k, l = size_of(kernel), size_of(y_sp)
    if onednn.run(xp, "conv_backward_data", (y, w, target), stride, dilate, pad, g):
        if b is not None:
            _k.add_bias(target, b, n, f, size_of(out_sp))
        return
    if _narrow(target.dtype):   # bfloat16 that oneDNN refused
        return _widened(_deconv_forward, rctx, (y, w, b), target, kernel, stride, dilate, pad,
                        y_sp, out_sp, g)
    wt = w.reshape(g, cin // g, f // g * k).transpose(0, 2, 1)
    if _fused(xp, target.dtype, n, f * k * l):
        _k.deconv_forward(y, xp.ascontiguousarray(wt), target,
                          _geom(n, f, out_sp, y_sp, kernel, stride, pad, dilate), g)
        if b is not None:
            _k.add_bias(target, b, n, f, size_of(out_sp))
        return
    dev = kernels(rctx, _k)
    for s, nb in _chunks(n, f * k * l):
        yt = xp.empty((cin, nb * l), target.dtype)
        dev.nfl_to_fnl(y[s:s + nb], yt, nb, cin, l)
        col = xp.empty((f * k, nb * l), target.dtype)
        _blocked_matmul(xp, wt, yt.reshape(g, cin // g, nb * l),
                        col.reshape(g, f // g * k, nb * l))
        dev.col2im(col, target[s:s + nb], _geom(nb, f, out_sp, y_sp, kernel, stride, pad,
                                                dilate))
    if b is not None:
        dev.add_bias(target, b, n, f, size_of(out_sp))


def _deconv_native(rctx, ins, outs, attrs):
    """Deconvolution without a bias (a convolution's data gradient) by oneDNN on the
    channels-first views of channels-last arrays (True when it ran)."""
    y, w, out = ins[0], ins[1], outs[0]
    if not attrs.no_bias or out.size == 0 or y.shape[1] == 0:
        return False
    _, stride, dilate, pad, _, _, _ = deconv_geometry("Deconvolution", y.shape, attrs)
    return onednn.run(rctx.xp, "conv_backward_data", (y, w, out), stride, dilate, pad,
                      attrs.num_group, contiguous=False)


def _deconv_compute(rctx, ins, outs, attrs):
    out = outs[0]
    if out.size == 0:
        return
    xp = rctx.xp
    y, w, b, target = _layer_inputs(xp, ins, out, attrs, narrow_bias=False)
    kernel, stride, dilate, pad, _, y_sp, out_sp = deconv_geometry("Deconvolution", y.shape,
                                                                   attrs)
    if y.shape[1] == 0:
        xp.fill_zero(target)
        if b is not None:
            kernels(rctx, _k).add_bias(target, b, out.shape[0], out.shape[1],
                                       size_of(out_sp))
    else:
        _deconv_forward(rctx, y, w, b, target, kernel, stride, dilate, pad, y_sp, out_sp,
                        attrs.num_group)
    write_back(xp, target, out)


def _deconv_grad(F, node, ograds):
    """x = deconv(y, W) + b, the adjoint of y -> conv(., W):  dy = Convolution(gx, W) (cut to
    y's size when adj >= stride leaves extra windows), dW = _conv_weight_grad(gx, y),
    db = sum of gx over batch and space."""
    a = node.attrs
    (gx,) = ograds
    y_shape = node.input_shapes[0]
    kernel, stride, dilate, pad, _, y_sp, out_sp = deconv_geometry("Deconvolution", y_shape, a)
    geo = _grad_geo(a, kernel, stride, dilate, pad)
    y, w = node.inputs[0], node.inputs[1]
    grads = [None] * len(node.inputs)
    if node.wants[0]:
        dy = F.Convolution(gx, w, num_filter=_channels_of(y_shape, a), no_bias=True, **geo)
        full = tuple((out_sp[i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                     for i in range(len(kernel)))
        grads[0] = dy if full == y_sp else _slice_to(F, dy, tuple(y_shape))
    return _param_grads(F, node, grads, gx, y, gx, _channels_of(y_shape, a), geo)


register(OpDef(
    "Deconvolution", inputs=("data", "weight", "bias"),
    params=_COMMON + (
        Param("adj", "shape", (), "extra rows/columns added at the end of each output axis "
              "(default 0)"),
        Param("target_shape", "shape", (), "output spatial shape; when set, pad and adj are "
              "computed from it"),
        Param("num_filter", "int", REQUIRED, "number of output channels"),
        Param("num_group", "int", 1, "number of groups"),
        Param("workspace", "int", 512, "ignored (MXNet's temporary workspace in MB)"),
        Param("no_bias", "bool", True, "leave out the bias input (MXNet's default: True)"),
    ) + _TAIL,
    list_inputs=_bias_inputs, backward_shape=_deconv_backward_shape,
    infer_shape=_deconv_shape,
    infer_type=_float_type("Deconvolution", ("data", "weight", "bias")),
    compute={"cpu": channels_first_compute(_deconv_compute, "bw-", native=_deconv_native)},
    strided_inputs=True,
    gradient=_deconv_grad,
    doc="""Deconvolution (transposed convolution): the adjoint of ``Convolution`` in its data.

Data ``(N, C, *in)``, weight ``(C, num_filter / num_group, *kernel)``, bias
``(num_filter,)`` (only with ``no_bias=False``; MXNet's default is ``no_bias=True``). Each
output size is ``stride*(in-1) + dilate*(kernel-1) + 1 - 2*pad + adj``; with
``target_shape`` set, MXNet's rule replaces pad and adj: the total padding ``t = stride*(in-1)
+ dilate*(kernel-1) + 1 - target`` gives ``pad = ceil(t/2)``, ``adj = t % 2``, so the output
has the target size. ``<Convolution(x, W), y> == <x, Deconvolution(y, W)>`` for the same
kernel, stride, dilate, pad and num_group (with adj restoring x's size). Any ``adj >= 0``
is accepted, trailing outputs no window reaches being zero (MXNet refused ``adj >= stride``,
even when its own target_shape rule produced it with stride 1); the gradients of
``_conv_weight_grad`` need such deconvolutions. ``layout`` NWC, NHWC or NDHWC takes data
``(N, *in, C)`` and weight ``(C, *kernel, num_filter / num_group)`` (MXNet's shapes; its CPU
refused to compute them, mxlite computes them on every device).

>>> y = mx.nd.ones((1, 1, 2, 2))
>>> w = mx.nd.ones((1, 1, 2, 2))
>>> mx.nd.Deconvolution(y, w, kernel=(2, 2), stride=(2, 2), num_filter=1).shape
(1, 1, 4, 4)
"""))


# ---- the weight gradient ------------------------------------------------------------------------
def _wg_shape(shapes, attrs):
    op = "_conv_weight_grad"
    if len(shapes) != 2:
        raise op_error(op, f"expected inputs (data, ograd), got {len(shapes)}")
    data, gy = shapes
    kernel = tuple(attrs.kernel)
    if len(gy) != len(kernel) + 2 or len(data) != len(kernel) + 2 or gy[0] != data[0]:
        raise op_error(op, f"ograd {gy} does not match data {data} and kernel={kernel}")
    last = is_channels_last(attrs.layout)
    conv_geometry(op, data, attrs, spatial_of(gy, last))
    f = attrs.num_filter
    if _channels_of(gy, attrs) != f:
        raise op_error(op, f"ograd has {_channels_of(gy, attrs)} channels, expected "
                       f"num_filter={f} (layout={attrs.layout})")
    c, where = _data_channels(data, attrs)
    g = _channels(op, attrs, c, f, where, "num_filter")
    return [arrange(last, f, c // g, kernel)]


def _wg_native(rctx, ins, outs, attrs):
    """The weight gradient by oneDNN on the channels-first views of channels-last arrays
    (True when it ran)."""
    (x, gy), out = ins, outs[0]
    if out.size == 0 or x.shape[0] == 0 or size_of(gy.shape[2:]) == 0:
        return False
    _, stride, dilate, pad, _, _ = conv_geometry("_conv_weight_grad", x.shape, attrs,
                                                 tuple(gy.shape[2:]))
    return onednn.run(rctx.xp, "conv_backward_weights", (x, gy, out), stride, dilate, pad,
                      attrs.num_group, contiguous=False)


def _wg_compute(rctx, ins, outs, attrs):
    out = outs[0]
    if out.size == 0:
        return
    xp = rctx.xp
    work, (x, gy), target = in_work_dtype(xp, ins, out, onednn.work_dtype(xp, out.dtype))
    kernel, stride, dilate, pad, in_sp, out_sp = conv_geometry(
        "_conv_weight_grad", x.shape, attrs, tuple(gy.shape[2:]))   # channels first here
    n, c = x.shape[:2]
    f, g = attrs.num_filter, attrs.num_group
    k, l = size_of(kernel), size_of(out_sp)
    cg = c // g * k
    if n == 0 or l == 0:
        xp.fill_zero(target)
    elif onednn.run(xp, "conv_backward_weights", (x, gy, target), stride, dilate, pad, g):
        write_back(xp, target, out)
        return
    if _narrow(work):             # bfloat16 that oneDNN refused: the float32 kernels
        work, (x, gy), target = in_work_dtype(xp, (x, gy), out, F32)
    if n == 0 or l == 0:
        pass
    elif _fused(xp, work, n, c * k * l):
        # float32 on the CPU: im2col and the product fused, on the OpenMP threads (BLAS
        # runs this long reduction into a small product on one thread)
        _k.weight_grad(x, gy, target, _geom(n, c, in_sp, out_sp, kernel, stride, pad, dilate),
                       g)
        write_back(xp, target, out)
        return
    dev = kernels(rctx, _k)
    tmp = None
    for i, (s, nb) in enumerate(_chunks(n, c * k * l) if l else []):
        col = xp.empty((c * k, nb * l), work)
        dev.im2col(x[s:s + nb], col, _geom(nb, c, in_sp, out_sp, kernel, stride, pad, dilate))
        gt = xp.empty((f, nb * l), work)
        dev.nfl_to_fnl(gy[s:s + nb], gt, nb, f, l)
        if i and tmp is None:
            tmp = xp.empty(target.shape, work)
        dst = tmp if i else target
        _blocked_matmul(xp, gt.reshape(g, f // g, nb * l),
                        col.reshape(g, cg, nb * l).transpose(0, 2, 1),
                        dst.reshape(g, f // g, cg))
        if i:
            dev.add_into(target, tmp)
    write_back(xp, target, out)


def _wg_grad(F, node, ograds):
    """dW = _conv_weight_grad(x, g) is bilinear, <H, dW> = <g, conv(x, H)>:  so
    dx = Deconvolution(g, H) (adj restores x's size) and dg = Convolution(x, H) (cut to g's
    size)."""
    a = node.attrs
    (h,) = ograds
    x_shape, g_shape = node.input_shapes
    kernel, stride, dilate, pad, in_sp, out_sp = conv_geometry(
        "_conv_weight_grad", x_shape, a, spatial_of(g_shape, is_channels_last(a.layout)))
    geo = _grad_geo(a, kernel, stride, dilate, pad)
    x, gy = node.inputs
    dx = dg = None
    if node.wants[0]:
        adj = tuple(in_sp[i] - (stride[i] * (out_sp[i] - 1) + dilate[i] * (kernel[i] - 1) + 1
                                - 2 * pad[i]) for i in range(len(kernel)))
        dx = F.Deconvolution(gy, h, adj=adj, num_filter=_channels_of(x_shape, a),
                             no_bias=True, **geo)
    if node.wants[1]:
        dg = F.Convolution(x, h, num_filter=a.num_filter, no_bias=True, **geo)
        _, _, _, _, _, full = conv_geometry("_conv_weight_grad", x_shape, a)
        if full != out_sp:
            dg = _slice_to(F, dg, tuple(g_shape))
    return [dx, dg]


register(OpDef(
    "_conv_weight_grad", inputs=("data", "ograd"),
    params=_COMMON + (
        Param("num_filter", "int", REQUIRED, "number of filters (ograd's channels)"),
        Param("num_group", "int", 1, "number of groups"),
        Param("layout", "str", None, "the layer's layout (channels last: data, ograd and "
              "the result in MXNet's channels-last order)", choices=LAYOUTS),
    ),
    infer_shape=_wg_shape, infer_type=_float_type("_conv_weight_grad", ("data", "ograd")),
    compute={"cpu": channels_first_compute(_wg_compute, "bb", summed=True,
                                            native=_wg_native)},
    strided_inputs=True, gradient=_wg_grad,
    doc="""The weight gradient of ``Convolution``: ``dW[f, c, k] = sum_{n, o} ograd[n, f, o] *
data_pad[n, g*C/G + c, o*stride + k*dilate]``, shape ``(num_filter, C / num_group, *kernel)``.

``ograd``'s spatial size may stop short of the convolution's (the weight gradient of a
``Deconvolution`` whose ``adj`` leaves trailing rows no window reaches). With a channels-last
``layout`` data and ograd are ``(N, *space, C)`` and the result ``(num_filter, *kernel,
C / num_group)``. Bilinear in data
and ograd; its gradients are a ``Deconvolution`` and a ``Convolution``.
"""))
