"""Neural-network layers: FullyConnected, Activation, LeakyReLU, the softmax family,
softmax_cross_entropy and the loss (output) layers.

Every FGradient is a graph of registered operators (dot, sum, where, softmax, ...), so each
layer differentiates to any order: the gradient penalty of a WGAN-GP critic (a gradient of a
gradient) works through all of them. The element-wise kernels MXNet's layers need beyond
``mxlite._core.elemwise`` (softrelu, ELU, SELU, GELU, PReLU, the softmax rows) are in
``mxlite._core.activation``.
"""
import numpy as np

from .._core import activation as _act
from .._core import elemwise as _ew
from ..base import FLOAT_DTYPES, op_error
from .common import compute_dtype, run_in, write_back
from .linalg import _blocked_matmul
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import size_of

_ADD = _ew.BINARY_IDS["add"]


def _float_inputs(name, dtypes, names):
    """The one float dtype every (present) input shares; MXNetError naming the input
    otherwise."""
    dt = dtypes[0]
    for i, d in enumerate(dtypes):
        if d not in FLOAT_DTYPES:
            raise op_error(name, f"input {names[i]!r} must have a float dtype, got {d}")
        if d != dt:
            raise op_error(name, f"inputs must share one dtype: {names[0]!r} is {dt}, "
                           f"{names[i]!r} is {d}")
    return dt


# ---- FullyConnected ----------------------------------------------------------------------------
def _fc_inputs(attrs):
    return ("data", "weight") if attrs.no_bias else ("data", "weight", "bias")


def _fc_geometry(data_shape, attrs):
    """(rows, k, output shape) of FullyConnected on data of ``data_shape``: flatten reads data
    as ``(shape[0], prod(shape[1:]))``; otherwise the last axis is the input one."""
    h = attrs.num_hidden
    if attrs.flatten:
        if len(data_shape) == 0:
            raise op_error("FullyConnected", "data must have at least one dimension, got ()")
        rows, k = data_shape[0], size_of(data_shape[1:])
        return rows, k, (rows, h)
    if len(data_shape) == 0:
        raise op_error("FullyConnected", "data must have at least one dimension, got ()")
    return size_of(data_shape[:-1]), data_shape[-1], tuple(data_shape[:-1]) + (h,)


def _fc_shape(shapes, attrs):
    names = _fc_inputs(attrs)
    if len(shapes) != len(names):
        raise op_error("FullyConnected", f"expected inputs {list(names)} (no_bias="
                       f"{attrs.no_bias}), got {len(shapes)}")
    if attrs.num_hidden < 1:
        raise op_error("FullyConnected", f"num_hidden must be positive, got {attrs.num_hidden}")
    data, weight = tuple(shapes[0]), tuple(shapes[1])
    _, k, out = _fc_geometry(data, attrs)
    if weight != (attrs.num_hidden, k):
        raise op_error("FullyConnected", f"weight has shape {weight}; data of shape {data} "
                       f"(flatten={attrs.flatten}) with num_hidden={attrs.num_hidden} needs "
                       f"({attrs.num_hidden}, {k})")
    if not attrs.no_bias and tuple(shapes[2]) != (attrs.num_hidden,):
        raise op_error("FullyConnected", f"bias has shape {tuple(shapes[2])}; expected "
                       f"({attrs.num_hidden},)")
    return [out]


def _fc_backward_shape(in_shapes, out_shapes, attrs):
    """weight ``(num_hidden, k)`` and bias ``(num_hidden,)`` from data (MXNet's rule)."""
    filled = list(in_shapes)
    data = in_shapes[0]
    if data is not None and filled[1] is None:
        filled[1] = (attrs.num_hidden, _fc_geometry(tuple(data), attrs)[1])
    if not attrs.no_bias and filled[2] is None:
        filled[2] = (attrs.num_hidden,)
    return filled


def _fc_type(dtypes, attrs):
    return [_float_inputs("FullyConnected", dtypes, _fc_inputs(attrs))]


def _fc_compute(rctx, ins, outs, attrs):
    out = outs[0]
    xp = rctx.xp
    work = compute_dtype(out.dtype)
    ins = run_in(work, ins)
    data, weight = ins[0], ins[1]
    h, k = weight.shape
    rows = out.size // h if h else 0
    target = out if out.dtype == work else xp.empty(out.shape, work)
    t2 = target.reshape(rows, h)
    # y = x W^T: a transposed view of W, which BLAS reads without a copy
    _blocked_matmul(xp, data.reshape(rows, k), weight.T, t2)
    if not attrs.no_bias and t2.size:
        _ew.binary(_ADD, t2, ins[2], t2)
    write_back(xp, target, out)


