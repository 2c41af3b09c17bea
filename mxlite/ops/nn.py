"""Neural-network layers: FullyConnected, Activation, LeakyReLU, the softmax family,
softmax_cross_entropy and the loss (output) layers.

Every FGradient is a graph of registered operators (dot, sum, where, softmax, ...), so each
layer differentiates to any order: the gradient penalty of a WGAN-GP critic (a gradient of a
gradient) works through all of them. The element-wise kernels MXNet's layers need beyond
``mxlite._core.elemwise`` (softrelu, ELU, SELU, GELU, PReLU, the softmax rows) are in
``mxlite._core.activation``.
"""
import math

import numpy as np

from .._core import activation as _act
from .._core import elemwise as _ew
from ..base import FLOAT_DTYPES, op_error
from .common import F16, float16_in_blocks, in_work_dtype, run_in, write_back
from .elemwise import relu_step_of_output
from .linalg import _blocked_matmul
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_partial import combine, partial_rule
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
    if not attrs.no_bias and tuple(shapes[2]) not in _fc_bias_shapes(attrs):
        raise op_error("FullyConnected", f"bias has shape {tuple(shapes[2])}; expected "
                       f"({attrs.num_hidden},) or ({attrs.num_hidden}, 1)")
    return [out]


def _fc_bias_shapes(attrs):
    """The bias shapes MXNet takes: ``(num_hidden,)``, or a column ``(num_hidden, 1)``."""
    return (attrs.num_hidden,), (attrs.num_hidden, 1)


def _fc_params_shape(in_shapes, out_shapes, attrs):
    """weight ``(num_hidden, k)`` and bias ``(num_hidden,)`` from data (MXNet's rule)."""
    filled = list(in_shapes)
    data = in_shapes[0]
    if data is not None and filled[1] is None:
        filled[1] = (attrs.num_hidden, _fc_geometry(tuple(data), attrs)[1])
    if not attrs.no_bias and filled[2] is None:
        filled[2] = (attrs.num_hidden,)
    return filled


@partial_rule
def _fc_data_shape(in_shapes, out_shapes, attrs):
    """The data's leading dimensions from the output's (MXNet's rule): its batch with
    ``flatten``, every axis but the last without."""
    filled = [None] * len(in_shapes)
    data, out = in_shapes[0], out_shapes[0]
    if out is not None and len(out) >= 1:
        if attrs.flatten and data is not None and len(data) >= 1:
            filled[0] = (out[0],) + (None,) * (len(data) - 1)
        elif not attrs.flatten:
            filled[0] = tuple(out[:-1]) + (None,)
    return filled


_fc_backward_shape = combine(_fc_params_shape, _fc_data_shape)


def _fc_type(dtypes, attrs):
    return [_float_inputs("FullyConnected", dtypes, _fc_inputs(attrs))]


def _fc_compute(rctx, ins, outs, attrs):
    out = outs[0]
    xp = rctx.xp
    _, ins, target = in_work_dtype(xp, ins, out)
    data, weight = ins[0], ins[1]
    h, k = weight.shape
    rows = out.size // h if h else 0
    t2 = target.reshape(rows, h)
    # y = x W^T: a transposed view of W, which BLAS reads without a copy
    _blocked_matmul(xp, data.reshape(rows, k), weight.T, t2)
    if not attrs.no_bias and t2.size:
        _ew.binary(_ADD, t2, ins[2].reshape(h), t2)      # (a (h, 1) bias too)
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
        if node.input_shapes[2] != (h,):            # a (h, 1) bias
            db = F.reshape(db, shape=node.input_shapes[2])
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
is ``(num_hidden, k)``, ``bias`` ``(num_hidden,)`` (or ``(num_hidden, 1)``, as MXNet
takes it too); ``no_bias=True`` drops the bias input.
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
    _, (x,), target = in_work_dtype(rctx.xp, ins[:1], out)
    kind = attrs.act_type
    if kind == "softrelu":
        _act.activation(_act.ACT_IDS["softrelu"], x.reshape(-1), target.reshape(-1))
    else:
        _ew.unary(_UNARY_ACT[kind], x, target)
    write_back(rctx.xp, target, out)


_activation_blocks = float16_in_blocks(_activation_compute)


def _activation_run(rctx, ins, outs, attrs):
    """float16 relu straight on the bits (``relu_half``: the result of relu in float32 and
    the cast back, which relu's exactness makes the input or +0, without the two casts);
    every other case in float32 blocks (``float16_in_blocks``)."""
    x, out = ins[0], outs[0]
    if (attrs.act_type == "relu" and x.dtype == F16 and out.dtype == F16
            and x.shape == out.shape and x.flags.c_contiguous and out.flags.c_contiguous):
        _act.relu_half(x.reshape(-1).view(np.uint16), out.reshape(-1).view(np.uint16))
        return
    _activation_blocks(rctx, ins, outs, attrs)


