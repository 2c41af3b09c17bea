"""Element-wise math not in elemwise.py: more unary functions (logarithms, roots, MXNet's
rounding rules, gamma functions by series), mod with MXNet's sign, hypot, logical ops.

Compositions compute in the output's float dtype, or in float64 where an ONNX operator they
use does not take it (integer inputs of a float op are cast to its float32 output first, as
mxlite computes them)."""
import math

import numpy as np

from ..table import translates


def _float_in(ctx, node, x, entry):
    """``x`` (mxlite value ``entry``) in the node's output dtype."""
    out = ctx.dtype((node, 0))
    return x if ctx.dtype(entry) == out else ctx.cast(x, out)


def _c(ctx, value, like_dtype, base="c"):
    return ctx.const(np.asarray(value, like_dtype), base=base)


def _composite(ops):
    """Decorator for a unary composition ``body(ctx, x, dt) -> value``: the node's input in
    its output dtype ``dt`` (float64 when one of ``ops`` does not take it), the result cast
    back and written to the output."""
    def wrap(body):
        def translate(ctx, node, ins, outs):
            out = ctx.dtype((node, 0))
            x = _float_in(ctx, node, ins[0], node.inputs[0])
            dt = out if all(ctx.takes(op, out) for op in ops) else np.dtype(np.float64)
            if dt != out:
                x = ctx.cast(x, dt)
            y = body(ctx, node, x, dt)
            if dt != out:
                y = ctx.cast(y, out)
            ctx.node("Identity", [y], outs)
        return translate
    return wrap


# ---- logarithms, roots, angle units --------------------------------------------------------
def _scaled_log(base):
    @_composite(["Log", "Mul"])
    def body(ctx, node, x, dt):
        return ctx.node("Mul", [ctx.node("Log", [x]), _c(ctx, 1 / math.log(base), dt)])
    return body


translates("log2", onnx_ops=["Log", "Mul"], notes="log(x) / log(2)")(_scaled_log(2))
translates("log10", onnx_ops=["Log", "Mul"], notes="log(x) / log(10)")(_scaled_log(10))


def _cbrt_value(ctx, x, dt):
    """sign(x) * |x| ** (1/3): Pow takes no negative base with a fractional exponent."""
    root = ctx.node("Pow", [ctx.node("Abs", [x]), _c(ctx, 1 / 3, dt, "third")])
    return ctx.node("Mul", [ctx.node("Sign", [x]), root])


@translates("cbrt", onnx_ops=["Abs", "Pow", "Sign", "Mul"])
@_composite(["Abs", "Pow", "Sign", "Mul"])
def _cbrt(ctx, node, x, dt):
    return _cbrt_value(ctx, x, dt)


@translates("rcbrt", onnx_ops=["Abs", "Pow", "Sign", "Mul", "Reciprocal"])
@_composite(["Abs", "Pow", "Sign", "Mul", "Reciprocal"])
def _rcbrt(ctx, node, x, dt):
    return ctx.node("Reciprocal", [_cbrt_value(ctx, x, dt)])


def _times(factor):
    @_composite(["Mul"])
    def body(ctx, node, x, dt):
        return ctx.node("Mul", [x, _c(ctx, factor, dt)])
    return body


translates("degrees", onnx_ops=["Mul"])(_times(180 / math.pi))
translates("radians", onnx_ops=["Mul"])(_times(math.pi / 180))


# ---- rounding: integers pass through; MXNet's halves, not ONNX Round's half-to-even -----------
def _rounding(body, ops):
    composite = _composite(ops)(body)

    def translate(ctx, node, ins, outs):
        if ctx.dtype((node, 0)).kind in "iu":       # an integer is its own rounding
            ctx.node("Identity", ins, outs)
        else:
            composite(ctx, node, ins, outs)
    return translate


