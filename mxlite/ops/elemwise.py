"""Element-wise operators: unary math, broadcasting binary ops, scalar ops.

Every expression lives once, in ``mxlite/_core/kernel_table.py``; this module only declares
the operators (names, dtype rules, docs) and routes them to the generated kernels.
"""
import numpy as np

from .._core import elemwise as _k
from .._core.kernel_table import BINARY, UNARY
from ..base import FLOAT_DTYPES, op_error
from .common import F32, compute_dtype, run_in, same_shape, write_back
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import broadcast_shapes

# ---- unary ---------------------------------------------------------------------------------
UNARY_DOCS = {
    "abs": "Absolute value, element-wise.",
    "sign": "Sign of each element: -1, 0 or 1 (NaN stays NaN).",
    "negative": "Numerical negative, element-wise.",
    "reciprocal": "1/x, element-wise.",
    "square": "x*x, element-wise.",
    "sqrt": "Square root, element-wise.",
    "rsqrt": "1/sqrt(x), element-wise.",
    "cbrt": "Cube root, element-wise.",
    "rcbrt": "1/cbrt(x), element-wise.",
    "exp": "Exponential, element-wise.",
    "expm1": "exp(x) - 1, accurate near 0.",
    "log": "Natural logarithm, element-wise.",
    "log2": "Base-2 logarithm, element-wise.",
    "log10": "Base-10 logarithm, element-wise.",
    "log1p": "log(1 + x), accurate near 0.",
    "sin": "Sine (radians), element-wise.",
    "cos": "Cosine (radians), element-wise.",
    "tan": "Tangent (radians), element-wise.",
    "arcsin": "Inverse sine, element-wise.",
    "arccos": "Inverse cosine, element-wise.",
    "arctan": "Inverse tangent, element-wise.",
    "sinh": "Hyperbolic sine, element-wise.",
    "cosh": "Hyperbolic cosine, element-wise.",
    "tanh": "Hyperbolic tangent, element-wise.",
    "arcsinh": "Inverse hyperbolic sine, element-wise.",
    "arccosh": "Inverse hyperbolic cosine, element-wise.",
    "arctanh": "Inverse hyperbolic tangent, element-wise.",
    "degrees": "Radians to degrees, element-wise.",
    "radians": "Degrees to radians, element-wise.",
    "sigmoid": "Logistic sigmoid 1/(1+exp(-x)), element-wise.",
    "relu": "Rectified linear unit max(x, 0), element-wise.",
    "softsign": "x/(1+|x|), element-wise.",
    "erf": "Gauss error function, element-wise.",
    "erfinv": "Inverse error function, element-wise.",
    "gamma": "Gamma function, element-wise.",
    "gammaln": "Natural log of the absolute gamma function, element-wise.",
    "floor": "Largest integer <= x, element-wise.",
    "ceil": "Smallest integer >= x, element-wise.",
    "round": "Round to nearest integer, halves away from zero (MXNet's round).",
    "rint": "Round to nearest integer, halves to even.",
    "fix": "Round toward zero, element-wise.",
    "trunc": "Truncate toward zero, element-wise.",
    "logical_not": "1 where x == 0, else 0 (in x's dtype).",
}
# Outputs that are piecewise constant: their derivative is zero almost everywhere.
NON_DIFFERENTIABLE_UNARY = ("sign", "floor", "ceil", "round", "rint", "fix", "trunc", "logical_not")
FLOAT_ONLY_NOTE = ("\n\nInteger input is computed in float32 and returns float32 (MXNet truncated "
                   "the result back to the integer dtype, which loses the answer).")


def _unary_type(name):
    int_ok = UNARY[name][1] is not None

    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        if dt in FLOAT_DTYPES or (int_ok and _k.supports_unary(_k.UNARY_IDS[name], dt)):
            return [dt]
        if dt == np.bool_ and not int_ok:
            return [F32]
        if dt.kind in "iub":
            return [F32]
        raise op_error(name, f"unsupported dtype {dt}")
    return infer_type