def _activation_gradient(F, node, ograds):
    """relu: g (x > 0);  sigmoid: g y (1 - y);  tanh: g (1 - y^2);  softrelu: g sigmoid(x);
    softsign: g / (1 + |x|)^2.  (y is the output.)"""
    g = ograds[0]
    kind = node.attrs.act_type
    if kind == "relu":
        return [g * relu_step_of_output(F, node.outputs[0])]
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


_FROM_OUTPUT, _FROM_INPUT = frozenset(("outputs",)), frozenset(("inputs",))


def _activation_needs(attrs):
    """What ``_activation_gradient`` reads for ``act_type``: relu, sigmoid and tanh the
    output, softrelu and softsign the input."""
    return _FROM_INPUT if attrs.act_type in ("softrelu", "softsign") else _FROM_OUTPUT


register(OpDef(
    "Activation", inputs=("data",),
    params=(Param("act_type", "str", doc="the activation function",
                  choices=_ACT_TYPES),),
    infer_shape=lambda shapes, attrs: [shapes[0]], backward_shape="same",
    infer_type=_act_type("Activation", ("data",)), compute={"cpu": _activation_run},
    gradient=_activation_gradient, grad_needs=("inputs", "outputs"), elementwise=True,
    grad_needs_by_attrs=_activation_needs,
    doc="""Element-wise activation ``act_type``: ``relu`` max(x, 0), ``sigmoid``
1 / (1 + exp(-x)), ``tanh``, ``softrelu`` log(1 + exp(x)) (computed as
``max(x, 0) + log1p(exp(-|x|))``, finite for any x), ``softsign`` x / (1 + |x|).

Float dtypes (float16 computes in float32); relu, sigmoid, tanh and softsign run the
element-wise kernels of ``mx.nd.relu`` etc. (bit-identical results). The gradients of relu, sigmoid
and tanh are written with the output (the tape keeps only it), relu's is 0 at x = 0 (MXNet's
choice); all are registered ops, so they differentiate again.

>>> mx.nd.Activation(mx.nd.array([-1, 0, 2]), act_type='relu').asnumpy().tolist()
[0.0, 0.0, 2.0]
>>> mx.nd.Activation(mx.nd.array([1000.0, -1000.0]), act_type='softrelu').asnumpy().tolist()
[1000.0, 0.0]
"""))


# ---- LeakyReLU ---------------------------------------------------------------------------------
_LEAKY_TYPES = ("elu", "gelu", "leaky", "prelu", "rrelu", "selu")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


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
    work, ins, target = in_work_dtype(xp, ins, out)
    x = ins[0]
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
        return [g * F._internal._gelu_derivative(x)]
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
    var_init={"gamma": '["Constant", {"value": 0.25}]'},
    infer_shape=_leaky_shape, infer_type=_leaky_type, compute={"cpu": float16_in_blocks(
        _leaky_compute, lambda attrs: attrs.act_type not in ("prelu", "rrelu"))},
    gradient=_leaky_gradient, grad_needs=("inputs", "outputs"), elementwise=True,
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
    _, (x, y), target = in_work_dtype(rctx.xp, ins, out)
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
    compute={"cpu": float16_in_blocks(_rrelu_slope_compute)}, gradient=NON_DIFFERENTIABLE, elementwise=True,
    doc="""The slope RReLU used for each element, read back from its input and output:
``x < 0 ? y / x : 1`` (at x = 0 the slope 1, a subgradient). Piecewise constant, so it has
no gradient (the slopes are constants of the forward pass)."""))


# ---- softmax, log_softmax, softmin -------------------------------------------------------------
_SOFTMAX_MODES = {"softmax": (0, 1.0), "log_softmax": (1, 1.0), "softmin": (0, -1.0)}
_F64 = np.dtype(np.float64)


def _softmax_params():
    return (Param("axis", "int", -1, "the axis to normalise along"),
            Param("temperature", "float", None, "divide data by this (None: 1)"),
            Param("dtype", "dtype", None, "output dtype (float16, float32 or float64; None: "
                  "data's); the sums run in float32 or better"),
            Param("use_length", "bool", False, "take a ``length`` input: only the first "
                  "length[...] elements along axis count, the rest of the output is 0"))


def _softmax_inputs(attrs):
    return ("data", "length") if attrs.use_length else ("data",)


def _norm_axis(name, axis, ndim):
    if not -ndim <= axis < ndim:
        raise op_error(name, f"axis {axis} is out of range for data of {ndim} dimension(s)")
    return axis % ndim