def _round_body(ctx, node, x, dt):
    """Halves away from zero: sign(x) * (floor|x| + (frac|x| >= 0.5)); frac = |x| -
    floor|x| is exact, where floor(|x| + 0.5) would round 0.49999997 up to 1."""
    ax = ctx.node("Abs", [x])
    whole = ctx.node("Floor", [ax])
    up = ctx.node("GreaterOrEqual", [ctx.node("Sub", [ax, whole]), _c(ctx, 0.5, dt, "half")])
    mag = ctx.node("Add", [whole, ctx.cast(up, dt)])
    return ctx.node("Mul", [ctx.node("Sign", [x]), mag])


def _rint_body(ctx, node, x, dt):
    """MXNet's rint: floor(x) where x - floor(x) <= ceil(x) - x, else ceil(x) (a tie goes
    down: rint(2.5) = 2, rint(-2.5) = -3)."""
    lo, hi = ctx.node("Floor", [x]), ctx.node("Ceil", [x])
    down = ctx.node("LessOrEqual", [ctx.node("Sub", [x, lo]), ctx.node("Sub", [hi, x])])
    return ctx.node("Where", [down, lo, hi])


def _trunc_body(ctx, node, x, dt):
    """Toward zero: sign(x) * floor(|x|)."""
    return ctx.node("Mul", [ctx.node("Sign", [x]),
                            ctx.node("Floor", [ctx.node("Abs", [x])])])


_ROUND_OPS = ["Abs", "Floor", "Sub", "GreaterOrEqual", "Add", "Sign", "Mul", "Cast"]
translates("round", onnx_ops=_ROUND_OPS, notes="halves away from zero (composed: ONNX "
           "Round takes halves to even)")(_rounding(_round_body, _ROUND_OPS))
_RINT_OPS = ["Floor", "Ceil", "Sub", "LessOrEqual", "Where"]
translates("rint", onnx_ops=_RINT_OPS, notes="MXNet's rule: a half goes down")(
    _rounding(_rint_body, _RINT_OPS))
_TRUNC_OPS = ["Abs", "Floor", "Sign", "Mul"]
translates("fix", "trunc", onnx_ops=_TRUNC_OPS)(_rounding(_trunc_body, _TRUNC_OPS))


# ---- activations and losses ------------------------------------------------------------------
@translates("hard_sigmoid", onnx_ops=["HardSigmoid"])
def _hard_sigmoid(ctx, node, ins, outs):
    a = node.attrs
    ctx.in_dtype_it_takes("HardSigmoid", node, ins, outs, alpha=float(a.alpha),
                          beta=float(a.beta))


@translates("smooth_l1", onnx_ops=["Abs", "Less", "Mul", "Sub", "Where"])
@_composite(["Abs", "Less", "Mul", "Sub", "Where"])
def _smooth_l1(ctx, node, x, dt):
    s2 = float(node.attrs.scalar) ** 2
    ax = ctx.node("Abs", [x])
    quad = ctx.node("Mul", [ctx.node("Mul", [x, x]), _c(ctx, 0.5 * s2, dt)])
    lin = ctx.node("Sub", [ax, _c(ctx, 0.5 / s2, dt)])
    return ctx.node("Where", [ctx.node("Less", [ax, _c(ctx, 1 / s2, dt)]), quad, lin])


@translates("softmin", onnx_ops=["Neg", "Div", "Cast", "Softmax"],
            notes="temperature divides first; use_length is not exported")
def _softmin(ctx, node, ins, outs):
    a = node.attrs
    if a.use_length:
        raise ctx.unsupported(node, "use_length=True")
    x = ctx.node("Neg", [ins[0]])
    if a.temperature is not None and a.temperature != 1.0:
        x = ctx.node("Div", [x, _c(ctx, a.temperature, ctx.dtype(node.inputs[0]),
                                   "temperature")])
    out = ctx.dtype((node, 0))
    if out != ctx.dtype(node.inputs[0]):
        x = ctx.cast(x, out)
    ctx.node("Softmax", [x], outs, axis=int(a.axis))


