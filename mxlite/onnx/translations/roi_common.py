"""Arithmetic shared by the region-of-interest translations: float64 element-wise helpers,
mxlite's clamped bilinear corners, the rois' columns and batch index, and an ONNX Loop
built from a body function."""
import numpy as np


class Arith:
    """Element-wise ONNX arithmetic on value names in one dtype (float64 by default: mxlite
    computes every roi's geometry in float64); Python numbers become constants."""

    def __init__(self, ctx, dtype=np.float64):
        self.ctx, self.dtype = ctx, np.dtype(dtype)

    def v(self, x):
        """``x`` as a value name (a number or array becomes a constant of this dtype)."""
        if isinstance(x, str):
            return x
        return self.ctx.const(np.asarray(x, self.dtype))

    def op(self, op_type, *xs, **attrs):
        return self.ctx.node(op_type, [self.v(x) for x in xs], **attrs)

    def add(self, a, b):
        return self.op("Add", a, b)

    def sub(self, a, b):
        return self.op("Sub", a, b)

    def mul(self, a, b):
        return self.op("Mul", a, b)

    def div(self, a, b):
        return self.op("Div", a, b)

    def max(self, a, b):
        return self.op("Max", a, b)

    def min(self, a, b):
        return self.op("Min", a, b)

    def floor(self, a):
        return self.op("Floor", a)

    def ceil(self, a):
        return self.op("Ceil", a)

    def mask(self, *conditions):
        """The conjunction of boolean values, as 0 / 1 in this dtype."""
        out = conditions[0]
        for c in conditions[1:]:
            out = self.ctx.node("And", [out, c])
        return self.ctx.cast(out, self.dtype)

    def ge(self, a, b):
        return self.op("GreaterOrEqual", a, b)

    def le(self, a, b):
        return self.op("LessOrEqual", a, b)

    def lt(self, a, b):
        return self.op("Less", a, b)

    def gt(self, a, b):
        return self.op("Greater", a, b)

    def c_round(self, a):
        """C's round (halves away from zero): sign(a) * floor(|a| + 0.5)."""
        return self.mul(self.op("Sign", a), self.floor(self.add(self.op("Abs", a), 0.5)))

    def index(self, a):
        """A float value holding whole numbers as int64."""
        return self.ctx.cast(a, np.int64)


def bilinear_corners(m, v, length):
    """(low, high, frac) of bilinear interpolation at ``v`` along an axis of ``length``
    pixels, clamped as mxlite: below 0 reads pixel 0, past length - 1 the last pixel."""
    v = m.max(v, 0.0)
    low = m.min(m.floor(v), float(length - 1))
    frac = m.mul(m.sub(v, low), m.mask(m.lt(low, float(length - 1))))
    high = m.min(m.add(low, 1.0), float(length - 1))
    return low, high, frac


def work_dtype(dtype):
    """The dtype mxlite pools in: float16 through float32, the others as they are."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def to_dtype(ctx, value, have, want, outs=None):
    """``value`` (of dtype ``have``) as ``want``, into ``outs`` when given."""
    if np.dtype(have) == np.dtype(want):
        return value if outs is None else ctx.node("Identity", [value], outs)
    return ctx.node("Cast", [value], outs,
                    to=ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(want)))


def roi_columns(ctx, rois, width=5):
    """float64 (R, 1) columns of (R, ``width``) rois: [batch index (truncated toward zero,
    as int64), the other columns as float64]."""
    wide = ctx.cast(rois, np.float64)
    cols = ctx.node("Split", [wide, ctx.int64s([1] * width)],
                    [ctx.fresh("roi_col") for _ in range(width)], axis=1)
    return [ctx.cast(cols[0], np.int64)] + list(cols[1:])


def spatial_scale(attrs, name="spatial_scale"):
    """The scale as mxlite holds it (a float32 parameter: 0.8 scales by 0.800000011...)."""
    return float(np.float32(getattr(attrs, name)))


def loop(ctx, trips, state, body, state_types):
    """An ONNX Loop of ``trips`` (an int64 scalar value) iterations carrying ``state`` (value
    names). ``body(scope, it, values)`` writes the body's nodes into ``scope`` (an export
    context of the body graph; ``it`` the int64 iteration number) and returns the next
    state; ``state_types`` is ``[(dtype, shape)]`` of each carried value (None for a
    dimension not known statically). The body reads outer values by name. Returns the
    final state's names."""
    from ..export import Subgraph            # export imports the translations
    sub = Subgraph(ctx, "loop_body")
    it = sub.input("iter", np.int64, ())
    cond = sub.input("cond", np.bool_, ())
    values = [sub.input("carried", dtype, shape) for dtype, shape in state_types]
    new = body(sub.scope, it, values)
    sub.output(cond, np.bool_, ())
    for value, (dtype, shape) in zip(new, state_types):
        sub.output(value, dtype, shape)
    results = [ctx.fresh("loop_out") for _ in state]
    ctx.node("Loop", [trips, "", *state], results, body=sub.proto())
    return results
