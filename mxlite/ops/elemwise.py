"""Element-wise operators: unary math, broadcasting binary ops, scalar ops.

Every expression lives once, in ``mxlite/_core/kernel_table.py``; this module only declares
the operators (names, dtype rules, docs) and routes them to the generated kernels.
"""
import math

import numpy as np

from .._core import elemwise as _k
from .._core.dispatch import CpuKernel
from .._core.kernel_table import BINARY, UNARY
from ..base import FLOAT_DTYPES, NARROW_FLOATS, as_number, dtype_range, op_error, promote_types
from .common import F32, compute_dtype, run_in, same_shape, write_back
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import broadcast_shapes, same_input_shapes

# ---- unary ---------------------------------------------------------------------------------
UNARY_DOCS = {
    "abs": "Absolute value, element-wise.",
    "sign": "Sign of each element: -1, 0 or 1; a zero keeps its sign bit and NaN stays NaN.\n\n"
            "MXNet's kernel (``a > 0 ? 1 : (a < 0 ? -1 : 0)``) returned 0 for NaN, turning a "
            "missing value into a valid-looking one; mxlite propagates NaN instead, as NumPy "
            "and IEEE 754 do.",
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
    "rint": "Round to the nearest integer; a tie (n + 0.5) goes down, to n (MXNet's rint).\n\n"
            "As MXNet documents it: \"for input n.5 rint returns n while round returns n+1\"; "
            "for -n.5 both return -n-1. So ``rint(x) = floor(x)`` when ``x - floor(x) <= "
            "ceil(x) - x``, else ``ceil(x)`` (MXNet's kernel, exactly): rint(0.5) = 0, "
            "rint(1.5) = 1, rint(2.5) = 2, rint(-0.5) = -1, rint(-2.5) = -3. This differs from "
            "NumPy's and IEEE 754's rint (halves to even: rint(1.5) = 2); mxlite keeps MXNet's "
            "documented rule so ported code gives the same numbers. NaN and infinities pass "
            "through; integer input is returned unchanged.",
    "fix": "Round toward zero, element-wise.",
    "trunc": "Truncate toward zero, element-wise.",
    "logical_not": "1 where x == 0, else 0 (in x's dtype).",
}
# ---- the bool rule (one place) ---------------------------------------------------------------
# Comparisons and logical ops read bool inputs as truth values and return bool. Every other
# element-wise op is arithmetic: it reads False/True as the numbers 0 and 1, computes in float32
# and returns float32 (MXNet's default dtype), so ``bool_array * 5`` is ``[5., 0.]`` and
# ``t + t`` is ``2.``, never a bool that silently saturates.
LOGICAL_OPS = frozenset(("equal", "not_equal", "greater", "greater_equal", "lesser",
                         "lesser_equal", "logical_and", "logical_or", "logical_xor",
                         "logical_not"))
BOOL_NOTE = ("\n\nbool input is read as the numbers 0 and 1 and gives a float32 result "
             "(MXNet's default dtype), not a bool.")


def bool_result(kernel_name):
    """The output dtype of kernel ``kernel_name`` on bool inputs: bool for comparisons and
    logical ops, float32 for arithmetic."""
    return np.dtype(np.bool_) if kernel_name in LOGICAL_OPS else F32


# Outputs that are piecewise constant: their derivative is zero almost everywhere.
NON_DIFFERENTIABLE_UNARY = ("sign", "floor", "ceil", "round", "rint", "fix", "trunc", "logical_not")
FLOAT_ONLY_NOTE = ("\n\nInteger input is computed in float32 and returns float32 (MXNet truncated "
                   "the result back to the integer dtype, which loses the answer).")


def _unary_type(name):
    int_ok = UNARY[name][1] is not None

    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        if dt.char in "fd":
            return [dt]                 # the common case, decided without hashing dtypes
        if dt == np.bool_:
            return [bool_result(name)]
        if dt in FLOAT_DTYPES or (int_ok and _k.supports_unary(_k.UNARY_IDS[name], dt)):
            return [dt]
        if dt.kind in "iu":
            return [F32]
        raise op_error(name, f"unsupported dtype {dt}")
    return infer_type


def _unary_compute(name):
    op_id = _k.UNARY_IDS[name]

    unary = _k.unary

    def compute(rctx, ins, outs, attrs):
        x, y = ins[0], outs[0]
        if x.dtype is y.dtype and y.dtype.char in "fd":
            unary(op_id, x, y)          # the common case: no casts
            return
        work = compute_dtype(y.dtype)
        (xw,) = run_in(work, [x], rctx.xp)
        if y.dtype == work:
            _k.unary(op_id, xw, y)
        else:
            tmp = rctx.xp.empty(y.shape, work)
            _k.unary(op_id, xw, tmp)
            write_back(rctx.xp, tmp, y)
    return compute


