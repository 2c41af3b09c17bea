"""Pooling (max, avg, sum, lp over 1, 2 or 3 spatial axes, channels first or last) and
UpSampling (nearest, bilinear).

Kernels in ``mxlite/_core/conv.pyx`` (one loop nest over (N, C) planes, int64 indices),
reached through ``kernels(rctx, _k)``: on GPU the functions of ``mxlite/cuda/ops/pooling.py``
(same arguments), so the compute functions serve every device.
Gradients are registered ops with their own gradients, so every order exists:

* max: ``dx = _pool_max_scatter(x, gy)`` (gy added at each window's first maximum); the
  scatter is linear in gy and piecewise constant in x, its adjoint is ``_pool_max_gather(x,
  h)`` (h read at the same positions), and the gather's adjoint is the scatter again;
* avg / sum: linear; ``dx = _pool_backward(gy)``, whose adjoint is ``Pooling`` itself;
* UpSampling (nearest) is the adjoint of sum pooling with kernel = stride = scale, so its
  gradient is ``Pooling(pool_type='sum')`` and that pooling's gradient is ``_pool_backward``.

Channels-last layouts (NWC, NHWC, NDHWC) run the channels-first kernels on transposed copies
(``conv.channels_first_compute``); the gradient ops take the layout too.

On the CPU, float32 max, avg and sum pooling, ``_pool_max_scatter`` and the avg
``_pool_backward`` run oneDNN's pooling primitives where ``onednn.run`` chooses them and
oneDNN's result is MXNet's (``dnnl.pool_forward`` refuses the rest): lp pooling, the sum
``_pool_backward``, ``_pool_max_gather`` (oneDNN has no gather), windows covering padding
only and avg counting padding past the padded input stay on the reference kernels.
"""
from .._core import conv as _k
from .._core import finite as _finite
from ..base import FLOAT_DTYPES, op_error
from . import onednn
from .common import compute_dtype, kernels, run_in, write_back
from .conv import (LAYOUTS, _deconv_forward, arrange, channel_axis, channels_first_compute,
                   check_layout, is_channels_last, spatial_of)
from .registry import REQUIRED, Attrs, OpDef, Param, register

__all__ = ["pool_geometry"]

_FLOATS = FLOAT_DTYPES        # float16 and bfloat16 computed in float32


def _spatial_tuple(op, name, value, nd, default):
    value = tuple(value)
    if not value:
        return (default,) * nd
    if len(value) != nd:
        raise op_error(op, f"{name}={value} must have one entry per spatial axis ({nd})")
    if min(value) < (1 if name in ("kernel", "stride") else 0):
        raise op_error(op, f"{name}={value} has an invalid entry")
    return value


