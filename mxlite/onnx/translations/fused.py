"""Fused operators of gradient graphs (``_norm_project``, ``_layer_norm_grad``,
``_gelu_derivative``, ``_rrelu_slope``), ``SVMOutput``'s forward pass, and the optimizer
operators that are functions of their inputs (they write no state): ``sgd_update``,
``signsgd_update``, ``lamb_update_phase2``, ``multi_sum_sq`` and ``multi_lars``."""
import math

import numpy as np

from ...ops.reduce import reduced_axes
from ..table import translates

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _c(ctx, value, dtype, base="const"):
    return ctx.const(np.asarray(value, dtype), base=base)


def _to(ctx, dtype):
    return ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _sum64(ctx, x, axes, dtype, keepdims=1):
    """The sum of ``x`` over ``axes`` accumulated in float64 (as mxlite's kernels), in
    ``dtype``; no axes: ``x`` itself."""
    if not axes:
        return x
    wide = ctx.cast(x, _F64) if np.dtype(dtype) != _F64 else x
    s = ctx.node("ReduceSum", [wide, ctx.int64s(axes, "axes")], keepdims=keepdims)
    return s if np.dtype(dtype) == _F64 else ctx.cast(s, dtype)


def _mean64(ctx, x, axes, dtype):
    """The mean over ``axes`` accumulated in float64, in ``dtype`` (the count from the
    value, so a symbolic batch axis may be among the axes)."""
    if not axes:
        return x
    wide = ctx.cast(x, _F64) if np.dtype(dtype) != _F64 else x
    m = ctx.node("ReduceMean", [wide, ctx.int64s(axes, "axes")], keepdims=1)
    return m if np.dtype(dtype) == _F64 else ctx.cast(m, dtype)


@translates("_norm_project", onnx_ops=["Mul", "Cast", "ReduceMean", "Add", "Sub"],
            opset=18,
            notes="rstd (grad - flag (mean(grad) + xhat mean(grad xhat))) + xhat scale + "
                  "shift, the means accumulated in float64")
def _norm_project(ctx, node, ins, outs):
    g, xhat, r, t, a, b = ins
    shape = ctx.shape(node.inputs[0])
    dt = ctx.dtype(node.inputs[0])
    red = list(reduced_axes("_norm_project", shape, node.attrs.axis, node.attrs.exclude))
    centre = ctx.node("Add", [_mean64(ctx, g, red, dt),
                              ctx.node("Mul", [xhat, _mean64(
                                  ctx, ctx.node("Mul", [g, xhat]), red, dt)])])
    p = ctx.node("Mul", [r, ctx.node("Sub", [g, ctx.node("Mul", [t, centre])])])
    ctx.node("Add", [ctx.node("Add", [p, ctx.node("Mul", [xhat, a])]), b], outs)


@translates("_layer_norm_grad", onnx_ops=["Reshape", "Reciprocal", "Sub", "Mul", "Cast",
                                          "ReduceMean", "ReduceSum", "Div", "Add",
                                          "Identity"], opset=18,
            notes="LayerNorm's input, gamma and beta gradients; the sums accumulated in "
                  "float64")
def _layer_norm_grad(ctx, node, ins, outs):
    gy, x, gamma, mean, std, gmean, gstd = ins
    shape = ctx.shape(node.inputs[1])
    dt = ctx.dtype(node.inputs[1])
    nd = len(shape)
    ax = node.attrs.axis % nd
    if ctx.dynamic and ax == 0:
        raise ctx.unsupported(node, "axis 0 with dynamic=True (the normalised size is baked "
                              "in)")
    n = shape[ax]
    red = [i for i in range(nd) if i != ax]
    pshape = [d if i == ax else 1 for i, d in enumerate(shape)]
    rs = ctx.node("Reciprocal", [std])
    xhat = ctx.node("Mul", [ctx.node("Sub", [x, mean]), rs])
    g = ctx.node("Mul", [gy, ctx.node("Reshape", [gamma, ctx.int64s(pshape)])])
    mg = _mean64(ctx, g, [ax], dt)
    mgx = _mean64(ctx, ctx.node("Mul", [g, xhat]), [ax], dt)
    count = _c(ctx, float(n), dt, "count")
    dx = ctx.node("Mul", [rs, ctx.node("Sub", [g, ctx.node("Add", [
        mg, ctx.node("Mul", [xhat, mgx])])])])
    dx = ctx.node("Add", [dx, ctx.node("Mul", [xhat, ctx.node("Div", [gstd, count])])])
    ctx.node("Add", [dx, ctx.node("Div", [gmean, count])], [outs[0]])
    # gamma's and beta's gradients: sums over every axis but `axis`, shape (n,)
    dgamma = _sum64(ctx, ctx.node("Mul", [gy, xhat]), red, dt, keepdims=0)
    dbeta = _sum64(ctx, gy, red, dt, keepdims=0)
    ctx.node("Identity", [dgamma], [outs[1]])
    ctx.node("Identity", [dbeta], [outs[2]])