def _fc_gradient(F, node, ograds):
    """y = x W^T + b with x read as (rows, k):  dx = G W,  dW = G^T x,  db = sum_rows G --
    dots and a sum, each differentiable again."""
    attrs = node.attrs
    data_shape, weight_shape = node.input_shapes[0], node.input_shapes[1]
    h, k = weight_shape
    rows = _fc_geometry(data_shape, attrs)[0]
    wants = node.wants
    g = ograds[0]
    if node.output_shapes[0] != (rows, h):
        g = F.reshape(g, shape=(rows, h))
    x, w = node.inputs[0], node.inputs[1]
    dx = dw = db = None
    if wants[0]:
        dx = F.dot(g, w)
        if data_shape != (rows, k):
            dx = F.reshape(dx, shape=data_shape)
    if wants[1]:
        x2 = x if data_shape == (rows, k) else F.reshape(x, shape=(rows, k))
        dw = F.dot(g, x2, transpose_a=True)
    if not attrs.no_bias and wants[2]:
        db = F.sum(g, axis=0)
    return [dx, dw] if attrs.no_bias else [dx, dw, db]


register(OpDef(
    "FullyConnected", inputs=("data", "weight", "bias"),
    params=(Param("num_hidden", "int", doc="number of output units"),
            Param("no_bias", "bool", False, "leave out the bias (the op takes no bias input)"),
            Param("flatten", "bool", True, "read data as (batch, prod(rest)); False applies "
                  "the layer to the last axis")),
    list_inputs=_fc_inputs, backward_shape=_fc_backward_shape,
    infer_shape=_fc_shape, infer_type=_fc_type, compute={"cpu": _fc_compute},
    gradient=_fc_gradient,
    doc="""Dense layer: ``out = data . weight^T + bias``.

With ``flatten=True`` (default) ``data`` of shape ``(n, d1, ..., dk)`` is read as
``(n, d1*...*dk)`` and the output is ``(n, num_hidden)``; with ``flatten=False`` the layer
applies to the last axis and the output is ``data.shape[:-1] + (num_hidden,)``. ``weight``
is ``(num_hidden, k)``, ``bias`` ``(num_hidden,)``; ``no_bias=True`` drops the bias input.
Shape inference fills weight and bias from data (``infer_shape_partial``). Float dtypes
only, one dtype for every input (float16 computes in float32). The product goes to BLAS
with a transposed view of ``weight`` (no copy). The gradient is dots and a sum, so it
differentiates to any order.

>>> x = mx.nd.ones((2, 3)); w = mx.nd.ones((4, 3)); b = mx.nd.array([0, 1, 2, 3])
>>> mx.nd.FullyConnected(x, w, b, num_hidden=4).asnumpy().tolist()
[[3.0, 4.0, 5.0, 6.0], [3.0, 4.0, 5.0, 6.0]]
>>> mx.nd.FullyConnected(mx.nd.ones((2, 5, 3)), w, num_hidden=4, no_bias=True,
...                      flatten=False).shape
(2, 5, 4)
"""))


# ---- Activation ----------------------------------------------------------------------------------
_ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")
_UNARY_ACT = {name: _ew.UNARY_IDS[name] for name in ("relu", "sigmoid", "tanh", "softsign")}


def _act_type(name, input_names):
    def infer_type(dtypes, attrs):
        return [_float_inputs(name, dtypes, input_names)]
    return infer_type


def _activation_compute(rctx, ins, outs, attrs):
    out = outs[0]
    work = compute_dtype(out.dtype)
    (x,) = run_in(work, ins[:1])
    target = out if out.dtype == work else rctx.xp.empty(out.shape, work)
    kind = attrs.act_type
    if kind == "softrelu":
        _act.activation(_act.ACT_IDS["softrelu"], x.reshape(-1), target.reshape(-1))
    else:
        _ew.unary(_UNARY_ACT[kind], x, target)
    write_back(rctx.xp, target, out)