def _register_unary():
    for name in UNARY:
        doc = (UNARY_DOCS[name] + ("" if UNARY[name][1] else FLOAT_ONLY_NOTE)
               + ("" if name in LOGICAL_OPS else BOOL_NOTE))
        register(OpDef(
            name, inputs=("data",), infer_shape=same_shape, infer_type=_unary_type(name),
            backward_shape="same",
            compute={"cpu": _unary_compute(name)}, doc=doc, elementwise=True, float_rule="same",
            cpu_kernel=CpuKernel("unary", _k.unary, _k.UNARY_IDS[name]),
            gradient=(NON_DIFFERENTIABLE if name in NON_DIFFERENTIABLE_UNARY
                      else _unary_gradient(name)),
            grad_needs=("outputs",) if name in UNARY_OUTPUT_DERIVATIVES else ("inputs",)))


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
    an mxlite dtype): that gives int32. Two bool inputs follow the bool rule
    (``bool_result``)."""
    dt = a if a == b else promote_types(a, b)
    if dt not in FLOAT_DTYPES and dt != np.bool_ and dt.kind not in "iu":
        raise op_error(name, f"cannot combine dtypes {a} and {b}")
    if dt == np.bool_:
        return bool_result(kname)
    if dt.kind in "iu" and kname in _FLOAT_RESULT:
        return F32
    if dt.kind in "iu" and dt.itemsize == 2:
        dt = np.dtype(np.int32)
    return np.dtype(dt)


def _binary_compute(kernel_name):
    op_id = _k.BINARY_IDS[kernel_name]
    binary = _k.binary

    def compute(rctx, ins, outs, attrs):
        out = outs[0]
        dt = out.dtype
        if dt.char in _KERNEL_CHARS and len(ins) == 2 and ins[0].dtype is dt and ins[1].dtype is dt:
            binary(op_id, ins[0], ins[1], out)      # the common case: no casts
            return
        work = compute_dtype(dt)
        a, b = run_in(work, ins, rctx.xp)
        target = out if out.dtype == work else rctx.xp.empty(out.shape, work)
        binary(op_id, a, b, target)
        write_back(rctx.xp, target, out)
    return compute


def _broadcast_shape(name):
    def infer_shape(shapes, attrs):
        a, b = shapes
        return [a if a == b else broadcast_shapes(name, a, b)]
    return infer_shape


def _same_shape_binary(name, kname):
    def infer_shape(shapes, attrs):
        if shapes[0] != shapes[1]:
            raise op_error(name, f"lhs and rhs must have the same shape, got {shapes[0]} and "
                           f"{shapes[1]}; use broadcast_{kname} to broadcast")
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
            float_rule="broadcast", cpu_kernel=CpuKernel("binary", _k.binary,
                                                         _k.BINARY_IDS[kname]),
            doc=f"Element-wise {BINARY_DOCS[kname]}, with NumPy broadcasting."
                + ("" if kname in LOGICAL_OPS else BOOL_NOTE)))
    for kname in BINARY:
        name, aliases = same_shape_binary_name(kname)
        register(OpDef(
            name, inputs=("lhs", "rhs"), aliases=aliases, infer_shape=_same_shape_binary(name, kname),
            backward_shape="same",
            infer_type=_binary_type(name, kname), compute={"cpu": _binary_compute(kname)},
            gradient=NON_DIFFERENTIABLE if kname in COMPARISONS else _binary_gradient(kname),
            elementwise=True, float_rule="same",
            cpu_kernel=CpuKernel("binary", _k.binary, _k.BINARY_IDS[kname]),
            doc=f"Element-wise {BINARY_DOCS[kname]}; both inputs must have the same shape."
                + ("" if kname in LOGICAL_OPS else BOOL_NOTE)))


# MXNet's names of the same-shape binary ops: elemwise_* for the four arithmetic ones, _<kernel>
# for the rest, each also under its legacy CamelCase name (_Plus, _Greater_Equal, ...)
# (_grad_add is the name MXNet's gradient aggregation used; _scatter_elemwise_div, the
# sparse-storage form of elemwise_div, is its own record: mxlite.ops.scatter)
_SAME_SHAPE_ALIASES = {"add": ("_plus", "_add", "_Plus", "_grad_add"),
                       "sub": ("_minus", "_sub", "_Minus"), "mul": ("_mul", "_Mul"),
                       "div": ("_div", "_Div")}


def same_shape_binary_name(kname):
    """(name, aliases) of the same-shape binary op over kernel ``kname``."""
    if kname in _SAME_SHAPE_ALIASES:
        return f"elemwise_{kname}", _SAME_SHAPE_ALIASES[kname]
    return f"_{kname}", ("_" + "_".join(w.capitalize() for w in kname.split("_")),)


# ---- add_n: the sum of any number of same-shape arrays ----------------------------------------
def _add_n_shape(shapes, attrs):
    return [same_input_shapes("add_n", shapes)]


def _add_n_type(dtypes, attrs):
    first = dtypes[0]
    for i, dt in enumerate(dtypes):
        if dt != first:
            raise op_error("add_n", f"all inputs must have the same dtype; input 0 is {first} "
                           f"and input {i} is {dt}")
    return [_binary_dtype("add_n", "add", first, first)]


def sum_compute(pair_add):
    """The compute function of ``add_n`` over a device's pairwise kernel
    ``pair_add(rctx, a, b, out)`` (``out = a + b``, ``out`` may be ``a``).

    The sum accumulates in the work dtype (float32 for float16, so n float16 inputs are rounded
    once, not n - 1 times) into one scratch array at most; each input is cast on its own, so
    the extra memory never grows with the number of inputs."""
    def compute(rctx, ins, outs, attrs):
        xp, out = rctx.xp, outs[0]
        work = compute_dtype(out.dtype)
        acc = out if out.dtype == work else xp.empty(out.shape, work)
        if len(ins) == 1:
            xp.cast_into(acc, ins[0])
        else:
            pair_add(rctx, as_dtype(xp, ins[0], work), as_dtype(xp, ins[1], work), acc)
            for x in ins[2:]:
                pair_add(rctx, acc, as_dtype(xp, x, work), acc)
        write_back(xp, acc, out)
    return compute


def as_dtype(xp, a, dtype):
    """``a`` as ``dtype`` (``a`` itself when it has it), cast through namespace ``xp``."""
    if a.dtype == dtype:
        return a
    tmp = xp.empty(a.shape, dtype)
    xp.cast_into(tmp, a)
    return tmp


def _cpu_pair_add(rctx, a, b, out):
    _k.binary(_k.BINARY_IDS["add"], a, b, out)


def _add_n_grad(F, node, ograds):
    """y = x_0 + ... + x_{n-1}:  dy/dx_i = 1, so each input's gradient is the head gradient."""
    return [ograds[0] if want else None for want in node.wants]