# ---- the normal CDF in float64 without Erf (onnxruntime has no float64 Erf) -----------------
# Phi(x) = erfc(z) / 2 with z = -x / sqrt(2): erfc at the nearest point z0 of a grid of step
# 1/128 (a table made with math.erfc), then its Taylor series in d = z - z0 (|d| <= 1/256):
# erfc(z0 + d) = erfc(z0) - 2 / sqrt(pi) exp(-z0^2) sum_n (-1)^n H_n(z0) d^(n+1) / (n+1)!,
# H_n the Hermite polynomials. Twelve terms leave a relative error below 1e-16 up to z = 27.5,
# past which erfc underflows to 0; below z = -6 it is 2 to double precision. Relative, not
# absolute, accuracy: the far left tail of Phi keeps its digits.
_ERFC_STEP = 1.0 / 128
_ERFC_FIRST, _ERFC_LAST = -6 * 128, int(27.5 * 128)
_ERFC_TERMS = 12


def _erfc_table():
    return np.asarray([math.erfc(k * _ERFC_STEP)
                       for k in range(_ERFC_FIRST, _ERFC_LAST + 1)], _F64)


def _normal_cdf64(ctx, x):
    """Phi(x) of the float64 value ``x`` to double precision (relative), from elementwise
    ops and a Gather (NaN gives NaN)."""
    c = lambda v, base="const": _c(ctx, v, _F64, base)  # noqa: E731
    z = ctx.node("Mul", [x, c(-math.sqrt(0.5), "rsqrt2")])
    nan = ctx.node("IsNaN", [z])
    z = ctx.node("Where", [nan, c(0.0, "zero"), z])       # a valid table index for NaN
    z = ctx.node("Clip", [z, c(_ERFC_FIRST * _ERFC_STEP, "low"),
                          c(_ERFC_LAST * _ERFC_STEP, "high")])
    k = ctx.node("Round", [ctx.node("Mul", [z, c(1.0 / _ERFC_STEP, "grid")])])
    z0 = ctx.node("Mul", [k, c(_ERFC_STEP, "step")])     # exact: k / 128
    d = ctx.node("Sub", [z, z0])
    row = ctx.node("Sub", [ctx.cast(k, np.int64), ctx.const(np.int64(_ERFC_FIRST), base="first")])
    base = ctx.node("Gather", [ctx.const(_erfc_table(), base="erfc_table"), row], axis=0)
    # sum_n (-1)^n H_n(z0) d^(n+1) / (n+1)!, H_0 = 1, H_1 = 2 z0, H_n+1 = 2 z0 H_n - 2 n H_n-1
    two_z0 = ctx.node("Mul", [z0, c(2.0, "two")])
    h_prev, h = None, c(1.0, "one")
    power = d                                           # d^(n+1) / (n+1)!
    total = d
    for n in range(1, _ERFC_TERMS):
        h_next = two_z0 if h_prev is None else ctx.node("Sub", [
            ctx.node("Mul", [two_z0, h]), ctx.node("Mul", [h_prev, c(2.0 * (n - 1))])])
        h_prev, h = h, h_next
        power = ctx.node("Mul", [power, ctx.node("Mul", [d, c(1.0 / (n + 1))])])
        term = ctx.node("Mul", [h, power])
        total = ctx.node("Sub" if n % 2 else "Add", [total, term])
    gauss = ctx.node("Exp", [ctx.node("Neg", [ctx.node("Mul", [z0, z0])])])
    slope = ctx.node("Mul", [gauss, c(2.0 / math.sqrt(math.pi), "two_rsqrtpi")])
    erfc = ctx.node("Sub", [base, ctx.node("Mul", [slope, total])])
    phi = ctx.node("Mul", [erfc, c(0.5, "half")])
    return ctx.node("Where", [nan, x, phi])