def _unary_compute(name):
    op_id = _k.UNARY_IDS[name]

    def compute(ins, outs, attrs):
        x, y = ins[0], outs[0]
        work = compute_dtype(y.dtype)
        (xw,) = run_in(work, [x])
        if y.dtype == work:
            _k.unary(op_id, xw, y)
        else:
            tmp = np.empty(y.shape, work)
            _k.unary(op_id, xw, tmp)
            write_back(tmp, y)
    return compute


def _register_unary():
    for name in UNARY:
        doc = UNARY_DOCS[name] + ("" if UNARY[name][1] else FLOAT_ONLY_NOTE)
        register(OpDef(
            name, inputs=("data",), infer_shape=same_shape, infer_type=_unary_type(name),
            compute={"cpu": _unary_compute(name)}, doc=doc, elementwise=True,
            gradient=(NON_DIFFERENTIABLE if name in NON_DIFFERENTIABLE_UNARY
                      else _unary_gradient(name))))


# ---- binary --------------------------------------------------------------------------------
BINARY_DOCS = {
    "add": "a + b", "sub": "a - b", "mul": "a * b",
    "div": "a / b (integer division truncates; x/0 gives 0 for integers)",
    "mod": "a mod b with the sign of b, as NumPy (integer x%0 gives 0)",
    "power": "a ** b", "maximum": "max(a, b) (NaN propagates)",
    "minimum": "min(a, b) (NaN propagates)", "hypot": "sqrt(a*a + b*b)",
    "equal": "1 where a == b else 0", "not_equal": "1 where a != b else 0",
    "greater": "1 where a > b else 0", "greater_equal": "1 where a >= b else 0",
    "lesser": "1 where a < b else 0", "lesser_equal": "1 where a <= b else 0",
    "logical_and": "1 where a and b are non-zero else 0",
    "logical_or": "1 where a or b is non-zero else 0",
    "logical_xor": "1 where exactly one of a, b is non-zero else 0",
}
COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
               "logical_and", "logical_or", "logical_xor")
_FLOAT_RESULT = ("hypot",)   # integer inputs compute in float32


def _binary_dtype(name, kname, a, b):
    """Result dtype of binary op ``name`` (kernel ``kname``): equal dtypes stay (MXNet);
    mixed ones promote as NumPy does, except int8 with uint8, which NumPy makes int16 (not
    an mxlite dtype): that gives int32."""
    dt = a if a == b else np.promote_types(a, b)
    if dt not in FLOAT_DTYPES and dt != np.bool_ and dt.kind not in "iu":
        raise op_error(name, f"cannot combine dtypes {a} and {b}")
    if dt.kind in "iub" and kname in _FLOAT_RESULT:
        return F32
    if dt == np.bool_ and not _k.supports_binary(_k.BINARY_IDS[kname], dt):
        raise op_error(name, f"is not defined for bool arrays; cast to an integer dtype first")
    if dt.kind in "iu" and dt.itemsize == 2:
        dt = np.dtype(np.int32)
    return np.dtype(dt)


def _binary_compute(kernel_name, reverse=False):
    op_id = _k.BINARY_IDS[kernel_name]
    binary = _k.binary

    def compute(ins, outs, attrs):
        out = outs[0]
        dt = out.dtype
        if dt.char in _KERNEL_CHARS and len(ins) == 2 and ins[0].dtype is dt and ins[1].dtype is dt:
            binary(op_id, ins[0], ins[1], out)      # the common case: no casts
            return
        work = compute_dtype(dt)
        if "scalar" in attrs:
            a, b = run_in(work, ins)[0], np.array(attrs["scalar"]).astype(work)
        else:
            a, b = run_in(work, ins)
        if reverse:
            a, b = b, a
        target = out if out.dtype == work else np.empty(out.shape, work)
        binary(op_id, a, b, target)
        write_back(target, out)
    return compute


def _broadcast_shape(name):
    def infer_shape(shapes, attrs):
        a, b = shapes
        return [a if a == b else broadcast_shapes(name, a, b)]
    return infer_shape