# ---- gamma functions: the Lanczos series (g = 7, 9 terms, ~1e-15 relative) in float64 ------
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_right(ctx, z):
    """log Gamma(z) for z >= 0.5 (float64): Lanczos, log(sqrt(2 pi)) + (z - 0.5) log(t) - t
    + log(A(z)) with t = z + g - 0.5 and A the series."""
    f64 = np.float64
    zm1 = ctx.node("Sub", [z, _c(ctx, 1.0, f64)])
    acc = _c(ctx, _LANCZOS[0], f64)
    for i, coef in enumerate(_LANCZOS[1:], 1):
        acc = ctx.node("Add", [acc, ctx.node("Div", [
            _c(ctx, coef, f64), ctx.node("Add", [zm1, _c(ctx, float(i), f64)])])])
    t = ctx.node("Add", [zm1, _c(ctx, _LANCZOS_G + 0.5, f64)])
    y = ctx.node("Mul", [ctx.node("Sub", [zm1, _c(ctx, -0.5, f64)]), ctx.node("Log", [t])])
    y = ctx.node("Sub", [y, t])
    y = ctx.node("Add", [y, ctx.node("Log", [acc])])
    return ctx.node("Add", [y, _c(ctx, 0.5 * math.log(2 * math.pi), f64)])


def _gamma_parts(ctx, x):
    """(log |Gamma(x)|, sign of Gamma(x)) in float64, any x: for x < 0.5 the reflection
    Gamma(x) = pi / (sin(pi x) Gamma(1 - x)) (its sign is sin(pi x)'s); a pole (a
    non-positive integer) gives log|Gamma| = inf."""
    f64 = np.float64
    left = ctx.node("Less", [x, _c(ctx, 0.5, f64)])
    z = ctx.node("Where", [left, ctx.node("Sub", [_c(ctx, 1.0, f64), x]), x])
    lg = _lgamma_right(ctx, z)
    # sin(pi x) from x's distance to the nearest integer, exact at the integers
    frac = ctx.node("Sub", [x, ctx.node("Floor", [x])])
    s = ctx.node("Sin", [ctx.node("Mul", [frac, _c(ctx, math.pi, f64)])])
    parity = ctx.node("Mod", [ctx.node("Floor", [x]), _c(ctx, 2.0, f64)], fmod=1)
    odd = ctx.node("Not", [ctx.node("Equal", [parity, _c(ctx, 0.0, f64)])])
    sin = ctx.node("Where", [odd, ctx.node("Neg", [s]), s])
    refl = ctx.node("Sub", [_c(ctx, math.log(math.pi), f64),
                            ctx.node("Add", [ctx.node("Log", [ctx.node("Abs", [sin])]), lg])])
    log_abs = ctx.node("Where", [left, refl, lg])
    sign = ctx.node("Where", [left, ctx.node("Sign", [sin]), _c(ctx, 1.0, f64)])
    return log_abs, sign


_GAMMA_OPS = ["Cast", "Less", "Where", "Sub", "Add", "Div", "Mul", "Log", "Floor", "Sin",
              "Mod", "Equal", "Not", "Neg", "Abs", "Sign", "Exp", "Reciprocal"]


def _in_float64(ctx, node, ins):
    x = ins[0]
    return x if ctx.dtype(node.inputs[0]) == np.float64 else ctx.cast(x, np.float64)


@translates("gammaln", onnx_ops=_GAMMA_OPS,
            notes="the Lanczos series in float64 (ONNX has no lgamma)")
def _gammaln(ctx, node, ins, outs):
    log_abs, _ = _gamma_parts(ctx, _in_float64(ctx, node, ins))
    ctx.node("Cast", [log_abs], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))


@translates("gamma", onnx_ops=_GAMMA_OPS,
            notes="the Lanczos series in float64 (ONNX has no gamma function)")
