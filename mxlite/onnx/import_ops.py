"""The importers of ONNX operators (registered in ``import_table.IMPORTS``). Each takes the
node's input ``Value``s and returns its output ``Value``s: Symbols of registered mxlite
operators, or constants folded with NumPy when every input is known at import time."""
import numpy as np

from .import_table import imports


def _S():
    from .. import symbol
    return symbol


def _value(const):
    from .importer import Value
    return Value(const=np.asarray(const))


def _all_const(ins):
    return all(v is None or v.is_const for v in ins)


def _unary(mx_name, np_fn=None, **kwargs):
    def handler(ic, node, ins):
        if np_fn is not None and ins[0].is_const:
            return [_value(np_fn(ins[0].const))]
        return [ic.out(getattr(_S(), mx_name)(ic.sym(ins[0]), **kwargs), node)]
    return handler


for _t, (_m, _f) in {"Relu": ("relu", None), "Sigmoid": ("sigmoid", None),
                     "Tanh": ("tanh", None), "Exp": ("exp", np.exp), "Log": ("log", np.log),
                     "Sqrt": ("sqrt", np.sqrt), "Abs": ("abs", np.abs),
                     "Neg": ("negative", np.negative), "Erf": ("erf", None),
                     "Floor": ("floor", np.floor), "Ceil": ("ceil", np.ceil),
                     "Sign": ("sign", np.sign), "Sin": ("sin", None), "Cos": ("cos", None),
                     "Tan": ("tan", None), "Asin": ("arcsin", None), "Acos": ("arccos", None),
                     "Atan": ("arctan", None), "Sinh": ("sinh", None), "Cosh": ("cosh", None),
                     "Asinh": ("arcsinh", None), "Acosh": ("arccosh", None),
                     "Atanh": ("arctanh", None), "Reciprocal": ("reciprocal", None),
                     "Softsign": ("softsign", None)}.items():
    imports(_t, into=[_m])(_unary(_m, _f))


@imports("Identity", "Dropout", into=["_copy"])
def _identity(ic, node, ins):
    """Identity, and Dropout in inference: the input itself (Dropout's mask output, when
    asked for, is all true)."""
    outs = [ins[0]]
    if len(node.output) > 1 and node.output[1]:
        shape = ins[0].shape
        outs.append(_value(np.ones(shape, bool)) if shape is not None else None)
    return outs


@imports("Softplus", into=["Activation"])
def _softplus(ic, node, ins):
    return [ic.out(_S().Activation(ic.sym(ins[0]), act_type="softrelu"), node)]


def _scalar_of(v):
    """The Python number of a constant holding one value, else None."""
    if v is not None and v.is_const and v.const.size == 1:
        return float(v.const.reshape(()))
    return None


_NP_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": None,
              "Pow": np.power, "Max": np.maximum, "Min": np.minimum}
_MX_BINARY = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul",
              "Div": "broadcast_div", "Pow": "broadcast_power", "Max": "broadcast_maximum",
              "Min": "broadcast_minimum"}
# x op scalar / scalar op x
_MX_SCALAR = {"Add": ("_plus_scalar", "_plus_scalar"), "Sub": ("_minus_scalar", "_rminus_scalar"),
              "Mul": ("_mul_scalar", "_mul_scalar"), "Div": ("_div_scalar", "_rdiv_scalar"),
              "Pow": ("_power_scalar", "_rpower_scalar"),
              "Max": ("_maximum_scalar", "_maximum_scalar"),
              "Min": ("_minimum_scalar", "_minimum_scalar")}


def _int_div(a, b):
    if np.issubdtype(np.result_type(a, b), np.integer):
        return np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b))
    return np.true_divide(a, b).astype(np.result_type(a, b))


def _binary(op_type):
    def handler(ic, node, ins):
        if len(ins) == 1:                       # Max / Min of one: itself
            return [ins[0]]
        if len(ins) > 2:                        # Max / Min / Sum of several
            acc = handler(ic, node, ins[:2])[0]
            for v in ins[2:]:
                acc = handler(ic, node, [acc, v])[0]
            return [acc]
        a, b = ins
        if _all_const(ins):
            fn = _NP_BINARY[op_type] or _int_div
            return [_value(fn(a.const, b.const))]
        sa, sb = _scalar_of(a), _scalar_of(b)
        out_shape = ic.shapes.get(node.output[0], (None, None))[0]
        internal = _S()._internal
        if sb is not None and out_shape is not None and a.shape == tuple(out_shape):
            return [ic.out(getattr(internal, _MX_SCALAR[op_type][0])(ic.sym(a), scalar=sb),
                           node)]
        if sa is not None and out_shape is not None and b.shape == tuple(out_shape):
            return [ic.out(getattr(internal, _MX_SCALAR[op_type][1])(ic.sym(b), scalar=sa),
                           node)]
        return [ic.out(getattr(_S(), _MX_BINARY[op_type])(ic.sym(a), ic.sym(b)), node)]
    return handler


for _t in _MX_BINARY:
    imports(_t, into=[_MX_BINARY[_t], *sorted(set(_MX_SCALAR[_t]))])(_binary(_t))