def _same_shape_binary(name):
    def infer_shape(shapes, attrs):
        if shapes[0] != shapes[1]:
            raise op_error(name, f"lhs and rhs must have the same shape, got {shapes[0]} and "
                           f"{shapes[1]}; use broadcast_{name.split('_')[1]} to broadcast")
        return [shapes[0]]
    return infer_shape


# dtypes with kernels of their own (float16 goes through float32); chars avoid dtype hashing
_KERNEL_CHARS = "fdbBilq?"


def _binary_type(name, kname):
    float_result = kname in _FLOAT_RESULT

    def infer_type(dtypes, attrs):
        a, b = dtypes
        if a is b and a.char in _KERNEL_CHARS[:-1] and not float_result:
            return [a]      # the common case, decided without hashing dtypes
        return [_binary_dtype(name, kname, a, b)]
    return infer_type


def _register_binary():
    for kname in BINARY:
        grad = NON_DIFFERENTIABLE if kname in COMPARISONS else _binary_gradient(kname)
        aliases = {"add": ("broadcast_plus",), "sub": ("broadcast_minus",)}.get(kname, ())
        register(OpDef(
            f"broadcast_{kname}", inputs=("lhs", "rhs"), aliases=aliases,
            infer_shape=_broadcast_shape(f"broadcast_{kname}"),
            infer_type=_binary_type(f"broadcast_{kname}", kname),
            compute={"cpu": _binary_compute(kname)}, gradient=grad, elementwise=True,
            doc=f"Element-wise {BINARY_DOCS[kname]}, with NumPy broadcasting."))
    for kname, aliases in (("add", ("_plus", "_add")), ("sub", ("_minus", "_sub")),
                           ("mul", ("_mul",)), ("div", ("_div",))):
        name = f"elemwise_{kname}"
        register(OpDef(
            name, inputs=("lhs", "rhs"), aliases=aliases, infer_shape=_same_shape_binary(name),
            infer_type=_binary_type(name, kname), compute={"cpu": _binary_compute(kname)},
            gradient=_binary_gradient(kname),
            elementwise=True,
            doc=f"Element-wise {BINARY_DOCS[kname]}; both inputs must have the same shape."))


# ---- scalar --------------------------------------------------------------------------------
# op name: (kernel, reversed?) -- ``_rminus_scalar(x, s)`` is s - x.
SCALAR_OPS = {
    "_plus_scalar": ("add", False), "_minus_scalar": ("sub", False),
    "_rminus_scalar": ("sub", True), "_mul_scalar": ("mul", False),
    "_div_scalar": ("div", False), "_rdiv_scalar": ("div", True),
    "_mod_scalar": ("mod", False), "_rmod_scalar": ("mod", True),
    "_power_scalar": ("power", False), "_rpower_scalar": ("power", True),
    "_maximum_scalar": ("maximum", False), "_minimum_scalar": ("minimum", False),
    "_hypot_scalar": ("hypot", False),
    **{f"_{c}_scalar": (c, False) for c in COMPARISONS},
}


def _scalar_type(name, kname):
    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        if dt.kind in "iub" and kname in _FLOAT_RESULT:
            return [F32]
        if dt == np.bool_ and not _k.supports_binary(_k.BINARY_IDS[kname], dt):
            raise op_error(name, "is not defined for bool arrays; cast to an integer dtype first")
        return [dt]
    return infer_type


def _register_scalar():
    for name, (kname, reverse) in SCALAR_OPS.items():
        operands = "(scalar, x)" if reverse else "(x, scalar)"
        register(OpDef(
            name, inputs=("data",), params=(Param("scalar", "float", 1.0, "the scalar operand"),),
            infer_shape=same_shape, infer_type=_scalar_type(name, kname),
            compute={"cpu": _binary_compute(kname, reverse)}, elementwise=True,
            gradient=NON_DIFFERENTIABLE if kname in COMPARISONS else _scalar_gradient(name),
            doc=f"Element-wise broadcast_{kname}{operands} with a Python scalar; the result keeps the array's dtype "
                "(the scalar is cast to it, as in MXNet)."))