def _softmax_shape_fn(name):
    def infer_shape(shapes, attrs):
        names = _softmax_inputs(attrs)
        if len(shapes) != len(names):
            raise op_error(name, f"takes inputs {list(names)} (use_length={attrs.use_length}), "
                           f"got {len(shapes)}")
        data = tuple(shapes[0])
        if len(data) == 0:
            raise op_error(name, "data must have at least one dimension, got ()")
        ax = _norm_axis(name, attrs.axis, len(data))
        if attrs.temperature is not None and not attrs.temperature != 0:
            raise op_error(name, f"temperature must be non-zero, got {attrs.temperature}")
        if attrs.use_length:
            want = data[:ax] + data[ax + 1:]
            if tuple(shapes[1]) != want:
                raise op_error(name, f"length has shape {tuple(shapes[1])}; data {data} with "
                               f"axis={attrs.axis} needs {want}")
        return [data]
    return infer_shape


def _softmax_type_fn(name):
    def infer_type(dtypes, attrs):
        dt = dtypes[0]
        if dt not in FLOAT_DTYPES:
            raise op_error(name, f"data must have a float dtype, got {dt}")
        if attrs.use_length and dtypes[1].kind not in "iu":
            raise op_error(name, f"length must have an integer dtype, got {dtypes[1]}")
        out = attrs.dtype
        if out is None:
            return [dt]
        if np.dtype(out) not in FLOAT_DTYPES:
            raise op_error(name, f"dtype must be float16, float32 or float64, got {out}")
        return [np.dtype(out)]
    return infer_type


def _split_axis(shape, ax):
    return size_of(shape[:ax]), shape[ax], size_of(shape[ax + 1:])


def run_softmax(rctx, x, out, axis, mode, scale, length=None):
    """``out = softmax(scale * x)`` (mode 0) or log-softmax (mode 1) along ``axis`` through
    the row kernel, in float32 or float64 (the wider of x's and out's), cast into ``out``."""
    xp = rctx.xp
    work = _F64 if _F64 in (x.dtype, out.dtype) else np.dtype(np.float32)
    (xw,) = run_in(work, [x])
    target = out if out.dtype == work else xp.empty(out.shape, work)
    outer, n, inner = _split_axis(x.shape, axis)
    if length is not None:
        length = length.astype(np.int64).reshape(-1)
        if length.size and (length.min() < 0 or length.max() > n):
            raise op_error("softmax", f"length values must lie in [0, {n}], got "
                           f"{int(length.min())}..{int(length.max())}")
    _act.softmax(mode, xw.reshape(-1), target.reshape(-1), outer, n, inner, scale, length)
    write_back(xp, target, out)


def _softmax_compute_fn(name):
    mode, sign = _SOFTMAX_MODES[name]

    def compute(rctx, ins, outs, attrs):
        x = ins[0]
        ax = _norm_axis(name, attrs.axis, x.ndim)
        t = attrs.temperature
        scale = sign if t is None else sign / t
        run_softmax(rctx, x, outs[0], ax, mode, scale, ins[1] if attrs.use_length else None)
    return compute


def _length_mask(F, node, ax, dtype):
    """1 for the positions along ``ax`` below ``length``, else 0: ``arange < length``, shaped
    to broadcast against data."""
    data_shape = node.input_shapes[0]
    n = data_shape[ax]
    shape = [1] * len(data_shape)
    shape[ax] = n
    pos = F.reshape(F.arange(0, n, ctx=node.context, dtype="float64"), shape=tuple(shape))
    length = F.expand_dims(F.cast(node.inputs[1], dtype="float64"), axis=ax)
    return F.cast(F.broadcast_lesser(pos, length), dtype=dtype)


def _softmax_gradient_fn(name):
    def gradient(F, node, ograds):
        attrs = node.attrs
        ax = _norm_axis(name, attrs.axis, len(node.input_shapes[0]))
        t = attrs.temperature
        scale = 1.0 if t is None else 1.0 / t
        y, g = node.outputs[0], ograds[0]
        if name == "log_softmax":
            if attrs.use_length:
                mask = _length_mask(F, node, ax, node.output_dtypes[0])
                g = g * mask
                dx = g - F.exp(y) * mask * F.sum(g, axis=ax, keepdims=True)
            else:
                dx = F._internal._log_softmax_grad(y, g, axis=ax)    # one fused op
        else:
            # masked positions have y = 0: they get no gradient and add nothing to the sum
            dx = F._internal._softmax_grad(y, g, axis=ax)
            if name == "softmin":
                scale = -scale
        if scale != 1.0:
            dx = dx * scale
        if node.output_dtypes[0] != node.input_dtypes[0]:
            dx = F.cast(dx, dtype=node.input_dtypes[0])
        return [dx, None] if attrs.use_length else [dx]
    gradient.__doc__ = {
        "softmax": "y = softmax(x / T):  dx = y (g - sum(g y)) / T along axis.",
        "log_softmax": "y = log_softmax(x / T):  dx = (g - exp(y) sum(g)) / T along axis.",
        "softmin": "y = softmax(-x / T):  dx = -y (g - sum(g y)) / T along axis."}[name]
    return gradient


