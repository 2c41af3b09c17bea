"""Image operators (``_image_*``, ``_cvimresize``): layout changes, per-channel affine
maps, flips, crops, resizes as interpolation-matrix products, PCA lighting; the random
augmenters with ONNX's own random draws.

mxlite computes the colour and resize ops in float32 (float64 for float64 data) and stores
integer results clipped to the dtype's range and truncated; ``_store`` writes the same.
"""
import math

import numpy as np

from ..table import not_expressible, translates
from ...ops import image as _image

_INT64_MIN = np.iinfo(np.int64).min


def _work(dtype):
    """The dtype mxlite computes an image of ``dtype`` in."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _to_work(ctx, x, dtype):
    return x if np.dtype(dtype) == _work(dtype) else ctx.cast(x, _work(dtype))


def _store(ctx, value, work, dtype, outs):
    """The float ``value`` (in dtype ``work``) written as ``dtype``: a float cast, or for an
    integer dtype clipped to its range and truncated, a value at or above a maximum that
    ``work`` cannot hold (int32 in float32) written as the maximum (mxlite's ``_store``)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        if dtype == work:
            return ctx.node("Identity", [value], outs)
        return ctx.node("Cast", [value], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
    info = np.iinfo(dtype)
    top = work.type(info.max)
    below = top if int(top) <= info.max else np.nextafter(top, work.type(-np.inf))
    clipped = ctx.node("Clip", [value, ctx.const(np.asarray(info.min, work)),
                                ctx.const(np.asarray(below, work))])
    if below == top:
        return ctx.node("Cast", [clipped], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
            dtype))
    cast = ctx.cast(clipped, dtype)
    over = ctx.node("GreaterOrEqual", [value, ctx.const(np.asarray(top, work))])
    return ctx.node("Where", [over, ctx.const(np.asarray(info.max, dtype)), cast], outs)


# ---- to_tensor, normalize ----------------------------------------------------------------------
@translates("_image_to_tensor", onnx_ops=["Transpose", "Cast", "Div"])
def _to_tensor(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0]))
    perm = [2, 0, 1] if ndim == 3 else [0, 3, 1, 2]
    x = ctx.node("Transpose", ins[:1], perm=perm)
    if ctx.dtype(node.inputs[0]) != np.float32:
        x = ctx.cast(x, np.float32)
    ctx.node("Div", [x, ctx.const(np.asarray(255, np.float32), base="255")], outs)


@translates("_image_normalize", onnx_ops=["Cast", "Sub", "Div", "Clip"],
            notes="integer data: clipped to its range and truncated, as mxlite stores it")