def _register_add_n():
    # not ``elementwise``: out= may not be an input, as the first pass would overwrite an
    # input that a later pass still has to add
    register(OpDef(
        "add_n", inputs=("args",), aliases=("ElementWiseSum",), variadic=True,
        key_var_num_args="num_args",
        params=(Param("num_args", "int", None, "number of inputs (default: the number given)"),),
        infer_shape=_add_n_shape, backward_shape="same", infer_type=_add_n_type,
        compute={"cpu": sum_compute(_cpu_pair_add)}, gradient=_add_n_grad, grad_needs=(),
        doc="""The element-wise sum of any number of arrays of one shape and dtype:
``add_n(a_0, ..., a_{n-1}) = a_0 + ... + a_{n-1}``.

float16 inputs are summed in float32 and rounded once; integers wrap around as ``+`` does.
bool input is read as the numbers 0 and 1 and gives a float32 result (MXNet's default dtype).

>>> import mxlite as mx
>>> mx.nd.add_n(mx.nd.ones((2,)), mx.nd.array([1, 2]), mx.nd.array([10, 20])).asnumpy()
array([12., 23.], dtype=float32)"""))


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


def scalar_value(name, value):
    """The ``scalar`` parameter as an exact Python int or float (numeric strings are accepted,
    as MXNet passed parameters as strings); MXNetError naming ``name`` otherwise."""
    t = type(value)
    if t is float or t is int:
        return value
    if isinstance(value, str):
        for parse in (int, float):
            try:
                return parse(value)
            except ValueError:
                pass
        raise op_error(name, f"parameter 'scalar' must be a number, got {value!r}")
    return as_number(name, "parameter 'scalar'", value)


def _floor_ceil(v, up):
    return math.ceil(v) if up else math.floor(v)