def _activation_gradient(F, node, ograds):
    """relu: g (x > 0);  sigmoid: g y (1 - y);  tanh: g (1 - y^2);  softrelu: g sigmoid(x);
    softsign: g / (1 + |x|)^2.  (y is the output.)"""
    g = ograds[0]
    kind = node.attrs.act_type
    if kind == "relu":
        # the step function; at exactly 0 it is 0, as MXNet's relu gradient
        return [g * (node.inputs[0] > 0)]
    if kind == "sigmoid":
        y = node.outputs[0]
        return [g * (y * (1 - y))]
    if kind == "tanh":
        y = node.outputs[0]
        return [g * (1 - F.square(y))]
    x = node.inputs[0]
    if kind == "softrelu":
        return [g * F.sigmoid(x)]
    return [g / F.square(F.abs(x) + 1)]


register(OpDef(
    "Activation", inputs=("data",),
    params=(Param("act_type", "str", doc="the activation function",
                  choices=_ACT_TYPES),),
    infer_shape=lambda shapes, attrs: [shapes[0]], backward_shape="same",
    infer_type=_act_type("Activation", ("data",)), compute={"cpu": _activation_compute},
    gradient=_activation_gradient, grad_needs=("inputs", "outputs"), elementwise=True,
    doc="""Element-wise activation ``act_type``: ``relu`` max(x, 0), ``sigmoid``
1 / (1 + exp(-x)), ``tanh``, ``softrelu`` log(1 + exp(x)) (computed as
``max(x, 0) + log1p(exp(-|x|))``, finite for any x), ``softsign`` x / (1 + |x|).

Float dtypes (float16 computes in float32). The gradients of sigmoid and tanh are written
with the output, relu's is 0 at x = 0 (MXNet's choice); all are registered ops, so they
differentiate again.

>>> mx.nd.Activation(mx.nd.array([-1, 0, 2]), act_type='relu').asnumpy().tolist()
[0.0, 0.0, 2.0]
>>> mx.nd.Activation(mx.nd.array([1000.0, -1000.0]), act_type='softrelu').asnumpy().tolist()
[1000.0, 0.0]
"""))


# ---- LeakyReLU ---------------------------------------------------------------------------------
_LEAKY_TYPES = ("elu", "gelu", "leaky", "prelu", "rrelu", "selu")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946
_RSQRT2 = 0.70710678118654752440
_RSQRT2PI = 0.39894228040143267794


def _leaky_inputs(attrs):
    return ("data", "gamma") if attrs.act_type == "prelu" else ("data",)


def _prelu_geometry(data, gamma):
    """(outer, channels, inner) of PReLU's data: gamma runs along axis 1, or is one slope."""
    if len(gamma) != 1:
        raise op_error("LeakyReLU", f"gamma must be 1-D, got shape {gamma}")
    if gamma[0] == 1:
        return 1, 1, size_of(data)
    if len(data) < 2 or data[1] != gamma[0]:
        raise op_error("LeakyReLU", f"prelu: gamma of shape {gamma} must have one slope per "
                       f"channel (axis 1) of data {data}, or be (1,)")
    return data[0], data[1], size_of(data[2:])


def _leaky_shape(shapes, attrs):
    names = _leaky_inputs(attrs)
    if len(shapes) != len(names):
        raise op_error("LeakyReLU", f"act_type={attrs.act_type!r} takes inputs {list(names)}, "
                       f"got {len(shapes)}")
    data = tuple(shapes[0])
    if attrs.act_type == "prelu":
        _prelu_geometry(data, tuple(shapes[1]))
    if attrs.act_type == "rrelu" and not attrs.lower_bound <= attrs.upper_bound:
        raise op_error("LeakyReLU", f"rrelu needs lower_bound <= upper_bound, got "
                       f"{attrs.lower_bound} and {attrs.upper_bound}")
    return [data]


def _leaky_backward_shape(in_shapes, out_shapes, attrs):
    filled = list(in_shapes)
    known = in_shapes[0] or next((s for s in out_shapes if s is not None), None)
    filled[0] = known
    if attrs.act_type == "prelu" and filled[1] is None and known is not None and len(known) > 1:
        filled[1] = (known[1],)
    return filled


def _leaky_type(dtypes, attrs):
    return [_float_inputs("LeakyReLU", dtypes, _leaky_inputs(attrs))]