def _gamma(ctx, node, ins, outs):
    x = _in_float64(ctx, node, ins)
    log_abs, sign = _gamma_parts(ctx, x)
    y = ctx.node("Mul", [sign, ctx.node("Exp", [log_abs])])
    # the pole at zero is an infinity of the zero's sign (1 / x); the other poles stay NaN
    is_zero = ctx.node("Equal", [x, _c(ctx, 0.0, np.float64)])
    y = ctx.node("Where", [is_zero, ctx.node("Reciprocal", [x]), y])
    ctx.node("Cast", [y], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))


# ---- binary: mod with the divisor's sign, hypot, logical ops ---------------------------------
def _mod(ctx, node, a, b, dt, outs):
    """a mod b with the sign of b (NumPy's remainder); an integer x mod 0 is 0 (mxlite), a
    float one NaN. ONNX Mod: fmod=0 (the divisor's sign) for integers, where a zero divisor
    is replaced first so the division never traps; floats: C's fmod, moved into b's sign."""
    if dt.kind in "iu":
        zero = _c(ctx, 0, dt, "zero")
        is_zero = ctx.node("Equal", [b, zero])
        safe = ctx.node("Where", [is_zero, _c(ctx, 1, dt, "one"), b])
        ctx.node("Where", [is_zero, zero, ctx.node("Mod", [a, safe], fmod=0)], outs)
        return
    r = ctx.node("Mod", [a, b], fmod=1)
    zero = _c(ctx, 0, dt, "zero")
    off = ctx.node("And", [ctx.node("Not", [ctx.node("Equal", [r, zero])]),
                           ctx.node("Xor", [ctx.node("Less", [r, zero]),
                                            ctx.node("Less", [b, zero])])])
    ctx.node("Where", [off, ctx.node("Add", [r, b]), r], outs)


def _hypot(ctx, node, a, b, dt, outs):
    """max(|a|, |b|) * sqrt(1 + (min / max)**2): no overflow of a*a where the result is
    finite; max = 0 gives 0."""
    a, b = ctx.node("Abs", [a]), ctx.node("Abs", [b])
    hi, lo = ctx.node("Max", [a, b]), ctx.node("Min", [a, b])
    zero = ctx.node("Equal", [hi, _c(ctx, 0, dt, "zero")])
    r = ctx.node("Div", [lo, ctx.node("Where", [zero, _c(ctx, 1, dt, "one"), hi])])
    root = ctx.node("Sqrt", [ctx.node("Add", [_c(ctx, 1, dt, "one"), ctx.node("Mul", [r, r])])])
    ctx.node("Mul", [hi, root], outs)


def _logical(onnx_op):
    def write(ctx, node, a, b, dt, outs):
        zero = _c(ctx, 0, dt, "zero")
        truth = [ctx.node("Not", [ctx.node("Equal", [v, zero])]) for v in (a, b)]
        ctx.node("Cast", [ctx.node(onnx_op, truth)], outs,
                 to=ctx.onnx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))
    return write


def _binary(write, float_ops=(), scalar=float):
    """The translation of a binary op (``ins`` two tensors) and of its scalar forms (the
    scalar a constant on the right, or on the left for the reversed ``_r*_scalar``): both
    operands in the output dtype (float64 where one of ``float_ops`` does not take it);
    ``scalar(value)`` is the scalar as the op reads it."""
    def translate(ctx, node, ins, outs):
        out = ctx.dtype((node, 0))
        if len(node.inputs) == 2:
            pair = [x if ctx.dtype(e) == out else ctx.cast(x, out)
                    for x, e in zip(ins, node.inputs)]
        else:
            x = _float_in(ctx, node, ins[0], node.inputs[0])
            s = _c(ctx, scalar(node.attrs.scalar), out, "scalar")
            pair = [s, x] if node.op.name.startswith("_r") else [x, s]
        dt = out
        if not all(ctx.takes(op, out) for op in float_ops):
            dt = np.dtype(np.float64)
            pair = [ctx.cast(v, dt) for v in pair]
        if dt == out:
            write(ctx, node, *pair, dt, outs)
        else:
            y = ctx.fresh("wide")
            write(ctx, node, *pair, dt, [y])
            ctx.node("Cast", [y], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(out))
    return translate