# ---- gradients (each built from registered ops, so it is differentiable again) --------------
_LN2, _LN10 = 0.6931471805599453, 2.302585092994046
_TWO_OVER_SQRT_PI, _SQRT_PI_OVER_TWO = 1.1283791670955126, 0.8862269254527580
_DEG = 57.29577951308232

# d/dx f(x) for each differentiable unary op, as registered ops on the handle x.
UNARY_DERIVATIVES = {
    "abs": lambda F, x: F.sign(x),
    "negative": lambda F, x: F.ones_like(x) * -1,
    "reciprocal": lambda F, x: -F.square(F.reciprocal(x)),
    "square": lambda F, x: 2 * x,
    "sqrt": lambda F, x: 0.5 * F.rsqrt(x),
    "rsqrt": lambda F, x: -0.5 * F.rsqrt(x) / x,
    "cbrt": lambda F, x: F.square(F.rcbrt(x)) / 3,
    "rcbrt": lambda F, x: -F.rcbrt(x) / (3 * x),
    "exp": lambda F, x: F.exp(x),
    "expm1": lambda F, x: F.exp(x),
    "log": lambda F, x: F.reciprocal(x),
    "log2": lambda F, x: F.reciprocal(x * _LN2),
    "log10": lambda F, x: F.reciprocal(x * _LN10),
    "log1p": lambda F, x: F.reciprocal(x + 1),
    "sin": lambda F, x: F.cos(x),
    "cos": lambda F, x: -F.sin(x),
    "tan": lambda F, x: F.square(F.tan(x)) + 1,
    "arcsin": lambda F, x: F.rsqrt(1 - F.square(x)),
    "arccos": lambda F, x: -F.rsqrt(1 - F.square(x)),
    "arctan": lambda F, x: F.reciprocal(F.square(x) + 1),
    "sinh": lambda F, x: F.cosh(x),
    "cosh": lambda F, x: F.sinh(x),
    "tanh": lambda F, x: 1 - F.square(F.tanh(x)),
    "arcsinh": lambda F, x: F.rsqrt(F.square(x) + 1),
    "arccosh": lambda F, x: F.rsqrt(F.square(x) - 1),
    "arctanh": lambda F, x: F.reciprocal(1 - F.square(x)),
    "degrees": lambda F, x: F.ones_like(x) * _DEG,
    "radians": lambda F, x: F.ones_like(x) / _DEG,
    "sigmoid": lambda F, x: F.sigmoid(x) * (1 - F.sigmoid(x)),
    # relu' is the step function; at exactly 0 we take 0, as MXNet and most frameworks do
    "relu": lambda F, x: x > 0,
    "softsign": lambda F, x: F.reciprocal(F.square(F.abs(x) + 1)),
    "erf": lambda F, x: _TWO_OVER_SQRT_PI * F.exp(-F.square(x)),
    "erfinv": lambda F, x: _SQRT_PI_OVER_TWO * F.exp(F.square(F.erfinv(x))),
    "gamma": lambda F, x: F.gamma(x) * F._internal._polygamma(x, n=0),
    "gammaln": lambda F, x: F._internal._polygamma(x, n=0),
}


def _unary_gradient(name):
    derivative = UNARY_DERIVATIVES[name]

    def gradient(F, node, ograds):
        return [ograds[0] * derivative(F, node.inputs[0])]
    gradient.__doc__ = f"Head gradient times d {name}(x)/dx, as UNARY_DERIVATIVES[{name!r}] builds it."
    return gradient


def unbroadcast(F, node, grad, i):
    """Sum ``grad`` (shaped like the output) down to input ``i``'s shape: the one place
    where broadcasting is undone (``sum_to`` is ``broadcast_to``'s gradient and vice versa)."""
    shape = node.input_shapes[i]
    return grad if shape == node.output_shapes[0] else F.sum_to(grad, shape=shape)