def _leaky_compute(rctx, ins, outs, attrs):
    out = outs[0]
    xp = rctx.xp
    work = compute_dtype(out.dtype)
    ins = run_in(work, ins)
    x = ins[0]
    target = out if out.dtype == work else xp.empty(out.shape, work)
    kind = attrs.act_type
    flat_x, flat_y = x.reshape(-1), target.reshape(-1)
    if kind == "prelu":
        outer, c, inner = _prelu_geometry(x.shape, ins[1].shape)
        _act.prelu(flat_x, ins[1].reshape(-1), flat_y, outer, c, inner)
    elif kind == "rrelu":
        mask = xp.empty(x.shape, work)
        _rrelu_mask(rctx, x, mask, attrs)
        _ew.binary(_ew.BINARY_IDS["mul"], x, mask, target)
    elif kind == "selu":
        _act.activation(_act.ACT_IDS["selu"], flat_x, flat_y, _SELU_ALPHA, _SELU_LAMBDA)
    else:
        _act.activation(_act.ACT_IDS[kind], flat_x, flat_y, attrs.slope)
    write_back(xp, target, out)


def _rrelu_mask(rctx, x, mask, attrs):
    """The slope each element of RReLU uses: 1 where x > 0; elsewhere a uniform draw from
    [lower_bound, upper_bound] in training, their mean in inference."""
    from .._core import random as _rnd
    lo, hi = attrs.lower_bound, attrs.upper_bound
    flat = mask.reshape(-1)
    if rctx.is_train and hi > lo:
        key, offset = rctx.rng.next()
        _rnd.fill_continuous("uniform", flat, key, offset, lo, hi - lo, hi, hi)
    else:
        flat.fill((lo + hi) / 2)
    positive = rctx.xp.empty(x.shape, x.dtype)
    _ew.binary(_ew.BINARY_IDS["greater"], x, rctx.xp.scalar(0, x.dtype), positive)
    # mask = positive ? 1 : slope  ==  slope + positive * (1 - slope)
    one_minus = rctx.xp.empty(x.shape, x.dtype)
    _ew.binary(_ew.BINARY_IDS["sub"], rctx.xp.scalar(1, x.dtype), mask, one_minus)
    _ew.binary(_ew.BINARY_IDS["mul"], positive, one_minus, one_minus)
    _ew.binary(_ADD, mask, one_minus, mask)


def _nonpositive_exp(F, x):
    """exp(min(x, 0)): the exponential branch of ELU/SELU, finite for any x (a where()
    selects it only for x <= 0, and an infinity in the unselected branch would turn into
    NaN in the next order's gradient)."""
    return F.exp(F._internal._minimum_scalar(x, scalar=0))


def _leaky_gradient(F, node, ograds):
    """leaky: g (x > 0 ? 1 : slope);  elu: g (x > 0 ? 1 : slope exp(x));
    selu: g lambda (x > 0 ? 1 : alpha exp(x));  gelu: g (Phi(x) + x phi(x));
    prelu: dx = g (x > 0 ? 1 : gamma), dgamma = sum of g x over x <= 0 per channel;
    rrelu: g s, with s the slope the forward pass used (``_rrelu_slope``)."""
    attrs = node.attrs
    kind = attrs.act_type
    g = ograds[0]
    x = node.inputs[0]
    if kind == "rrelu":
        return [g * F._internal._rrelu_slope(x, node.outputs[0])]
    if kind == "gelu":
        phi_term = x * F.exp(F.square(x) * -0.5) * _RSQRT2PI
        return [g * ((F.erf(x * _RSQRT2) + 1) * 0.5 + phi_term)]
    positive = x > 0
    if kind == "leaky":
        return [F.where(positive, g, g * attrs.slope)]
    if kind == "elu":
        return [F.where(positive, g, g * (_nonpositive_exp(F, x) * attrs.slope))]
    if kind == "selu":
        return [F.where(positive, g * _SELU_LAMBDA,
                        g * (_nonpositive_exp(F, x) * (_SELU_LAMBDA * _SELU_ALPHA)))]
    # prelu
    data_shape, gamma_shape = node.input_shapes
    gamma = node.inputs[1]
    if gamma_shape[0] == 1 or len(data_shape) < 2:
        gb_shape = (1,) * len(data_shape)
    else:
        gb_shape = (1, gamma_shape[0]) + (1,) * (len(data_shape) - 2)
    gb = F.reshape(gamma, shape=gb_shape)
    dx = dgamma = None
    if node.wants[0]:
        dx = F.where(positive, g, F.broadcast_mul(g, gb))
    if node.wants[1]:
        dgamma = F.sum_to(F.where(positive, F.zeros_like(g), g * x), shape=gb_shape)
        dgamma = F.reshape(dgamma, shape=gamma_shape)
    return [dx, dgamma]