def int_scalar(name, kname, value, dt):
    """The operand that makes ``kname(x, value)`` exact for an integer (or bool) array x of
    dtype ``dt``: ``(constant, None)`` when every result is the same truth value, else
    ``(None, operand)`` with an operand representable in ``dt``.

    * Comparisons: ``x > s`` is ``x > floor(s)``, ``x >= s`` is ``x >= ceil(s)`` (and so on),
      ``x == s`` is false for a fractional s, and a bound beyond the dtype's range makes the
      result constant; NaN compares false (``!=``: true).
    * Logical ops: the scalar is its truth value (NaN is true).
    * maximum / minimum: clip's rule (``maximum(x, s)`` is ``clip(x, s, inf)``): s rounds up
      for maximum, down for minimum; beyond the range on the harmless side it changes
      nothing; on the other side every result would be unrepresentable: MXNetError.
    * Arithmetic: an integer scalar out of the dtype's range wraps, which keeps +, - and *
      exact modulo 2**bits (as the results themselves wrap). A fractional scalar, or an
      out-of-range one for division, modulo, power or hypot, is an MXNetError: MXNet cast it
      silently (``int_array * 2.5`` multiplied by 2, ``int8 // 300`` divided by 44), a wrong
      answer with no warning. NaN or infinity is an MXNetError.
    """
    lo, hi = dtype_range(dt)
    nan = isinstance(value, float) and math.isnan(value)
    if kname in ("logical_and", "logical_or", "logical_xor"):
        return None, int(value != 0)
    if kname in ("equal", "not_equal"):
        inside = not nan and lo <= value <= hi and float(value).is_integer()
        if not inside:
            return int(kname == "not_equal"), None
        return None, int(value)
    if kname in COMPARISONS:
        if nan:
            return 0, None
        up = kname in ("greater_equal", "lesser")
        if isinstance(value, float) and math.isinf(value):
            bound = value
        else:
            bound = _floor_ceil(value, up)
        if bound > hi:
            return int(kname in ("lesser", "lesser_equal")), None
        if bound < lo:
            return int(kname in ("greater", "greater_equal")), None
        return None, int(bound)
    if nan or (isinstance(value, float) and math.isinf(value) and kname not in
               ("maximum", "minimum")):
        raise op_error(name, f"scalar={value} cannot be an operand of {dt} arithmetic "
                       "(not a finite number); cast the array to a float dtype first")
    if kname in ("maximum", "minimum"):
        up = kname == "maximum"
        bound = value if isinstance(value, float) and math.isinf(value) else \
            _floor_ceil(value, up)
        if up and bound > hi or not up and bound < lo:
            side = f"above the largest {dt} value {hi}" if up else \
                f"below the smallest {dt} value {lo}"
            raise op_error(name, f"scalar={value} is {side}: every result would be the scalar, "
                           f"which {dt} cannot hold")
        return None, int(min(max(bound, lo), hi))
    if isinstance(value, float) and not value.is_integer():
        raise op_error(name, f"scalar={value} is not an integer: {dt} arithmetic would "
                       f"truncate it to {int(value)}; cast the array to a float dtype first "
                       "(x.astype('float32'))")
    v = int(value)
    if not lo <= v <= hi and kname not in ("add", "sub", "mul"):
        raise op_error(name, f"scalar={value} is outside the {dt} range [{lo}, {hi}]: the "
                       f"result of {kname} would be wrong; cast the array to a wider dtype first")
    span = hi - lo + 1
    return None, (v - lo) % span + lo


def _as_float(value):
    try:
        return float(value)
    except OverflowError:            # an int beyond float64: infinity of its sign
        return math.inf if value > 0 else -math.inf


def _scalar_type(name, kname):
    float_result = kname in _FLOAT_RESULT
    bool_out = bool_result(kname)

    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        value = attrs["scalar"]     # (item access: Attrs.__getattr__ is slower)
        if type(value) is not float and type(value) is not int:
            value = scalar_value(name, value)
        if dt.kind == "f" or dt in NARROW_FLOATS:
            return [dt]             # the common case (and bfloat16, whose kind is 'V')
        if dt.char == "?":
            out = bool_out
        elif float_result:
            out = F32
        else:
            out = dt
        if out.kind != "f" and out not in NARROW_FLOATS \
                and not (type(value) is int and _in_range(value, dt)):
            int_scalar(name, kname, value, dt)      # checked before anything is allocated
        return [out]
    return infer_type


_F32_MAX = float(np.finfo(np.float32).max)