def _normalize(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    c = ctx.shape(node.inputs[0])[-3]
    work = _work(dtype)

    def channel(values):
        return ctx.const(np.asarray(_image._channel_params(values, c), work).reshape(c, 1, 1))
    x = _to_work(ctx, ins[0], dtype)
    value = ctx.node("Div", [ctx.node("Sub", [x, channel(node.attrs.mean)]),
                             channel(node.attrs.std)])
    _store(ctx, value, work, dtype, outs)


# ---- flips, crop -------------------------------------------------------------------------------
def _flip(ctx, x, axis, outs=None):
    """``x`` reversed along ``axis`` (a Slice with step -1)."""
    return ctx.node("Slice", [x, ctx.int64s([-1]), ctx.int64s([_INT64_MIN]),
                              ctx.int64s([axis]), ctx.int64s([-1])], outs)


def _flip_axis(ctx, node, which):
    return _image._flip_axis(len(ctx.shape(node.inputs[0])), which)


@translates("_image_flip_left_right", onnx_ops=["Slice"])
def _flip_lr(ctx, node, ins, outs):
    _flip(ctx, ins[0], _flip_axis(ctx, node, "lr"), outs)


@translates("_image_flip_top_bottom", onnx_ops=["Slice"])
def _flip_tb(ctx, node, ins, outs):
    _flip(ctx, ins[0], _flip_axis(ctx, node, "tb"), outs)


def _random_flip(which):
    def translate(ctx, node, ins, outs):
        flipped = _flip(ctx, ins[0], _flip_axis(ctx, node, which))
        draw = ctx.node("RandomUniform", [], shape=[1], dtype=ctx.onnx.TensorProto.FLOAT)
        heads = ctx.node("Less", [draw, ctx.const(np.asarray([0.5], np.float32))])
        ctx.node("Where", [heads, flipped, ins[0]], outs)
    return translate


#: what every translation drawing from ONNX's random operators says
RANDOM = ("the runtime's random stream, not mxlite's: the same distribution, other values; "
          "onnxruntime 1.32 runs ONNX's random operators in models of opset 21 or older "
          "(export with opset_version=21)")
_RANDOM_NOTES = "one RandomUniform draw per run; " + RANDOM
translates("_image_random_flip_left_right", onnx_ops=["RandomUniform", "Less", "Where", "Slice"],
           notes=_RANDOM_NOTES)(_random_flip("lr"))
translates("_image_random_flip_top_bottom", onnx_ops=["RandomUniform", "Less", "Where", "Slice"],
           notes=_RANDOM_NOTES)(_random_flip("tb"))


@translates("_image_crop", onnx_ops=["Slice"])
def _crop(ctx, node, ins, outs):
    begin, end = _image._crop_box(ctx.shape(node.inputs[0]), node.attrs)
    axes = list(range(len(begin)))
    if ctx.dynamic and len(begin) == 3:
        begin, end, axes = begin[1:], end[1:], axes[1:]     # the whole (symbolic) batch
    ctx.node("Slice", [ins[0], ctx.int64s(begin), ctx.int64s(end), ctx.int64s(axes)], outs)


# ---- resize ------------------------------------------------------------------------------------
def _interpolation_matrix(n_out, n_in, interp):
    """(n_out, n_in): row d holds the weights of the source pixels of output pixel d (the
    taps of mxlite's resize, OpenCV's rule)."""
    index, weight = _image._taps(n_out, n_in, interp)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (np.repeat(np.arange(n_out), index.shape[1]), index.ravel()), weight.ravel())
    return m


def _resize_hwc(ctx, node, x, ry, rx, outs):
    """An (N,) H, W, C image mapped by the interpolation matrices ``ry`` (oh, H) and ``rx``
    (ow, W): ``ry x rx^T`` per channel, two MatMuls on the channels-first view; integer
    results rounded (as OpenCV's), then stored."""
    shape = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    work = _work(dtype)
    batched = len(shape) == 4
    first = ctx.node("Transpose", [_to_work(ctx, x, dtype)],
                     perm=[0, 3, 1, 2] if batched else [2, 0, 1])
    rows = ctx.const(ry.astype(work), base="rows")
    cols = ctx.const(rx.T.astype(work), base="cols")
    value = ctx.node("MatMul", [ctx.node("MatMul", [rows, first]), cols])
    last = ctx.node("Transpose", [value], perm=[0, 2, 3, 1] if batched else [1, 2, 0])
    if dtype.kind in "iu":
        last = ctx.node("Round", [last])
    _store(ctx, last, work, dtype, outs)


def _resize_to(ctx, node, ins, outs, oh, ow, interp):
    h, w = ctx.shape(node.inputs[0])[-3:-1]
    _resize_hwc(ctx, node, ins[0], _interpolation_matrix(oh, h, interp),
                _interpolation_matrix(ow, w, interp), outs)


_RESIZE_NOTES = ("OpenCV's interpolation (every interp code) as products with the "
                 "interpolation matrices, exactly mxlite's arithmetic (not ONNX Resize, whose "
                 "cubic and area rules differ from OpenCV's)")


@translates("_image_resize", onnx_ops=["Transpose", "MatMul", "Round", "Cast", "Clip"],
            notes=_RESIZE_NOTES)
def _resize(ctx, node, ins, outs):
    oh, ow = ctx.shape((node, 0))[-3:-1]
    _resize_to(ctx, node, ins, outs, oh, ow, node.attrs.interp)