translates("broadcast_mod", "_mod", "_mod_scalar", "_rmod_scalar",
           onnx_ops=["Mod", "Equal", "Where", "Not", "Less", "Xor", "And", "Add"],
           notes="the divisor's sign (NumPy's remainder); an integer x mod 0 gives 0")(
    _binary(_mod, ["Mod", "Less"]))
translates("broadcast_hypot", "_hypot", "_hypot_scalar",
           onnx_ops=["Abs", "Max", "Min", "Equal", "Where", "Div", "Mul", "Add", "Sqrt"],
           notes="scaled, so it overflows only where the result does")(
    _binary(_hypot, ["Abs", "Max", "Sqrt", "Div"]))
for _short, _op in (("and", "And"), ("or", "Or"), ("xor", "Xor")):
    translates(f"broadcast_logical_{_short}", f"_logical_{_short}",
               f"_logical_{_short}_scalar", onnx_ops=["Equal", "Not", _op, "Cast"],
               notes="non-zero is true; the result in the inputs' dtype")(
        _binary(_logical(_op), scalar=lambda v: float(v != 0)))   # 0.5 is true


@translates("logical_not", onnx_ops=["Equal", "Cast"])
def _logical_not(ctx, node, ins, outs):
    dt = ctx.dtype(node.inputs[0])
    is_zero = ctx.node("Equal", [ins[0], _c(ctx, 0, dt, "zero")])
    ctx.node("Cast", [is_zero], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))


# ---- erfinv: Giles' single-precision approximation ("Approximating the erfinv function",
# GPU Computing Gems, 2011), evaluated in float64: about 1.3e-7 relative error ------------------
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(ctx, w, coefs):
    acc = _c(ctx, coefs[0], np.float64)
    for c in coefs[1:]:
        acc = ctx.node("Add", [_c(ctx, c, np.float64), ctx.node("Mul", [acc, w])])
    return acc


@translates("erfinv", onnx_ops=["Cast", "Sub", "Add", "Mul", "Log", "Neg", "Sqrt", "Less",
                                "Where", "Abs", "Equal"],
            notes="Giles' approximation in float64: about 1.3e-7 relative error (float32 "
                  "accuracy, also for float64 data; ONNX has no erfinv, and onnxruntime no "
                  "float64 Erf to refine it with)")
def _erfinv(ctx, node, ins, outs):
    f64 = np.float64
    x = _in_float64(ctx, node, ins)
    one = _c(ctx, 1.0, f64, "one")
    w = ctx.node("Neg", [ctx.node("Log", [ctx.node("Mul", [ctx.node("Sub", [one, x]),
                                                           ctx.node("Add", [one, x])])])])
    central = _horner(ctx, ctx.node("Sub", [w, _c(ctx, 2.5, f64)]), _ERFINV_CENTRAL)
    tail = _horner(ctx, ctx.node("Sub", [ctx.node("Sqrt", [w]), _c(ctx, 3.0, f64)]),
                   _ERFINV_TAIL)
    p = ctx.node("Where", [ctx.node("Less", [w, _c(ctx, 5.0, f64)]), central, tail])
    y = ctx.node("Mul", [p, x])
    # erfinv(+-1) = +-inf (the series gives NaN there); |x| > 1 and NaN stay NaN
    edge = ctx.node("Equal", [ctx.node("Abs", [x]), one])
    y = ctx.node("Where", [edge, ctx.node("Mul", [x, _c(ctx, np.inf, f64, "inf")]), y])
    ctx.node("Cast", [y], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))


# ---- contrib element-wise ops and whole-array tests ------------------------------------------
def _zeros_like(ctx, node, x, outs):
    dt = ctx.dtype((node, 0))
    ctx.node("ConstantOfShape", [ctx.node("Shape", [x])], outs,
             value=ctx.onnx.numpy_helper.from_array(np.zeros(1, dt)))


