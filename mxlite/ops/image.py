"""mx.nd.image: to_tensor, normalize, resize, crop, flips, the random colour operators,
adjust_lighting (MXNet 1.9.1's ``_image_*`` operators, ``mx.nd.image.*``).

Images are (height, width, channels) arrays, or (N, height, width, channels) batches;
``to_tensor`` turns them into (C, H, W) / (N, C, H, W) float32 tensors in [0, 1] and
``normalize`` works on those. Colour arithmetic runs in float32 (float64 data in float64)
and is stored back the way MXNet stored it: a float result as is, an integer result clipped
to the dtype's range and truncated (MXNet's ``saturate_cast`` for uint8).

Where MXNet 1.9.1 accepted only (H, W, C) for the augmenters (flips, colour, lighting), the
(N, H, W, C) batch works too: each random operator draws one set of factors per call.

Every compute function is written against the device namespace (``rctx.xp``) and the array
methods NumPy and CuPy share, so one function serves every device. The random operators
draw their factors on the host from the device's Philox stream (``rctx.rng.next()``), so a
seed replays them on every device.

Gradients are graphs of registered operators, and they are the derivatives (MXNet's were a
plain ``_copy`` of the head gradient for to_tensor, resize, the flips and lighting, wrong
in shape or in value): to_tensor's is a transpose scaled by 1/255, normalize's is normalize
with mean 0, a flip's is the same flip, crop's writes the head gradient back into zeros
(``_slice_scatter``), resize's is ``_backward_image_resize`` (the adjoint interpolation,
whose gradient is resize again), adjust_lighting's the identity. The random operators are
not differentiable (the factors they drew are not kept).
"""
import numpy as np

from .._core import resample as _resample
from ..base import op_error
from .common import check_num_inputs
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc

_F32 = np.dtype("float32")
_BLOCK = 1 << 22          # elements of one block of batch items (scratch memory per block)
_HUE_EPS = 255 * float(np.finfo(np.float32).eps)   # chroma below this is grey
_GRAY = (0.299, 0.587, 0.114)            # ITU-R BT.601 luma weights of R, G, B
# ImageNet's RGB eigen-vectors scaled by their eigen-values (AlexNet's PCA lighting noise).
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])


# ---- shared helpers ---------------------------------------------------------------------------
def _work_dtype(dtype):
    """float64 data computes in float64, everything else in float32 (as MXNet's floats)."""
    return np.dtype("float64") if np.dtype(dtype) == np.float64 else _F32


def _store(xp, value, out):
    """Write the float ``value`` into ``out``: integers saturated to their range, truncated.
    Where the integer maximum is not a value of ``value``'s dtype (int32 in float32: it
    rounds up to 2**31, which a cast wraps to the minimum), the values at or above it are
    written as the maximum after the cast."""
    if out.dtype.kind not in "iu":
        xp.cast_into(out, value)
        return
    info = np.iinfo(out.dtype)
    ftype = value.dtype.type
    top = ftype(info.max)
    if int(top) <= info.max:
        xp.cast_into(out, value.clip(info.min, info.max))
        return
    below = np.nextafter(top, ftype(-np.inf))   # the largest float under the maximum
    over = value >= top
    xp.cast_into(out, value.clip(info.min, below))
    out[over] = info.max


def _store_block(rctx, value, out):
    """``_store`` of a float32 block ``value`` into an integer image block, on the CPU in one
    compiled pass (``colour_store``: the same clip and truncation) where the dtype allows."""
    if (rctx.kernels == "cpu" and value.dtype == _F32 and out.dtype.char in
            _resample.STORE_DTYPES and value.flags.c_contiguous and out.flags.c_contiguous):
        _resample.colour_store(value, out)
    else:
        _store(rctx.xp, value, out)


def _image_dims(op, shape, layout="HWC", channels=(1, 3)):
    """``(batch, height, width, channels)`` of an (H, W, C) image or (N, H, W, C) batch
    (``layout="CHW"``: of a (C, H, W) tensor or (N, C, H, W) batch); batch is None for one
    image. Checks the rank and that the channel count is one of ``channels``."""
    shape = tuple(shape)
    if len(shape) not in (3, 4):
        raise op_error(op, f"data must be 3-D ({', '.join(layout)}) or 4-D (N, "
                       f"{', '.join(layout)}), got shape {shape}")
    n, img = (None, shape) if len(shape) == 3 else (shape[0], shape[1:])
    h, w, c = img if layout == "HWC" else (img[1], img[2], img[0])
    if channels is not None and c not in channels:
        axis = layout.index("C") + (n is not None)
        raise op_error(op, f"data {shape} must have {' or '.join(map(str, channels))} "
                       f"channels (axis {axis}), got {c}")
    return n, h, w, c