@imports("Sum", into=["add_n"])
def _sum(ic, node, ins):
    if len(ins) == 1:
        return [ins[0]]
    return [ic.out(_S().add_n(*[ic.sym(v) for v in ins]), node)]


_COMPARE = {"Equal": "broadcast_equal", "Greater": "broadcast_greater",
            "GreaterOrEqual": "broadcast_greater_equal", "Less": "broadcast_lesser",
            "LessOrEqual": "broadcast_lesser_equal"}


def _compare(op_type):
    def handler(ic, node, ins):
        a, b = ins
        if _all_const(ins):
            fn = {"Equal": np.equal, "Greater": np.greater, "GreaterOrEqual": np.greater_equal,
                  "Less": np.less, "LessOrEqual": np.less_equal}[op_type]
            return [_value(fn(a.const, b.const))]
        # mxlite's comparisons give 1/0 in the inputs' dtype; ONNX's are bool (so a bool
        # keeps its dtype through a Loop's carried values)
        return [ic.out(_bool(getattr(_S(), _COMPARE[op_type])(ic.sym(a), ic.sym(b))), node)]
    return handler


def _bool(sym):
    """A 1/0 result as mxlite's bool, ONNX's dtype for it."""
    return _S().cast(sym, dtype="bool")


for _t in _COMPARE:
    imports(_t, into=[_COMPARE[_t], "cast"])(_compare(_t))


@imports("Not", into=["logical_not"])
def _not(ic, node, ins):
    if ins[0].is_const:
        return [_value(np.logical_not(ins[0].const))]
    return [ic.out(_S().logical_not(ic.sym(ins[0])), node)]


@imports("Or", into=["broadcast_logical_or"])
def _or(ic, node, ins):
    if _all_const(ins):
        return [_value(np.logical_or(ins[0].const, ins[1].const))]
    return [ic.out(_S().broadcast_logical_or(ic.sym(ins[0]), ic.sym(ins[1])), node)]


@imports("IsNaN", into=["_contrib_isnan", "cast"])
def _isnan(ic, node, ins):
    return [ic.out(_bool(_S().contrib.isnan(ic.sym(ins[0]))), node)]


@imports("IsInf", into=["_contrib_isinf", "_contrib_isposinf", "_contrib_isneginf", "cast"])
def _isinf(ic, node, ins):
    pos, neg = ic.attr(node, "detect_positive", 1), ic.attr(node, "detect_negative", 1)
    x = ic.sym(ins[0])
    c = _S().contrib
    fn = c.isinf if pos and neg else c.isposinf if pos else c.isneginf
    return [ic.out(_bool(fn(x)), node)]


@imports("Cast", into=["cast"])
def _cast(ic, node, ins):
    dtype = np.dtype(ic.onnx.helper.tensor_dtype_to_np_dtype(ic.attr(node, "to")))
    if ins[0].is_const:
        return [_value(ins[0].const.astype(dtype))]
    return [ic.out(_S().cast(ic.sym(ins[0]), dtype=dtype.name), node)]


@imports("Where", into=["where", "broadcast_to"])
def _where(ic, node, ins):
    """mxlite's where of operands broadcast to the output's shape (ONNX's, else the
    broadcast of the operands' static shapes)."""
    shape = ic.shapes.get(node.output[0], (None, None))[0]
    if shape is None and all(v.shape is not None for v in ins):
        shape = np.broadcast_shapes(*[v.shape for v in ins])
    if shape is None:
        raise ic.error(node, "needs a static output shape")
    c, a, b = (ic.sym(v) for v in ins)
    c, a, b = (x if v.shape == tuple(shape) else _S().broadcast_to(x, shape=tuple(shape))
               for x, v in zip((c, a, b), ins))
    return [ic.out(_S().where(c, a, b), node)]


@imports("Clip", into=["clip"])
def _clip(ic, node, ins):
    lo = _scalar_of(ins[1]) if len(ins) > 1 and ins[1] is not None else ic.attr(node, "min")
    hi = _scalar_of(ins[2]) if len(ins) > 2 and ins[2] is not None else ic.attr(node, "max")
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    return [ic.out(_S().clip(ic.sym(ins[0]), a_min=lo, a_max=hi), node)]