@translates("_cvimresize", onnx_ops=["Transpose", "MatMul", "Round", "Cast", "Clip"],
            notes=_RESIZE_NOTES)
def _cvimresize(ctx, node, ins, outs):
    _resize_to(ctx, node, ins, outs, node.attrs.h, node.attrs.w, node.attrs.interp)


@translates("_backward_image_resize", onnx_ops=["Transpose", "MatMul", "Round", "Cast",
                                                "Clip"],
            notes="resize's adjoint: the transposed interpolation matrices")
def _resize_adjoint(ctx, node, ins, outs):
    a = node.attrs
    gh, gw = ctx.shape(node.inputs[0])[-3:-1]
    _resize_hwc(ctx, node, ins[0], _interpolation_matrix(gh, a.height, a.interp).T,
                _interpolation_matrix(gw, a.width, a.interp).T, outs)


# ---- colour ------------------------------------------------------------------------------------
def _add_lighting(ctx, node, ins, outs, shift):
    """``data`` + ``shift`` (the (3,) RGB noise value) in the work dtype, stored back; one
    channel is copied."""
    dtype = ctx.dtype(node.inputs[0])
    if ctx.shape(node.inputs[0])[-1] == 1:
        ctx.node("Identity", ins[:1], outs)
        return
    work = _work(dtype)
    value = ctx.node("Add", [_to_work(ctx, ins[0], dtype), shift])
    _store(ctx, value, work, dtype, outs)


@translates("_image_adjust_lighting", onnx_ops=["Add", "Cast", "Clip"])
def _adjust_lighting(ctx, node, ins, outs):
    work = _work(ctx.dtype(node.inputs[0]))
    noise = (_image._EIG @ np.asarray(node.attrs.alpha, np.float64)).astype(work)
    _add_lighting(ctx, node, ins, outs, ctx.const(noise, base="lighting"))


@translates("_image_random_lighting", onnx_ops=["RandomNormal", "Mul", "MatMul", "Add", "Cast",
                                                "Clip"],
            notes="the three alphas from ONNX's RandomNormal; " + RANDOM)
def _random_lighting(ctx, node, ins, outs):
    work = _work(ctx.dtype(node.inputs[0]))
    # a standard draw times a float64 alpha_std (ONNX's ``scale`` attribute is float32)
    alphas = ctx.node("Mul", [
        ctx.node("RandomNormal", [], shape=[3],
                 dtype=ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(np.float64))),
        ctx.const(np.asarray(node.attrs.alpha_std, np.float64), base="alpha_std")])
    noise = ctx.node("MatMul", [ctx.const(_image._EIG, np.float64, base="eig"), alphas])
    _add_lighting(ctx, node, ins, outs, ctx.cast(noise, work))


@translates("_image_random_brightness", onnx_ops=["RandomUniform", "Mul", "Cast", "Clip"],
            notes="the factor from ONNX's RandomUniform; " + RANDOM)
def _random_brightness(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    work = _work(dtype)
    factor = _uniform_factor(ctx, node, work)
    _store(ctx, ctx.node("Mul", [_to_work(ctx, ins[0], dtype), factor]), work, dtype, outs)


def _uniform_factor(ctx, node, work):
    """One factor uniform on [min_factor, max_factor], shape (1,): a float64 draw on [0, 1)
    scaled with float64 bounds (ONNX's ``low``/``high`` attributes are float32, which would
    round the bounds), then cast to ``work``."""
    f64 = np.dtype(np.float64)
    lo, hi = float(node.attrs.min_factor), float(node.attrs.max_factor)
    u = ctx.node("RandomUniform", [], shape=[1], dtype=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        f64))
    value = ctx.node("Add", [ctx.const(np.asarray(lo, f64)),
                             ctx.node("Mul", [u, ctx.const(np.asarray(hi - lo, f64))])])
    return value if np.dtype(work) == f64 else ctx.cast(value, work)


