"""``_image_random_color_jitter``: mxlite's brightness, contrast, saturation and hue
adjustments (those whose strength is positive) in a random order, each with one factor drawn
per run, written with the random colour translations' pieces (``image.py``).

The order is the TopK order of uniform keys (every order equally likely, as mxlite's
permutation); its m steps are unrolled: at each position every active step is computed and
a Where keeps the one the order names there (m * m steps, m <= 4)."""
import math

import numpy as np

from ..table import translates
from . import image as _img


def _factors(ctx, bases, strengths):
    """(m,) float64 factors uniform on [base - s, base + s], one per step."""
    f64 = np.dtype(np.float64)
    u = ctx.node("RandomUniform", [], shape=[len(bases)],
                 dtype=ctx.helper.np_dtype_to_tensor_dtype(f64))
    low = np.asarray(bases, f64) - np.asarray(strengths, f64)
    return ctx.node("Add", [ctx.const(low), ctx.node("Mul", [
        u, ctx.const(2 * np.asarray(strengths, f64))])])


def _pick(ctx, values, i):
    """Element ``i`` of the 1-D ``values`` as a (1,) tensor."""
    return ctx.node("Gather", [values, ctx.int64s([i])], axis=0)


def _steps(ctx, shape, work):
    """The adjustments as fn(img, factor in float64 (1,)) -> img in ``work``."""
    f64 = np.dtype(np.float64)
    channels = shape[-1]

    def as_work(factor):
        return factor if work == f64 else ctx.cast(factor, work)

    def brightness(img, factor):
        return ctx.node("Mul", [img, as_work(factor)])

    def contrast(img, factor):
        if math.prod(shape) == 0:           # no pixels: no mean to blend with
            return img
        gray = _img._luma(ctx, img, channels, work)
        mean = ctx.node("ReduceMean", [gray, ctx.int64s([-3, -2, -1])], keepdims=1)
        return _img._blend(ctx, img, mean, as_work(factor), work)

    def saturation(img, factor):
        if channels == 1:
            return img
        return _img._blend(ctx, img, _img._luma(ctx, img, 3, work), as_work(factor), work)

    def hue(img, factor):
        if channels == 1:
            return img
        # the shift 6 (factor mod 1) - 2 in float64, rounded once into the work dtype
        turn = ctx.node("Sub", [factor, ctx.node("Floor", [factor])])
        shift = ctx.node("Sub", [ctx.node("Mul", [turn, ctx.const(np.asarray(6.0, f64))]),
                                 ctx.const(np.asarray(2.0, f64))])
        return _img._hue_rotation(ctx, img, shift if work == f64 else ctx.cast(shift, work),
                                  work)
    return [brightness, contrast, saturation, hue]


@translates("_image_random_color_jitter",
            onnx_ops=["RandomUniform", "TopK", "Gather", "Equal", "Where", "MatMul",
                      "ReduceMean", "Mul", "Sub", "Add", "Floor", "Split", "Max", "Min",
                      "Greater", "And", "Or", "Not", "Sum", "Div", "Round", "Clip", "Abs",
                      "Concat", "Cast"],
            opset=18,
            notes="the steps with a positive strength in the TopK order of uniform keys, "
                  "their factors from one RandomUniform; " + _img.RANDOM)
def _color_jitter(ctx, node, ins, outs):
    a = node.attrs
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    work = _img._work(dtype)
    img = _img._to_work(ctx, ins[0], dtype)
    fns = _steps(ctx, shape, work)
    # mxlite's steps in its listed order, with their strength and base factor
    listed = [(fns[0], a.brightness, 1.0), (fns[1], a.contrast, 1.0),
              (fns[2], a.saturation, 1.0), (fns[3], a.hue, 0.0)]
    active = [(fn, s, base) for fn, s, base in listed if s > 0]
    m = len(active)
    if m:
        factors = _factors(ctx, [base for _, _, base in active], [s for _, s, _ in active])
        f64 = ctx.helper.np_dtype_to_tensor_dtype(np.dtype(np.float64))
        keys = ctx.node("RandomUniform", [], shape=[m], dtype=f64)
        _, order = ctx.node("TopK", [keys, ctx.int64s([m])], [ctx.fresh("keys"),
                                                              ctx.fresh("order")])
        for position in range(m):
            step = _pick(ctx, order, position)
            results = [fn(img, _pick(ctx, factors, j)) for j, (fn, _, _) in enumerate(active)]
            img = results[-1]
            for j in range(m - 2, -1, -1):
                chosen = ctx.node("Equal", [step, ctx.int64s([j])])
                img = ctx.node("Where", [chosen, results[j], img])
    _img._store(ctx, img, work, dtype, outs)