def pool_geometry(op, data_shape, attrs):
    """``(kernel, stride, pad, in_spatial, out_spatial)`` of a pooling of data ``(N, C,
    *in)`` (``(N, *in, C)`` with a channels-last ``layout``) with MXNet's rules:
    ``global_pool`` pools each whole plane; 'valid' gives ``1 + (in + 2*pad - kernel) //
    stride`` windows, 'full' ``1 + ceil((in + 2*pad - kernel) / stride)``."""
    nd = len(data_shape) - 2
    if nd not in (1, 2, 3):
        raise op_error(op, f"data must be 3-D, 4-D or 5-D (NCW/NWC, NCHW/NHWC, NCDHW/NDHWC), "
                       f"got shape {data_shape}")
    last = check_layout(op, attrs.get("layout"), nd, f"data of shape {data_shape}")
    spatial = spatial_of(data_shape, last)
    if attrs.get("global_pool"):
        kernel, stride, pad = spatial, (1,) * nd, (0,) * nd
        if min(spatial) < 1:
            raise op_error(op, f"global pooling of an empty plane: data {data_shape}")
    else:
        if not attrs.kernel:
            raise op_error(op, "kernel is required unless global_pool=True")
        kernel = _spatial_tuple(op, "kernel", attrs.kernel, nd, 1)
        stride = _spatial_tuple(op, "stride", attrs.stride, nd, 1)
        pad = _spatial_tuple(op, "pad", attrs.pad, nd, 0)
    convention = attrs.pooling_convention
    if convention == "same":
        raise op_error(op, "pooling_convention='same' is not supported (MXNet had it for "
                       "1-D max pooling only); use 'valid' or 'full' with pad")
    out = []
    for i in range(nd):
        span = spatial[i] + 2 * pad[i] - kernel[i]
        if span < 0:
            raise op_error(op, f"kernel={kernel} is larger than the padded input: data "
                           f"{data_shape} with pad={pad}")
        out.append(1 + (span // stride[i] if convention == "valid"
                        else -(-span // stride[i])))
    return kernel, stride, pad, spatial, tuple(out)


def _geom(n, c, in_sp, out_sp, kernel, stride, pad):
    three = lambda t, fill: (fill,) * (3 - len(t)) + tuple(t)     # noqa: E731
    return (n, c, three(in_sp, 1), three(out_sp, 1), three(kernel, 1), three(stride, 1),
            three(pad, 0), (1, 1, 1))


def _float_type(op, n):
    def infer_type(dtypes, attrs):
        for dt in dtypes:
            if dt not in _FLOATS:
                raise op_error(op, f"inputs must be float16, bfloat16, float32 or float64, "
                               f"got {dt}")
        if len(set(dtypes)) > 1:
            raise op_error(op, f"inputs must share one dtype, got {list(map(str, dtypes))}")
        return [dtypes[0]]
    return infer_type


def _pool_type(op, attrs):
    t = attrs.pool_type
    if t == "lp" and attrs.p_value not in (1, 2, 3):
        raise op_error(op, f"pool_type='lp' needs p_value 1, 2 or 3, got p_value="
                       f"{attrs.p_value}")
    return t


def _include_pad(attrs):
    return True if attrs.count_include_pad is None else attrs.count_include_pad


def _run(rctx, op_id, pool_type, x, h, out, geom, include_pad, p_value=1, window=None):
    """Run kernel ``op_id`` into ``out`` (float16 and bfloat16 through float32): oneDNN's
    primitive where ``_onednn`` takes the call (``window``: the unresolved ``(kernel,
    stride, pad)``), else the reference kernel."""
    if out.size == 0:
        return
    work = compute_dtype(out.dtype)
    x, h = (None if a is None else run_in(work, [a])[0] for a in (x, h))
    xp = rctx.xp
    target = out if out.dtype == work else xp.empty(out.shape, work)
    if window is None or not _onednn(xp, op_id, pool_type, x, h, target, window,
                                     include_pad):
        kernels(rctx, _k).pool(op_id, pool_type, x, h, target, geom, include_pad, p_value)
    write_back(xp, target, out)


def _onednn(xp, op_id, pool_type, x, h, target, window, include_pad, contiguous=True):
    """Kernel ``op_id`` (0 pooling, 1 max scatter, 2 max gather, 3 avg/sum backward) by
    oneDNN's pooling when it computes exactly that; False: the reference kernel must run.
    oneDNN has max and avg (kind 0; 1 or 2 by whether the padding counts), and a sum
    pooling as its avg over the whole kernel times the kernel's size (kind 3; forward only:
    the backward takes no such scaling), but no lp or gather. ``contiguous=False``: the
    arrays are the channels-first views of channels-last ones (``_native``)."""
    kind = {"max": 0, "avg": 1 if include_pad else 2, "sum": 3}.get(pool_type)
    if kind is None or op_id == 2:
        return False
    if kind == 0 and onednn.primitives(xp, x, contiguous=contiguous) is not None \
            and onednn.worth_it("pool_max_backward", (x, None, None)) \
            and _has_nan(x):
        # oneDNN's max skips a NaN; mxlite's is NaN (its gradient goes to the first NaN)
        return False
    if op_id == 0:
        return onednn.run(xp, "pool_forward", (x, target), *window, kind,
                          contiguous=contiguous)
    if kind == 3:
        return False
    if op_id == 1:
        return onednn.run(xp, "pool_max_backward", (x, h, target), *window,
                          contiguous=contiguous)
    if all(d == 1 for d in h.shape[2:]):
        # one window per plane (global pooling): the reference kernel's broadcast of each
        # gradient over its plane is faster, on (32, 64, 32, 32) 0.57-0.7 ms beside
        # oneDNN's 0.73-2.1 ms (the op alone, interleaved), and forward + backward 6.0 ms
        # beside 7.4 (benchmarks/bench_onednn_nn.py)
        return False
    return onednn.run(xp, "pool_avg_backward", (h, target), *window, kind,
                      contiguous=contiguous)


_NAN_SCAN = _finite.SCAN_IDS["nan"]


def _has_nan(x):
    """Whether ``x`` (contiguous, or the channels-first view of a contiguous channels-last
    array) holds a NaN."""
    if not x.flags.c_contiguous:
        x = x.transpose((0,) + tuple(range(2, x.ndim)) + (1,))
    return _finite.any_of(_NAN_SCAN, [x]) if x.flags.c_contiguous else True


def _native(op_id):
    """The channels-last path (``conv.channels_first_compute``'s ``native``) of pooling
    kernel ``op_id`` (0 Pooling, 1 _pool_max_scatter, 3 _pool_backward): oneDNN on the
    channels-first views of the channels-last arrays, where it takes the call."""
    def native(rctx, ins, outs, attrs):
        out = outs[0]
        if out.size == 0 or compute_dtype(out.dtype) != out.dtype:
            return False
        if op_id == 0:
            kernel, stride, pad, _, _ = pool_geometry("Pooling", ins[0].shape, attrs)
            return _onednn(rctx.xp, 0, attrs.pool_type, ins[0], None, out,
                           (kernel, stride, pad), _include_pad(attrs), contiguous=False)
        if op_id == 1:
            window = _internal_geom("_pool_max_scatter", ins[0].shape, attrs)[1]
            return _onednn(rctx.xp, 1, "max", ins[0], ins[1], out, window, True,
                           contiguous=False)
        window = _internal_geom("_pool_backward", out.shape, attrs)[1]
        return _onednn(rctx.xp, 3, attrs.pool_type, None, ins[0], out, window,
                       attrs.count_include_pad, contiguous=False)
    return native


# ---- parameters --------------------------------------------------------------------------------
_KERNEL = Param("kernel", "shape", (), "pooling window: (w,), (h, w) or (d, h, w)")
_STRIDE = Param("stride", "shape", (), "stride on each spatial axis (default 1)")
_PAD = Param("pad", "shape", (), "padding on both sides of each spatial axis (default 0); "
             "padded positions never win a max and count for avg only with count_include_pad")
_TYPE = Param("pool_type", "str", "max", "max, avg, sum or lp (with p_value 1, 2 or 3)",
              choices=("max", "avg", "sum", "lp"))
_CONVENTION = Param("pooling_convention", "str", "valid", "'valid' (floor) or 'full' (ceil) "
                    "window count", choices=("valid", "full", "same"))
_INCLUDE_PAD = Param("count_include_pad", "bool", None, "avg: divide by the window size "
                     "including padding (default True) or by the input elements it covers")


def _pooled_shape(op, data, attrs):
    """The shape of the windows of ``data`` (its batch and channels, the output's spatial
    sizes), in the layout's order."""
    *_, out = pool_geometry(op, data, attrs)
    last = is_channels_last(attrs.get("layout"))
    return arrange(last, data[0], data[channel_axis(last, len(data))], out)


def _pool_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error("Pooling", f"expected 1 input, got {len(shapes)}")
    _pool_type("Pooling", attrs)
    return [_pooled_shape("Pooling", shapes[0], attrs)]


def _pool_compute(rctx, ins, outs, attrs):
    x = ins[0]
    kernel, stride, pad, in_sp, out_sp = pool_geometry("Pooling", x.shape, attrs)
    _run(rctx, 0, attrs.pool_type, x, None, outs[0],
         _geom(x.shape[0], x.shape[1], in_sp, out_sp, kernel, stride, pad),
         _include_pad(attrs), attrs.p_value or 1, (kernel, stride, pad))


def _resolved(attrs, data_shape):
    """The internal ops' params: the window geometry with global_pool resolved."""
    kernel, stride, pad, in_sp, _ = pool_geometry("Pooling", data_shape, attrs)
    return dict(kernel=kernel, stride=stride, pad=pad, pool_type=attrs.pool_type,
                pooling_convention=attrs.pooling_convention,
                count_include_pad=_include_pad(attrs), layout=attrs.layout), in_sp


def _pool_grad(F, node, ograds):
    """max: dx = _pool_max_scatter(x, gy) (gy at each window's first maximum; ties have
    probability zero); avg/sum (linear): dx = _pool_backward(gy), the adjoint of the
    scaled window sum; lp: y = S ** (1/p) with S the window sum of x ** p, so
    dx = _pool_backward(gy / y ** (p-1), sum) * x ** (p-1)."""
    params, in_sp = _resolved(node.attrs, node.input_shapes[0])
    (gy,) = ograds
    x = node.inputs[0]
    kind = params["pool_type"]
    if kind == "max":
        return [F._internal._pool_max_scatter(x, gy, **params)]
    if kind != "lp":
        return [F._internal._pool_backward(gy, in_shape=in_sp, **params)]
    params["pool_type"] = "sum"
    p = node.attrs.p_value
    if p == 1:
        return [F._internal._pool_backward(gy, in_shape=in_sp, **params)]
    y = node.outputs[0]
    yp, xp = (y, x) if p == 2 else (F.square(y), F.square(x))
    return [F.elemwise_mul(F._internal._pool_backward(F.elemwise_div(gy, yp), in_shape=in_sp,
                                                      **params), xp)]


register(OpDef(
    "Pooling", inputs=("data",),
    params=(_KERNEL, _TYPE,
            Param("global_pool", "bool", False, "pool each whole plane (kernel, stride and "
                  "pad are ignored)"),
            Param("cudnn_off", "bool", False, "ignored (cuDNN only)"),
            _CONVENTION, _STRIDE, _PAD,
            Param("p_value", "int", None, "the p of lp pooling: 1, 2 or 3"),
            _INCLUDE_PAD,
            Param("layout", "str", None, "data layout: channels first (NCW, NCHW, NCDHW; the "
                  "default) or channels last (NWC, NHWC, NDHWC)", choices=LAYOUTS)),
    infer_shape=_pool_shape, infer_type=_float_type("Pooling", 1),
    compute={"cpu": channels_first_compute(_pool_compute, "b", native=_native(0))},
    gradient=_pool_grad,
    grad_needs=("inputs", "outputs"),
    doc="""Pooling over 1, 2 or 3 spatial axes (data NCW, NCHW or NCDHW), MXNet semantics.

Window ``o`` covers ``[o*stride - pad, o*stride - pad + kernel)`` on each axis. ``max`` takes
the largest input element in the window (padding never wins; a NaN in the window is its
maximum, as in NumPy and torch, and takes the gradient: MXNet skipped NaNs, so a window of
NaN and numbers gave a number); ``sum`` adds them; ``avg``
divides the sum by the window clipped to the padded input (``count_include_pad``, the
default) or by the number of input elements it covers. 'valid' gives ``1 + (in + 2*pad -
kernel) // stride`` windows per axis, 'full' rounds up instead, so the last window may run
past the padding. ``global_pool=True`` pools each whole plane to size 1. ``lp`` gives
``(sum x**p) ** (1/p)`` with MXNet's signed powers (p_value 1: the plain sum; 3: the cube
root of the sum of cubes). A window that covers only padding gives 0 (MXNet gave the
dtype's lowest value for max). pooling_convention 'same' (MXNet: 1-D max only) is refused.
``layout`` NWC, NHWC or NDHWC pools channels-last data ``(N, *in, C)`` into ``(N, *out,
C)``, every pool type and option alike.

>>> x = mx.nd.array([[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
>>> mx.nd.Pooling(x, kernel=(2, 2), pool_type='max').asnumpy()[0, 0]
array([[5., 6.],
       [8., 9.]], dtype=float32)
>>> mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='avg',
...               pooling_convention='full').asnumpy()[0, 0]
array([[3. , 4.5],
       [7.5, 9. ]], dtype=float32)
>>> mx.nd.Pooling(x.transpose((0, 2, 3, 1)), kernel=(2, 2), pool_type='max',
...               layout='NHWC').asnumpy()[0, :, :, 0]
array([[5., 6.],
       [8., 9.]], dtype=float32)
"""))


# ---- internal ops behind the gradients -----------------------------------------------------
_INTERNAL = (
    Param("kernel", "shape", REQUIRED, "pooling window"),
    Param("stride", "shape", REQUIRED, "stride on each spatial axis"),
    Param("pad", "shape", REQUIRED, "padding on each spatial axis"),
    Param("pool_type", "str", "max", "max, avg or sum", choices=("max", "avg", "sum")),
    Param("pooling_convention", "str", "valid", "valid or full",
          choices=("valid", "full")),
    Param("count_include_pad", "bool", True, "avg: the divisor counts the padding"),
    Param("layout", "str", None, "the pooling's layout (channels first or last)",
          choices=LAYOUTS),
)


def _internal_attrs(attrs):
    """The internal params read as Pooling's (no global pool)."""
    return Attrs(attrs, global_pool=False)


def _check_window_shape(op, data, windows, attrs, what):
    want = _pooled_shape(op, data, _internal_attrs(attrs))
    if tuple(windows) != want:
        raise op_error(op, f"{what} has shape {windows}, expected {want} for data {data}")


def _scatter_shape(shapes, attrs):
    op = "_pool_max_scatter"
    if len(shapes) != 2 or attrs.pool_type != "max":
        raise op_error(op, "takes (data, ograd) of a max pooling")
    _check_window_shape(op, shapes[0], shapes[1], attrs, "ograd")
    return [tuple(shapes[0])]


def _gather_shape(shapes, attrs):
    op = "_pool_max_gather"
    if len(shapes) != 2 or attrs.pool_type != "max":
        raise op_error(op, "takes (data, head) of a max pooling")
    data, head = shapes
    if tuple(head) != tuple(data):
        raise op_error(op, f"head has shape {head}, expected the data's {data}")
    return [_pooled_shape(op, data, _internal_attrs(attrs))]


def _internal_geom(op, data_shape, attrs):
    """The kernel geometry of an internal op, and its ``(kernel, stride, pad)``."""
    kernel, stride, pad, in_sp, out_sp = pool_geometry(op, data_shape, _internal_attrs(attrs))
    return (_geom(data_shape[0], data_shape[1], in_sp, out_sp, kernel, stride, pad),
            (kernel, stride, pad))


def _scatter_compute(rctx, ins, outs, attrs):
    x, g = ins
    geom, window = _internal_geom("_pool_max_scatter", x.shape, attrs)
    _run(rctx, 1, "max", x, g, outs[0], geom, True, window=window)


def _gather_compute(rctx, ins, outs, attrs):
    x, h = ins
    _run(rctx, 2, "max", x, h, outs[0], _internal_geom("_pool_max_gather", x.shape, attrs)[0],
         True)


def _scatter_grad(F, node, ograds):
    """dx = scatter(x, g): linear in g, whose adjoint is the gather at the same maxima;
    piecewise constant in x (zero derivative away from ties)."""
    x, _ = node.inputs
    dg = (F._internal._pool_max_gather(x, ograds[0], **node.attrs) if node.wants[1]
          else None)
    return [None, dg]


def _gather_grad(F, node, ograds):
    """out = h at the maxima of x: linear in h, whose adjoint is the scatter to the same
    maxima; piecewise constant in x."""
    x, _ = node.inputs
    dh = (F._internal._pool_max_scatter(x, ograds[0], **node.attrs) if node.wants[1]
          else None)
    return [None, dh]


register(OpDef(
    "_pool_max_scatter", inputs=("data", "ograd"), params=_INTERNAL,
    infer_shape=_scatter_shape, infer_type=_float_type("_pool_max_scatter", 2),
    compute={"cpu": channels_first_compute(_scatter_compute, "bb", native=_native(1))},
    gradient=_scatter_grad, in_place=True,
    doc="""Max pooling's input gradient: ``ograd`` added at the first maximum of ``data`` in
each window (zeros elsewhere). Its gradient in ``ograd`` is ``_pool_max_gather``. The
maxima of a plane are found before it is written, so ``out=`` may be ``data`` itself."""))

register(OpDef(
    "_pool_max_gather", inputs=("data", "head"), params=_INTERNAL,
    infer_shape=_gather_shape, infer_type=_float_type("_pool_max_gather", 2),
    compute={"cpu": channels_first_compute(_gather_compute, "bb")}, gradient=_gather_grad,
    doc="""``head`` (shaped like ``data``) read at the first maximum of ``data`` in each max
pooling window: the adjoint of ``_pool_max_scatter``, whose gradient it is."""))


def _backward_shape(shapes, attrs):
    op = "_pool_backward"
    if len(shapes) != 1 or attrs.pool_type == "max":
        raise op_error(op, "takes the ograd of an avg or sum pooling")
    (g,) = shapes
    nd = len(g) - 2
    if nd not in (1, 2, 3):
        raise op_error(op, f"ograd must be 3-D, 4-D or 5-D, got shape {g}")
    last = check_layout(op, attrs.layout, nd, f"ograd of shape {g}")
    data = arrange(last, g[0], g[channel_axis(last, len(g))], attrs.in_shape)
    _check_window_shape(op, data, g, attrs, "ograd")
    return [data]


def _backward_compute(rctx, ins, outs, attrs):
    (g,) = ins
    out = outs[0]
    geom, window = _internal_geom("_pool_backward", out.shape, attrs)
    _run(rctx, 3, attrs.pool_type, None, g, out, geom, attrs.count_include_pad,
         window=window)


def _backward_grad(F, node, ograds):
    """dx = the adjoint of the scaled window sum applied to g (linear): its adjoint is
    the pooling itself."""
    a = node.attrs
    return [F.Pooling(ograds[0], kernel=a.kernel, stride=a.stride, pad=a.pad,
                      pool_type=a.pool_type, pooling_convention=a.pooling_convention,
                      count_include_pad=a.count_include_pad, layout=a.layout)]


register(OpDef(
    "_pool_backward", inputs=("ograd",),
    params=_INTERNAL + (Param("in_shape", "shape", REQUIRED, "the pooled data's spatial "
                              "shape"),),
    infer_shape=_backward_shape, infer_type=_float_type("_pool_backward", 1),
    compute={"cpu": channels_first_compute(_backward_compute, "b", native=_native(3))},
    gradient=_backward_grad, grad_needs=(),
    doc="""The input gradient of avg or sum pooling: each window's ``ograd`` (divided by the
window's count for avg) added to every input element the window covers. Linear; its
gradient is ``Pooling`` with the same parameters."""))


# ---- UpSampling ----------------------------------------------------------------------------------
def _up_scales(shapes, attrs):
    """Output (N, C, H, W) and each input's integer scale (MXNet: the first input times
    ``scale``; every other input must divide that size)."""
    op = "UpSampling"
    if attrs.scale < 1:
        raise op_error(op, f"scale must be >= 1, got {attrs.scale}")
    if not shapes:
        raise op_error(op, "needs at least one input")
    for s in shapes:
        if len(s) != 4:
            raise op_error(op, f"inputs must be 4-D (NCHW), got shapes {shapes}")
    oh, ow = shapes[0][2] * attrs.scale, shapes[0][3] * attrs.scale
    scales = []
    for s in shapes:
        if s[0] != shapes[0][0] or s[2] == 0 or s[3] == 0 or oh % s[2] or ow % s[3] \
                or oh // s[2] != ow // s[3]:
            raise op_error(op, f"input {s} cannot be upsampled by an integer scale to "
                           f"{(oh, ow)} (from {shapes[0]} times scale={attrs.scale})")
        scales.append(oh // s[2])
    if attrs.multi_input_mode == "sum":
        if any(s[1] != shapes[0][1] for s in shapes):
            raise op_error(op, f"multi_input_mode='sum' needs equal channels, got {shapes}")
        c = shapes[0][1]
    else:
        c = sum(s[1] for s in shapes)
    return (shapes[0][0], c, oh, ow), scales


def _bilinear(shapes, attrs):
    """MXNet's bilinear UpSampling is a depthwise Deconvolution of (data, weight): kernel
    ``2*scale - scale % 2``, stride ``scale``, pad ``ceil((scale - 1) / 2)``, num_group =
    num_filter = the data's channels. Returns the Deconvolution parameters."""
    op = "UpSampling"
    if len(shapes) != 2:
        raise op_error(op, f"sample_type='bilinear' takes 2 inputs (data, weight), got "
                       f"{len(shapes)}")
    data, weight = shapes
    s = attrs.scale
    if s < 1:
        raise op_error(op, f"scale must be >= 1, got {s}")
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (NCHW), got shape {data}")
    c = attrs.num_filter
    if c != data[1]:
        raise op_error(op, f"bilinear upsampling needs num_filter equal to the data's channels "
                       f"({data[1]}), got num_filter={c}")
    k = 2 * s - s % 2
    if tuple(weight) != (c, 1, k, k):
        raise op_error(op, f"weight has shape {weight}, expected (num_filter, 1, {k}, {k}) for "
                       f"scale={s}")
    return dict(kernel=(k, k), stride=(s, s), pad=(s // 2, s // 2),   # ceil((s - 1) / 2)
                num_filter=c, num_group=c)


def _up_shape(shapes, attrs):
    if attrs.sample_type == "bilinear":
        _bilinear(shapes, attrs)
        n, c, h, w = shapes[0]
        return [(n, c, h * attrs.scale, w * attrs.scale)]
    return [_up_scales(shapes, attrs)[0]]


def _up_compute(rctx, ins, outs, attrs):
    out = outs[0]
    xp = rctx.xp
    work = compute_dtype(out.dtype)
    ins = run_in(work, ins)
    if attrs.sample_type == "bilinear":
        p = _bilinear([x.shape for x in ins], attrs)
        target = out if out.dtype == work else xp.empty(out.shape, work)
        if out.size:
            _deconv_forward(rctx, ins[0], ins[1], None, target, p["kernel"], p["stride"],
                            (1, 1), p["pad"], ins[0].shape[2:], out.shape[2:], p["num_group"])
        write_back(xp, target, out)
        return
    _, scales = _up_scales([x.shape for x in ins], attrs)
    n, _, oh, ow = out.shape
    summed = attrs.multi_input_mode == "sum"
    target = out if out.dtype == work else xp.empty(out.shape, work)
    start = 0
    for i, (x, s) in enumerate(zip(ins, scales)):
        c, h, w = x.shape[1:]
        src = xp.broadcast_to(x.reshape(n, c, h, 1, w, 1), (n, c, h, s, w, s))
        if not summed:              # channels [start, start + c) of the output
            part = target[:, start:start + c]
            if start == 0 and c == target.shape[1]:
                xp.strided_copy(src, target.reshape(n, c, h, s, w, s))
            else:
                block = xp.empty((n, c, h, s, w, s), work)
                xp.strided_copy(src, block)
                xp.copyto(part, block.reshape(n, c, oh, ow))
            start += c
        elif i == 0:
            xp.strided_copy(src, target.reshape(n, c, h, s, w, s))
        else:
            block = xp.empty((n, c, h, s, w, s), work)
            xp.strided_copy(src, block)
            kernels(rctx, _k).add_into(target, block)
    write_back(xp, target, out)


def _up_grad(F, node, ograds):
    """Nearest upsampling by s repeats each element over an s x s block: its adjoint sums
    each block, Pooling(pool_type='sum', kernel=stride=(s, s)); concat mode first slices
    each input's channels."""
    (g,) = ograds
    if node.attrs.sample_type == "bilinear":
        # the gradients of the Deconvolution it is (adj = 0, so no cut is needed)
        p = _bilinear(node.input_shapes, node.attrs)
        y, w = node.inputs
        dy = F.Convolution(g, w, no_bias=True, **p) if node.wants[0] else None
        dw = F._internal._conv_weight_grad(g, y, **p) if node.wants[1] else None
        return [dy, dw]
    _, scales = _up_scales(node.input_shapes, node.attrs)
    grads, start = [], 0
    for shape, s, want in zip(node.input_shapes, scales, node.wants):
        c = shape[1]
        part = g
        if node.attrs.multi_input_mode != "sum":
            part = F.slice_axis(g, axis=1, begin=start, end=start + c)
            start += c
        grads.append(F.Pooling(part, kernel=(s, s), stride=(s, s), pool_type="sum")
                     if want else None)
    return grads


register(OpDef(
    "UpSampling", inputs=("data",), variadic=True, key_var_num_args="num_args",
    params=(Param("scale", "int", REQUIRED, "up sampling scale of the first input"),
            Param("num_filter", "int", 0, "bilinear: the data's channels"),
            Param("sample_type", "str", REQUIRED, "'nearest' or 'bilinear'",
                  choices=("nearest", "bilinear")),
            Param("multi_input_mode", "str", "concat", "how several inputs combine: "
                  "'concat' along channels or 'sum'", choices=("concat", "sum")),
            Param("num_args", "int", None, "number of inputs (default: the number given)"),
            Param("workspace", "int", 512, "ignored (MXNet's temporary workspace in MB)")),
    infer_shape=_up_shape, infer_type=_float_type("UpSampling", 1),
    compute={"cpu": _up_compute}, gradient=_up_grad, grad_needs=("inputs",),
    doc="""Nearest-neighbour upsampling of NCHW inputs (MXNet semantics).

The output is the first input's size times ``scale``; every input is repeated over blocks
of its own integer scale to that size, and the results are concatenated along channels
(``multi_input_mode='concat'``) or added (``'sum'``). Its gradient is a sum pooling over
the blocks. ``sample_type='bilinear'`` (MXNet's) takes two inputs, data ``(N, C, H, W)``
and weight ``(C, 1, k, k)`` with ``k = 2*scale - scale % 2``, and is the depthwise
``Deconvolution`` with that kernel, stride ``scale`` and pad ``ceil((scale - 1) / 2)``
(``num_filter`` must be C); the weight is an input, initialised by the caller (MXNet's
``mx.init.Bilinear``).

>>> mx.nd.UpSampling(mx.nd.array([[[[1, 2], [3, 4]]]]), scale=2,
...                  sample_type='nearest').asnumpy()[0, 0]
array([[1., 1., 2., 2.],
       [1., 1., 2., 2.],
       [3., 3., 4., 4.],
       [3., 3., 4., 4.]], dtype=float32)
"""))