def _blocks(x):
    """Keys of ``x`` that split an (N, ...) batch into blocks of about ``_BLOCK`` elements
    (whole items), so float scratch stays bounded; one image is one block."""
    if x.ndim == 3:
        return [slice(None)] if x.shape[0] else []
    n, per = x.shape[0], max(1, x.size // max(x.shape[0], 1))
    step = max(1, _BLOCK // per)
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _same_image_shape(op, channels=(1, 3)):
    def infer_shape(shapes, attrs):
        check_num_inputs(op, shapes, 1)
        _image_dims(op, shapes[0], channels=channels)
        return [tuple(shapes[0])]
    return infer_shape


def _same_type(dtypes, attrs):
    return [dtypes[0]]


def _keep_shape(in_shapes, out_shapes, attrs):
    return [in_shapes[0] if in_shapes[0] is not None else out_shapes[0]]


def _channel_view(x, batched):
    """An (..., C) image as (pixels, C) (a view of a contiguous array)."""
    return x.reshape(-1, x.shape[-1]) if not batched else x.reshape(x.shape[0], -1, x.shape[-1])


# ---- to_tensor --------------------------------------------------------------------------------
def _to_tensor_shape(shapes, attrs):
    check_num_inputs("_image_to_tensor", shapes, 1)
    n, h, w, c = _image_dims("_image_to_tensor", shapes[0], channels=None)
    return [(c, h, w) if n is None else (n, c, h, w)]


def _to_chw(x):
    return x.transpose(2, 0, 1) if x.ndim == 3 else x.transpose(0, 3, 1, 2)


def _to_tensor_compute(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.cast_into(out, _to_chw(ins[0]))
    out /= np.float32(255)


def _to_tensor_grad(F, node, ograds):
    """y = transpose(x) / 255 (HWC -> CHW): dx = transpose back of dy, / 255, in x's dtype."""
    g = ograds[0]
    axes = (1, 2, 0) if len(node.input_shapes[0]) == 3 else (0, 2, 3, 1)
    dx = F.transpose(g, axes=axes) / 255.0
    dtype = np.dtype(node.input_dtypes[0])
    return [dx if dtype == _F32 else F.Cast(dx, dtype=dtype.name)]


register(OpDef(
    "_image_to_tensor", inputs=("data",), infer_shape=_to_tensor_shape,
    infer_type=lambda dtypes, attrs: [_F32], compute={"cpu": _to_tensor_compute},
    gradient=_to_tensor_grad, doc="""An (H, W, C) image or (N, H, W, C) batch of any dtype
as a (C, H, W) / (N, C, H, W) float32 tensor divided by 255 (uint8 [0, 255] to [0, 1]).
The gradient transposes the head gradient back and divides it by 255 (MXNet's was a
``_copy``, of the wrong shape).

>>> x = mx.nd.array([[[0, 51, 255]]], dtype='uint8')
>>> mx.nd.image.to_tensor(x).asnumpy().ravel().tolist()
[0.0, 0.20000000298023224, 1.0]
"""))


# ---- normalize --------------------------------------------------------------------------------
def _per_channel(op, name, values, c, shape):
    values = tuple(values)
    if len(values) not in (1, c):
        raise op_error(op, f"{name} must have 1 or {c} values for data {shape}, got {values}")
    return values * c if len(values) == 1 else values


def _normalize_shape(shapes, attrs):
    op = "_image_normalize"
    check_num_inputs(op, shapes, 1)
    shape = tuple(shapes[0])
    _, _, _, c = _image_dims(op, shape, layout="CHW")
    _per_channel(op, "mean", attrs.mean[:c] if len(attrs.mean) > c else attrs.mean, c, shape)
    std = _per_channel(op, "std", attrs.std[:c] if len(attrs.std) > c else attrs.std, c, shape)
    if any(s == 0 for s in std):
        raise op_error(op, f"std must not be 0, got {tuple(attrs.std)}")
    return [shape]


def _channel_params(values, c):
    """MXNet reads the first C values of a longer tuple (the defaults have 4) and repeats a
    single value."""
    values = tuple(values)
    return values[:1] * c if len(values) == 1 else values[:c]


def _normalize_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    c = x.shape[-3]
    work = _work_dtype(x.dtype)
    mean = rctx.xp.from_host(np.array(_channel_params(attrs.mean, c), work).reshape(c, 1, 1))
    std = rctx.xp.from_host(np.array(_channel_params(attrs.std, c), work).reshape(c, 1, 1))
    for key in _blocks(x):
        value = x[key].astype(work)
        value -= mean
        value /= std
        _store(rctx.xp, value, out[key])


def _normalize_grad(F, node, ograds):
    """y = (x - mean) / std per channel: dx = dy / std (normalize with mean 0)."""
    return [F.image.normalize(ograds[0], mean=(0.0,), std=node.attrs.std)]


register(OpDef(
    "_image_normalize", inputs=("data",),
    params=(Param("mean", "floats", (0.0, 0.0, 0.0, 0.0), "the mean of each channel"),
            Param("std", "floats", (1.0, 1.0, 1.0, 1.0), "the standard deviation of each "
                  "channel")),
    infer_shape=_normalize_shape, infer_type=_same_type, backward_shape=_keep_shape,
    compute={"cpu": _normalize_compute}, gradient=_normalize_grad,
    doc="""Normalize a (C, H, W) tensor or (N, C, H, W) batch (C is 1 or 3) per channel:
``(data - mean[c]) / std[c]``; ``mean`` and ``std`` hold one value for every channel or
one per channel (of a longer tuple, as the 4-value defaults, the first C count). A zero
``std`` is an error (MXNet divided by it). The gradient is the head gradient / std.

>>> x = mx.nd.array([[[1.0, 3.0]], [[2.0, 4.0]], [[5.0, 7.0]]])
>>> mx.nd.image.normalize(x, mean=(1, 2, 3), std=(2, 2, 4)).asnumpy().ravel().tolist()
[0.0, 1.0, 0.0, 1.0, 0.5, 1.0]
"""))


# ---- flips ------------------------------------------------------------------------------------
def _flip_axis(ndim, which):
    """The width (``lr``) or height (``tb``) axis of an (N,) H, W, C array."""
    return ndim - (2 if which == "lr" else 3)


def _flipped(x, which):
    key = [slice(None)] * x.ndim
    key[_flip_axis(x.ndim, which)] = slice(None, None, -1)
    return x[tuple(key)]


def _flip_compute_fn(which):
    def compute(rctx, ins, outs, attrs):
        rctx.xp.copyto(outs[0], _flipped(ins[0], which))
    return compute


def _flip_grad_fn(name):
    def gradient(F, node, ograds):
        return [getattr(F.image, name)(ograds[0])]
    gradient.__doc__ = f"A permutation that is its own inverse: dx = {name}(dy)."
    return gradient


def _random_flip_compute_fn(which):
    def compute(rctx, ins, outs, attrs):
        flip = _generator(rctx).random() < 0.5
        rctx.xp.copyto(outs[0], _flipped(ins[0], which) if flip else ins[0])
    return compute


_FLIP_DOC = """Flip an (H, W, C) image or (N, H, W, C) batch {how} (C is 1 or 3); any
dtype. {extra}

>>> x = mx.nd.array([[[1], [2]], [[3], [4]]])
>>> mx.nd.image.{name}(x).asnumpy().ravel().tolist()
{example}
"""

for _which, _name, _how, _example in (
        ("lr", "flip_left_right", "left to right (along its width)", "[2.0, 1.0, 4.0, 3.0]"),
        ("tb", "flip_top_bottom", "top to bottom (along its height)", "[3.0, 4.0, 1.0, 2.0]")):
    register(OpDef(
        f"_image_{_name}", inputs=("data",), infer_shape=_same_image_shape(f"_image_{_name}"),
        infer_type=_same_type, backward_shape=_keep_shape,
        compute={"cpu": _flip_compute_fn(_which)}, gradient=_flip_grad_fn(_name),
        doc=_FLIP_DOC.format(how=_how, name=_name, example=_example,
                             extra="The gradient is the same flip (MXNet's was a copy).")))
    register(OpDef(
        f"_image_random_{_name}", inputs=("data",),
        infer_shape=_same_image_shape(f"_image_random_{_name}"), infer_type=_same_type,
        backward_shape=_keep_shape, compute={"cpu": _random_flip_compute_fn(_which)},
        gradient=NON_DIFFERENTIABLE,
        doc=f"""With probability 1/2 flip an (H, W, C) image or (N, H, W, C) batch
{_how}, else copy it (one draw per call from the device's random stream). Not
differentiable: the draw is not kept (MXNet's gradient copied the head gradient, wrong
whenever it flipped).

>>> x = mx.nd.array([[[1], [2]]])
>>> sorted(mx.nd.image.random_{_name}(x).asnumpy().ravel().tolist())
[1.0, 2.0]
"""))


# ---- crop -------------------------------------------------------------------------------------
def _crop_box(shape, attrs):
    """``(begin, end)`` of the crop over the (N,) H, W axes, checked against the image."""
    op = "_image_crop"
    n, h, w, _ = _image_dims(op, shape, channels=None)
    x, y, width, height = attrs.x, attrs.y, attrs.width, attrs.height
    if width <= 0 or height <= 0:
        raise op_error(op, f"width and height must be positive, got width={width}, "
                       f"height={height}")
    if x < 0 or y < 0 or x + width > w or y + height > h:
        raise op_error(op, f"the box x={x}, y={y}, width={width}, height={height} does not "
                       f"fit in the image of width {w} and height {h} (data {tuple(shape)})")
    begin, end = (y, x), (y + height, x + width)
    return ((0,) + begin, (n,) + end) if n is not None else (begin, end)


def _crop_shape(shapes, attrs):
    check_num_inputs("_image_crop", shapes, 1)
    shape = tuple(shapes[0])
    begin, end = _crop_box(shape, attrs)
    return [tuple(e - b for b, e in zip(begin, end)) + (shape[-1],)]


def _crop_compute(rctx, ins, outs, attrs):
    begin, end = _crop_box(ins[0].shape, attrs)
    rctx.xp.copyto(outs[0], ins[0][tuple(slice(b, e) for b, e in zip(begin, end))])


def _crop_grad(F, node, ograds):
    """y = x[y0:y1, x0:x1]: dx = zeros of x's shape with dy in the box (``_slice_scatter``,
    whose gradient is ``slice``)."""
    shape = tuple(node.input_shapes[0])
    begin, end = _crop_box(shape, node.attrs)
    return [F._internal._slice_scatter(ograds[0], shape=shape, begin=begin, end=end,
                                       step=(None,) * len(begin))]


register(OpDef(
    "_image_crop", inputs=("data",),
    params=(Param("x", "int", REQUIRED, "the left boundary of the box"),
            Param("y", "int", REQUIRED, "the top boundary of the box"),
            Param("width", "int", REQUIRED, "the width of the box"),
            Param("height", "int", REQUIRED, "the height of the box")),
    infer_shape=_crop_shape, infer_type=_same_type, compute={"cpu": _crop_compute},
    gradient=_crop_grad, doc="""Crop the box of ``width`` x ``height`` pixels whose top left
corner is (``x``, ``y``) out of an (H, W, C) image or (N, H, W, C) batch; any dtype. A box
outside the image is an error. The gradient writes the head gradient into the box of a
zero array.

>>> x = mx.nd.arange(12).reshape((3, 4, 1))
>>> mx.nd.image.crop(x, x=1, y=1, width=2, height=2).asnumpy().ravel().tolist()
[5.0, 6.0, 9.0, 10.0]
"""))


# ---- resize -----------------------------------------------------------------------------------
_INTERPS = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area"}
_MAX_SIDE = 1 << 24          # the longest side resized (its tap tables are O(side) per axis)


def _resize_out_hw(op, h, w, attrs):
    size, keep = tuple(attrs.size), attrs.keep_ratio
    if len(size) not in (1, 2) or any(s <= 0 for s in size):
        raise op_error(op, f"size must be (width, height) or (size,) of positive values, got "
                       f"{size}")
    if attrs.interp not in _INTERPS:
        names = ", ".join(_INTERPS.values())
        raise op_error(op, f"interp must be one of {sorted(_INTERPS)} ({names}), got "
                       f"{attrs.interp} (Lanczos, 4, is not implemented)")
    if len(size) == 2:
        out = (size[1], size[0])
    elif not keep:
        out = (size[0], size[0])
    elif h <= w:          # the short edge becomes size, the long one keeps the ratio
        out = (size[0], int(w * size[0] / h))
    else:
        out = (int(h * size[0] / w), size[0])
    if min(out) <= 0 or max(out) > _MAX_SIDE or h <= 0 or w <= 0:
        raise op_error(op, f"cannot resize an image of height {h} and width {w} to height "
                       f"{out[0]} and width {out[1]} (sides 1 to {_MAX_SIDE})")
    return out


def _resize_shape(shapes, attrs):
    op = "_image_resize"
    check_num_inputs(op, shapes, 1)
    shape = tuple(shapes[0])
    n, h, w, c = _image_dims(op, shape, channels=None)
    oh, ow = _resize_out_hw(op, h, w, attrs)
    return [_output(op, (oh, ow, c) if n is None else (n, oh, ow, c))]


def _output(op, shape):
    """An output shape whose bytes (at least one per element) fit in int64 and memory:
    sizes come from parameters, so an absurd one is bad input, not an allocation."""
    return check_alloc(op, shape, np.uint8)


def _taps(n_out, n_in, interp):
    """``(index, weight)``, two (n_out, k) arrays: output pixel d of one axis is
    ``sum_k weight[d, k] * source[index[d, k]]``, the 1-D weights of OpenCV's ``resize``.

    Source coordinates follow OpenCV: pixel centres (``(d + 0.5) * scale - 0.5``) for
    bilinear and bicubic, ``floor(d * scale)`` for nearest; taps beyond the edge take the
    edge pixel (border replicate). Area averages the source interval each output pixel covers
    (with fractional end pixels) when shrinking, and interpolates linearly when enlarging.
    Only the taps are kept (at most 4 per pixel, or the pixels an area covers)."""
    scale = n_in / n_out
    d = np.arange(n_out)
    if interp == 0:
        return np.minimum(np.floor(d * scale).astype(np.int64), n_in - 1)[:, None], \
            np.ones((n_out, 1))
    if interp == 3 and scale >= 1:
        return _area_taps(n_out, n_in, scale)
    src = (d + 0.5) * scale - 0.5
    base = np.floor(src).astype(np.int64)
    frac = src - base
    if interp == 2:
        offsets, weights = (-1, 0, 1, 2), _cubic_weights(frac)
    else:
        if interp == 3:      # OpenCV's area enlargement: linear without the left overhang
            frac = np.where(base < 0, 0.0, frac)
            base = np.maximum(base, 0)
        offsets, weights = (0, 1), (1.0 - frac, frac)
    index = np.stack([np.clip(base + k, 0, n_in - 1) for k in offsets], axis=1)
    return index, np.stack(weights, axis=1)


def _cubic_weights(t, a=-0.75):
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 (OpenCV's a = -0.75)."""
    def near(s):
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _area_taps(n_out, n_in, scale):
    """Shrinking: each output pixel averages [d * scale, (d + 1) * scale) of the source."""
    k = int(np.ceil(scale)) + 1
    lo = np.arange(n_out) * scale
    hi = lo + scale
    first = np.floor(lo).astype(np.int64)
    index = first[:, None] + np.arange(k)[None, :]
    cover = np.minimum(hi[:, None], index + 1) - np.maximum(lo[:, None], index)
    weight = np.where((cover > 0) & (index < n_in), cover, 0.0) / scale
    return np.minimum(index, n_in - 1), weight


def _adjoint_taps(taps, n_in):
    """The taps of the transposed map: for each source pixel, the outputs it feeds."""
    index, weight = taps
    rows = np.repeat(np.arange(index.shape[0]), index.shape[1])
    cols, wts = index.ravel(), weight.ravel()
    keep = wts != 0
    rows, cols, wts = rows[keep], cols[keep], wts[keep]
    order = np.argsort(cols, kind="stable")
    rows, cols, wts = rows[order], cols[order], wts[order]
    counts = np.bincount(cols, minlength=n_in)
    k = max(1, int(counts.max()) if counts.size else 1)
    slot = np.arange(cols.size) - np.repeat(np.cumsum(counts) - counts, counts)
    out_index, out_weight = np.zeros((n_in, k), np.int64), np.zeros((n_in, k))
    out_index[cols, slot], out_weight[cols, slot] = rows, wts
    return out_index, out_weight


def _apply_taps(xp, part, taps, axis, work):
    """``sum_k weight[:, k] * part.take(index[:, k], axis)`` along ``axis`` of a block."""
    index, weight = taps
    shape = [1] * part.ndim
    shape[axis] = index.shape[0]
    total = None
    for k in range(index.shape[1]):
        key = [slice(None)] * part.ndim
        key[axis] = xp.from_host(np.ascontiguousarray(index[:, k]))
        term = part[tuple(key)] * xp.from_host(weight[:, k].astype(work).reshape(shape))
        total = term if total is None else total.__iadd__(term)
    return total


def _interpolate(rctx, x, out, taps_h, taps_w):
    """out[n, i, j, c] = sum wh[i, a] ww[j, b] x[n, ih[i, a], iw[j, b], c]: the rows, then
    the columns, in float32 (float64 data in float64); integer results are rounded (as
    OpenCV's) and saturated. On the CPU the compiled kernel (``mxlite/_core/resample.pyx``:
    one pass per output row, rows across threads) computes it with the NumPy path's
    arithmetic, bit for bit, but for int32/int64 results at the dtype's maximum: the kernel
    saturates them, where the NumPy path's float32 clip (to 2**31, 2**63) wraps them to the
    minimum. Other devices, and dtypes the kernel lacks, take the NumPy path
    (``_interpolate_xp``)."""
    if rctx.kernels == "cpu" and x.dtype.char in _resample.DTYPES:
        work = _work_dtype(x.dtype)
        _resample.resample(x.reshape((-1,) + x.shape[-3:]), out.reshape((-1,) + out.shape[-3:]),
                           *_kernel_taps(taps_h, work), *_kernel_taps(taps_w, work))
    else:
        _interpolate_xp(rctx.xp, x, out, taps_h, taps_w)


def _kernel_taps(taps, work):
    """The kernel's form of ``(index, weight)``: C-contiguous int64 and ``work`` arrays (the
    weights rounded to ``work`` as the NumPy path rounds them)."""
    index, weight = taps
    return (np.ascontiguousarray(index, np.int64),
            np.ascontiguousarray(weight.astype(work, copy=False)))


def _interpolate_xp(xp, x, out, taps_h, taps_w):
    """``_interpolate`` with array operations of namespace ``xp`` (NumPy or CuPy), over
    blocks of images and bands of output rows so that scratch stays bounded."""
    work = _work_dtype(x.dtype)
    batch = x.reshape((-1,) + x.shape[-3:])
    dest = out.reshape((-1,) + out.shape[-3:])
    _, h, w, c = batch.shape
    oh, ow = dest.shape[1:3]
    per_row = max(w, ow) * c * max(taps_h[0].shape[1], taps_w[0].shape[1])
    for key in _blocks(batch):
        n = len(range(*key.indices(batch.shape[0])))
        step = max(1, _BLOCK // max(n * per_row, 1))
        for start in range(0, oh, step):
            band = slice(start, min(oh, start + step))
            rows = _apply_taps(xp, batch[key], (taps_h[0][band], taps_h[1][band]), 1, work)
            img = _apply_taps(xp, rows.astype(work, copy=False), taps_w, 2, work)
            if out.dtype.kind in "iu":
                img = img.round()
            _store(xp, img, dest[key, band])


def _resize_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    _interpolate(rctx, x, out, _taps(out.shape[-3], x.shape[-3], attrs.interp),
                 _taps(out.shape[-2], x.shape[-2], attrs.interp))


def _resize_grad(F, node, ograds):
    """y = Ry x Rx^T per channel (Ry, Rx the interpolation matrices): dx = Ry^T dy Rx, the
    adjoint ``_backward_image_resize``."""
    shape = tuple(node.input_shapes[0])
    return [F._internal._backward_image_resize(
        ograds[0], height=shape[-3], width=shape[-2], interp=node.attrs.interp)]


_RESIZE_PARAMS = (
    Param("size", "shape", (), "(width, height), or (size,): the short edge with keep_ratio, "
          "else both"),
    Param("keep_ratio", "bool", False, "with one size, resize the short edge to it and keep "
          "the aspect ratio"),
    Param("interp", "int", 1, "0 nearest, 1 bilinear, 2 bicubic, 3 area (OpenCV's codes)"))

register(OpDef(
    "_image_resize", inputs=("data",), params=_RESIZE_PARAMS, infer_shape=_resize_shape,
    infer_type=_same_type, compute={"cpu": _resize_compute}, gradient=_resize_grad,
    doc="""Resize an (H, W, C) image or (N, H, W, C) batch with OpenCV's interpolation
(``interp`` 0 nearest, 1 bilinear, 2 bicubic, 3 area; Lanczos, 4, is not implemented).
``size`` is (width, height), or one value for both sides, or with ``keep_ratio`` for the
short side (the long side keeps the aspect ratio, rounded down). Computed in floating point
as separable matrix products: float results equal OpenCV's within rounding, uint8 results
within 1 (OpenCV's fixed-point arithmetic). The gradient is the adjoint interpolation
(MXNet's was a ``_copy``, of the wrong shape).

>>> x = mx.nd.array([[[0.0], [4.0]]])
>>> mx.nd.image.resize(x, size=(4, 1)).asnumpy().ravel().tolist()
[0.0, 1.0, 3.0, 4.0]
"""))


def _resize_backward_shape(shapes, attrs):
    op = "_backward_image_resize"
    check_num_inputs(op, shapes, 1)
    shape = tuple(shapes[0])
    n, _, _, c = _image_dims(op, shape, channels=None)
    if attrs.height <= 0 or attrs.width <= 0 or max(attrs.height, attrs.width) > _MAX_SIDE:
        raise op_error(op, f"height and width must be 1 to {_MAX_SIDE}, got {attrs.height}, "
                       f"{attrs.width}")
    if attrs.interp not in _INTERPS:
        raise op_error(op, f"interp must be one of {sorted(_INTERPS)}, got {attrs.interp}")
    hw = (attrs.height, attrs.width)
    return [_output(op, hw + (c,) if n is None else (n,) + hw + (c,))]


def _resize_backward_compute(rctx, ins, outs, attrs):
    g, out = ins[0], outs[0]
    h, w = out.shape[-3], out.shape[-2]
    _interpolate(rctx, g, out, _adjoint_taps(_taps(g.shape[-3], h, attrs.interp), h),
                 _adjoint_taps(_taps(g.shape[-2], w, attrs.interp), w))


def _resize_backward_grad(F, node, ograds):
    """A linear map's adjoint: its gradient is the forward interpolation, resize."""
    shape = tuple(node.input_shapes[0])
    return [F.image.resize(ograds[0], size=(shape[-2], shape[-3]), interp=node.attrs.interp)]


register(OpDef(
    "_backward_image_resize", inputs=("grad",),
    params=(Param("height", "int", REQUIRED, "the height of resize's input"),
            Param("width", "int", REQUIRED, "the width of resize's input"),
            Param("interp", "int", 1, "resize's interpolation")),
    infer_shape=_resize_backward_shape, infer_type=_same_type,
    compute={"cpu": _resize_backward_compute}, gradient=_resize_backward_grad,
    doc="""The gradient of ``image.resize``: the transposed interpolation of a head gradient
of the resized shape back to (height, width). Its own gradient is ``image.resize``."""))


# ---- colour: brightness, contrast, saturation, hue, lighting -----------------------------------
def _generator(rctx):
    """A NumPy Generator on the device's Philox stream (one ``next()`` per call)."""
    seed, offset = rctx.rng.next()
    return np.random.Generator(np.random.Philox(key=seed, counter=offset))


def _compiled(rctx, img):
    """Whether the colour kernels of mxlite/_core (colour.pxi, bit-for-bit the NumPy path
    below, in one pass over the pixels instead of tens) compute the (..., 3) block ``img``:
    on the CPU; other devices take the array operations."""
    return rctx.kernels == "cpu" and img.shape[-1] == 3 and img.flags.c_contiguous


def _brightness(rctx, img, alpha):
    img *= alpha
    return img


def _gray(rctx, img):
    """The luma of each pixel of a (..., C) float image (the value itself for one channel)."""
    if img.shape[-1] == 1:
        return img[..., 0]
    if _compiled(rctx, img):
        return _resample.colour_luma(img)
    return img[..., 0] * _GRAY[0] + img[..., 1] * _GRAY[1] + img[..., 2] * _GRAY[2]


def _contrast(rctx, img, alpha):
    """Blend with the mean luma of each image: alpha x + (1 - alpha) mean_gray."""
    if img.size == 0:            # images without pixels: no mean to blend with
        return img
    gray = _gray(rctx, img)
    mean = gray.reshape(gray.shape[0], -1).mean(axis=1) if img.ndim == 4 else gray.mean()
    if img.ndim == 4:
        mean = mean.reshape(-1, 1, 1, 1)
    img *= alpha
    img += (1 - alpha) * mean
    return img


def _saturation(rctx, img, alpha):
    """Blend each pixel with its luma: alpha x + (1 - alpha) gray. (MXNet 1.9.1 took only
    the blue term 0.114 b for gray, a bug; one channel is left as is.)"""
    if img.shape[-1] == 1:
        return img
    if _compiled(rctx, img):
        _resample.colour_saturation(img, alpha)
        return img
    gray = _gray(rctx, img)[..., None] * (1 - alpha)
    img *= alpha
    img += gray
    return img


def _hue(rctx, img, alpha):
    """Rotate the hue by ``alpha`` turns in HLS space (OpenCV's RGB <-> HLS on [0, 255]).

    A hue rotation keeps lightness and saturation, hence each pixel's largest and smallest
    channel. In sixths of a turn, channel c (R, G, B: shifted by +2, 0, -2 sixths) becomes
    ``vmin + (vmax - vmin) * clip(2 - |d|, 0, 1)``, HLS's trapezoid, where ``d`` is its
    rotated hue minus 2 wrapped to [-3, 3]. Written this way the rotation takes a few cheap
    passes over the pixels instead of a round trip through HLS (no reductions over the
    channel axis, no floating-point remainder)."""
    if img.shape[-1] == 1:
        return img
    shift = 6.0 * (alpha % 1.0) - 2.0                 # the trapezoid's centre at 0
    if _compiled(rctx, img):
        _resample.colour_hue(img, shift, _HUE_EPS)
        return img
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    vmax = r.clip(min=g).clip(min=b)
    vmin = r.clip(max=g).clip(max=b)
    diff = vmax - vmin
    chroma = diff > _HUE_EPS                          # a grey pixel has no hue
    r_top = vmax == r
    g_top = (vmax == g) > r_top                       # g is largest, r is not
    b_top = ~(r_top | g_top)
    hue = (g - b) * r_top                              # in [-1, 5] sixths, once / diff
    hue += (b - r + 2 * diff) * g_top
    hue += (r - g + 4 * diff) * b_top
    hue /= diff + ~chroma
    hue += shift                                       # rotated, minus the trapezoid's centre
    grey = ~chroma
    vmin += diff * 0.5 * grey                          # a grey pixel keeps its lightness
    diff *= chroma
    out = img.copy()
    for c, shift in ((0, 2.0), (1, 0.0), (2, -2.0)):
        d = hue + shift
        d -= (d * (1.0 / 6.0)).round() * 6.0          # wrapped to [-3, 3]
        t = 2.0 - abs(d)
        t = t.clip(0.0, 1.0)
        t *= diff
        t += vmin
        out[..., c] = t
    return out


def _lighting(rctx, img, alpha):
    """Add the PCA noise ``eig @ alpha`` to each pixel's R, G, B (one channel: as is)."""
    if img.shape[-1] == 1:
        return img
    img += rctx.xp.from_host((_EIG @ np.asarray(alpha, np.float64)).astype(img.dtype))
    return img


def _colour_compute(adjusts):
    """A compute function applying ``adjusts(rctx, attrs)`` -> [(fn, factor)] in order, block
    by block in one float scratch (fresh memory for every block cost more, in page faults,
    than the compiled steps)."""
    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        steps = adjusts(rctx, attrs)          # drawn once: one set of factors per call
        keys = _blocks(x)
        if not keys:
            return
        scratch = rctx.xp.empty(x[keys[0]].shape, _work_dtype(x.dtype))
        for key in keys:
            part = x[key]
            img = scratch[:part.shape[0]]
            rctx.xp.cast_into(img, part)
            for fn, factor in steps:
                img = fn(rctx, img, factor)
            _store_block(rctx, img, out[key])
    return compute


def _uniform_factor(fn):
    def adjusts(rctx, attrs):
        return [(fn, _generator(rctx).uniform(attrs.min_factor, attrs.max_factor))]
    return adjusts


def _jitter_adjusts(rctx, attrs):
    """MXNet's colour jitter: brightness, contrast, saturation and hue in a random order, each
    with a factor drawn around 1 (hue around 0) where its strength is positive."""
    gen = _generator(rctx)
    steps = [(_brightness, attrs.brightness, 1.0), (_contrast, attrs.contrast, 1.0),
             (_saturation, attrs.saturation, 1.0), (_hue, attrs.hue, 0.0)]
    order = gen.permutation(4)
    return [(steps[i][0], steps[i][2] + gen.uniform(-steps[i][1], steps[i][1]))
            for i in order if steps[i][1] > 0]


def _factor_range_type(op):
    def infer_type(dtypes, attrs):
        if not 0 <= attrs.min_factor <= attrs.max_factor:
            raise op_error(op, f"need 0 <= min_factor <= max_factor, got min_factor="
                           f"{attrs.min_factor}, max_factor={attrs.max_factor}")
        return [dtypes[0]]
    return infer_type


_FACTOR_PARAMS = (Param("min_factor", "float", REQUIRED, "the smallest factor"),
                  Param("max_factor", "float", REQUIRED, "the largest factor"))

_RANDOM_COLOUR = {
    "brightness": (_brightness, "Scale every value by a factor drawn uniformly from "
                   "[min_factor, max_factor]."),
    "contrast": (_contrast, "Blend each image with its mean luma (0.299 R + 0.587 G + "
                 "0.114 B): ``a x + (1 - a) mean``, ``a`` drawn uniformly from "
                 "[min_factor, max_factor]."),
    "saturation": (_saturation, "Blend each pixel with its luma: ``a x + (1 - a) gray``, "
                   "``a`` drawn uniformly from [min_factor, max_factor]. MXNet 1.9.1 used "
                   "only 0.114 B as the luma (a bug); one channel is copied."),
    "hue": (_hue, "Rotate the hue (in OpenCV's HLS space, values on [0, 255]) by ``a`` "
            "turns, ``a`` drawn uniformly from [min_factor, max_factor]; one channel is "
            "copied (MXNet left the output unwritten)."),
}

for _kind, (_fn, _what) in _RANDOM_COLOUR.items():
    _name = f"_image_random_{_kind}"
    register(OpDef(
        _name, inputs=("data",), params=_FACTOR_PARAMS,
        infer_shape=_same_image_shape(_name), infer_type=_factor_range_type(_name),
        backward_shape=_keep_shape, compute={"cpu": _colour_compute(_uniform_factor(_fn))},
        gradient=NON_DIFFERENTIABLE,
        doc=f"""{_what} Works on an (H, W, C) image or (N, H, W, C) batch (C is 1 or 3;
one factor per call, from the device's random stream); integer results are clipped to the
dtype's range. Not differentiable (the factor is not kept; MXNet's gradient copied the
head gradient).

>>> x = mx.nd.full((2, 2, 3), 10.0)
>>> mx.nd.image.random_{_kind}(x, min_factor=1, max_factor=1).asnumpy()[0, 0].tolist()
[10.0, 10.0, 10.0]
"""))


register(OpDef(
    "_image_random_color_jitter", inputs=("data",),
    params=(Param("brightness", "float", REQUIRED, "the brightness jitter"),
            Param("contrast", "float", REQUIRED, "the contrast jitter"),
            Param("saturation", "float", REQUIRED, "the saturation jitter"),
            Param("hue", "float", REQUIRED, "the hue jitter")),
    infer_shape=_same_image_shape("_image_random_color_jitter"), infer_type=_same_type,
    backward_shape=_keep_shape, compute={"cpu": _colour_compute(_jitter_adjusts)},
    gradient=NON_DIFFERENTIABLE,
    doc="""Brightness, contrast, saturation and hue adjustments in a random order, each with
a factor drawn uniformly from [1 - s, 1 + s] (hue: [-s, s] turns) where its strength ``s``
is positive, on an (H, W, C) image or (N, H, W, C) batch. Not differentiable.

>>> x = mx.nd.full((2, 2, 3), 10.0)
>>> mx.nd.image.random_color_jitter(x, 0, 0, 0, 0).asnumpy()[0, 0].tolist()
[10.0, 10.0, 10.0]
"""))


def _lighting_type(dtypes, attrs):
    if len(attrs.alpha) != 3:
        raise op_error("_image_adjust_lighting", f"alpha must have 3 values (R, G, B), got "
                       f"{tuple(attrs.alpha)}")
    return [dtypes[0]]


def _identity_grad(F, node, ograds):
    """y = x + constant: dx = dy."""
    return [F.identity(ograds[0])]


register(OpDef(
    "_image_adjust_lighting", inputs=("data",),
    params=(Param("alpha", "floats", REQUIRED, "the lighting alphas of R, G and B"),),
    infer_shape=_same_image_shape("_image_adjust_lighting"), infer_type=_lighting_type,
    backward_shape=_keep_shape,
    compute={"cpu": _colour_compute(lambda rctx, attrs: [(_lighting, attrs.alpha)])},
    gradient=_identity_grad,
    doc="""AlexNet's PCA lighting: add ``eig @ alpha`` (ImageNet's RGB eigen-vectors scaled
by their eigen-values) to the R, G, B of every pixel of an (H, W, C) image or (N, H, W, C)
batch; one channel is copied (MXNet left the output unwritten). The gradient is the head
gradient (for float data; integer results are clipped).

>>> x = mx.nd.zeros((1, 1, 3))
>>> y = mx.nd.image.adjust_lighting(x, alpha=(0.1, 0, 0))
>>> [round(v, 3) for v in y.asnumpy().ravel().tolist()]
[-3.147, -3.221, -3.237]
"""))


def _random_lighting_adjusts(rctx, attrs):
    return [(_lighting, _generator(rctx).normal(0.0, attrs.alpha_std, size=3))]


def _random_lighting_type(dtypes, attrs):
    if attrs.alpha_std < 0:
        raise op_error("_image_random_lighting", f"alpha_std must be >= 0, got "
                       f"{attrs.alpha_std}")
    return [dtypes[0]]


register(OpDef(
    "_image_random_lighting", inputs=("data",),
    params=(Param("alpha_std", "float", 0.05, "the standard deviation of the alphas"),),
    infer_shape=_same_image_shape("_image_random_lighting"), infer_type=_random_lighting_type,
    backward_shape=_keep_shape, compute={"cpu": _colour_compute(_random_lighting_adjusts)},
    gradient=NON_DIFFERENTIABLE,
    doc="""``adjust_lighting`` with alphas drawn from N(0, alpha_std**2) (three per call,
from the device's random stream). Not differentiable (the alphas are not kept).

>>> x = mx.nd.full((1, 1, 3), 100.0)
>>> mx.nd.image.random_lighting(x, alpha_std=0).asnumpy().ravel().tolist()
[100.0, 100.0, 100.0]
"""))


# ---- OpenCV's image helpers: _cvimresize, _cvcopyMakeBorder -----------------------------------
def _cv_image_dims(op, shape):
    shape = tuple(shape)
    if len(shape) != 3:
        raise op_error(op, f"src must be an (height, width, channels) image, got shape {shape}")
    return shape


def _cvimresize_shape(shapes, attrs):
    op = "_cvimresize"
    check_num_inputs(op, shapes, 1)
    h, w, c = _cv_image_dims(op, shapes[0])
    if attrs.interp not in _INTERPS:
        raise op_error(op, f"interp must be one of {sorted(_INTERPS)}, got {attrs.interp} "
                       "(Lanczos, 4, is not implemented)")
    if not (0 < attrs.w <= _MAX_SIDE and 0 < attrs.h <= _MAX_SIDE) or h <= 0 or w <= 0:
        raise op_error(op, f"cannot resize src {tuple(shapes[0])} to w={attrs.w}, "
                       f"h={attrs.h} (sides 1 to {_MAX_SIDE})")
    return [_output(op, (attrs.h, attrs.w, c))]


def _cvimresize_grad(F, node, ograds):
    """The same interpolation as image.resize: dx is its adjoint."""
    return _resize_grad(F, node, ograds)


register(OpDef(
    "_cvimresize", inputs=("src",),
    params=(Param("w", "int", REQUIRED, "the width of the resized image"),
            Param("h", "int", REQUIRED, "the height of the resized image"),
            Param("interp", "int", 1, "0 nearest, 1 bilinear, 2 bicubic, 3 area")),
    infer_shape=_cvimresize_shape, infer_type=_same_type, compute={"cpu": _resize_compute},
    gradient=_cvimresize_grad, doc="""OpenCV's ``resize`` of an (H, W, C) image to (h, w, C),
as ``image.resize(src, size=(w, h), interp=interp)`` (the same interpolation). MXNet
registered no gradient; mxlite's is the adjoint interpolation.

>>> x = mx.nd.array([[[0.0], [4.0]]])
>>> mx.nd._internal._cvimresize(x, w=4, h=1).asnumpy().ravel().tolist()
[0.0, 1.0, 3.0, 4.0]
"""))

# OpenCV's border codes as numpy.pad's modes (source positions beyond the edge).
_BORDERS = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def _border_shape(shapes, attrs):
    op = "_cvcopyMakeBorder"
    check_num_inputs(op, shapes, 1)
    h, w, c = _cv_image_dims(op, shapes[0])
    margins = (attrs.top, attrs.bot, attrs.left, attrs.right)
    if min(margins) < 0:
        raise op_error(op, f"top, bot, left and right must be >= 0, got {margins}")
    if attrs.type not in _BORDERS:
        raise op_error(op, f"type must be one of {sorted(_BORDERS)} (constant, replicate, "
                       f"reflect, wrap, reflect_101), got {attrs.type}")
    if attrs.type != 0 and (h == 0 or w == 0):
        raise op_error(op, f"border type {attrs.type} needs a non-empty src, got "
                       f"{tuple(shapes[0])}")
    if len(attrs["values"]) > 4:
        raise op_error(op, f"values holds at most 4 channels, got {tuple(attrs['values'])}")
    return [_output(op, (h + attrs.top + attrs.bot, w + attrs.left + attrs.right, c))]


def _source_index(n, before, after, mode):
    """The source position of each output position along one axis (-1 for the constant)."""
    if mode == "constant":
        return np.concatenate([np.full(before, -1), np.arange(n), np.full(after, -1)])
    return np.pad(np.arange(n), (before, after), mode=mode)


def _border_fill(attrs, c):
    """The constant of each channel: ``values`` (one for all, or per channel) else ``value``."""
    values = tuple(attrs["values"]) or (attrs.value,)
    if len(values) == 1:
        return values * c
    return (values + (0.0,) * c)[:c]


def _border_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    xp = rctx.xp
    h, w, c = x.shape
    mode = _BORDERS[attrs.type]
    rows = _source_index(h, attrs.top, attrs.bot, mode)
    cols = _source_index(w, attrs.left, attrs.right, mode)
    if mode == "constant":
        fill = np.array(_border_fill(attrs, c), np.float64)
        dtype = out.dtype
        if dtype.kind in "iu":
            # saturated in Python ints: int64's maximum is no float64 (it rounds up to 2**63)
            info = np.iinfo(dtype)
            fill = np.array([info.max if f >= info.max else info.min if f <= info.min
                             else int(f) for f in fill.tolist()], dtype)
        xp.copyto(out, xp.broadcast_to(xp.from_host(fill.astype(dtype)), out.shape))
        xp.copyto(out[attrs.top:attrs.top + h, attrs.left:attrs.left + w], x)
        return
    if x.size == 0:
        picked = x[xp.from_host(rows)][:, xp.from_host(cols)]
        xp.copyto(out, picked)
        return
    # the image into the middle, then the side columns of its rows, then whole border rows,
    # each gathered from the part of ``out`` already written: no copy of the image's size
    top, left = attrs.top, attrs.left
    middle = out[top:top + h]
    xp.copyto(middle[:, left:left + w], x)
    side = np.concatenate([np.arange(left), np.arange(left + w, out.shape[1])])
    if side.size:
        middle[:, xp.from_host(side)] = middle[:, xp.from_host(left + cols[side])]
    border = np.concatenate([np.arange(top), np.arange(top + h, out.shape[0])])
    if border.size:
        out[xp.from_host(border)] = out[xp.from_host(top + rows[border])]


register(OpDef(
    "_cvcopyMakeBorder", inputs=("src",),
    params=(Param("top", "int", REQUIRED, "the top margin"),
            Param("bot", "int", REQUIRED, "the bottom margin"),
            Param("left", "int", REQUIRED, "the left margin"),
            Param("right", "int", REQUIRED, "the right margin"),
            Param("type", "int", 0, "0 constant, 1 replicate, 2 reflect, 3 wrap, "
                  "4 reflect_101 (OpenCV's codes)"),
            Param("value", "float", 0.0, "the constant of every channel (deprecated: values)"),
            Param("values", "floats", (), "the constant of each channel (up to 4)")),
    infer_shape=_border_shape, infer_type=_same_type, compute={"cpu": _border_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""OpenCV's ``copyMakeBorder``: surround an (H, W, C) image with ``top``, ``bot``,
``left`` and ``right`` pixels: a constant (``values`` per channel, or ``value``), the edge
pixel, a mirror (``fedcba|abcdef``, type 2, or ``edcb|abcde``, type 4), or the image
wrapped around. Not differentiable (MXNet 1.9.1 registers no gradient either).

>>> x = mx.nd.array([[[1.0], [2.0]]])
>>> mx.nd._internal._cvcopyMakeBorder(x, 0, 0, 1, 2, type=3).asnumpy().ravel().tolist()
[2.0, 1.0, 2.0, 1.0, 2.0]
"""))

from . import image_io  # noqa: E402,F401  (the image decoders: _cvimdecode, _cvimread, _imdecode)

# Functions that compute on the host: tables from shapes and parameters (interpolation taps,
# border indices, per-channel constants) and the drawn factors, moved to the device with
# xp.from_host (tests/test_device.py reads this).
HOST_CODE = {
    "<module>": "the PCA lighting matrix, a constant built once on the host",
    "_store": "the largest float below an integer dtype's maximum: a host scalar",
    "_normalize_compute": "per-channel mean and std from the parameters, sent with from_host",
    "_taps": "interpolation source indices and weights along one axis, from the sizes",
    "_area_taps": "area interpolation source indices and weights, from the sizes",
    "_adjoint_taps": "the transposed tap table of resize's gradient, from the sizes",
    "_apply_taps": "a host tap column made contiguous before from_host sends it",
    "_kernel_taps": "the tap tables in the dtypes of the CPU kernel (used on the CPU only)",
    "_generator": "a NumPy generator on the device stream's key, drawing a call's factors",
    "_lighting": "the 3-vector of PCA noise from the drawn alphas, sent with from_host",
    "_source_index": "border source indices along one axis, from the margins",
    "_border_compute": "per-channel border constants from the parameters, sent with from_host",
}