def _luma(ctx, img, channels, work):
    """The (..., 1) luma of each pixel: 0.299 R + 0.587 G + 0.114 B, or the one channel."""
    if channels == 1:
        return img
    return ctx.node("MatMul", [img, ctx.const(np.asarray(_image._GRAY, work).reshape(3, 1),
                                              base="luma")])


def _blend(ctx, img, other, factor, work):
    """``factor * img + (1 - factor) * other``."""
    rest = ctx.node("Sub", [ctx.const(np.asarray([1], work)), factor])
    return ctx.node("Add", [ctx.node("Mul", [img, factor]), ctx.node("Mul", [other, rest])])


@translates("_image_random_contrast", onnx_ops=["RandomUniform", "MatMul", "ReduceMean",
                                                "Mul", "Sub", "Add", "Cast", "Clip"],
            opset=18, notes="the factor from ONNX's RandomUniform; " + RANDOM)
def _random_contrast(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    work = _work(dtype)
    img = _to_work(ctx, ins[0], dtype)
    if math.prod(shape) == 0:
        _store(ctx, img, work, dtype, outs)
        return
    gray = _luma(ctx, img, shape[-1], work)
    axes = [-3, -2, -1]                 # each image's mean (one image: the whole)
    mean = ctx.node("ReduceMean", [gray, ctx.int64s(axes)], keepdims=1)
    _store(ctx, _blend(ctx, img, mean, _uniform_factor(ctx, node, work), work), work, dtype,
           outs)


def _colour_image(ctx, node, ins, outs):
    """(image in the work dtype, work dtype, dtype) of a colour transform, or (None, ...)
    for a one-channel image, which the transform leaves as it is (copied to ``outs``)."""
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    work = _work(dtype)
    img = _to_work(ctx, ins[0], dtype)
    if shape[-1] == 1:
        _store(ctx, img, work, dtype, outs)
        return None, work, dtype
    return img, work, dtype


@translates("_image_random_saturation", onnx_ops=["RandomUniform", "MatMul", "Mul", "Sub",
                                                  "Add", "Cast", "Clip"],
            notes="the factor from ONNX's RandomUniform; one channel is copied; " + RANDOM)
def _random_saturation(ctx, node, ins, outs):
    img, work, dtype = _colour_image(ctx, node, ins, outs)
    if img is None:
        return
    gray = _luma(ctx, img, 3, work)
    _store(ctx, _blend(ctx, img, gray, _uniform_factor(ctx, node, work), work), work, dtype,
           outs)


# ---- _cvcopyMakeBorder -------------------------------------------------------------------------
def _border_constant(attrs, c, dtype):
    """The (C,) fill of a constant border in ``dtype``: integers saturated (mxlite's rule)."""
    fill = np.array(_image._border_fill(attrs, c), np.float64)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.max if f >= info.max else info.min if f <= info.min else int(f)
                         for f in fill.tolist()], dtype)
    return fill.astype(dtype)


@translates("_cvcopyMakeBorder", onnx_ops=["Gather", "Pad", "Where"],
            notes="mirror and wrap borders as Gathers of OpenCV's source positions (any "
                  "margin); a constant border as Pad and the per-channel fill")
def _copy_make_border(ctx, node, ins, outs):
    a = node.attrs
    h, w, c = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    mode = _image._BORDERS[a.type]
    if mode != "constant":
        rows = _image._source_index(h, a.top, a.bot, mode)
        cols = _image._source_index(w, a.left, a.right, mode)
        picked = ctx.node("Gather", [ins[0], ctx.int64s(rows, base="rows")], axis=0)
        ctx.node("Gather", [picked, ctx.int64s(cols, base="cols")], outs, axis=1)
        return
    pads = ctx.int64s([a.top, a.left, 0, a.bot, a.right, 0], base="pads")
    padded = ctx.node("Pad", [ins[0], pads])
    border = np.ones((h + a.top + a.bot, w + a.left + a.right, 1), bool)
    border[a.top:a.top + h, a.left:a.left + w] = False
    ctx.node("Where", [ctx.const(border, base="border"),
                       ctx.const(_border_constant(a, c, dtype), base="fill"), padded], outs)


