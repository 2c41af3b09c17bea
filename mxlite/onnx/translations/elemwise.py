"""Element-wise operators: unary math, binary (same shape or broadcast), with a scalar."""
import numpy as np

from ..table import translates

# mxlite unary op -> ONNX op of the same function
_UNARY = {
    "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
    "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "erf": "Erf", "floor": "Floor",
    "ceil": "Ceil", "sign": "Sign", "sin": "Sin", "cos": "Cos", "tan": "Tan",
    "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh", "reciprocal": "Reciprocal",
    "softsign": "Softsign", "_copy": "Identity", "BlockGrad": "Identity",
    "logical_not": None,
}


def _unary(onnx_op):
    def translate(ctx, node, ins, outs):
        ctx.in_dtype_it_takes(onnx_op, node, ins, outs)
    return translate


for _name, _op in _UNARY.items():
    if _op is not None:
        translates(_name, onnx_ops=[_op])(_unary(_op))


def _in_output_dtype(ctx, node, ins):
    """The inputs cast to the output's dtype where they differ (mxlite promotes mixed
    dtypes, and computes an integer's sqrt in float32; ONNX's operators take one dtype)."""
    out = ctx.dtype((node, 0))
    return [x if ctx.dtype(e) == out else ctx.cast(x, out) for x, e in zip(ins, node.inputs)]


@translates("square", onnx_ops=["Mul"])
def _square(ctx, node, ins, outs):
    x = _in_output_dtype(ctx, node, ins)[0]
    ctx.node("Mul", [x, x], outs)


@translates("rsqrt", onnx_ops=["Sqrt", "Reciprocal"])
def _rsqrt(ctx, node, ins, outs):
    x = _in_output_dtype(ctx, node, ins)[0]
    ctx.node("Reciprocal", [ctx.node("Sqrt", [x])], outs)


@translates("log1p", onnx_ops=["Add", "Log"], notes="log(1 + x): less accurate near 0 than "
            "log1p")
def _log1p(ctx, node, ins, outs):
    x = _in_output_dtype(ctx, node, ins)[0]
    one = ctx.const(np.ones((), ctx.dtype((node, 0))), base="one")
    ctx.node("Log", [ctx.node("Add", [x, one])], outs)


@translates("expm1", onnx_ops=["Exp", "Sub"], notes="exp(x) - 1: less accurate near 0 than "
            "expm1")
def _expm1(ctx, node, ins, outs):
    x = _in_output_dtype(ctx, node, ins)[0]
    one = ctx.const(np.ones((), ctx.dtype((node, 0))), base="one")
    ctx.node("Sub", [ctx.node("Exp", [x]), one], outs)


# binary ops; the elemwise_* forms take equal shapes, broadcast_* NumPy-style broadcasting
# (MXNet's broadcasting is NumPy's for these), both ONNX's multidirectional broadcasting
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div"}
_BROADCAST = {"maximum": "Max", "minimum": "Min", "power": "Pow"}


def _binary(onnx_op):
    def translate(ctx, node, ins, outs):
        ctx.in_dtype_it_takes(onnx_op, node, ins, outs)
    return translate


for _short, _op in _BINARY.items():
    translates(f"elemwise_{_short}", f"broadcast_{_short}", onnx_ops=[_op])(_binary(_op))
# MXNet's sparse-storage forms; a graph exports dense arrays, where they are the plain ops
translates("_scatter_elemwise_div", onnx_ops=["Div"])(_binary("Div"))
for _short, _op in _BROADCAST.items():
    translates(f"broadcast_{_short}", f"_{_short}", onnx_ops=[_op])(_binary(_op))


# x op scalar, and the reversed forms scalar op x
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}


def _with_scalar(onnx_op, reverse):
    def translate(ctx, node, ins, outs):
        out = ctx.dtype((node, 0))
        x = _in_output_dtype(ctx, node, ins)[0]
        s = ctx.const(np.asarray(node.attrs.scalar, out), base="scalar")
        pair = [s, x] if reverse else [x, s]
        if ctx.takes(onnx_op, out):
            ctx.node(onnx_op, pair, outs)
        else:
            wide = [ctx.cast(v, np.float64) for v in pair]
            ctx.node("Cast", [ctx.node(onnx_op, wide)], outs,
                     to=ctx.onnx.helper.np_dtype_to_tensor_dtype(out))
    return translate


for _name, (_op, _rev) in _SCALAR.items():
    translates(_name, onnx_ops=[_op])(_with_scalar(_op, _rev))
for _name, _op in (("_scatter_plus_scalar", "Add"), ("_scatter_minus_scalar", "Sub")):
    translates(_name, onnx_ops=[_op])(_with_scalar(_op, False))


@translates("clip", onnx_ops=["Clip"])
def _clip(ctx, node, ins, outs):
    dt = ctx.dtype(node.inputs[0])
    lo = ctx.const(np.asarray(node.attrs.a_min, dt), base="min")
    hi = ctx.const(np.asarray(node.attrs.a_max, dt), base="max")
    ctx.node("Clip", [ins[0], lo, hi], outs)


@translates("add_n", onnx_ops=["Sum", "Add"], notes="integers: a chain of Add")
def _add_n(ctx, node, ins, outs):
    ins = _in_output_dtype(ctx, node, ins)
    if ctx.takes("Sum", ctx.dtype((node, 0))):
        ctx.node("Sum", ins, outs)
        return
    acc = ins[0]
    for i, x in enumerate(ins[1:]):
        acc = ctx.node("Add", [acc, x], outs if i == len(ins) - 2 else None)


@translates("where", onnx_ops=["Cast", "Where"], notes="condition: non-zero is true")
def _where(ctx, node, ins, outs):
    cond = ctx.node("Cast", [ins[0]], to=ctx.onnx.TensorProto.BOOL)
    ctx.node("Where", [cond, ins[1], ins[2]], outs)


@translates("cast", onnx_ops=["Cast"])
def _cast(ctx, node, ins, outs):
    to = ctx.onnx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0)))
    ctx.node("Cast", ins, outs, to=to)


def _float_input(ctx, node, ins):
    """The input as ONNX's IsNaN/IsInf take it: integers cast to float64 (never NaN or
    infinite)."""
    x = ins[0]
    return [x if ctx.takes("IsNaN", ctx.dtype(node.inputs[0])) else ctx.cast(x, np.float64)]


@translates("_contrib_isnan", onnx_ops=["IsNaN", "Cast"])
def _isnan(ctx, node, ins, outs):
    _as_output(ctx, node, ctx.node("IsNaN", _float_input(ctx, node, ins)), outs)


@translates("_contrib_isinf", onnx_ops=["IsInf", "Cast"])
def _isinf(ctx, node, ins, outs):
    _as_output(ctx, node, ctx.node("IsInf", _float_input(ctx, node, ins)), outs)


@translates("_contrib_isfinite", onnx_ops=["IsInf", "IsNaN", "Or", "Not", "Cast"])
def _isfinite(ctx, node, ins, outs):
    x = _float_input(ctx, node, ins)
    bad = ctx.node("Or", [ctx.node("IsInf", x), ctx.node("IsNaN", x)])
    _as_output(ctx, node, ctx.node("Not", [bad]), outs)


def _as_output(ctx, node, boolean, outs):
    """A bool ONNX value cast to the node's output dtype."""
    to = ctx.onnx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0)))
    ctx.node("Cast", [boolean], outs, to=to)