_SOFTMAX_DOCS = {
    "softmax": """Softmax along ``axis``: ``exp(x / T) / sum(exp(x / T))``.

Numerically stable (each row's maximum is subtracted first; a row of -inf gives NaN, as
exp/sum does). ``temperature`` T divides the data (None: 1). ``dtype`` sets the output
dtype (the sums run in float32, or float64 when data or output is float64). With
``use_length=True`` a second input ``length`` (integers, data's shape without ``axis``)
counts the valid elements of each row: softmax runs over the first ``length`` ones and the
rest of the output is 0. The gradient is written with the output, ``y (g - sum(g y)) / T``,
as registered ops, so it differentiates to any order.

>>> mx.nd.softmax(mx.nd.array([[1, 1], [0, 1000]])).asnumpy().tolist()
[[0.5, 0.5], [0.0, 1.0]]
>>> mx.nd.softmax(mx.nd.array([[1, 1, 5]]), mx.nd.array([2], dtype='int64'),
...               use_length=True).asnumpy().tolist()
[[0.5, 0.5, 0.0]]
""",
    "log_softmax": """Log-softmax along ``axis``: ``x / T - log(sum(exp(x / T)))``, computed
as ``(x - m) - log(sum(exp(x - m)))`` with the row maximum m (stable: no overflow, no log
of 0 for large inputs). Parameters as ``softmax``; positions past ``length`` are 0. The
gradient, ``(g - exp(y) sum(g)) / T``, differentiates to any order.

>>> mx.nd.log_softmax(mx.nd.array([[0, 1000]])).asnumpy().tolist()
[[-1000.0, 0.0]]
""",
    "softmin": """Softmin along ``axis``: ``softmax(-x / T)``. Parameters as ``softmax``.

>>> mx.nd.softmin(mx.nd.array([[1, 1]])).asnumpy().tolist()
[[0.5, 0.5]]
""",
}


def _softmax_backward_shape(in_shapes, out_shapes, attrs):
    filled = list(in_shapes)
    data = in_shapes[0] or out_shapes[0]
    filled[0] = data
    if attrs.use_length and filled[1] is None and data is not None and \
            -len(data) <= attrs.axis < len(data):
        ax = attrs.axis % len(data)
        filled[1] = tuple(data[:ax]) + tuple(data[ax + 1:])
    return filled


for _name in ("softmax", "log_softmax", "softmin"):
    register(OpDef(
        _name, inputs=("data", "length"), params=_softmax_params(),
        list_inputs=_softmax_inputs, backward_shape=_softmax_backward_shape,
        infer_shape=_softmax_shape_fn(_name), infer_type=_softmax_type_fn(_name),
        compute={"cpu": _softmax_compute_fn(_name)}, gradient=_softmax_gradient_fn(_name),
        grad_needs=("inputs", "outputs"), in_place=True, doc=_SOFTMAX_DOCS[_name]))


# ---- softmax_cross_entropy ---------------------------------------------------------------------
def _sce_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("softmax_cross_entropy", f"takes data and label, got {len(shapes)} inputs")
    data, label = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 2 or label != data[:1]:
        raise op_error("softmax_cross_entropy", f"data must be 2-D (batch, classes) and label "
                       f"(batch,), got {data} and {label}")
    return [(1,)]


def _sce_type(dtypes, attrs):
    if dtypes[0] not in FLOAT_DTYPES:
        raise op_error("softmax_cross_entropy", f"data must have a float dtype, got {dtypes[0]}")
    if dtypes[1] == np.bool_:
        raise op_error("softmax_cross_entropy", "label must be numeric, got bool")
    return [dtypes[0]]


def _labels(rctx, name, label, n):
    """Class labels as int64 (truncated, as MXNet casts), checked to lie in [0, n)."""
    lab = label.astype(np.int64).reshape(-1)
    if lab.size and (lab.min() < 0 or lab.max() >= n or (label != label).any()):
        raise op_error(name, f"labels must be class indices in [0, {n}), got values from "
                       f"{label.min()} to {label.max()}")
    return lab


_SCE_BLOCK = 1 << 22       # elements of softmax_cross_entropy's log-softmax scratch