not_expressible(
    "it reads an image file from the file system (its filename is an attribute): an ONNX "
    "graph has no file access, only its inputs", "_cvimread")


def _hue_rotation(ctx, img, shift, work):
    """mxlite's ``_hue`` on (..., 3) ``img``: each channel from HLS's trapezoid of the hue
    rotated by ``shift`` sixths (minus the trapezoid's centre, 2), lightness and saturation
    kept; a grey pixel (chroma below the threshold) keeps its value."""
    def c(v):
        return ctx.const(np.asarray(v, work))

    def f(mask):
        return ctx.cast(mask, work)
    r, g, b = ctx.node("Split", [img, ctx.int64s([1, 1, 1], "split")],
                       [ctx.fresh("ch") for _ in range(3)], axis=-1)
    vmax, vmin = ctx.node("Max", [r, g, b]), ctx.node("Min", [r, g, b])
    diff = ctx.node("Sub", [vmax, vmin])
    chroma = ctx.node("Greater", [diff, c(_image._HUE_EPS)])
    r_top = ctx.node("Equal", [vmax, r])
    g_top = ctx.node("And", [ctx.node("Equal", [vmax, g]), ctx.node("Not", [r_top])])
    b_top = ctx.node("Not", [ctx.node("Or", [r_top, g_top])])
    terms = [ctx.node("Mul", [ctx.node("Sub", [g, b]), f(r_top)]),
             ctx.node("Mul", [ctx.node("Add", [ctx.node("Sub", [b, r]),
                                               ctx.node("Mul", [diff, c(2.0)])]), f(g_top)]),
             ctx.node("Mul", [ctx.node("Add", [ctx.node("Sub", [r, g]),
                                               ctx.node("Mul", [diff, c(4.0)])]), f(b_top)])]
    grey = f(ctx.node("Not", [chroma]))
    hue = ctx.node("Div", [ctx.node("Sum", terms), ctx.node("Add", [diff, grey])])
    hue = ctx.node("Add", [hue, shift])
    low = ctx.node("Add", [vmin, ctx.node("Mul", [ctx.node("Mul", [diff, c(0.5)]), grey])])
    span = ctx.node("Mul", [diff, f(chroma)])
    channels = []
    for offset in (2.0, 0.0, -2.0):
        d = ctx.node("Add", [hue, c(offset)])
        turns = ctx.node("Round", [ctx.node("Mul", [d, c(1.0 / 6.0)])])
        d = ctx.node("Sub", [d, ctx.node("Mul", [turns, c(6.0)])])       # wrapped to [-3, 3]
        t = ctx.node("Clip", [ctx.node("Sub", [c(2.0), ctx.node("Abs", [d])]), c(0.0), c(1.0)])
        channels.append(ctx.node("Add", [ctx.node("Mul", [t, span]), low]))
    return ctx.node("Concat", channels, axis=-1)


@translates("_image_random_hue", onnx_ops=["RandomUniform", "Floor", "Split", "Max", "Min",
                                           "Equal", "Greater", "And", "Or", "Not", "Sum",
                                           "Round", "Clip", "Abs", "Concat", "Cast"],
            notes="the hue rotation as mxlite's closed form (HLS's trapezoids); the factor "
                  "from ONNX's RandomUniform; one channel is copied; " + RANDOM)
def _random_hue(ctx, node, ins, outs):
    img, work, dtype = _colour_image(ctx, node, ins, outs)
    if img is None:
        return
    # the shift in float64 (mxlite's Python float), rounded once into the work dtype
    f64 = np.dtype(np.float64)
    alpha = _uniform_factor(ctx, node, f64)
    turn = ctx.node("Sub", [alpha, ctx.node("Floor", [alpha])])         # alpha % 1
    shift = ctx.node("Sub", [ctx.node("Mul", [turn, ctx.const(np.asarray(6.0, f64))]),
                             ctx.const(np.asarray(2.0, f64))])
    shift = shift if work == f64 else ctx.cast(shift, work)
    _store(ctx, _hue_rotation(ctx, img, shift, work), work, dtype, outs)