# d out / d lhs, d out / d rhs for each differentiable binary kernel, given (F, a, b, g).
BINARY_GRADIENTS = {
    "add": lambda F, a, b, g: (g, g),
    "sub": lambda F, a, b, g: (g, -g),
    "mul": lambda F, a, b, g: (g * b, g * a),
    "div": lambda F, a, b, g: (g / b, -g * a / F.square(b)),
    "mod": lambda F, a, b, g: (g, -g * F.floor(a / b)),
    "power": lambda F, a, b, g: (g * b * a ** (b - 1), g * a ** b * F.log(a)),
    "maximum": lambda F, a, b, g: (g * (a >= b), g * (a < b)),
    "minimum": lambda F, a, b, g: (g * (a <= b), g * (a > b)),
    "hypot": lambda F, a, b, g: (g * a / F.broadcast_hypot(a, b),
                                 g * b / F.broadcast_hypot(a, b)),
}


def _binary_gradient(kname):
    rule = BINARY_GRADIENTS[kname]

    def gradient(F, node, ograds):
        a, b = node.inputs
        ga, gb = rule(F, a, b, ograds[0])
        return [unbroadcast(F, node, ga, 0) if node.wants[0] else None,
                unbroadcast(F, node, gb, 1) if node.wants[1] else None]
    gradient.__doc__ = f"Gradient of {kname}: see BINARY_GRADIENTS[{kname!r}], un-broadcast with sum_to."
    return gradient


# d f(x; s) / dx for each differentiable scalar op, given (F, x, s, g).
SCALAR_GRADIENTS = {
    "_plus_scalar": lambda F, x, s, g: g,
    "_minus_scalar": lambda F, x, s, g: g,
    "_rminus_scalar": lambda F, x, s, g: -g,
    "_mul_scalar": lambda F, x, s, g: g * s,
    "_div_scalar": lambda F, x, s, g: g / s,
    "_rdiv_scalar": lambda F, x, s, g: -g * s / F.square(x),
    "_mod_scalar": lambda F, x, s, g: g,
    "_rmod_scalar": lambda F, x, s, g: -g * F.floor(s / x),
    "_power_scalar": lambda F, x, s, g: g * s * x ** (s - 1),
    "_rpower_scalar": lambda F, x, s, g: g * (s ** x) * float(np.log(s)),
    "_maximum_scalar": lambda F, x, s, g: g * (x >= s),
    "_minimum_scalar": lambda F, x, s, g: g * (x <= s),
    "_hypot_scalar": lambda F, x, s, g: g * x / F._internal._hypot_scalar(x, scalar=s),
}


def _scalar_gradient(name):
    rule = SCALAR_GRADIENTS[name]

    def gradient(F, node, ograds):
        return [rule(F, node.inputs[0], node.attrs.scalar, ograds[0])]
    gradient.__doc__ = f"Gradient of {name}: see SCALAR_GRADIENTS[{name!r}]."
    return gradient


# ---- polygamma: the derivatives of gammaln, to any order ------------------------------------
def _polygamma_compute(ins, outs, attrs):
    x, y = ins[0], outs[0]
    work = np.float64 if x.dtype == np.float64 else F32
    target = y if y.dtype == work else np.empty(y.shape, work)
    _k.polygamma(attrs.n, run_in(work, [x])[0].reshape(-1), target.reshape(-1))
    write_back(target, y)


def _polygamma_gradient(F, node, ograds):
    """d psi_n(x)/dx = psi_{n+1}(x)."""
    return [ograds[0] * F._internal._polygamma(node.inputs[0], n=node.attrs.n + 1)]


def _register_polygamma():
    def infer_type(dtypes, attrs):
        if attrs.n < 0:
            raise op_error("_polygamma", f"parameter 'n' must be >= 0, got {attrs.n}")
        return [dtypes[0] if dtypes[0] in FLOAT_DTYPES else F32]
    register(OpDef(
        "_polygamma", inputs=("data",), params=(Param("n", "int", 0, "derivative order"),),
        infer_shape=same_shape, infer_type=infer_type, compute={"cpu": _polygamma_compute},
        gradient=_polygamma_gradient, elementwise=True,
        doc="Polygamma psi_n(x), the n-th derivative of digamma (n=0: digamma = d gammaln/dx). "
            "Poles give NaN; for n >= 1, x below -1e4 gives NaN."))


_register_unary()
_register_binary()
_register_scalar()
_register_polygamma()