def _sce_compute(rctx, ins, outs, attrs):
    data, label = ins
    xp = rctx.xp
    work = _F64 if data.dtype == _F64 else np.dtype(np.float32)
    rows, classes = data.shape
    lab = _labels(rctx, "softmax_cross_entropy", label, classes)
    # the log-softmax of a block of rows at a time: scratch memory stays bounded (a batch
    # the size of the memory would not have room for a second copy)
    step = max(1, _SCE_BLOCK // max(classes, 1))
    logp = xp.empty((min(step, rows), classes), work)
    total = 0.0
    for start in range(0, rows, step):
        part = logp[:min(step, rows - start)]
        run_softmax(rctx, data[start:start + step], part, 1, 1, 1.0)
        total = _act.nll_sum(part, lab[start:start + step], total)
    xp.cast_into(outs[0], xp.scalar(total, work).reshape(1))


def _sce_gradient(F, node, ograds):
    """loss = -sum_i log softmax(x)[i, label_i]:  dx = g (softmax(x) - one_hot(label));
    label gets none."""
    data, label = node.inputs
    classes = node.input_shapes[0][1]
    target = F.one_hot(label, depth=classes, dtype=node.input_dtypes[0])
    g = F.reshape(ograds[0], shape=(1, 1))
    return [F.broadcast_mul(F.softmax(data, axis=1) - target, g), None]


register(OpDef(
    "softmax_cross_entropy", inputs=("data", "label"),
    infer_shape=_sce_shape, infer_type=_sce_type, compute={"cpu": _sce_compute},
    gradient=_sce_gradient,
    doc="""Softmax cross-entropy summed over the batch:
``-sum_i log(softmax(data[i])[label[i]])``, output shape ``(1,)`` (MXNet's definition).

``data`` is ``(batch, classes)``, ``label`` ``(batch,)`` of class indices (a float label is
truncated, as MXNet casts it); a label outside ``[0, classes)`` is an MXNetError. The
log-softmax is computed stably. The gradient, ``g (softmax(data) - one_hot(label))``, is
differentiable again; label gets none.

>>> x = mx.nd.array([[0, 0], [0, 0]])
>>> round(float(mx.nd.softmax_cross_entropy(x, mx.nd.array([0, 1])).asnumpy()[0]), 6)
1.386294
"""))


# ---- loss (output) layers ------------------------------------------------------------------
_LOSS_SEMANTICS = """
Loss-layer gradient semantics (MXNet's): the forward pass gives the prediction, and the
gradient with respect to ``data`` is the gradient of the loss, whatever the head gradient
is (``backward()`` on the output needs none); ``label`` gets no gradient. That gradient is
built from registered ops on ``data`` (not on the output), so it differentiates again."""


def _softmax_output_geometry(data, attrs):
    """(shape softmax runs on, axis) for SoftmaxOutput on data of shape ``data``."""
    if attrs.multi_output:
        return tuple(data), 1
    if attrs.preserve_shape:
        return tuple(data), len(data) - 1
    return (data[0], size_of(data[1:])), 1


def _so_label_kind(data, label, attrs):
    """'prob' (label has data's shape: probabilities), or 'index'; MXNetError otherwise."""
    if label == data:
        return "prob"
    if attrs.multi_output:
        n, rest = data[0], data[2:]
        allowed = list(dict.fromkeys([(n, size_of(rest)), (n,) + rest, (n, 1) + rest]))
    elif attrs.preserve_shape:
        allowed = [data[:-1]]
    else:
        allowed = [(data[0],), data[:-1]] if len(data) == 2 else [(data[0],)]
    if label not in allowed:
        raise op_error("SoftmaxOutput", f"label has shape {label}; data {data} (multi_output="
                       f"{attrs.multi_output}, preserve_shape={attrs.preserve_shape}) needs "
                       f"{' or '.join(str(a) for a in allowed)} (class indices), or {data} "
                       "(probabilities)")
    return "index"


def _so_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("SoftmaxOutput", f"takes data and label, got {len(shapes)} inputs")
    data, label = tuple(shapes[0]), tuple(shapes[1])
    if len(data) < 2 and not (attrs.preserve_shape and len(data) >= 1):
        raise op_error("SoftmaxOutput", f"data of shape {data} has too few dimensions")
    _so_label_kind(data, label, attrs)
    if attrs.normalization not in ("null", "batch", "valid"):
        raise op_error("SoftmaxOutput", "normalization must be 'null', 'batch' or 'valid'")
    if not 0.0 <= attrs.smooth_alpha <= 1.0:          # MXNet's range; NaN fails too
        raise op_error("SoftmaxOutput", f"smooth_alpha must lie in [0, 1], got "
                       f"{attrs.smooth_alpha}")
    if attrs.multi_output and len(data) < 2:
        raise op_error("SoftmaxOutput", "multi_output needs data (batch, classes, ...)")
    return [data]


def _so_backward_shape(in_shapes, out_shapes, attrs):
    """Symbolic inference: the class-index label shape from data's: ``(n, d1*...)`` with
    multi_output (MXNet's first choice), data.shape[:-1] with preserve_shape, else ``(n,)``
    (MXNet wanted data.shape[:-1] there too, then read only its first n labels)."""
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if data is None or len(data) < 2:
        return [data, in_shapes[1]]
    label = ((data[0], size_of(data[2:])) if attrs.multi_output else
             tuple(data[:-1]) if attrs.preserve_shape else (data[0],))
    return [data, in_shapes[1] if in_shapes[1] is not None else label]


def _regression_backward_shape(in_shapes, out_shapes, attrs):
    """Symbolic inference: data has the output's shape, label data's, or ``(n,)`` for data
    ``(n, 1)`` (MXNet's rule)."""
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if in_shapes[1] is not None or data is None:
        return [data, in_shapes[1]]
    return [data, tuple(data[:1]) if len(data) == 2 and data[1] == 1 else data]


def _loss_type_fn(name):
    def infer_type(dtypes, attrs):
        if dtypes[0] not in FLOAT_DTYPES:
            raise op_error(name, f"data must have a float dtype, got {dtypes[0]}")
        if dtypes[1] == np.bool_:
            raise op_error(name, "label must be numeric, got bool")
        return [dtypes[0]]
    return infer_type


def _so_compute(rctx, ins, outs, attrs):
    data = ins[0]
    shape, ax = _softmax_output_geometry(data.shape, attrs)
    run_softmax(rctx, data.reshape(shape), outs[0].reshape(shape), ax, 0, 1.0)


def _so_keep(F, lab, label_dtype, ignore_label, dtype):
    """1 where the label's class differs from ignore_label's, else 0, both truncated toward
    zero as MXNet casts them to int (ignore_label=1.5 ignores the labels 1.0 and 1.7)."""
    ignore = math.trunc(ignore_label) if math.isfinite(ignore_label) else ignore_label
    cls = F.trunc(lab) if np.dtype(label_dtype).kind == "f" else lab
    return F.cast(cls != ignore, dtype=dtype)


def _so_one_hot(F, label, data_shape, shape, ax, attrs, dtype):
    """(target, class labels, the labels' shape broadcasting against the target): the one-hot
    of the (truncated) label, smoothed by smooth_alpha except under multi_output (MXNet
    1.9.1 ignores smooth_alpha there). An out-of-range label has an all-zero one-hot row."""
    k = shape[ax]
    if attrs.multi_output:
        n, rest = data_shape[0], size_of(data_shape[2:])
        lab = F.reshape(label, shape=(n, rest))
        hot = F.transpose(F.one_hot(lab, depth=k, dtype=dtype), axes=(0, 2, 1))
        return F.reshape(hot, shape=shape), lab, (n, 1) + tuple(data_shape[2:])
    rows = size_of(shape) // k if k else 0
    lab = F.reshape(label, shape=(rows,))
    hot = F.reshape(F.one_hot(lab, depth=k, dtype=dtype), shape=shape)
    alpha = attrs.smooth_alpha
    if alpha:
        # 1 - alpha on the label, alpha / (k - 1) elsewhere; with one class there is no
        # elsewhere (MXNet's alpha / 0 made an out-of-range label's gradient -inf)
        off = alpha / (k - 1) if k > 1 else 0.0
        hot = hot * (1.0 - alpha - off) + off
    return hot, lab, tuple(shape[:-1]) + (1,)


def _so_normalise(F, grad, keep, n_labels, data_shape, attrs, dtype):
    """grad * grad_scale / normaliser, MXNet 1.9.1's normaliser of a class-index label:
    'null' 1 (multi_output: the positions per instance, d1*...), 'batch' the number of
    labels (rows of the softmax; n*d1*... with multi_output), 'valid' the number of labels
    whose class is not ignore_label's (at least 1), counted whether or not use_ignore."""
    scale = attrs.grad_scale
    if attrs.normalization == "valid":
        # counted in float32 at least: a float16 sum is not exact beyond 2048
        wide = "float64" if np.dtype(dtype) == np.float64 else "float32"
        count = F._internal._maximum_scalar(F.sum(F.cast(keep, dtype=wide)), scalar=1.0)
        factor = F.cast(F._internal._rdiv_scalar(count, scalar=scale), dtype=dtype)
        return F.broadcast_mul(grad, F.reshape(factor, shape=(1,) * len(data_shape)))
    if attrs.normalization == "batch":
        scale /= max(n_labels, 1)
    elif attrs.multi_output:
        scale /= max(size_of(data_shape[2:]), 1)
    return grad * scale if scale != 1.0 else grad


def _so_gradient(F, node, ograds):
    """(softmax(data) - target) * grad_scale / normaliser (``_so_normalise``), target the
    (smoothed) one-hot of label, zero where label == ignore_label under use_ignore; with a
    label of data's shape, (softmax(data) - label) * grad_scale. Times the head gradient
    only with out_grad. label gets none."""
    attrs = node.attrs
    data, label = node.inputs
    data_shape, label_shape = node.input_shapes
    dtype = node.input_dtypes[0]
    shape, ax = _softmax_output_geometry(data_shape, attrs)
    x = data if shape == data_shape else F.reshape(data, shape=shape)
    p = F.softmax(x, axis=ax)
    if _so_label_kind(data_shape, label_shape, attrs) == "prob":
        target = label if shape == data_shape else F.reshape(label, shape=shape)
        if dtype != node.input_dtypes[1]:
            target = F.cast(target, dtype=dtype)
        grad = p - target
        if attrs.grad_scale != 1.0:
            grad = grad * attrs.grad_scale
    else:
        hot, lab, keep_shape = _so_one_hot(F, label, data_shape, shape, ax, attrs, dtype)
        grad = p - hot
        keep = None
        if attrs.use_ignore or attrs.normalization == "valid":
            keep = F.reshape(_so_keep(F, lab, node.input_dtypes[1], attrs.ignore_label,
                                     dtype), shape=keep_shape)
        if attrs.use_ignore:
            grad = F.broadcast_mul(grad, keep)
        grad = _so_normalise(F, grad, keep, size_of(label_shape), data_shape, attrs, dtype)
    if shape != data_shape:
        grad = F.reshape(grad, shape=data_shape)
    if attrs.out_grad:
        grad = grad * ograds[0]
    return [grad, None]


register(OpDef(
    "SoftmaxOutput", inputs=("data", "label"), aliases=("Softmax",),
    params=(Param("grad_scale", "float", 1.0, "scale of the gradient"),
            Param("ignore_label", "float", -1.0, "label whose instances get no gradient under "
                  "use_ignore"),
            Param("multi_output", "bool", False, "softmax along axis 1 of (n, k, ...); label "
                  "(n, ...)"),
            Param("use_ignore", "bool", False, "give no gradient where label == ignore_label"),
            Param("preserve_shape", "bool", False, "softmax along the last axis"),
            Param("normalization", "str", "null", "divide the gradient by: nothing (null), the "
                  "batch size (batch), the number of labels not ignored (valid)",
                  choices=("null", "batch", "valid")),
            Param("out_grad", "bool", False, "multiply the gradient by the head gradient"),
            Param("smooth_alpha", "float", 0.0, "label smoothing: the target is 1 - alpha on "
                  "the label and alpha / (k - 1) elsewhere")),
    infer_shape=_so_shape, infer_type=_loss_type_fn("SoftmaxOutput"),
    backward_shape=_so_backward_shape,
    compute={"cpu": _so_compute}, gradient=_so_gradient, in_place=True,
    doc="""Softmax output layer: the forward pass is a softmax, the gradient that of the
cross-entropy loss with ``label``.

The softmax runs over the flattened ``data[i]`` (``(n, k)`` view; label ``(n,)``), over the
last axis with ``preserve_shape`` (label ``data.shape[:-1]``), or over axis 1 with
``multi_output`` (label ``(n, d1, ...)``, ``(n, d1*...)`` or ``(n, 1, d1, ...)``). A label
with data's shape holds probabilities and is the target itself: the gradient is
``(softmax(data) - label) * grad_scale``, nothing ignored, smoothed or normalised.

A class-index label is truncated toward zero (as MXNet casts it; -0.5 is class 0); a class
outside ``[0, k)`` has no target (its gradient is the softmax). The data gradient is
``(softmax(data) - one_hot(label)) * grad_scale / normaliser``, as MXNet 1.9.1:

- ``smooth_alpha`` makes the target ``1 - alpha`` on the label and ``alpha / (k - 1)``
  elsewhere, except with ``multi_output``, where MXNet ignores it;
- ``use_ignore`` zeroes the gradient of a position whose label's class is
  ``ignore_label``'s (truncated too: ``ignore_label=1.5`` ignores class 1);
- the normaliser of ``normalization`` 'null' is 1 (with ``multi_output``: ``d1*...``, the
  positions per instance); of 'batch' the number of labels, i.e. of softmax rows (``n``;
  ``prod(data.shape[:-1])`` with ``preserve_shape``, so a sequence model's gradient is not
  scaled by the sequence length; ``n*d1*...`` with ``multi_output``); of 'valid' the number
  of labels whose class is not ``ignore_label``'s, at least 1, counted with or without
  ``use_ignore``;
- ``out_grad`` multiplies by the head gradient (as documented; MXNet 1.9's imperative
  backward multiplied by the softmax output instead).

MXNet differs where it has no meaningful answer: with one class, ``smooth_alpha`` and a
label out of range MXNet's gradient was ``-inf`` (mxlite: the softmax); and on data of more
than two dimensions without ``preserve_shape`` or ``multi_output`` MXNet wanted a label of
``data.shape[:-1]`` and read only its first ``n`` values (mxlite takes ``(n,)``).
""" + _LOSS_SEMANTICS + """

>>> x = mx.nd.array([[1, 1], [0, 0]]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.SoftmaxOutput(x, mx.nd.array([0, 1]))
>>> y.backward()
>>> x.grad.asnumpy().tolist()
[[-0.5, 0.5], [0.5, -0.5]]
"""))


_REGRESSION = {
    "LinearRegressionOutput": ("identity", "(data - label)", "out = data"),
    "LogisticRegressionOutput": ("sigmoid", "(sigmoid(data) - label)",
                                 "out = sigmoid(data)"),
    "MAERegressionOutput": ("identity", "sign(data - label)", "out = data"),
}
# what each regression layer's gradient does where MXNet 1.9.1's differs
_REGRESSION_NOTE = {
    "MAERegressionOutput": """
Where ``data == label`` the gradient is 0, the subgradient of ``|data - label|`` that is 0
at the optimum; MXNet 1.9.1 gave -1 there, so an exact fit kept moving.
"""}


def _regression_shape_fn(name):
    def infer_shape(shapes, attrs):
        if len(shapes) != 2:
            raise op_error(name, f"takes data and label, got {len(shapes)} inputs")
        data, label = tuple(shapes[0]), tuple(shapes[1])
        if len(data) == 0:
            raise op_error(name, "data must have at least one dimension, got ()")
        # MXNet's rule: any label of data's size and first dimension (read in data's order)
        if label[:1] != data[:1] or size_of(label) != size_of(data):
            raise op_error(name, f"label has shape {label}; expected data's size "
                           f"{size_of(data)} with first dimension {data[0]} (data {data})")
        return [data]
    return infer_shape


def _regression_compute_fn(name):
    sigmoid = _REGRESSION[name][0] == "sigmoid"

    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        if sigmoid:
            _, (xw,), target = in_work_dtype(rctx.xp, [x], out)
            _ew.unary(_ew.UNARY_IDS["sigmoid"], xw, target)
            write_back(rctx.xp, target, out)
        else:
            rctx.xp.copyto(out, x)
    return compute


def _regression_gradient_fn(name):
    def gradient(F, node, ograds):
        data, label = node.inputs
        data_shape, label_shape = node.input_shapes
        if label_shape != data_shape:
            label = F.reshape(label, shape=data_shape)
        if node.input_dtypes[1] != node.input_dtypes[0]:
            label = F.cast(label, dtype=node.input_dtypes[0])
        if name == "LogisticRegressionOutput":
            diff = F.sigmoid(data) - label
        elif name == "MAERegressionOutput":
            diff = F.sign(data - label)
        else:
            diff = data - label
        # an empty instance has no gradient to scale (MXNet divided by zero)
        per_instance = max(size_of(label_shape[1:]), 1)
        scale = node.attrs.grad_scale / per_instance
        return [diff * scale if scale != 1.0 else diff, None]
    gradient.__doc__ = (f"d data = grad_scale / m * {_REGRESSION[name][1]}, m the number of "
                        "outputs per instance (label.size / label.shape[0]); the head gradient "
                        "is ignored; label gets none.")
    return gradient


for _name, (_fwd, _grad, _out) in _REGRESSION.items():
    register(OpDef(
        _name, inputs=("data", "label"),
        params=(Param("grad_scale", "float", 1.0, "scale of the gradient"),),
        infer_shape=_regression_shape_fn(_name), infer_type=_loss_type_fn(_name),
        backward_shape=_regression_backward_shape,
        compute={"cpu": float16_in_blocks(_regression_compute_fn(_name))}, gradient=_regression_gradient_fn(_name),
        elementwise=True,
        doc=f"""Regression output layer: ``{_out}``; the data gradient is
``grad_scale / m * {_grad}`` with m = label.size / label.shape[0], the number of outputs
per instance (MXNet's scaling). ``label`` has data's size and first dimension (data's
shape; ``(n,)`` for data ``(n, 1)``; ``(n, 4)`` for data ``(n, 2, 2)``), read in data's
order.
""" + _REGRESSION_NOTE.get(_name, "") + _LOSS_SEMANTICS + """

>>> x = mx.nd.array([[1.0], [3.0]]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.""" + _name + """(x, mx.nd.array([2.0, 2.0]))
>>> y.backward()
>>> x.grad.shape
(2, 1)
"""))