@translates("_gelu_derivative", onnx_ops=["Cast", "Mul", "IsNaN", "Where", "Clip", "Round",
                                          "Sub", "Gather", "Add", "Exp", "Neg"],
            notes="order 1: Phi(x) + x phi(x); order 2: phi(x) (2 - x^2); in float64 (Phi "
                  "from a table of erfc and its Taylor series, as onnxruntime has no float64 "
                  "Erf), then the data's dtype")
def _gelu_derivative(ctx, node, ins, outs):
    out = ctx.dtype((node, 0))
    x = ins[0] if out == _F64 else ctx.cast(ins[0], _F64)
    sq = ctx.node("Mul", [x, x])
    phi = ctx.node("Mul", [ctx.node("Exp", [ctx.node("Mul", [sq, _c(ctx, -0.5, _F64)])]),
                           _c(ctx, 1.0 / math.sqrt(2.0 * math.pi), _F64, "rsqrt2pi")])
    last = outs if out == _F64 else None
    if node.attrs.order == 1:
        y = ctx.node("Add", [_normal_cdf64(ctx, x), ctx.node("Mul", [x, phi])], last)
    else:
        y = ctx.node("Mul", [phi, ctx.node("Sub", [_c(ctx, 2.0, _F64, "two"), sq])], last)
    if out != _F64:
        ctx.node("Cast", [y], outs, to=_to(ctx, out))


@translates("_rrelu_slope", onnx_ops=["Cast", "Less", "Div", "Where"],
            notes="x < 0 ? y / x : 1 (float16 divides in float32)")
def _rrelu_slope(ctx, node, ins, outs):
    out = ctx.dtype((node, 0))
    work = _F32 if out == np.float16 else out
    x, y = (v if ctx.dtype(e) == work else ctx.cast(v, work) for v, e in zip(ins, node.inputs))
    neg = ctx.node("Less", [x, _c(ctx, 0.0, work, "zero")])
    s = ctx.node("Where", [neg, ctx.node("Div", [y, x]), _c(ctx, 1.0, work, "one")],
                 outs if work == out else None)
    if work != out:
        ctx.node("Cast", [s], outs, to=_to(ctx, out))


@translates("SVMOutput", onnx_ops=["Identity"], unread=(1,),
            notes="the forward pass: the identity (the label only shapes the gradient)")
def _svm_output(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs[:1])


# ---- optimizer operators that are functions of their inputs ----------------------------------
def _consts(dt, lr, wd):
    """lr and the decay ``1 - lr * wd`` rounded as mxlite's kernels round them: each
    parameter in the weight's dtype, the decay computed in it."""
    lr_t, wd_t = np.asarray(lr, dt), np.asarray(wd, dt)
    return lr_t, np.asarray(np.asarray(1, dt) - lr_t * wd_t, dt)


def _lr(ctx, lr):
    return _c(ctx, lr, lr.dtype, "lr")


def _decayed(ctx, w, decay):
    """decay * w, where decay 1 leaves w (the same bits)."""
    return w if decay == 1 else ctx.node("Mul", [_c(ctx, decay, decay.dtype, "decay"), w])


@translates("sgd_update", onnx_ops=["Mul", "Clip", "Sub"],
            notes="a new array: (1 - lr wd) weight - lr clip(rescale_grad grad, "
                  "clip_gradient); lazy_update has no effect (dense arrays)")
def _sgd_update(ctx, node, ins, outs):
    a = node.attrs
    dt = ctx.dtype(node.inputs[0])
    w, g = ins
    lr, decay = _consts(dt, a.lr, a.wd)
    g = ctx.node("Mul", [_c(ctx, a.rescale_grad, dt, "rescale"), g])
    if a.clip_gradient > 0:     # 0 or below: no clipping
        g = ctx.node("Clip", [g, _c(ctx, -a.clip_gradient, dt, "low"),
                              _c(ctx, a.clip_gradient, dt, "high")])
    ctx.node("Sub", [_decayed(ctx, w, decay), ctx.node("Mul", [_lr(ctx, lr), g])], outs)


def _sign(ctx, g, dt):
    """(g > 0) - (g < 0) in ``dt``: NaN has sign 0 (as mxlite's kernel)."""
    zero = _c(ctx, 0.0, dt, "zero")
    return ctx.node("Sub", [ctx.cast(ctx.node("Greater", [g, zero]), dt),
                            ctx.cast(ctx.node("Less", [g, zero]), dt)])