register(OpDef(
    "LeakyReLU", inputs=("data", "gamma"),
    params=(Param("act_type", "str", "leaky", "the activation function",
                  choices=_LEAKY_TYPES),
            Param("slope", "float", 0.25, "slope of leaky (x <= 0) and alpha of elu"),
            Param("lower_bound", "float", 0.125, "smallest random slope of rrelu"),
            Param("upper_bound", "float", 0.334, "largest random slope of rrelu")),
    list_inputs=_leaky_inputs, backward_shape=_leaky_backward_shape,
    infer_shape=_leaky_shape, infer_type=_leaky_type, compute={"cpu": _leaky_compute},
    gradient=_leaky_gradient, grad_needs=("inputs", "outputs"),
    doc="""Leaky rectifiers and their relatives (MXNet's LeakyReLU), element-wise:

* ``leaky``: ``x > 0 ? x : slope * x``
* ``prelu``: ``x > 0 ? x : gamma * x`` with the learned ``gamma`` input, one slope per
  channel (axis 1 of data), or of shape ``(1,)`` for one slope everywhere; gamma gets a
  gradient (the sum of ``g * x`` over the elements with x <= 0 of its channel)
* ``elu``: ``x > 0 ? x : slope * (exp(x) - 1)``
* ``selu``: ``lambda * (x > 0 ? x : alpha * (exp(x) - 1))``, alpha = 1.6732632423543772,
  lambda = 1.0507009873554805 (``slope`` is not used). Its gradient for x <= 0 is
  ``lambda * alpha * exp(x)``; MXNet 1.x's backward kernel got this branch wrong, and
  mxlite computes the true derivative.
* ``gelu``: ``x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2)))`` (the erf form, as MXNet)
* ``rrelu``: ``x > 0 ? x : s * x``, the slope s drawn uniformly from
  ``[lower_bound, upper_bound]`` for each element in training (``autograd.train_mode`` /
  ``record()``), and their mean in inference. The gradient is ``g * s`` with the slope
  each element used, treated as a constant: it is read back from the output as ``y / x``
  (``_rrelu_slope``, exact to a rounding), so mxlite's rrelu has one output where MXNet
  also returned its ``mask`` of slopes.

Float dtypes (float16 computes in float32); gradients are registered ops, differentiable
again.

>>> mx.nd.LeakyReLU(mx.nd.array([-2, 3]), act_type='leaky', slope=0.1).asnumpy().tolist()
[-0.20000000298023224, 3.0]
>>> mx.nd.LeakyReLU(mx.nd.array([[-1, -1], [2, -2]]), mx.nd.array([0.5, 0.25]),
...                 act_type='prelu').asnumpy().tolist()
[[-0.5, -0.25], [2.0, -0.5]]
"""))



def _rrelu_slope_compute(rctx, ins, outs, attrs):
    out = outs[0]
    work = compute_dtype(out.dtype)
    x, y = run_in(work, ins)
    target = out if out.dtype == work else rctx.xp.empty(out.shape, work)
    _act.rrelu_slope(x.reshape(-1), y.reshape(-1), target.reshape(-1))
    write_back(rctx.xp, target, out)


def _same_two_shapes(name):
    def infer_shape(shapes, attrs):
        if len(shapes) != 2 or tuple(shapes[0]) != tuple(shapes[1]):
            raise op_error(name, f"data and output must have one shape, got {list(shapes)}")
        return [tuple(shapes[0])]
    return infer_shape


register(OpDef(
    "_rrelu_slope", inputs=("data", "output"),
    infer_shape=_same_two_shapes("_rrelu_slope"), backward_shape="same",
    infer_type=_act_type("_rrelu_slope", ("data", "output")),
    compute={"cpu": _rrelu_slope_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""The slope RReLU used for each element, read back from its input and output:
``x < 0 ? y / x : 1`` (at x = 0 the slope 1, a subgradient). Piecewise constant, so it has
no gradient (the slopes are constants of the forward pass)."""))