def _in_range(value, dt):
    lo, hi = dtype_range(dt)
    return lo <= value <= hi


def _scalar_compute(name, kname, reverse):
    op_id = _k.BINARY_IDS[kname]
    mul_id = _k.BINARY_IDS["mul"]
    binary = _k.binary
    logical = kname in ("logical_and", "logical_or", "logical_xor")
    square = kname == "power" and not reverse      # x ** 2: a * a, the same values

    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        value = attrs["scalar"]     # (item access: Attrs.__getattr__ is slower)
        if type(value) is not float and type(value) is not int:
            value = scalar_value(name, value)
        odt = out.dtype
        if odt.kind != "f" and odt not in NARROW_FLOATS:   # integer/bool kernels: exact
            # operand rules (x.dtype == odt)
            if type(value) is int and not logical and _in_range(value, odt):
                operand = value      # the common case: an int the dtype holds
            else:
                const, operand = int_scalar(name, kname, value, x.dtype)
                if const is not None:
                    out.fill(const)
                    return
            a, b, work = x, rctx.xp.scalar(operand, odt), odt
        else:                        # the scalar in the float compute dtype, as NumPy does
            work = compute_dtype(odt)
            f = value if type(value) is float else _as_float(value)
            a = x if x.dtype is work else x.astype(work)
            if work.char == "f" and abs(f) > _F32_MAX and f == f:
                b = rctx.xp.scalar(math.copysign(math.inf, f), work)   # overflows, as a cast
            else:
                b = rctx.xp.scalar(f, work)
        if reverse:
            a, b = b, a
        target = out if odt is work else rctx.xp.empty(out.shape, work)
        if square and odt.kind == "f" and value == 2:
            binary(mul_id, a, a, target)       # (the table's power: a * a for b == 2)
        else:
            binary(op_id, a, b, target)
        if target is not out:
            write_back(rctx.xp, target, out)
    return compute


_SCALAR_DOC = {
    "compare": "Integer and bool arrays compare exactly with any scalar (``uint8 > -1`` is "
               "true, ``int == 5.5`` false; MXNet cast the scalar to the array's dtype "
               "first); float arrays compare with the scalar rounded to their dtype (NumPy's "
               "rule). The result keeps the array's dtype.",
    "logical": "The scalar counts as true when it is non-zero (NaN included). The result keeps "
               "the array's dtype.",
    "minmax": "The result keeps the array's dtype. For integer arrays the scalar acts as "
              "clip's bound (``maximum(x, s) = clip(x, s, inf)``): a fractional scalar rounds "
              "up for maximum and down for minimum, a scalar beyond the dtype's range on the "
              "harmless side changes nothing, and one that would make every result "
              "unrepresentable (``maximum(int8, 1000)``) is an MXNetError (MXNet cast it, "
              "so ``maximum(uint8, -1)`` gave 255).",
    "arith": "The result keeps the array's dtype. For integer arrays an out-of-range integer "
             "scalar wraps in +, - and * (exact modulo ``2**bits``); a fractional scalar, an "
             "out-of-range one in the other ops, NaN or infinity is an MXNetError (MXNet "
             "truncated or wrapped it silently: ``int_array * 2.5`` multiplied by 2).",
}


def _scalar_doc_kind(kname):
    if kname in ("logical_and", "logical_or", "logical_xor"):
        return "logical"
    if kname in COMPARISONS:
        return "compare"
    return "minmax" if kname in ("maximum", "minimum") else "arith"


def legacy_scalar_name(kname, reverse):
    """MXNet's legacy CamelCase name of a scalar op: ``_PlusScalar``, ``_RMinusScalar``,
    ``_GreaterEqualScalar``."""
    camel = "".join(w.capitalize() for w in
                    {"add": "plus", "sub": "minus", "mul": "mul"}.get(kname, kname).split("_"))
    return f"_{'R' if reverse else ''}{camel}Scalar"