def _signed_inf(negative):
    def translate(ctx, node, ins, outs):
        if ctx.dtype(node.inputs[0]).kind != "f":        # integers are never infinite
            _zeros_like(ctx, node, ins[0], outs)
            return
        inf = ctx.node("IsInf", ins, detect_negative=int(negative),
                       detect_positive=int(not negative))
        ctx.node("Cast", [inf], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
            ctx.dtype((node, 0))))
    return translate


translates("_contrib_isposinf", onnx_ops=["IsInf", "Cast", "ConstantOfShape", "Shape"])(
    _signed_inf(False))
translates("_contrib_isneginf", onnx_ops=["IsInf", "Cast", "ConstantOfShape", "Shape"])(
    _signed_inf(True))
translates("_contrib_round_ste", onnx_ops=_ROUND_OPS,
           notes="the forward pass: round, halves away from zero")(
    _rounding(_round_body, _ROUND_OPS))


@translates("_contrib_sign_ste", onnx_ops=["Sign"], notes="the forward pass: sign")
def _sign_ste(ctx, node, ins, outs):
    ctx.in_dtype_it_takes("Sign", node, ins, outs)


@translates("_contrib_div_sqrt_dim", onnx_ops=["Div"])
def _div_sqrt_dim(ctx, node, ins, outs):
    dt = ctx.dtype((node, 0))
    d = ctx.shape(node.inputs[0])[-1]
    ctx.node("Div", [ins[0], _c(ctx, np.sqrt(np.asarray(d, dt)), dt, "sqrt_dim")], outs)


@translates("_contrib_quadratic", onnx_ops=["Mul", "Add"])
@_composite(["Mul", "Add"])
def _quadratic(ctx, node, x, dt):
    a = node.attrs
    ax = ctx.node("Mul", [x, _c(ctx, a.a, dt, "a")])                 # (a x + b) x + c
    return ctx.node("Add", [ctx.node("Mul", [ctx.node("Add", [ax, _c(ctx, a.b, dt, "b")]), x]),
                            _c(ctx, a.c, dt, "c")])


def _flag(ctx, bools, reduce_op):
    """A bool tensor reduced to one float32 flag: ``reduce_op`` (ReduceMax: any, ReduceMin:
    all) over every axis, kept to [0, 1] (an empty reduction gives -inf / inf)."""
    f = ctx.node("Cast", [bools], to=ctx.onnx.TensorProto.FLOAT)
    f = ctx.node(reduce_op, [ctx.node("Reshape", [f, ctx.int64s([-1])])], keepdims=1)
    return ctx.node("Clip", [f, _c(ctx, 0.0, np.float32), _c(ctx, 1.0, np.float32)])


def _has(onnx_op):
    def translate(ctx, node, ins, outs):
        if ctx.dtype(node.inputs[0]).kind != "f":
            ctx.node("Identity", [ctx.const(np.zeros(1, np.float32), base="never")], outs)
            return
        ctx.node("Identity", [_flag(ctx, ctx.node(onnx_op, ins), "ReduceMax")], outs)
    return translate


translates("_has_nan", onnx_ops=["IsNaN", "Cast", "Reshape", "ReduceMax", "Clip"], opset=18)(
    _has("IsNaN"))
translates("_has_inf", onnx_ops=["IsInf", "Cast", "Reshape", "ReduceMax", "Clip"], opset=18)(
    _has("IsInf"))


@translates("_contrib_all_finite", onnx_ops=["IsInf", "IsNaN", "Or", "Not", "Cast",
                                             "Reshape", "ReduceMin", "Clip", "Min"],
            opset=18, notes="init_output=False (clearing a flag passed in) is not exported")
def _all_finite(ctx, node, ins, outs):
    if not node.attrs.init_output:
        raise ctx.unsupported(node, "init_output=False")
    flags = [_flag(ctx, ctx.node("Not", [ctx.node("Or", [ctx.node("IsInf", [x]),
                                                         ctx.node("IsNaN", [x])])]),
                   "ReduceMin")
             for x, e in zip(ins, node.inputs) if ctx.dtype(e).kind == "f"]
    if not flags:
        flags = [ctx.const(np.ones(1, np.float32), base="always")]
    ctx.node("Min", flags, outs)