# ---- layers -------------------------------------------------------------------------------
def _spatial_pads(ic, node, nd, x=None, kernel=None):
    """(begin, end) pads of a convolution or pool over ``nd`` spatial axes: ``pads``, or
    what ``auto_pad`` asks (VALID: none; SAME_UPPER/SAME_LOWER: the output ceil(size /
    stride), the odd one at the end/beginning; this needs the input ``x``'s static shape
    and the ``kernel``)."""
    auto = ic.attr(node, "auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto == "VALID":
        return [0] * nd, [0] * nd
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        if x is None or kernel is None:
            raise ic.error(node, f"auto_pad={auto} (give explicit pads)")
        if x.shape is None:
            raise ic.error(node, f"auto_pad={auto} needs the input's static shape")
        begin, end = [], []
        strides = ic.attr(node, "strides", [1] * nd)
        dilations = ic.attr(node, "dilations", [1] * nd)
        for n, k, s, d in zip(x.shape[2:], kernel, strides, dilations):
            total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            small = total // 2
            begin.append(small if auto == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
        return begin, end
    if auto != "NOTSET":
        raise ic.error(node, f"auto_pad={auto}")
    pads = list(ic.attr(node, "pads", [0] * (2 * nd)))
    return pads[:nd], pads[nd:]


def _symmetric(ic, node, begin, end):
    if begin != end:
        raise ic.error(node, f"asymmetric pads {begin + end} (mxlite pads both sides alike)")
    return tuple(begin)


def _zero_padded(ic, node, x, begin, end):
    """(``x``'s Symbol, the symmetric pads a convolution takes): the part of asymmetric
    ``begin``/``end`` spatial pads beyond the smaller side as zeros joined on first."""
    pad = tuple(min(b, e) for b, e in zip(begin, end))
    extra = [(b - p, e - p) for b, e, p in zip(begin, end, pad)]
    y = ic.sym(x)
    if not any(b or e for b, e in extra):
        return y, pad
    if x.shape is None:
        raise ic.error(node, f"asymmetric pads {begin + end} need the input's static shape")
    now = list(x.shape)
    for ax, (b, e) in enumerate(extra, start=2):
        blocks = []
        for w in (b, e):
            size = list(now)
            size[ax] = w
            blocks.append(ic.sym(_value(np.zeros(size, x.dtype or np.float32))) if w else None)
        y = _S().concat(*[p for p in (blocks[0], y, blocks[1]) if p is not None], dim=ax)
        now[ax] += b + e
    return y, pad


@imports("Conv", into=["Convolution", "concat"])
def _conv(ic, node, ins):
    """Convolution; asymmetric pads: the extra zeros joined on the input first."""
    w_shape = ins[1].shape
    if w_shape is None:
        raise ic.error(node, "needs the weight's shape")
    nd = len(w_shape) - 2
    kernel = tuple(ic.attr(node, "kernel_shape", w_shape[2:]))
    begin, end = _spatial_pads(ic, node, nd, ins[0], kernel)
    x, pad = _zero_padded(ic, node, ins[0], begin, end)
    args = [x, ic.sym(ins[1])] + ([ic.sym(ins[2])] if len(ins) > 2 and ins[2]
                                  is not None else [])
    y = _S().Convolution(*args, kernel=kernel, num_filter=w_shape[0],
                         stride=tuple(ic.attr(node, "strides", [1] * nd)),
                         dilate=tuple(ic.attr(node, "dilations", [1] * nd)), pad=pad,
                         num_group=ic.attr(node, "group", 1), no_bias=len(args) == 2)
    return [ic.out(y, node)]


@imports("ConvTranspose", into=["Deconvolution"])
def _conv_transpose(ic, node, ins):
    w_shape = ins[1].shape
    if w_shape is None:
        raise ic.error(node, "needs the weight's shape")
    if ic.attr(node, "output_shape") is not None:
        raise ic.error(node, "output_shape (give pads and output_padding)")
    nd = len(w_shape) - 2
    group = ic.attr(node, "group", 1)
    begin, end = _spatial_pads(ic, node, nd)
    pad = _symmetric(ic, node, begin, end)
    args = [ic.sym(ins[0]), ic.sym(ins[1])] + ([ic.sym(ins[2])] if len(ins) > 2 and ins[2]
                                               is not None else [])
    y = _S().Deconvolution(*args, kernel=tuple(ic.attr(node, "kernel_shape", w_shape[2:])),
                           num_filter=w_shape[1] * group,
                           stride=tuple(ic.attr(node, "strides", [1] * nd)),
                           dilate=tuple(ic.attr(node, "dilations", [1] * nd)), pad=pad,
                           adj=tuple(ic.attr(node, "output_padding", [0] * nd)),
                           num_group=group, no_bias=len(args) == 2)
    return [ic.out(y, node)]


@imports("Gemm", into=["FullyConnected", "dot", "_mul_scalar", "broadcast_add"])
def _gemm(ic, node, ins):
    alpha, beta = ic.attr(node, "alpha", 1.0), ic.attr(node, "beta", 1.0)
    ta, tb = ic.attr(node, "transA", 0), ic.attr(node, "transB", 0)
    S = _S()
    c = ins[2] if len(ins) > 2 else None
    b_shape = ins[1].shape
    if not ta and tb and alpha == 1.0 and beta == 1.0 and b_shape is not None and (
            c is None or (c.shape is not None and c.shape == (b_shape[0],))):
        args = [ic.sym(ins[0]), ic.sym(ins[1])] + ([ic.sym(c)] if c is not None else [])
        return [ic.out(S.FullyConnected(*args, num_hidden=b_shape[0], no_bias=c is None),
                       node)]
    y = S.dot(ic.sym(ins[0]), ic.sym(ins[1]), transpose_a=bool(ta), transpose_b=bool(tb))
    if alpha != 1.0:
        y = S._internal._mul_scalar(y, scalar=alpha)
    if c is not None:
        cs = ic.sym(c)
        if beta != 1.0:
            cs = S._internal._mul_scalar(cs, scalar=beta)
        y = S.broadcast_add(y, cs)
    return [ic.out(y, node)]


@imports("MatMul", into=["dot", "batch_dot", "reshape", "broadcast_to"])
def _matmul(ic, node, ins):
    """NumPy's matmul: a 2-D right operand is a ``dot``; otherwise both operands are
    broadcast over their batch axes and multiplied as one ``batch_dot`` (a 1-D operand
    gains, then loses, a unit axis)."""
    a, b = ins
    if a.shape is None or b.shape is None:
        raise ic.error(node, "needs static operand shapes")
    if _all_const(ins):
        return [_value(np.matmul(a.const, b.const))]
    S = _S()
    if len(b.shape) == 2 and len(a.shape) >= 1:
        return [ic.out(S.dot(ic.sym(a), ic.sym(b)), node)]
    sa, sb = ic.sym(a), ic.sym(b)
    ash, bsh = a.shape, b.shape
    if len(ash) == 1:
        ash = (1,) + ash
        sa = S.reshape(sa, shape=ash)
    if len(bsh) == 1:
        bsh = bsh + (1,)
        sb = S.reshape(sb, shape=bsh)
    batch = tuple(np.broadcast_shapes(ash[:-2], bsh[:-2]))
    m, k, n = ash[-2], ash[-1], bsh[-1]
    if bsh[-2] != k:
        raise ic.error(node, f"operands of shapes {a.shape} and {b.shape}")
    size = int(np.prod(batch))

    def as3(x, shape, rows, cols):
        if tuple(shape[:-2]) != batch:
            x = S.reshape(x, shape=(1,) * (len(batch) + 2 - len(shape)) + tuple(shape))
            x = S.broadcast_to(x, shape=batch + (rows, cols))
        return S.reshape(x, shape=(size, rows, cols))
    y = S.batch_dot(as3(sa, ash, m, k), as3(sb, bsh, k, n))
    out = batch + ((m,) if len(a.shape) > 1 else ()) + ((n,) if len(b.shape) > 1 else ())
    return [ic.out(S.reshape(y, shape=out), node)]


@imports("BatchNormalization", into=["BatchNorm"])
def _batch_norm(ic, node, ins):
    names = node.input
    args = [ic.sym(ins[0]), ic.sym(ins[1], name=names[1] if ins[1].is_const else None),
            ic.sym(ins[2], name=names[2] if ins[2].is_const else None),
            ic.sym(ins[3], name=names[3] if ins[3].is_const else None, aux=True),
            ic.sym(ins[4], name=names[4] if ins[4].is_const else None, aux=True)]
    y = _S().BatchNorm(*args, eps=ic.attr(node, "epsilon", 1e-5), fix_gamma=False,
                       use_global_stats=True, momentum=ic.attr(node, "momentum", 0.9))
    return [ic.out(y, node)]


@imports("LayerNormalization", into=["LayerNorm"])
def _layer_norm(ic, node, ins):
    axis = ic.attr(node, "axis", -1)
    rank = len(ins[0].shape) if ins[0].shape is not None else None
    if axis != -1 and (rank is None or axis != rank - 1):
        raise ic.error(node, f"axis={axis} (mxlite's LayerNorm normalises one axis: the last)")
    args = [ic.sym(ins[0]), ic.sym(ins[1])]
    if len(ins) > 2 and ins[2] is not None:
        args.append(ic.sym(ins[2]))
    else:
        c = ins[1].shape
        args.append(ic.sym(_value(np.zeros(c, ins[1].dtype))))
    eps = ic.attr(node, "epsilon", 1e-5)
    stats = len(node.output) > 1 and any(node.output[1:])
    y = _S().LayerNorm(*args, axis=-1, eps=eps, output_mean_var=stats)
    if not stats:
        return [ic.out(y, node)]
    outs = [ic.out(y[0], node), ic.out(y[1], node, 1)]
    if len(node.output) > 2:            # ONNX's InvStdDev: 1 / mxlite's standard deviation
        outs.append(ic.out(_S().reciprocal(y[2]), node, 2))
    return outs


def _pool(kind, global_pool=False):
    def handler(ic, node, ins):
        S = _S()
        x = ic.sym(ins[0])
        if global_pool:
            extra = {"p_value": ic.attr(node, "p", 2)} if kind == "lp" else {}
            return [ic.out(S.Pooling(x, kernel=(1, 1), global_pool=True, pool_type=kind,
                                     **extra), node)]
        kernel = tuple(ic.attr(node, "kernel_shape"))
        nd = len(kernel)
        begin, end = _spatial_pads(ic, node, nd, ins[0], kernel)
        pad = _symmetric(ic, node, begin, end)
        if any(d != 1 for d in ic.attr(node, "dilations", [1] * nd)):
            raise ic.error(node, "dilated pooling")
        kw = dict(kernel=kernel, stride=tuple(ic.attr(node, "strides", [1] * nd)), pad=pad,
                  pool_type=kind,
                  pooling_convention="full" if ic.attr(node, "ceil_mode", 0) else "valid")
        if kind == "avg":
            kw["count_include_pad"] = bool(ic.attr(node, "count_include_pad", 0))
        if kind == "lp":
            kw["p_value"] = ic.attr(node, "p", 2)
        return [ic.out(S.Pooling(x, **kw), node)]
    return handler


imports("MaxPool", into=["Pooling"])(_pool("max"))
imports("AveragePool", into=["Pooling"])(_pool("avg"))
imports("LpPool", into=["Pooling"])(_pool("lp"))
imports("GlobalMaxPool", into=["Pooling"])(_pool("max", True))
imports("GlobalAveragePool", into=["Pooling"])(_pool("avg", True))
imports("GlobalLpPool", into=["Pooling"])(_pool("lp", True))


@imports("Softmax", into=["softmax"])
def _softmax(ic, node, ins):
    return [ic.out(_S().softmax(ic.sym(ins[0]), axis=ic.attr(node, "axis", -1)), node)]


@imports("LogSoftmax", into=["log_softmax"])
def _log_softmax(ic, node, ins):
    return [ic.out(_S().log_softmax(ic.sym(ins[0]), axis=ic.attr(node, "axis", -1)), node)]


@imports("Hardmax", into=["_contrib_hardmax"])
def _hardmax(ic, node, ins):
    return [ic.out(_S().contrib.hardmax(ic.sym(ins[0]), axis=ic.attr(node, "axis", -1)), node)]


@imports("LeakyRelu", into=["LeakyReLU"])
def _leaky(ic, node, ins):
    return [ic.out(_S().LeakyReLU(ic.sym(ins[0]), act_type="leaky",
                                  slope=ic.attr(node, "alpha", 0.01)), node)]


@imports("Elu", into=["LeakyReLU"])
def _elu(ic, node, ins):
    return [ic.out(_S().LeakyReLU(ic.sym(ins[0]), act_type="elu",
                                  slope=ic.attr(node, "alpha", 1.0)), node)]


@imports("Selu", into=["LeakyReLU"])
def _selu(ic, node, ins):
    alpha, gamma = ic.attr(node, "alpha", 1.67326319217681884765625), \
        ic.attr(node, "gamma", 1.05070102214813232421875)
    if abs(alpha - 1.6732632423543772) > 1e-6 or abs(gamma - 1.0507009873554805) > 1e-6:
        raise ic.error(node, f"alpha={alpha}, gamma={gamma} (mxlite's selu has the standard "
                             "constants)")
    return [ic.out(_S().LeakyReLU(ic.sym(ins[0]), act_type="selu"), node)]


@imports("Gelu", into=["LeakyReLU"])
def _gelu(ic, node, ins):
    approx = ic.attr(node, "approximate", b"none")
    if approx not in (b"none", "none"):
        raise ic.error(node, f"approximate={approx!r} (mxlite's gelu is the erf form)")
    return [ic.out(_S().LeakyReLU(ic.sym(ins[0]), act_type="gelu"), node)]


@imports("PRelu", into=["LeakyReLU"])
def _prelu(ic, node, ins):
    slope = ins[1]
    if slope.shape is None:
        raise ic.error(node, "needs the slope's shape")
    n = int(np.prod(slope.shape))
    s = _S().reshape(ic.sym(slope), shape=(n,)) if slope.shape != (n,) else ic.sym(slope)
    return [ic.out(_S().LeakyReLU(ic.sym(ins[0]), s, act_type="prelu"), node)]


@imports("LRN", into=["LRN"])
def _lrn(ic, node, ins):
    size = ic.attr(node, "size")
    if size % 2 == 0:
        raise ic.error(node, f"size={size} (even: the window is not centred)")
    return [ic.out(_S().LRN(ic.sym(ins[0]), nsize=size, alpha=ic.attr(node, "alpha", 1e-4),
                            beta=ic.attr(node, "beta", 0.75), knorm=ic.attr(node, "bias", 1.0)),
                   node)]


# ---- shapes and indexing -----------------------------------------------------------------
@imports("Constant", into=[])
def _constant(ic, node, ins):
    a = node.attribute[0]
    value = ic.onnx.helper.get_attribute_value(a)
    if a.name == "value":
        return [_value(ic.onnx.numpy_helper.to_array(value))]
    if a.name in ("value_float", "value_int"):
        return [_value(np.asarray(value, np.float32 if a.name == "value_float" else np.int64))]
    if a.name in ("value_floats", "value_ints"):
        return [_value(np.asarray(value, np.float32 if a.name == "value_floats" else np.int64))]
    raise ic.error(node, f"Constant's {a.name}")


@imports("Shape", into=[])
def _shape(ic, node, ins):
    if ins[0].shape is None:
        raise ic.error(node, "the shape must be static (known from the model's input shapes)")
    shape = np.asarray(ins[0].shape, np.int64)
    start, end = ic.attr(node, "start", 0), ic.attr(node, "end", None)
    return [_value(shape[start:end])]


@imports("ConstantOfShape", into=["zeros", "full"])
def _constant_of_shape(ic, node, ins):
    shape = tuple(int(d) for d in ic.const(node, ins[0], "the shape"))
    t = ic.attr(node, "value")
    fill = ic.onnx.numpy_helper.to_array(t) if t is not None else np.zeros(1, np.float32)
    return [_value(np.full(shape, fill.reshape(()), fill.dtype))]


@imports("Reshape", into=["reshape"])
def _reshape(ic, node, ins):
    target = [int(d) for d in ic.const(node, ins[1], "the target shape")]
    if ic.attr(node, "allowzero", 0) and 0 in target:
        # a literal 0 (mxlite's 0 copies the input's axis): the result is empty, a constant
        if -1 in target:
            raise ic.error(node, "allowzero=1 with both 0 and -1 in the shape")
        return [_value(np.zeros(target, ins[0].dtype or np.float32))]
    if ins[0].is_const:
        src = ins[0].const
        shape = [src.shape[i] if d == 0 else d for i, d in enumerate(target)]
        return [_value(src.reshape(shape))]
    return [ic.out(_S().reshape(ic.sym(ins[0]), shape=tuple(target)), node)]


@imports("Flatten", into=["flatten", "reshape"])
def _flatten(ic, node, ins):
    axis = ic.attr(node, "axis", 1)
    if axis == 1:
        return [ic.out(_S().flatten(ic.sym(ins[0])), node)]
    shape = ins[0].shape
    if shape is None:
        raise ic.error(node, f"axis={axis} needs the input's static shape")
    axis %= max(len(shape), 1)
    rows = int(np.prod(shape[:axis]))
    return [ic.out(_S().reshape(ic.sym(ins[0]), shape=(rows, -1)), node)]


@imports("Transpose", into=["transpose"])
def _transpose(ic, node, ins):
    perm = ic.attr(node, "perm")
    if ins[0].is_const:
        return [_value(np.transpose(ins[0].const, perm))]
    kw = {"axes": tuple(perm)} if perm is not None else {}
    return [ic.out(_S().transpose(ic.sym(ins[0]), **kw), node)]


def _axes(ic, node, ins, i, what="axes"):
    if len(ins) > i and ins[i] is not None:
        return [int(a) for a in ic.const(node, ins[i], what)]
    a = ic.attr(node, what)
    return None if a is None else [int(x) for x in a]


@imports("Unsqueeze", into=["expand_dims", "reshape"])
def _unsqueeze(ic, node, ins):
    axes = _axes(ic, node, ins, 1)
    rank = (len(ins[0].shape) if ins[0].shape is not None else None)
    if rank is None:
        raise ic.error(node, "needs the input's rank")
    out_rank = rank + len(axes)
    axes = sorted(a % out_rank for a in axes)
    if ins[0].is_const:
        return [_value(np.expand_dims(ins[0].const, tuple(axes)))]
    if rank == 0:
        return [ic.out(_S().reshape(_as_one(ic, ins[0]), shape=(1,) * out_rank), node)]
    y = ic.sym(ins[0])
    for a in axes:
        y = _S().expand_dims(y, axis=a)
    return [ic.out(y, node)]


@imports("Squeeze", into=["squeeze"])
def _squeeze(ic, node, ins):
    axes = _axes(ic, node, ins, 1)
    if ins[0].is_const:
        return [_value(np.squeeze(ins[0].const, None if axes is None else tuple(axes)))]
    kw = {} if axes is None else {"axis": tuple(axes)}
    return [ic.out(_S().squeeze(ic.sym(ins[0]), **kw), node)]


@imports("Concat", into=["concat"])
def _concat(ic, node, ins):
    axis = ic.attr(node, "axis")
    if _all_const(ins):
        return [_value(np.concatenate([v.const for v in ins], axis=axis))]
    return [ic.out(_S().concat(*[ic.sym(v) for v in ins], dim=axis), node)]


@imports("Split", into=["split", "slice_axis"])
def _split(ic, node, ins):
    shape = ins[0].shape
    if shape is None:
        raise ic.error(node, "needs the input's static shape")
    axis = ic.attr(node, "axis", 0) % len(shape)
    n = len(node.output)
    sizes = _axes(ic, node, ins, 1, "split")
    if sizes is None:
        sizes = [-(-shape[axis] // n)] * (n - 1)
        sizes.append(shape[axis] - sum(sizes))
    S = _S()
    if all(s == sizes[0] for s in sizes) and sizes[0] * n == shape[axis]:
        parts = S.split(ic.sym(ins[0]), num_outputs=n, axis=axis)
        parts = [parts] if n == 1 else list(parts)
    else:
        starts = np.cumsum([0] + sizes[:-1])
        parts = [S.slice_axis(ic.sym(ins[0]), axis=axis, begin=int(b), end=int(b + s))
                 for b, s in zip(starts, sizes)]
    return [ic.out(p, node, i) for i, p in enumerate(parts)]


@imports("Slice", into=["slice"])
def _slice(ic, node, ins):
    shape = ins[0].shape
    starts = [int(v) for v in ic.const(node, ins[1], "starts")]
    ends = [int(v) for v in ic.const(node, ins[2], "ends")]
    rank = len(shape) if shape is not None else None
    axes = _axes(ic, node, ins, 3) or list(range(len(starts)))
    steps = _axes(ic, node, ins, 4, "steps") or [1] * len(starts)
    if ins[0].is_const:
        index = [slice(None)] * ins[0].const.ndim
        for a, b, e, s in zip(axes, starts, ends, steps):
            index[a] = slice(b, e, s)
        return [_value(ins[0].const[tuple(index)])]
    if rank is None:
        raise ic.error(node, "needs the input's rank")
    begin, end, step = [None] * rank, [None] * rank, [None] * rank
    big = np.iinfo(np.int64).max // 2
    for a, b, e, s in zip(axes, starts, ends, steps):
        a %= rank
        n = shape[a]
        begin[a] = b
        end[a] = None if (s > 0 and e >= n) or (s < 0 and e <= -n - 1) or abs(e) >= big else e
        step[a] = s
    last = max(i for i in range(rank) if begin[i] is not None or step[i] is not None) + 1
    y = _S().slice(ic.sym(ins[0]), begin=tuple(begin[:last]), end=tuple(end[:last]),
                   step=tuple(1 if s is None else s for s in step[:last]))
    return [ic.out(y, node)]


@imports("Gather", into=["take", "squeeze", "reshape"])
def _gather(ic, node, ins):
    axis = ic.attr(node, "axis", 0)
    if _all_const(ins):
        return [_value(np.take(ins[0].const, ins[1].const, axis=axis))]
    # ONNX's negative indices count from the end: MXNet's 'wrap' mode maps them the same
    idx = ins[1]
    mode = "wrap" if not idx.is_const or (idx.const < 0).any() else "clip"
    S = _S()
    if idx.shape == ():         # a scalar index drops the axis
        return [ic.out(S.squeeze(S.take(ic.sym(ins[0]), _as_one(ic, idx), axis=axis,
                                        mode=mode), axis=axis), node)]
    return [ic.out(S.take(ic.sym(ins[0]), ic.sym(idx), axis=axis, mode=mode), node)]


def _as_one(ic, value):
    """A scalar ``value`` as a Symbol of shape (1,): mxlite's symbolic shapes read () as
    unknown, so a scalar computed at run time may be held as (1,) (a loop's iteration
    number) or as () (a scalar model input); the reshape makes a rank-sensitive consumer
    (Gather's index, Unsqueeze's input) the same for both."""
    return _S().reshape(ic.sym(value), shape=(1,))


@imports("Expand", into=["broadcast_to"])
def _expand(ic, node, ins):
    target = tuple(int(d) for d in ic.const(node, ins[1], "the shape"))
    if ins[0].shape is None:
        raise ic.error(node, "needs the input's static shape")
    shape = np.broadcast_shapes(ins[0].shape, target)
    if ins[0].is_const:
        return [_value(np.broadcast_to(ins[0].const, shape).copy())]
    x = ic.sym(ins[0])
    if len(ins[0].shape) < len(shape):
        x = _S().reshape(x, shape=(1,) * (len(shape) - len(ins[0].shape)) + ins[0].shape)
    return [ic.out(_S().broadcast_to(x, shape=shape), node)]


@imports("Tile", into=["tile"])
def _tile(ic, node, ins):
    reps = tuple(int(r) for r in ic.const(node, ins[1], "repeats"))
    return [ic.out(_S().tile(ic.sym(ins[0]), reps=reps), node)]


_PAD_INDEX = {"edge": lambda i, n: np.clip(i, 0, n - 1),
              "reflect": lambda i, n: (n - 1) - np.abs((n - 1) - np.abs(i) % (2 * n - 2))
              if n > 1 else np.zeros_like(i),
              "wrap": lambda i, n: i % n}


def _pad_args(ic, node, ins, rank):
    """(per-axis (before, after) widths, constant value, mode) of a Pad node (inputs from
    opset 11, attributes before; an ``axes`` input names the padded axes)."""
    if len(ins) > 1 and ins[1] is not None:
        pads = [int(p) for p in ic.const(node, ins[1], "pads")]
        value = ic.const(node, ins[2], "the constant value") if len(ins) > 2 and \
            ins[2] is not None else np.zeros(1)
        value = value.reshape(-1)[0] if value.size else 0
    else:
        pads, value = list(ic.attr(node, "pads")), ic.attr(node, "value", 0.0)
    axes = [int(a) % rank for a in ic.const(node, ins[3], "axes")] if len(ins) > 3 and \
        ins[3] is not None else list(range(rank))
    n = len(pads) // 2
    widths = [(0, 0)] * rank
    for i, a in enumerate(axes[:n]):
        widths[a] = (pads[i], pads[n + i])
    mode = ic.attr(node, "mode", b"constant")
    return widths, value, mode.decode() if isinstance(mode, bytes) else mode


@imports("Pad", into=["Pad", "concat", "take", "slice_axis"])
def _pad(ic, node, ins):
    """MXNet's Pad where it applies (float 4-D or 5-D data, the first two axes unpadded);
    else a constant border as constant blocks joined on (a negative width crops), and
    edge, reflect and wrap as a ``take`` of the positions each padded axis reads."""
    shape = ins[0].shape
    if shape is None:
        raise ic.error(node, "needs the input's static shape")
    widths, value, mode = _pad_args(ic, node, ins, len(shape))
    if mode not in ("constant", *_PAD_INDEX):
        raise ic.error(node, f"mode={mode!r}")
    negative = any(w < 0 for pair in widths for w in pair)
    if negative and mode != "constant":
        raise ic.error(node, f"negative pads with mode={mode!r}")
    if mode == "reflect" and any(max(w) >= n and max(w) > 0 for w, n in zip(widths, shape)):
        raise ic.error(node, "reflect widths as long as the axis")
    dtype = ins[0].dtype or np.dtype(np.float32)
    if ins[0].is_const:
        x = ins[0].const
        crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, shape))
        grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        kw = {"constant_values": value} if mode == "constant" else {}
        return [_value(np.pad(x[crop], grow, mode={"edge": "edge", "reflect": "reflect",
                                                   "wrap": "wrap"}.get(mode, "constant"),
                              **kw).astype(x.dtype))]
    S = _S()
    if len(shape) in (4, 5) and dtype.kind == "f" and not any(widths[0]) and \
            not any(widths[1]) and not negative:
        flat = tuple(v for pair in widths for v in pair)
        return [ic.out(S.Pad(ic.sym(ins[0]), mode=mode, pad_width=flat,
                             constant_value=float(value)), node)]
    y, now = ic.sym(ins[0]), list(shape)
    for ax, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        n = now[ax]
        if mode != "constant":
            where = _PAD_INDEX[mode](np.arange(-lo, n + hi), n).astype(np.int64)
            y = S.take(y, ic.sym(_value(where)), axis=ax, mode="clip")
            now[ax] = n + lo + hi
            continue
        if lo < 0 or hi < 0:
            y = S.slice_axis(y, axis=ax, begin=max(-lo, 0), end=n - max(-hi, 0))
            n = now[ax] = n - max(-lo, 0) - max(-hi, 0)
        parts = []
        for w in (lo, hi):
            block = list(now)
            block[ax] = max(w, 0)
            parts.append(ic.sym(_value(np.full(block, value, dtype))) if w > 0 else None)
        y = S.concat(*[p for p in (parts[0], y, parts[1]) if p is not None], dim=ax)
        now[ax] = n + max(lo, 0) + max(hi, 0)
    return [ic.out(y, node)]


def _reduce(mx_name, np_fn):
    def handler(ic, node, ins):
        axes = _axes(ic, node, ins, 1)
        keep = bool(ic.attr(node, "keepdims", 1))
        if axes is None and ic.attr(node, "noop_with_empty_axes", 0):
            return [ins[0]]
        if ins[0].is_const:
            return [_value(np_fn(ins[0].const, axis=None if axes is None else tuple(axes),
                                 keepdims=keep))]
        kw = {} if axes is None else {"axis": tuple(axes)}
        return [ic.out(getattr(_S(), mx_name)(ic.sym(ins[0]), keepdims=keep, **kw), node)]
    return handler


for _t, (_m, _f) in {"ReduceSum": ("sum", np.sum), "ReduceMean": ("mean", np.mean),
                     "ReduceMax": ("max", np.max), "ReduceMin": ("min", np.min),
                     "ReduceProd": ("prod", np.prod)}.items():
    imports(_t, into=[_m])(_reduce(_m, _f))


def _arg(mx_name):
    def handler(ic, node, ins):
        if ic.attr(node, "select_last_index", 0):
            raise ic.error(node, "select_last_index=1")
        y = getattr(_S(), mx_name)(ic.sym(ins[0]), axis=ic.attr(node, "axis", 0),
                                   keepdims=bool(ic.attr(node, "keepdims", 1)))
        return [ic.out(y, node)]     # float indices, as MXNet's (a Cast follows on export)
    return handler


imports("ArgMax", into=["argmax"])(_arg("argmax"))
imports("ArgMin", into=["argmin"])(_arg("argmin"))


@imports("OneHot", into=["one_hot"])
def _one_hot(ic, node, ins):
    depth = int(np.asarray(ic.const(node, ins[1], "depth")).reshape(()))
    values = ic.const(node, ins[2], "values")
    if ic.attr(node, "axis", -1) != -1:
        raise ic.error(node, "an axis other than -1")
    out_dtype = ic.shapes.get(node.output[0], (None, values.dtype))[1] or values.dtype
    return [ic.out(_S().one_hot(ic.sym(ins[0]), depth=depth, on_value=float(values[1]),
                                off_value=float(values[0]), dtype=np.dtype(out_dtype).name),
                   node)]


@imports("Mod", into=["broadcast_mod", "abs", "sign", "broadcast_mul"])
def _mod(ic, node, ins):
    """fmod=0: mxlite's mod (the divisor's sign). fmod=1 (C's fmod, the dividend's sign):
    sign(a) * mod(|a|, |b|), exact as fmod (mxlite's mod of non-negative operands is C's
    fmod)."""
    fmod = ic.attr(node, "fmod", 0)
    if _all_const(ins):
        return [_value((np.fmod if fmod else np.mod)(ins[0].const, ins[1].const))]
    S = _S()
    if not fmod:
        return [ic.out(S.broadcast_mod(ic.sym(ins[0]), ic.sym(ins[1])), node)]

    def magnitude(v):
        return ic.sym(_value(np.abs(v.const))) if v.is_const else S.abs(ic.sym(v))
    size = S.broadcast_mod(magnitude(ins[0]), magnitude(ins[1]))
    return [ic.out(S.broadcast_mul(S.sign(ic.sym(ins[0])), size), node)]