def _register_scalar():
    for name, (kname, reverse) in SCALAR_OPS.items():
        operands = "(scalar, x)" if reverse else "(x, scalar)"
        float_note = (" Integer arrays give float32." if kname in _FLOAT_RESULT
                      else " " + _SCALAR_DOC[_scalar_doc_kind(kname)])
        register(OpDef(
            name, inputs=("data",), aliases=(legacy_scalar_name(kname, reverse),),
            params=(Param("scalar", "number", 1.0, "the scalar operand: a number (an int is kept "
                          "exact)"),),
            infer_shape=same_shape, backward_shape="same", infer_type=_scalar_type(name, kname),
            compute={"cpu": _scalar_compute(name, kname, reverse)}, elementwise=True,
            float_rule="same", cpu_kernel=CpuKernel("rscalar" if reverse else "scalar",
                                                    _k.binary, _k.BINARY_IDS[kname]),
            gradient=NON_DIFFERENTIABLE if kname in COMPARISONS else _scalar_gradient(name),
            doc=f"Element-wise broadcast_{kname}{operands} with a Python scalar." + float_note
                + ("" if kname in LOGICAL_OPS else BOOL_NOTE)))


# ---- gradients (each built from registered ops, so it is differentiable again) --------------
_LN2, _LN10 = 0.6931471805599453, 2.302585092994046
_TWO_OVER_SQRT_PI, _SQRT_PI_OVER_TWO = 1.1283791670955126, 0.8862269254527580
_DEG = 57.29577951308232

def relu_step(F, x):
    """relu's derivative: 1 where x > 0, 0 where x <= 0 (also at exactly 0, as MXNet and most
    frameworks take it), and NaN where x is NaN: relu passes NaN through, so its slope there
    is undefined (MXNet's relu gradient propagates NaN too; a 0 would hide the NaN).
    sign(relu(x)) is all of that in two single-pass kernels (sign keeps NaN; a -0 input
    gives -0, which multiplies to a zero gradient like +0)."""
    return relu_step_of_output(F, F.relu(x))


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
    "relu": relu_step,
    "softsign": lambda F, x: F.reciprocal(F.square(F.abs(x) + 1)),
    "erf": lambda F, x: _TWO_OVER_SQRT_PI * F.exp(-F.square(x)),
    "erfinv": lambda F, x: _SQRT_PI_OVER_TWO * F.exp(F.square(F.erfinv(x))),
    "gamma": lambda F, x: F.gamma(x) * F._internal._polygamma(x, n=0),
    "gammaln": lambda F, x: F._internal._polygamma(x, n=0),
}


# d/dx f(x) written with the output y = f(x) where that is cheaper than from x (nothing is
# recomputed); the tape then keeps y instead of x. Each agrees with UNARY_DERIVATIVES.
UNARY_OUTPUT_DERIVATIVES = {
    "exp": lambda F, y: y,
    "expm1": lambda F, y: y + 1,
    "sqrt": lambda F, y: 0.5 * F.reciprocal(y),
    "rsqrt": lambda F, y: -0.5 * y * F.square(y),
    "reciprocal": lambda F, y: -F.square(y),
    "tanh": lambda F, y: 1 - F.square(y),
    "sigmoid": lambda F, y: y * (1 - y),
    "relu": lambda F, y: relu_step_of_output(F, y),
}


def relu_step_of_output(F, y):
    """``relu_step`` from relu's output y = relu(x): sign(y) is 1 where x > 0, 0 where
    x <= 0 and NaN where x is NaN, in one kernel. The tape then keeps y, which the next
    layer usually keeps anyway, and not x (a BatchNorm's or a sum's output)."""
    return F.sign(y)


def _unary_gradient(name):
    if name in UNARY_OUTPUT_DERIVATIVES:
        derivative, saved = UNARY_OUTPUT_DERIVATIVES[name], "outputs"
    else:
        derivative, saved = UNARY_DERIVATIVES[name], "inputs"

    def gradient(F, node, ograds):
        return [ograds[0] * derivative(F, getattr(node, saved)[0])]
    gradient.__doc__ = (f"Head gradient times d {name}(x)/dx, as UNARY_DERIVATIVES[{name!r}] "
                        "builds it" + (" from the output y." if saved == "outputs" else "."))
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
def _polygamma_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    work = np.float64 if x.dtype == np.float64 else F32
    target = y if y.dtype == work else rctx.xp.empty(y.shape, work)
    _k.polygamma(attrs.n, run_in(work, [x])[0].reshape(-1), target.reshape(-1))
    write_back(rctx.xp, target, y)


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
        infer_shape=same_shape, backward_shape="same", infer_type=infer_type,
        compute={"cpu": _polygamma_compute},
        gradient=_polygamma_gradient, elementwise=True,
        doc="Polygamma psi_n(x), the n-th derivative of digamma (n=0: digamma = d gammaln/dx). "
            "Poles give NaN; for n >= 1, x below -1e4 gives NaN."))


_register_unary()
_register_binary()
_register_scalar()
_register_polygamma()
_register_add_n()