@translates("_contrib_allclose", onnx_ops=["Cast", "Sub", "Abs", "Mul", "Add", "LessOrEqual",
                                           "IsInf", "IsNaN", "Or", "Not", "And", "Equal",
                                           "Reshape", "ReduceMin", "Clip"], opset=18,
            notes="equal infinities are close, an infinity and a finite value are not")
def _allclose(ctx, node, ins, outs):
    a = node.attrs
    f64 = np.float64
    x, y = [v if ctx.dtype(e) == f64 else ctx.cast(v, f64) for v, e in zip(ins, node.inputs)]

    def finite(v):
        return ctx.node("Not", [ctx.node("Or", [ctx.node("IsInf", [v]),
                                                ctx.node("IsNaN", [v])])])
    bound = ctx.node("Add", [_c(ctx, a.atol, f64), ctx.node("Mul", [
        _c(ctx, a.rtol, f64), ctx.node("Abs", [y])])])
    near = ctx.node("LessOrEqual", [ctx.node("Abs", [ctx.node("Sub", [x, y])]), bound])
    close = ctx.node("Or", [ctx.node("Equal", [x, y]),
                            ctx.node("And", [near, ctx.node("And", [finite(x), finite(y)])])])
    if a.equal_nan:
        both = ctx.node("And", [ctx.node("IsNaN", [x]), ctx.node("IsNaN", [y])])
        close = ctx.node("Or", [close, both])
    ctx.node("Cast", [_flag(ctx, close, "ReduceMin")], outs,
             to=ctx.onnx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))


# ---- digamma (polygamma n = 0): recurrence up past 6, the asymptotic series, reflection -----
_DIGAMMA_SERIES = ((2, -1 / 12), (4, 1 / 120), (6, -1 / 252), (8, 1 / 240), (10, -1 / 132))
_DIGAMMA_SHIFT = 6


def _digamma_right(ctx, z):
    """psi(z) for z >= 0.5 (float64): psi(z) = psi(z + 6) - sum 1 / (z + k), and psi(w) ~
    log w - 1 / (2w) - sum B_2k / (2k w^2k) for w >= 6.5 (the next term ~4e-12)."""
    f64 = np.float64
    w = ctx.node("Add", [z, _c(ctx, float(_DIGAMMA_SHIFT), f64)])
    inv = ctx.node("Reciprocal", [w])
    inv2 = ctx.node("Mul", [inv, inv])
    y = ctx.node("Sub", [ctx.node("Log", [w]), ctx.node("Mul", [inv, _c(ctx, 0.5, f64)])])
    power = inv2
    for k, (_, coef) in enumerate(_DIGAMMA_SERIES):
        y = ctx.node("Add", [y, ctx.node("Mul", [power, _c(ctx, coef, f64)])])
        if k + 1 < len(_DIGAMMA_SERIES):
            power = ctx.node("Mul", [power, inv2])
    for k in range(_DIGAMMA_SHIFT):
        y = ctx.node("Sub", [y, ctx.node("Reciprocal", [
            ctx.node("Add", [z, _c(ctx, float(k), f64)])])])
    return y


_BERNOULLI = ((2, 1 / 6), (4, -1 / 30), (6, 1 / 42), (8, -1 / 30), (10, 5 / 66),
              (12, -691 / 2730))