@translates("signsgd_update", onnx_ops=["Greater", "Less", "Cast", "Sub", "Mul"],
            notes="a new array: (1 - lr wd) weight - lr sign(grad); rescale_grad and "
                  "clip_gradient do not change a sign")
def _signsgd_update(ctx, node, ins, outs):
    a = node.attrs
    dt = ctx.dtype(node.inputs[0])
    lr, decay = _consts(dt, a.lr, a.wd)
    step = ctx.node("Mul", [_lr(ctx, lr), _sign(ctx, ins[1], dt)])
    ctx.node("Sub", [_decayed(ctx, ins[0], decay), step], outs)


@translates("lamb_update_phase2", onnx_ops=["Cast", "Reshape", "Max", "Min", "Div", "Mul",
                                            "Equal", "Or", "Where", "Sub"],
            notes="a new array: weight - lr r1 / r2 g (r1 bounded, lr alone where a norm is "
                  "0), the rate in float64")
def _lamb_update_phase2(ctx, node, ins, outs):
    a = node.attrs
    dt = ctx.dtype(node.inputs[0])
    w, g, r1, r2 = ins
    r1, r2 = (ctx.node("Reshape", [ctx.cast(v, _F64), ctx.int64s([], "scalar")])
              for v in (r1, r2))
    if a.lower_bound > 0:
        r1 = ctx.node("Max", [r1, _c(ctx, a.lower_bound, _F64, "lower")])
    if a.upper_bound > 0:
        r1 = ctx.node("Min", [r1, _c(ctx, a.upper_bound, _F64, "upper")])
    zero = _c(ctx, 0.0, _F64, "zero")
    lr = _c(ctx, a.lr, _F64, "lr")
    none = ctx.node("Or", [ctx.node("Equal", [r1, zero]), ctx.node("Equal", [r2, zero])])
    rate = ctx.node("Where", [none, lr, ctx.node("Mul", [lr, ctx.node("Div", [r1, r2])])])
    ctx.node("Sub", [w, ctx.node("Mul", [ctx.cast(rate, dt), g])], outs)


@translates("multi_sum_sq", onnx_ops=["Cast", "Mul", "Reshape", "ReduceSum", "Concat"],
            opset=18,
            notes="each square in the array's dtype (float16: float32), summed in float64, "
                  "as float32")
def _multi_sum_sq(ctx, node, ins, outs):
    sums = []
    for x, e in zip(ins, node.inputs):
        dt = ctx.dtype(e)
        work = _F64 if dt == _F64 else _F32
        x = ctx.node("Reshape", [x if dt == work else ctx.cast(x, work), ctx.int64s([-1])])
        sq = ctx.node("Mul", [x, x])
        sq = sq if work == _F64 else ctx.cast(sq, _F64)
        s = ctx.node("ReduceSum", [sq, ctx.int64s([0], "axes")], keepdims=1)
        sums.append(ctx.cast(s, _F32))
    ctx.node("Concat", sums, outs, axis=0)


@translates("multi_lars", onnx_ops=["Sqrt", "Mul", "Greater", "And", "Add", "Div", "Where"],
            notes="lr eta wn / (gn + wd wn + eps) where both norms are positive, else lr "
                  "(wn = sqrt(weights_sum_sq), gn = sqrt(grads_sum_sq) rescale_grad)")
def _multi_lars(ctx, node, ins, outs):
    a = node.attrs
    lrs, w2, g2, wds = ins
    w = ctx.node("Sqrt", [w2])
    g = ctx.node("Mul", [ctx.node("Sqrt", [g2]), _c(ctx, a.rescale_grad, _F32, "rescale")])
    zero = _c(ctx, 0.0, _F32, "zero")
    ok = ctx.node("And", [ctx.node("Greater", [w, zero]), ctx.node("Greater", [g, zero])])
    den = ctx.node("Add", [ctx.node("Add", [ctx.node("Mul", [wds, w]), g]),
                           _c(ctx, a.eps, _F32, "eps")])
    num = ctx.node("Mul", [ctx.node("Mul", [lrs, w]), _c(ctx, a.eta, _F32, "eta")])
    ctx.node("Where", [ok, ctx.node("Div", [num, den]), lrs], outs)