def _polygamma_right(ctx, z, n):
    """psi_n(z), n >= 1, for z >= 0.5 (float64): psi_n(z) = psi_n(z + m) + (-1)^(n+1) n!
    sum_k<m (z + k)^-(n+1), and the asymptotic series (-1)^(n+1) [(n-1)! / w^n + n! /
    (2 w^(n+1)) + sum B_2k (2k+n-1)! / ((2k)! w^(2k+n))] at w = z + m, m = 8 + 2n
    (about 1e-13 relative)."""
    f64 = np.float64
    m = 8 + 2 * n
    sign = (-1) ** (n + 1)
    w = ctx.node("Add", [z, _c(ctx, float(m), f64)])

    def inv_pow(v, k):
        return ctx.node("Pow", [v, _c(ctx, float(-k), f64)])
    terms = [(math.factorial(n - 1), n), (math.factorial(n) / 2, n + 1)]
    terms += [(b * math.factorial(k2 + n - 1) / math.factorial(k2), k2 + n)
              for k2, b in _BERNOULLI]
    y = _c(ctx, 0.0, f64)
    for coef, k in terms:
        y = ctx.node("Add", [y, ctx.node("Mul", [inv_pow(w, k), _c(ctx, sign * coef, f64)])])
    for k in range(m):
        shifted = ctx.node("Add", [z, _c(ctx, float(k), f64)])
        y = ctx.node("Add", [y, ctx.node("Mul", [inv_pow(shifted, n + 1),
                                                 _c(ctx, sign * math.factorial(n), f64)])])
    return y


def _cot_derivative_poly(n):
    """Coefficients (lowest first) of P_n with d^n/dx^n cot(pi x) = pi^n P_n(cot(pi x)):
    P_0 = c, P_{k+1} = -(1 + c^2) P_k'."""
    p = [0.0, 1.0]
    for _ in range(n):
        d = [i * p[i] for i in range(1, len(p))] or [0.0]
        q = [0.0] * (len(d) + 2)
        for i, v in enumerate(d):          # -(1 + c^2) * d
            q[i] -= v
            q[i + 2] -= v
        p = q
    return p


@translates("_polygamma", onnx_ops=["Cast", "Less", "Where", "Sub", "Add", "Mul", "Reciprocal",
                                    "Log", "Floor", "Sin", "Cos", "Div", "Equal", "And",
                                    "LessOrEqual", "Pow"],
            notes="series in float64 (about 1e-13 relative); negative x by reflection; "
                  "the poles NaN")
def _polygamma(ctx, node, ins, outs):
    n = int(node.attrs.n)
    f64 = np.float64
    x = _in_float64(ctx, node, ins)
    left = ctx.node("Less", [x, _c(ctx, 0.5, f64)])
    z = ctx.node("Where", [left, ctx.node("Sub", [_c(ctx, 1.0, f64), x]), x])
    psi = _digamma_right(ctx, z) if n == 0 else _polygamma_right(ctx, z, n)
    # reflection psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)) (the n-th
    # derivative of psi(1 - x) - psi(x) = pi cot(pi x)); cot(pi x) = cot(pi frac(x)), exact
    # period, so a large negative x keeps its accuracy
    fl = ctx.node("Floor", [x])
    angle = ctx.node("Mul", [ctx.node("Sub", [x, fl]), _c(ctx, np.pi, f64)])
    cot = ctx.node("Div", [ctx.node("Cos", [angle]), ctx.node("Sin", [angle])])
    poly = _c(ctx, 0.0, f64)
    for coef in reversed(_cot_derivative_poly(n)):         # Horner
        poly = ctx.node("Add", [ctx.node("Mul", [poly, cot]), _c(ctx, coef, f64)])
    mirrored = psi if n % 2 == 0 else ctx.node("Mul", [psi, _c(ctx, -1.0, f64)])
    refl = ctx.node("Sub", [mirrored, ctx.node("Mul", [poly, _c(ctx, np.pi ** (n + 1), f64)])])
    y = ctx.node("Where", [left, refl, psi])
    # the poles 0, -1, -2, ... are NaN (mxlite's rule)
    pole = ctx.node("And", [ctx.node("Equal", [x, fl]),
                            ctx.node("LessOrEqual", [x, _c(ctx, 0.0, f64)])])
    y = ctx.node("Where", [pole, _c(ctx, np.nan, f64, "nan"), y])
    ctx.node("Cast", [y], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))
