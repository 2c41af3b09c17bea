"""Normalisation and regularisation layers: BatchNorm, LayerNorm, InstanceNorm,
L2Normalization, Dropout, Embedding.

Forward passes run in ``mxlite/_core/norm`` (statistics in double, two passes per group,
then one fused affine pass; LayerNorm's contiguous rows in one sweep per row, float32 rows
summed in 16 SIMD float lanes per block of 256 with the blocks added in double, see
``mx_norm_rows.h``), reached through ``kernels(rctx, _k)``: the BatchNorm,
LayerNorm, InstanceNorm and L2Normalization compute functions serve every device (on GPU
the functions of ``mxlite/cuda/ops/norm.py``, same arguments). Every gradient is a graph of
registered operators (sums, means, broadcasts), so gradients of any order follow:

* ``LayerNorm``/``InstanceNorm`` read their data, gamma and their hidden ``mean``/``std``
  outputs; the ``mean``/``std`` outputs' own head gradients are part of the same rule.
  LayerNorm's is one op, ``_layer_norm_grad`` (data, gamma and beta gradients in one sweep
  per row on the CPU, where the graph of broadcasts and sums took eight passes over the
  data); its own gradient is again a graph of registered ops.
* ``BatchNorm`` reads only its outputs: besides MXNet's ``output``, ``mean``, ``var`` it has
  three hidden ones, the normalised data, the gamma it applied (ones under ``fix_gamma``) and
  a ``(1,)`` flag that is 1 when the batch statistics were used (training) and 0 when the
  moving ones were (inference). The flag multiplies the terms that flow through the batch
  statistics, so one rule serves both modes without reading the train mode at backward
  time, and the moving statistics (updated in place by every training forward) are never
  saved by the tape: a BatchNorm layer can run twice under one ``record()``.
* ``Dropout`` keeps its mask as a hidden output: its gradient is ``head * mask`` with the
  very mask of the forward pass, at every order.

oneDNN's batch and layer normalisation (float32 training BatchNorm's statistics and
normalised data, LayerNorm over the last axis: ``_bn_onednn``, ``_ln_onednn``) can compute
the same forward passes, within float32 tolerance (oneDNN accumulates in float32, the
reference kernels in double), but are switched off (``ONEDNN_NORM``): measured slower than
the reference kernels (``benchmarks/bench_onednn_nn.py``).
"""
import types

import numpy as np

from .._core import index as _ik
from .._core import norm as _k
from .._core import random as _rk
from ..base import op_error
from . import onednn
from .common import check_num_inputs, kernels, plus
from .index import _positions
from .registry import REQUIRED, OpDef, Param, get_op, register
from .reduce import reduced_axes
from .shape_utils import check_shape, normalize_axes, normalize_axis, size_of

_FLOATS = (np.dtype("float32"), np.dtype("float64"))
_DROPOUT_FLOATS = (np.dtype("float16"),) + _FLOATS
_ONE_BELOW_1 = 1.0 - 2.0 ** -24       # the largest float32 below 1: uniforms stay in [0, 1)

# oneDNN under BatchNorm and LayerNorm: off, measured no faster (2-core CPU, median ms,
# oneDNN / reference). Forward + backward (benchmarks/bench_onednn_nn.py, interleaved):
# BatchNorm training (32, 64, 32, 32) 15.7 / 14.9, LayerNorm (1024, 256) 0.91 / 0.70.
# Forward alone: BatchNorm (32, 64, 32, 32) 8.5 / 2.7 on plain NCHW (oneDNN's kernel for it
# is a scalar loop; through channel blocks of 16 the copies in and out cost as much as the
# reference's whole pass), (256, 1024) 8-31 / 0.4 (its JIT kernel's barriers on a loaded
# machine); LayerNorm (64, 64) 0.09-0.29 / 0.03. The reference kernels also write the
# normalised data BatchNorm's gradient reads in the same pass; oneDNN has no such output.
# Measured again against the one-sweep LayerNorm rows (SSE: oneDNN / reference 0.76 at
# (1024, 256), 0.67 at (4096, 1024), 1.5 at (64, 64); with their AVX2 bodies 2.9, 1.06 and
# 11 on a loaded machine; training BatchNorm forward (32, 64, 16, 16) 1.1-1.6,
# (8, 64, 56, 56) 1.06-1.3): still off.
ONEDNN_NORM = False


# ---- shared helpers ---------------------------------------------------------------------------
def _float_dtype(op, dtypes, names):
    """The one float32/float64 dtype of every input; MXNetError naming the odd one out."""
    dt = np.dtype(dtypes[0])
    if dt not in _FLOATS:
        raise op_error(op, f"{names[0]} must be float32 or float64, got {dt}")
    for name, d in zip(names[1:], dtypes[1:]):
        if np.dtype(d) != dt:
            raise op_error(op, f"{name} has dtype {np.dtype(d)}, {names[0]} has {dt}: all "
                           "inputs must share one float dtype")
    return dt


def _check_vectors(op, shapes, names, c, what):
    """Each of ``shapes`` (named ``names``) must be ``(c,)``."""
    for name, s in zip(names, shapes):
        if tuple(s) != (c,):
            raise op_error(op, f"{name} must have shape ({c},) ({what}), got {tuple(s)}")


def _kept(shape, axes):
    """``shape`` with ``axes`` set to 1."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _data_backward_shape(in_shapes, out_shapes, attrs):
    """One input, whose shape is the (first) output's."""
    return [in_shapes[0] if in_shapes[0] is not None else out_shapes[0]]


def _param_shape(shape, axis):
    """``(1, .., shape[axis], .., 1)``: a per-``axis`` vector shaped to broadcast."""
    return tuple(d if i == axis else 1 for i, d in enumerate(shape))


# ---- the shared gradient of LayerNorm and InstanceNorm -----------------------------------------
def _standardize_grad(F, node, ograds, red, param_axis):
    """y = gamma * xhat + beta with xhat = (x - mean) / std over the axes ``red``,
    std = sqrt(var + eps); hidden outputs mean and std.

    dbeta = sum(gy), dgamma = sum(gy * xhat) (over every axis but ``param_axis``);
    with G = gy * gamma and n the reduced count:
    dx = (G - mean(G) - xhat * mean(G * xhat)) / std + g_mean / n + g_std * xhat / n
    (one ``_norm_project``).
    """
    x, gamma, _ = node.inputs
    _, mean, std = node.outputs
    gy, gmean, gstd = ograds
    shape = tuple(node.input_shapes[0])
    n = size_of([shape[a] for a in red])
    wants = node.wants
    xhat = F.broadcast_div(F.broadcast_sub(x, mean), std)
    dgamma = F.sum(gy * xhat, axis=param_axis, exclude=True) if wants[1] else None
    dbeta = F.sum(gy, axis=param_axis, exclude=True) if wants[2] else None
    dx = None
    if wants[0]:
        g = F.broadcast_mul(gy, F.reshape(gamma, shape=_param_shape(shape, param_axis)))
        one = F.ones((1,), dtype=node.input_dtypes[0], ctx=node.context)
        dx = F._internal._norm_project(g, xhat, F.reciprocal(std), one, gstd / n, gmean / n,
                                       axis=red)
    return [dx, dgamma, dbeta]


def _standardize(rctx, x, mean, std, stats, block, stat_strides, gamma, beta, param_strides,
                 y, eps):
    """Moments of ``x`` read as the (P, Q, R) block ``stats`` over Q into ``mean``/``std``
    (std = sqrt(var + eps)), then ``y = (x - mean) / std * gamma + beta`` over the (P, Q, R)
    block ``block`` (see ``mxlite._core.norm.apply`` for the strides)."""
    dev, xp = kernels(rctx, _k), rctx.xp
    dev.moments(x, *stats, mean, std)
    rstd = xp.empty(std.shape, std.dtype)
    xp.copyto(rstd, std)
    dev.finish(std, eps, False)
    dev.finish(rstd, eps, True)
    dev.apply(x, *block, mean, rstd, stat_strides, gamma, beta, param_strides, y)


# ---- _norm_project: the fused core of every normalisation backward ------------------------------
_PROJ_INPUTS = ("grad", "xhat", "rstd", "flag", "scale", "shift")


def _proj_plan(shape, attrs):
    """(layout, P, Q, R, reduced axes) of ``_norm_project`` on data of ``shape``: layout 0
    when the reduced axes are one contiguous block (LayerNorm, InstanceNorm), layout 1 when
    the kept ones are (BatchNorm)."""
    red = reduced_axes("_norm_project", tuple(shape), attrs.axis, attrs.exclude)
    nd = len(shape)
    kept = [i for i in range(nd) if i not in red]
    if not red:
        return 0, size_of(shape), 1, 1, red
    if list(red) == list(range(red[0], red[-1] + 1)):
        i, j = red[0], red[-1] + 1
        return 0, size_of(shape[:i]), size_of(shape[i:j]), size_of(shape[j:]), red
    if kept == list(range(kept[0], kept[-1] + 1)):
        i, j = kept[0], kept[-1] + 1
        return 1, size_of(shape[:i]), size_of(shape[i:j]), size_of(shape[j:]), red
    raise op_error("_norm_project", f"the reduced axes {red} of data {tuple(shape)} are not "
                   "one block, nor are the kept ones")


def _proj_shape(shapes, attrs):
    check_num_inputs("_norm_project", shapes, 6)
    data = tuple(shapes[0])
    red = _proj_plan(data, attrs)[4]
    kept = _kept(data, red)
    want = {"xhat": data, "rstd": kept, "flag": (1,), "scale": kept, "shift": kept}
    for name, s in zip(_PROJ_INPUTS[1:], shapes[1:]):
        if tuple(s) != want[name]:
            raise op_error("_norm_project", f"{name} must have shape {want[name]} (grad "
                           f"{data}, reduced axes {red}), got {tuple(s)}")
    return [data]


def _proj_type(dtypes, attrs):
    return [_float_dtype("_norm_project", dtypes, _PROJ_INPUTS)]


def _proj_compute(rctx, ins, outs, attrs):
    g, xhat, r, flag, a, b = ins
    layout, p, q, rr, _ = _proj_plan(g.shape, attrs)
    _k.project(layout, g, xhat, p, q, rr, r, a, b, float(flag.reshape(-1)[0]), outs[0])


def _proj_grad(F, node, ograds):
    """out = r * (g - t * (mean(g) + xhat * mean(g * xhat))) + xhat * a + b, means over the
    reduced axes (per group). Linear in g with a symmetric projection, so
    dg = _norm_project(h, xhat, r, t, 0, 0); with P = g - t * (mean(g) + xhat * mean(g xhat)):
    dxhat = h * a - t * r * (h * mean(g xhat) + g * mean(h xhat)), dr = sum(h * P),
    dt = -sum(h * r * (mean(g) + xhat * mean(g xhat))), da = sum(h * xhat), db = sum(h)."""
    g, xhat, r, t, a, b = node.inputs
    h = ograds[0]
    attrs, wants = node.attrs, node.wants
    kw = {"axis": attrs.axis, "exclude": attrs.exclude, "keepdims": True}
    kept = tuple(node.input_shapes[2])
    dt = node.input_dtypes[0]
    out = [None] * 6
    if wants[0]:
        zero = F.zeros(kept, dtype=dt, ctx=node.context)
        out[0] = F._internal._norm_project(h, xhat, r, t, zero, zero, axis=attrs.axis,
                                           exclude=attrs.exclude)
    if wants[1] or wants[2] or wants[3]:
        m_gx = F.mean(g * xhat, **kw)
        if wants[1]:
            m_hx = F.mean(h * xhat, **kw)
            inner = F.broadcast_add(F.broadcast_mul(h, m_gx), F.broadcast_mul(g, m_hx))
            out[1] = F.broadcast_sub(F.broadcast_mul(h, a),
                                     F.broadcast_mul(F.broadcast_mul(t, r), inner))
        if wants[2] or wants[3]:
            center = F.broadcast_add(F.mean(g, **kw), F.broadcast_mul(xhat, m_gx))
            if wants[2]:
                out[2] = F.sum(h * F.broadcast_sub(g, F.broadcast_mul(t, center)), **kw)
            if wants[3]:
                out[3] = -F.sum(F.broadcast_mul(h * center, r))
    if wants[4]:
        out[4] = F.sum(h * xhat, **kw)
    if wants[5]:
        out[5] = F.sum(h, **kw)
    return out


register(OpDef(
    "_norm_project", inputs=_PROJ_INPUTS,
    params=(Param("axis", "axes", None, "the reduced axes (None: all)"),
            Param("exclude", "bool", False, "reduce over the axes NOT listed in axis")),
    infer_shape=_proj_shape, infer_type=_proj_type, compute={"cpu": _proj_compute},
    gradient=_proj_grad, grad_needs=("inputs",), in_place=True,
    doc="""The fused core of the normalisation gradients (one kernel, two passes):
``out = rstd * (grad - flag * (mean(grad) + xhat * mean(grad * xhat))) + xhat * scale + shift``
with the means over the reduced axes (``axis``/``exclude`` as in ``sum``); ``rstd``,
``scale`` and ``shift`` have the data's shape with the reduced axes set to 1, ``flag`` is
``(1,)``. With flag 1 it is the input gradient of a standardisation through its own mean
and variance; flag 0 leaves ``rstd * grad`` (fixed statistics). Its gradient is again made
of registered ops (itself included), so every order is exact.

>>> g = mx.nd.array([[2.0, 2.0, 5.0]])          # mean 3, mean(g * xhat) 1
>>> xhat = mx.nd.array([[-1.0, 0.0, 1.0]])
>>> one, zero = mx.nd.ones((1, 1)), mx.nd.zeros((1, 1))
>>> mx.nd._internal._norm_project(g, xhat, one, mx.nd.ones(1), zero, zero, axis=1).asnumpy().tolist()
[[0.0, -1.0, 1.0]]
"""))


# ---- BatchNorm --------------------------------------------------------------------------------
_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")
_BN_OUTPUTS = ("output", "mean", "var", "data_normalized", "gamma_used", "batch_stats")


def _bn_axis(shape, attrs):
    if len(shape) < 1:
        raise op_error("BatchNorm", f"data must have at least one dimension, got {shape}")
    return normalize_axis("BatchNorm", attrs.axis, len(shape))


def _bn_shape(shapes, attrs):
    check_num_inputs("BatchNorm", shapes, 5)
    data = tuple(shapes[0])
    ax = _bn_axis(data, attrs)
    c = data[ax]
    _check_vectors("BatchNorm", shapes[1:], _BN_INPUTS[1:], c,
                   f"the size of data {data} along axis {attrs.axis}")
    return [data, (c,), (c,), data, (c,), (1,)]


def _bn_type(dtypes, attrs):
    dt = _float_dtype("BatchNorm", dtypes, _BN_INPUTS)
    return [dt] * 6


def _axis_backward_shape(in_shapes, out_shapes, attrs):
    """BatchNorm and LayerNorm: data from the input or output, every other input a vector
    of data's size along ``attrs.axis``."""
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if data is None or not -len(data) <= attrs.axis < len(data):
        return list(in_shapes)
    c = (data[attrs.axis],)
    return [data] + [c if s is None else s for s in in_shapes[1:]]


def _bn_check(attrs):
    if not 0.0 <= attrs.momentum <= 1.0:
        raise op_error("BatchNorm", f"momentum must be in [0, 1], got {attrs.momentum}")
    if not attrs.eps > 0.0:
        raise op_error("BatchNorm", f"eps must be positive, got {attrs.eps}")


def _bn_compute(rctx, ins, outs, attrs):
    bn_forward(rctx, ins, outs, attrs)


def bn_forward(rctx, ins, outs, attrs, combine=None):
    """BatchNorm's forward into its six outputs (``xhat`` may be None: nothing reads it, so
    it is not written). ``combine(rctx, mean, var, count)``, when
    given, replaces the batch mean and biased variance (in place) by those of a larger
    batch (SyncBatchNorm's, over every rank) and returns that batch's element count per
    channel."""
    _bn_check(attrs)
    x, gamma, beta, moving_mean, moving_var = ins
    y, mean, rstd, xhat, gamma_used, flag = outs[:6]
    ax = _bn_axis(x.shape, attrs)
    a, c, b = size_of(x.shape[:ax]), x.shape[ax], size_of(x.shape[ax + 1:])
    train = rctx.is_train and not attrs.use_global_stats
    dev, xp = kernels(rctx, _k), rctx.xp
    # oneDNN: the batch statistics and xhat in one primitive (not with SyncBatchNorm's
    # combined statistics, which must be known before anything is normalised)
    fast = (ONEDNN_NORM and train and combine is None and xhat is not None
            and _bn_onednn(xp, x, a, c, b, mean, rstd, xhat, attrs.eps))
    if train and not fast:
        if b == 1:          # (batch, channels): column statistics over contiguous rows
            dev.moments(x, 1, a, c, mean, rstd)           # rstd holds the batch variance here
        else:
            dev.channel_moments(x, a, c, b, mean, rstd)
    if train:
        count = a * b if combine is None else combine(rctx, mean, rstd, a * b)
        if count > 0:
            # moving = momentum * moving + (1 - momentum) * batch (biased variance, as MXNet)
            dev.ema(moving_mean, mean, attrs.momentum)
            dev.ema(moving_var, rstd, attrs.momentum)
    else:
        xp.copyto(mean, moving_mean)
        xp.copyto(rstd, moving_var)
    dev.finish(rstd, attrs.eps, True)
    if attrs.fix_gamma:
        gamma_used.fill(1)
    else:
        xp.copyto(gamma_used, gamma)
    flag.fill(1 if train else 0)
    if fast:    # y = xhat * gamma + beta
        dev.apply(xhat, a, c, b, xp.zeros((1,), x.dtype), xp.ones((1,), x.dtype), (0, 0, 0),
                  gamma_used, beta, (0, 1, 0), y)
    else:
        dev.apply(x, a, c, b, mean, rstd, (0, 1, 0), gamma_used, beta, (0, 1, 0), y, xhat)


def _bn_onednn(xp, x, a, c, b, mean, var, xhat, eps):
    """The batch mean and biased variance of ``x`` read as ``(a, c, b)`` into ``mean`` and
    ``var``, and ``xhat`` normalised by them, by oneDNN's batch normalisation; False where
    the reference kernels must run. Only in training: with given statistics the reference
    kernel writes y and xhat in one pass, where oneDNN (which has no xhat output) would need
    a second."""
    return onednn.run(xp, "bnorm_forward", (x, None, None, mean, var, xhat), a, c, b, eps,
                      True)


def bn_param_grads(F, node, gy, xhat, ggamma, ax, c):
    """(dgamma, dbeta) of a BatchNorm-shaped node (None where not wanted): sum(gy * xhat)
    plus gamma_used's head gradient (zeros under fix_gamma), and sum(gy), over every axis
    but ``ax``. ``ggamma`` may be None (no head gradient)."""
    dgamma = dbeta = None
    if node.wants[1]:
        dgamma = (F.zeros((c,), dtype=node.output_dtypes[0], ctx=node.context)
                  if node.attrs.fix_gamma else plus(F.sum(gy * xhat, axis=ax, exclude=True),
                                                     ggamma))
    if node.wants[2]:
        dbeta = F.sum(gy, axis=ax, exclude=True)
    return dgamma, dbeta


def _bn_grad(F, node, ograds):
    """y = gamma' * xhat + beta, xhat = (x - mean) * r, r = 1 / sqrt(var + eps), gamma' = gamma
    (1 under fix_gamma), with the batch mean/biased variance in training (flag t = 1) or the
    moving ones in inference (t = 0). Over the n elements of each channel, with
    G = gy * gamma' + g_xhat:

    dx = G * r + t * (xhat * (-g_r * r^2 / n - r * mean(G * xhat)) + g_mean / n - r * mean(G))
    (one ``_norm_project``), dgamma = sum(gy * xhat) + g_gamma' (0 under fix_gamma), dbeta = sum(gy);
    the moving statistics (auxiliary states) get no gradient.
    """
    _, mean, r, xhat, gamma_used, flag = node.outputs
    gy, gmean, gr, gxhat, ggamma, _ = ograds       # None: nothing sent (none_ograds)
    attrs, wants = node.attrs, node.wants
    shape = tuple(node.output_shapes[0])
    if gy is None:
        gy = F.zeros(shape, dtype=node.output_dtypes[0], ctx=node.context)
    ax = normalize_axis("BatchNorm", attrs.axis, len(shape))
    c = shape[ax]
    kept = _param_shape(shape, ax)
    dgamma, dbeta = bn_param_grads(F, node, gy, xhat, ggamma, ax, c)
    dx = None
    if wants[0]:
        n = max(size_of(shape) // max(c, 1), 1)
        g = plus(F.broadcast_mul(gy, F.reshape(gamma_used, shape=kept)), gxhat)
        rk = F.reshape(r, shape=kept)
        zero = F.zeros(kept, dtype=node.output_dtypes[1], ctx=node.context)
        scale = zero if gr is None else \
            F.broadcast_mul(flag, F.reshape(gr * r * r, shape=kept) / (-n))
        shift = zero if gmean is None else F.broadcast_mul(flag, F.reshape(gmean, shape=kept) / n)
        dx = F._internal._norm_project(g, xhat, rk, flag, scale, shift, axis=ax, exclude=True)
    return [dx, dgamma, dbeta, None, None]


_BN_PARAMS = (
    Param("eps", "float", 1e-3, "added to the variance before the square root"),
    Param("momentum", "float", 0.9, "weight of the old value in the moving averages"),
    Param("fix_gamma", "bool", True, "treat gamma as 1 (gamma gets a zero gradient)"),
    Param("use_global_stats", "bool", False,
          "normalise with the moving statistics also in training"),
    Param("output_mean_var", "bool", False, "also return the mean and inverse std"),
    Param("axis", "int", 1, "the channel axis"),
    Param("cudnn_off", "bool", False, "accepted for compatibility; no effect"),
    Param("min_calib_range", "float", None, "accepted for compatibility (quantisation)"),
    Param("max_calib_range", "float", None, "accepted for compatibility (quantisation)"))


#: The initializers a symbolic call gives the moving statistics' variables (MXNet's).
MOVING_STATS_INIT = {"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'}


def _bn_record(name, compute, gradient, doc):
    """A BatchNorm-shaped record: BatchNorm's inputs, parameters, outputs and inference."""
    return OpDef(
        name, inputs=_BN_INPUTS, params=_BN_PARAMS,
        infer_shape=_bn_shape, infer_type=_bn_type, compute={"cpu": compute},
        gradient=gradient, grad_needs=("outputs",), num_outputs=6, output_names=_BN_OUTPUTS,
        in_place=True, optional_outputs=(3,),       # xhat: only the gradient reads it
        none_ograds=True,                           # no zeros of xhat's size for its head
        num_visible_outputs=lambda attrs: 3 if attrs.output_mean_var else 1,
        aux_inputs=("moving_mean", "moving_var"), mutate_inputs=("moving_mean", "moving_var"),
        var_init=MOVING_STATS_INIT, backward_shape=_axis_backward_shape, doc=doc)


register(_bn_record("BatchNorm", _bn_compute, _bn_grad, """Batch normalisation over every axis but ``axis`` (the channels).

``y = (x - mean) / sqrt(var + eps) * gamma + beta`` per channel. In training mode
(``autograd.record()`` or ``train_mode()``) and without ``use_global_stats`` the batch mean
and biased variance are used, and the auxiliary states are updated in place (their version
counters bumped, not recorded as a differentiable write):
``moving_mean = momentum * moving_mean + (1 - momentum) * mean``, likewise ``moving_var`` with
the biased batch variance. Otherwise (inference, or ``use_global_stats``) the moving
statistics are used (and left unchanged; their version counters still move on every call,
as for any declared ``mutate_inputs``, which is only ever conservative). ``fix_gamma=True`` (the default) treats gamma as 1 and gives it a zero
gradient. With ``output_mean_var`` the call returns ``[output, mean, var]``, where ``var``
holds the *inverse standard deviation* ``1 / sqrt(var + eps)`` (what MXNet 1.x returned,
as its documentation says); in inference they describe the moving statistics.

The gradient is a graph of reductions and broadcasts, exact to any order in both modes
(training differentiates through the batch statistics). Three hidden outputs (the
normalised data, the gamma applied, a train flag) carry what it needs, so the tape never
saves the moving statistics.

Differences from MXNet 1.x: MXNet updated the moving statistics in the *backward* pass
(a training forward without ``backward`` left them unchanged); mxlite updates them in
the training forward, once per call (as PyTorch). Data, gamma, beta and the moving
statistics must share one dtype, float32 or float64 (MXNet also took float16 data).

>>> x = mx.nd.array([[1.0, 10.0], [3.0, 30.0]])
>>> gamma, beta = mx.nd.ones(2), mx.nd.zeros(2)
>>> mm, mv = mx.nd.zeros(2), mx.nd.ones(2)
>>> with mx.autograd.train_mode():
...     y = mx.nd.BatchNorm(x, gamma, beta, mm, mv, eps=1e-8)
>>> [round(v, 4) for v in y.asnumpy().ravel().tolist()]
[-1.0, -1.0, 1.0, 1.0]
>>> [round(v, 4) for v in mm.asnumpy().tolist()]    # 0.9 * 0 + 0.1 * batch mean
[0.2, 2.0]
>>> [round(v, 4) for v in mv.asnumpy().tolist()]    # 0.9 * 1 + 0.1 * biased batch variance
[1.0, 10.9]
>>> mx.nd.BatchNorm(x, gamma, beta, mm, mv).shape   # inference: the moving statistics
(2, 2)
"""))


# ---- BatchNormWithReLU: relu(BatchNorm(...)) in one call ---------------------------------------
def _bn_relu_compute(rctx, ins, outs, attrs):
    get_op("BatchNorm").compute[rctx.kernels](rctx, ins, outs, attrs)
    relu = get_op("relu")
    relu.compute[rctx.kernels](rctx, [outs[0]], [outs[0]], relu.parse_attrs({}))


def _bn_relu_grad(F, node, ograds):
    """y = relu(b), b = BatchNorm(...): BatchNorm's gradient of gy * (y > 0) (the mask is
    constant almost everywhere, so every higher order is BatchNorm's too)."""
    gy = ograds[0]
    if gy is not None:
        gy = gy * F._internal._greater_scalar(node.outputs[0], scalar=0)
    return _bn_grad(F, node, [gy] + list(ograds[1:]))


register(_bn_record("_contrib_BatchNormWithReLU", _bn_relu_compute, _bn_relu_grad, """\
``relu(BatchNorm(data, gamma, beta, moving_mean, moving_var, ...))`` in one call: BatchNorm's
inputs, parameters, moving-statistics updates and outputs (the mean and inverse std with
``output_mean_var``), with the ReLU applied to the output.

MXNet 1.9.1 ran it only through its oneDNN backend, on 4-d data; here it takes any data
BatchNorm takes, on every device.

>>> x = mx.nd.array([[1.0, 10.0], [3.0, 30.0]])
>>> y = mx.nd.contrib.BatchNormWithReLU(x, mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2),
...                                     mx.nd.ones(2), eps=1e-8)
>>> y.asnumpy().tolist()     # inference: (x - 0) / 1, then the ReLU
[[1.0, 10.0], [3.0, 30.0]]
"""))


# ---- LayerNorm --------------------------------------------------------------------------------
def _ln_shape(shapes, attrs):
    check_num_inputs("LayerNorm", shapes, 3)
    data = tuple(shapes[0])
    if len(data) < 1:
        raise op_error("LayerNorm", f"data must have at least one dimension, got {data}")
    ax = normalize_axis("LayerNorm", attrs.axis, len(data))
    _check_vectors("LayerNorm", shapes[1:], ("gamma", "beta"), data[ax],
                   f"the size of data {data} along axis {attrs.axis}")
    stat = _kept(data, (ax,))
    return [data, stat, stat]


def _ln_type(dtypes, attrs):
    return [_float_dtype("LayerNorm", dtypes, ("data", "gamma", "beta"))] * 3


def _ln_compute(rctx, ins, outs, attrs):
    x, gamma, beta = ins
    y, mean, std = outs
    if not attrs.eps >= 0.0:
        raise op_error("LayerNorm", f"eps must be non-negative, got {attrs.eps}")
    ax = normalize_axis("LayerNorm", attrs.axis, x.ndim)
    p, q, r = size_of(x.shape[:ax]), x.shape[ax], size_of(x.shape[ax + 1:])
    if ONEDNN_NORM and r == 1 and _ln_onednn(rctx, x, gamma, beta, y, mean, std, p, q,
                                             attrs.eps):
        return
    if r == 1:          # contiguous rows: statistics and affine pass in one sweep per row
        kernels(rctx, _k).layer_norm_rows(x, p, q, gamma, beta, attrs.eps, y, mean, std)
        return
    _standardize(rctx, x, mean, std, (p, q, r), (p, q, r), (r, 0, 1), gamma, beta, (0, 1, 0),
                 y, attrs.eps)


def _ln_onednn(rctx, x, gamma, beta, y, mean, std, p, q, eps):
    """LayerNorm over the last axis of ``x`` read as ``(p, q)`` by oneDNN's layer
    normalisation (its variance output turned into ``std = sqrt(var + eps)``); False where
    the reference kernels must run."""
    if not onednn.run(rctx.xp, "lnorm_forward", (x, gamma, beta, mean, std, y), p, q, eps):
        return False
    kernels(rctx, _k).finish(std, eps, False)
    return True


def _ln_grad(F, node, ograds):
    """LayerNorm: one ``_layer_norm_grad`` (the formulas of ``_standardize_grad`` in one
    sweep per row, the gamma and beta sums in the same sweep)."""
    x, gamma, _ = node.inputs
    _, mean, std = node.outputs
    gy, gmean, gstd = ograds
    ax = normalize_axis("LayerNorm", node.attrs.axis, len(node.input_shapes[0]))
    out = F._internal._layer_norm_grad(gy, x, gamma, mean, std, gmean, gstd, axis=ax)
    return [out[i] if node.wants[i] else None for i in range(3)]


# ---- _layer_norm_grad: LayerNorm's fused backward -------------------------------------------
_LNG = "_layer_norm_grad"
_LNG_INPUTS = ("ograd", "data", "gamma", "mean", "std", "mean_grad", "std_grad")


def _lng_shape(shapes, attrs):
    check_num_inputs(_LNG, shapes, 7)
    data = tuple(shapes[1])
    if len(data) < 1:
        raise op_error(_LNG, f"data must have at least one dimension, got {data}")
    ax = normalize_axis(_LNG, attrs.axis, len(data))
    if tuple(shapes[0]) != data:
        raise op_error(_LNG, f"ograd must have the shape of data {data}, got {tuple(shapes[0])}")
    _check_vectors(_LNG, shapes[2:3], ("gamma",), data[ax],
                   f"the size of data {data} along axis {attrs.axis}")
    stat = _kept(data, (ax,))
    for name, s in zip(_LNG_INPUTS[3:], shapes[3:]):
        if tuple(s) != stat:
            raise op_error(_LNG, f"{name} must have shape {stat} (data {data}, axis "
                           f"{attrs.axis}), got {tuple(s)}")
    return [data, (data[ax],), (data[ax],)]


def _lng_type(dtypes, attrs):
    return [_float_dtype(_LNG, dtypes, _LNG_INPUTS)] * 3


def _lng_compute(rctx, ins, outs, attrs):
    gy, x, gamma, mean, std, gmean, gstd = ins
    dx, dgamma, dbeta = outs
    ax = normalize_axis(_LNG, attrs.axis, x.ndim)
    p, q, r = size_of(x.shape[:ax]), x.shape[ax], size_of(x.shape[ax + 1:])
    if r == 1 and rctx.kernels == "cpu":        # contiguous rows: one sweep per row
        part = rctx.xp.empty((max(1, -(-p // _k.GRAD_CHUNK)), 4 * q), x.dtype)
        _k.layer_norm_grad_rows(gy, x, gamma, mean, std, gmean, gstd, p, q, dx, dgamma, dbeta,
                                part)
        return
    _lng_arrays(rctx.xp, ins, outs, ax)


def _lng_arrays(xp, ins, outs, ax):
    """``_layer_norm_grad`` in array expressions (any axis, any device)."""
    gy, x, gamma, mean, std, gmean, gstd = ins
    dx, dgamma, dbeta = outs
    if x.size == 0:
        dgamma[...] = 0
        dbeta[...] = 0
        return
    n = x.shape[ax]
    red = tuple(i for i in range(x.ndim) if i != ax)
    rs = (1 / std).astype(x.dtype)
    xhat = (x - mean) * rs
    g = gy * gamma.reshape(_param_shape(x.shape, ax))
    # sums then a division (NumPy's mean goes through numpy.empty, outside a device's
    # namespace)
    mg = (g.sum(axis=ax, keepdims=True, dtype=np.float64) / n).astype(x.dtype)
    mgx = ((g * xhat).sum(axis=ax, keepdims=True, dtype=np.float64) / n).astype(x.dtype)
    # dgamma and dbeta read ograd, so they come first: dx may be ograd itself (in place)
    dgamma[...] = (gy * xhat).sum(axis=red, dtype=np.float64)
    dbeta[...] = gy.sum(axis=red, dtype=np.float64)
    dx[...] = rs * (g - (mg + xhat * mgx)) + xhat * (gstd / n) + gmean / n


def _lng_grad(F, node, ograds):
    """dx is ``_norm_project(G, xhat, 1 / std, 1, std_grad / n, mean_grad / n)`` with
    G = ograd * gamma and xhat = (data - mean) / std; dgamma = sum(ograd * xhat), dbeta =
    sum(ograd) over every axis but ``axis``. The chain rule through ``_norm_project``'s own
    gradient (``_proj_grad``) and the broadcasts, a graph of registered ops."""
    gy, x, gamma, mean, std, gmean, gstd = node.inputs
    h, hg, hb = ograds
    shape = tuple(node.input_shapes[1])
    ax = normalize_axis(_LNG, node.attrs.axis, len(shape))
    n, pshape, kept = shape[ax], _param_shape(shape, ax), _kept(shape, (ax,))
    dt, ctx = node.input_dtypes[1], node.context
    gam, hgb, hbb = (F.reshape(v, shape=pshape) for v in (gamma, hg, hb))
    r = F.reciprocal(std)
    centred = F.broadcast_sub(x, mean)
    xhat = F.broadcast_mul(centred, r)
    g = F.broadcast_mul(gy, gam)
    proj = types.SimpleNamespace(
        inputs=[g, xhat, r, F.ones((1,), dtype=dt, ctx=ctx), gstd / n, gmean / n],
        attrs=types.SimpleNamespace(axis=(ax,), exclude=False),
        wants=[True, True, True, False, True, True], input_shapes=[shape, shape, kept, (1,),
                                                                   kept, kept],
        input_dtypes=[dt] * 6, context=ctx)
    dg, dxhat, dr, _, da, db = _proj_grad(F, proj, [h])
    dxhat = dxhat + F.broadcast_mul(gy, hgb)                  # dgamma = sum(ograd * xhat)
    wants = node.wants
    out = [None] * 7
    if wants[0]:
        out[0] = F.broadcast_add(F.broadcast_mul(dg, gam) + F.broadcast_mul(xhat, hgb), hbb)
    if wants[1]:
        out[1] = F.broadcast_mul(dxhat, r)
    if wants[2]:
        out[2] = F.sum(dg * gy, axis=ax, exclude=True)
    if wants[3]:
        out[3] = -F.sum(F.broadcast_mul(dxhat, r), axis=ax, keepdims=True)
    if wants[4]:            # r = 1 / std directly and through xhat = (data - mean) * r
        dr_all = dr + F.sum(dxhat * centred, axis=ax, keepdims=True)
        out[4] = -dr_all * r * r
    if wants[5]:
        out[5] = db / n
    if wants[6]:
        out[6] = da / n
    return out


register(OpDef(
    _LNG, inputs=_LNG_INPUTS,
    params=(Param("axis", "int", -1, "the axis LayerNorm normalised over"),),
    infer_shape=_lng_shape, infer_type=_lng_type, compute={"cpu": _lng_compute},
    gradient=_lng_grad, grad_needs=("inputs",), num_outputs=3, in_place=True,
    output_names=("data_grad", "gamma_grad", "beta_grad"),
    doc="""LayerNorm's backward in one op (one sweep per row on the CPU): given the head
gradient ``ograd`` of the output, the forward's ``data``, ``gamma`` and its ``mean`` and
``std`` outputs, and the head gradients ``mean_grad``, ``std_grad`` of those two, returns
``[data_grad, gamma_grad, beta_grad]``: with ``xhat = (data - mean) / std``,
``G = ograd * gamma`` and ``n = data.shape[axis]`` (means over ``axis``),
``data_grad = (G - mean(G) - xhat * mean(G * xhat)) / std + mean_grad / n
+ std_grad * xhat / n``, ``gamma_grad = sum(ograd * xhat)``, ``beta_grad = sum(ograd)`` (over
every axis but ``axis``). Its own gradient is a graph of registered ops, so every order is
exact.

>>> x = mx.nd.array([[1.0, 2.0, 3.0, 4.0]])
>>> y, mean, std = mx.nd.LayerNorm(x, mx.nd.ones(4), mx.nd.zeros(4), output_mean_var=True)
>>> z = mx.nd.zeros((1, 1))
>>> dx, dg, db = mx.nd._internal._layer_norm_grad(mx.nd.ones((1, 4)), x, mx.nd.ones(4),
...                                               mean, std, z, z)
>>> dx.asnumpy().round(6).tolist(), db.asnumpy().tolist()  # a shift of y is no change of x
([[0.0, 0.0, 0.0, 0.0]], [1.0, 1.0, 1.0, 1.0])
"""))


register(OpDef(
    "LayerNorm", inputs=("data", "gamma", "beta"),
    params=(Param("axis", "int", -1, "the axis to normalise over"),
            Param("eps", "float", 1e-5, "added to the variance before the square root"),
            Param("output_mean_var", "bool", False, "also return the mean and the std")),
    infer_shape=_ln_shape, infer_type=_ln_type, compute={"cpu": _ln_compute},
    gradient=_ln_grad, grad_needs=("inputs", "outputs"), num_outputs=3, in_place=True,
    output_names=("output", "mean", "std"),
    num_visible_outputs=lambda attrs: 3 if attrs.output_mean_var else 1,
    backward_shape=_axis_backward_shape,
    doc="""Layer normalisation along ``axis``: ``y = (x - mean) / sqrt(var + eps) * gamma + beta``,
mean and (biased) variance over ``axis``, gamma and beta of shape ``(data.shape[axis],)``.

With ``output_mean_var`` the call returns ``[output, mean, std]``, the statistics with
``axis`` kept as size 1 and ``std = sqrt(var + eps)`` (MXNet 1.x). Statistics take two
passes over each row: float64 rows in double; float32 rows in float lanes over blocks of
256 elements, the blocks added in double, the mean summed about the row's first element
(a large common offset costs no precision) and the variance about the float32 mean,
corrected to the exact one: within float32 tolerance of a float64 reference. The gradient
is one ``_layer_norm_grad`` (one sweep per row on the CPU), whose own gradient is a graph of
registered ops: every order is exact.

>>> x = mx.nd.array([[1.0, 2.0, 3.0, 4.0]])
>>> y = mx.nd.LayerNorm(x, mx.nd.ones(4), mx.nd.zeros(4), eps=0.0)
>>> (y.asnumpy() * 5 ** 0.5).round(4).tolist()    # (x - 2.5) / sqrt(1.25)
[[-3.0, -1.0, 1.0, 3.0]]
"""))


# ---- InstanceNorm -----------------------------------------------------------------------------
def _in_shape(shapes, attrs):
    check_num_inputs("InstanceNorm", shapes, 3)
    data = tuple(shapes[0])
    if len(data) < 3:
        raise op_error("InstanceNorm", f"data must have at least 3 dimensions (batch, channel, "
                       f"spatial...), got shape {data}")
    _check_vectors("InstanceNorm", shapes[1:], ("gamma", "beta"), data[1],
                   f"the channels of data {data}")
    stat = _kept(data, tuple(range(2, len(data))))
    return [data, stat, stat]


def _in_type(dtypes, attrs):
    return [_float_dtype("InstanceNorm", dtypes, ("data", "gamma", "beta"))] * 3


def _in_backward_shape(in_shapes, out_shapes, attrs):
    data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if data is None or len(data) < 2:
        return list(in_shapes)
    return [data] + [(data[1],) if s is None else s for s in in_shapes[1:]]


def _in_compute(rctx, ins, outs, attrs):
    x, gamma, beta = ins
    y, mean, std = outs
    if not attrs.eps >= 0.0:
        raise op_error("InstanceNorm", f"eps must be non-negative, got {attrs.eps}")
    n, c, s = x.shape[0], x.shape[1], size_of(x.shape[2:])
    # statistics per (n, c) row of s elements; the affine pass over the (N, C, S) block
    # reads them at n * C + c and gamma, beta at c
    _standardize(rctx, x, mean, std, (n * c, s, 1), (n, c, s), (c, 1, 0), gamma, beta,
                 (0, 1, 0), y, attrs.eps)


def _in_grad(F, node, ograds):
    """InstanceNorm: see ``_standardize_grad`` (statistics over the spatial axes, gamma per
    channel)."""
    return _standardize_grad(F, node, ograds, tuple(range(2, len(node.input_shapes[0]))), 1)


register(OpDef(
    "InstanceNorm", inputs=("data", "gamma", "beta"),
    params=(Param("eps", "float", 1e-3, "added to the variance before the square root"),),
    infer_shape=_in_shape, infer_type=_in_type, compute={"cpu": _in_compute},
    gradient=_in_grad, grad_needs=("inputs", "outputs"), num_outputs=3, in_place=True,
    output_names=("output", "mean", "std"), num_visible_outputs=1,
    backward_shape=_in_backward_shape,
    doc="""Instance normalisation: each (sample, channel) of ``data`` (shape ``(N, C, ...)``) is
normalised over its spatial axes, ``y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c]``
(biased variance). The hidden outputs ``mean`` and ``std = sqrt(var + eps)`` have shape
``(N, C, 1, ...)``. The gradient (any order) is a graph of reductions and broadcasts.

>>> x = mx.nd.array([[[1.0, 3.0], [2.0, 6.0]]])
>>> y = mx.nd.InstanceNorm(x, mx.nd.array([2.0, 1.0]), mx.nd.array([0.0, 5.0]), eps=0.0)
>>> y.asnumpy().tolist()      # (x - mean) / std * gamma + beta per (sample, channel)
[[[-2.0, 2.0], [4.0, 6.0]]]
"""))


# ---- L2Normalization --------------------------------------------------------------------------
_L2_MODES = ("instance", "channel", "spatial")


def _l2_axes(shape, mode):
    """The axes one norm runs over."""
    if mode == "instance":
        return tuple(range(1, len(shape)))
    if mode == "channel":
        return (1,)
    return tuple(range(2, len(shape)))


def _l2_shape(shapes, attrs):
    check_num_inputs("L2Normalization", shapes, 1)
    data = tuple(shapes[0])
    need = 3 if attrs.mode == "spatial" else 2
    if len(data) < need:
        raise op_error("L2Normalization", f"mode={attrs.mode!r} needs data with at least "
                       f"{need} dimensions, got shape {data}")
    return [data]


def _l2_type(dtypes, attrs):
    return [_float_dtype("L2Normalization", dtypes, ("data",))]


def _l2_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    if not attrs.eps >= 0.0:
        raise op_error("L2Normalization", f"eps must be non-negative, got {attrs.eps}")
    shape, mode = x.shape, attrs.mode
    if mode == "instance":
        p, q, r = shape[0], size_of(shape[1:]), 1
    elif mode == "channel":
        p, q, r = shape[0], shape[1], size_of(shape[2:])
    else:
        p, q, r = shape[0] * shape[1], size_of(shape[2:]), 1
    dev, xp = kernels(rctx, _k), rctx.xp
    scale = xp.empty((p * r,), x.dtype)
    dev.rnorm(x, p, q, r, attrs.eps, scale)
    dev.apply(x, p, q, r, xp.zeros((p * r,), x.dtype), scale, (r, 0, 1),
              xp.ones((1,), x.dtype), xp.zeros((1,), x.dtype), (0, 0, 0), y)


def _l2_grad(F, node, ograds):
    """y = x / n, n = sqrt(sum(x^2) + eps) over the mode's axes:
    dx = (g - y * sum(g * y)) / n."""
    x, g = node.inputs[0], ograds[0]
    axes = _l2_axes(tuple(node.input_shapes[0]), node.attrs.mode)
    n = F.sqrt(F.sum(F.square(x), axis=axes, keepdims=True) + node.attrs.eps)
    y = F.broadcast_div(x, n)
    s = F.sum(g * y, axis=axes, keepdims=True)
    return [F.broadcast_div(g - F.broadcast_mul(y, s), n)]


register(OpDef(
    "L2Normalization", inputs=("data",),
    params=(Param("eps", "float", 1e-10, "added to the sum of squares before the root"),
            Param("mode", "str", "instance", "'instance' (all axes but the first), 'channel' "
                  "(axis 1) or 'spatial' (axes 2 and up)", choices=_L2_MODES)),
    infer_shape=_l2_shape, infer_type=_l2_type, compute={"cpu": _l2_compute},
    gradient=_l2_grad, backward_shape=_data_backward_shape, in_place=True,
    doc="""Divide ``data`` by its L2 norm ``sqrt(sum(x**2) + eps)``: over all axes but the
first (``mode='instance'``), over axis 1 for each sample and position (``'channel'``), or
over the spatial axes 2.. for each sample and channel (``'spatial'``). The gradient (any
order) is a graph of registered ops.

>>> x = mx.nd.array([[3.0, 4.0], [0.0, 2.0]], dtype='float64')
>>> mx.nd.L2Normalization(x).asnumpy().round(6).tolist()   # eps=1e-10 is in the root
[[0.6, 0.8], [0.0, 1.0]]
"""))


# ---- Dropout ----------------------------------------------------------------------------------
def _dropout_check(attrs):
    if not 0.0 <= attrs.p < 1.0:
        raise op_error("Dropout", f"p must be in [0, 1), got {attrs.p}")


def _dropout_shape(shapes, attrs):
    check_num_inputs("Dropout", shapes, 1)
    _dropout_check(attrs)
    data = tuple(shapes[0])
    if attrs.axes:
        normalize_axes("Dropout", attrs.axes, len(data), "axes")
    return [data, data]


def _dropout_type(dtypes, attrs):
    """Output and mask have data's dtype: float16 (as MXNet; the kernels draw and compare
    in float32 and store float16), float32 or float64."""
    dt = np.dtype(dtypes[0])
    if dt not in _DROPOUT_FLOATS:
        raise op_error("Dropout", f"data must be float16, float32 or float64, got {dt}")
    return [dt, dt]


def _dropout_compute(rctx, ins, outs, attrs):
    x = ins[0]
    y, mask = outs
    xp = rctx.xp
    _dropout_check(attrs)
    active = attrs.mode == "always" or rctx.is_train
    if not active or attrs.p == 0.0 or x.size == 0:
        mask.fill(1)
        xp.copyto(y, x)
        return
    axes = normalize_axes("Dropout", attrs.axes, x.ndim, "axes") if attrs.axes else ()
    small_shape = _kept(x.shape, axes)
    key, offset = rctx.rng.next()
    if axes:
        small = xp.empty(small_shape, x.dtype)
        _draw_mask(xp, key, offset, attrs.p, small)
        xp.strided_copy(xp.broadcast_to(small, x.shape), mask)
    else:
        _draw_mask(xp, key, offset, attrs.p, mask)
    _k.mul(x, mask, y)


_MASK_BLOCK = 1 << 22      # float32 uniforms drawn at a time for a large mask (16 MiB)


def _draw_mask(xp, key, offset, p, mask):
    """Fill ``mask`` with keep / (1 - p) from the uniforms of the stream (key, offset), in
    float32 blocks of ``_MASK_BLOCK`` (elements ``lo, lo + 1, ...`` of the stream: the same
    mask as one draw of the whole), so a float16 or float32 mask of any size needs no float32
    array of its size beside it."""
    flat = mask.reshape(-1) if mask.flags.c_contiguous else None
    if flat is None or mask.size <= _MASK_BLOCK:
        u = xp.empty(mask.shape, np.float32)
        _rk.fill_continuous("uniform", u, key, offset, 0.0, 1.0, 1.0, _ONE_BELOW_1, 24)
        _k.dropout_mask(u, p, mask)
        return
    u = xp.empty(_MASK_BLOCK, np.float32)
    for lo in range(0, mask.size, _MASK_BLOCK):
        n = min(_MASK_BLOCK, mask.size - lo)
        _rk.fill_continuous("uniform", u[:n], key, offset, 0.0, 1.0, 1.0, _ONE_BELOW_1, 24,
                            lo)
        _k.dropout_mask(u[:n], p, flat[lo:lo + n])


def _dropout_grad(F, node, ograds):
    """y = x * mask, mask = keep / (1 - p) drawn once in the forward pass (ones when
    inactive): dx = head * mask with that same mask; the mask is a constant."""
    return [ograds[0] * node.outputs[1]]


register(OpDef(
    "Dropout", inputs=("data",),
    params=(Param("p", "float", 0.5, "probability of dropping an element, in [0, 1)"),
            Param("mode", "str", "training", "'training': active only in train mode; "
                  "'always': also in inference", choices=("training", "always")),
            Param("axes", "axes", (), "axes along which one mask value is shared"),
            Param("cudnn_off", "bool", False, "accepted for compatibility; no effect")),
    infer_shape=_dropout_shape, infer_type=_dropout_type, compute={"cpu": _dropout_compute},
    gradient=_dropout_grad, grad_needs=("outputs",), num_outputs=2, in_place=True,
    output_names=("output", "mask"), num_visible_outputs=1,
    backward_shape=_data_backward_shape,
    doc="""Randomly zero elements of ``data`` with probability ``p`` and scale the rest by
``1 / (1 - p)``, in train mode (``autograd.record()``, ``train_mode()``) or always with
``mode='always'``; otherwise the identity. ``axes`` shares one draw along those axes
(variational dropout). Draws come from the device's random stream, so
``mx.random.seed`` makes them reproducible.

The hidden output ``mask`` (shape of data: ``0`` or ``1 / (1 - p)``, ones when inactive)
is what the gradient multiplies the head gradient by, so gradients of every order use the
forward pass's very mask. ``p`` must be in [0, 1) (MXNet also took p = 1, giving NaN).
Data may be float16, float32 or float64; the uniforms are float32 in every case (24 random
bits, so an element is kept with probability ``1 - p`` to float32 precision), and a
float16 mask holds ``1 / (1 - p)`` rounded once to float16, as MXNet's does.

>>> x = mx.nd.ones((2, 3))
>>> mx.nd.Dropout(x, p=0.5).asnumpy().tolist()       # not training: the identity
[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
>>> y = mx.nd.Dropout(x, p=0.5, mode='always').asnumpy()
>>> sorted(set(y.ravel().tolist())) in ([0.0, 2.0], [0.0], [2.0])
True
"""))


# ---- Embedding --------------------------------------------------------------------------------
def _emb_shape_of(name):
    def infer(shapes, attrs):
        check_num_inputs(name, shapes, 2)
        data, weight = (tuple(s) for s in shapes)
        if attrs.input_dim < 1 or attrs.output_dim < 1:
            raise op_error(name, f"input_dim and output_dim must be positive, got "
                           f"{attrs.input_dim} and {attrs.output_dim}")
        if weight != (attrs.input_dim, attrs.output_dim):
            raise op_error(name, f"weight must have shape (input_dim, output_dim) = "
                           f"({attrs.input_dim}, {attrs.output_dim}), got {weight}")
        return [check_shape(name, data + (attrs.output_dim,))]
    return infer


def _emb_type_of(name):
    def infer(dtypes, attrs):
        data, weight = (np.dtype(d) for d in dtypes)
        if data == np.bool_:
            raise op_error(name, "data (indices) cannot be bool")
        if weight.kind != "f" or weight != np.dtype(attrs.dtype):
            raise op_error(name, f"weight has dtype {weight}; parameter dtype is "
                           f"{np.dtype(attrs.dtype)} (they must agree, a float dtype)")
        return [weight]
    return infer


def _emb_backward_shape(in_shapes, out_shapes, attrs):
    weight = (attrs.input_dim, attrs.output_dim)
    data = in_shapes[0]
    if data is None and out_shapes[0] is not None:
        data = tuple(out_shapes[0][:-1])
    return [data, weight if in_shapes[1] is None else in_shapes[1]]


def _emb_compute_of(name):
    def compute(rctx, ins, outs, attrs):
        data, weight = ins
        pos = _positions(rctx.xp, name, data, attrs.input_dim, "raise", 0)
        _ik.take(weight, pos, outs[0], 1, attrs.input_dim, attrs.output_dim)
    return compute


def _emb_grad(F, node, ograds):
    """out = weight[data]: d/dweight scatters (adds) each head-gradient row into the row of
    its index (``_take_grad``, whose own gradient is ``take``); the indices get none.
    ``_contrib_SparseEmbedding``'s weight gradient is always row_sparse."""
    data, weight = node.inputs
    if not node.wants[1]:
        return [None, None]
    sparse = getattr(node.attrs, "sparse_grad", True)
    return [None, F._internal._take_grad(ograds[0], data, weight, axis=0, mode="raise",
                                         sparse_grad=sparse)]


_EMB_PARAMS = (Param("input_dim", "int", REQUIRED, "vocabulary size: rows of weight"),
               Param("output_dim", "int", REQUIRED, "embedding size: columns of weight"),
               Param("dtype", "dtype", "float32", "dtype of weight and of the output"))


def _embedding_op(name, params, doc):
    return OpDef(name, inputs=("data", "weight"), params=_EMB_PARAMS + params,
                 infer_shape=_emb_shape_of(name), infer_type=_emb_type_of(name),
                 compute={"cpu": _emb_compute_of(name)}, gradient=_emb_grad,
                 backward_shape=_emb_backward_shape, doc=doc)


register(_embedding_op(
    "Embedding",
    (Param("sparse_grad", "bool", False, "the weight gradient as row_sparse: only "
           "the rows looked up (dense in a compiled graph)"),),
    doc="""Look up rows of ``weight`` (shape ``(input_dim, output_dim)``) at the indices in
``data`` (any shape, indices stored as floats as in MXNet, truncated toward zero): the
output has shape ``data.shape + (output_dim,)``. The weight gradient adds each head-gradient
row into the row of its index (repeated indices accumulate); the indices get no gradient.

Difference from MXNet 1.x: an index outside ``[0, input_dim)`` is an ``MXNetError`` naming
it and its position (MXNet clipped it silently to the first or last row).
With ``sparse_grad=True`` the weight gradient is row_sparse (the rows looked up), so an
optimizer's lazy update touches only those rows.

>>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
>>> mx.nd.Embedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy().tolist()
[[4.0, 5.0], [0.0, 1.0]]
"""))

register(_embedding_op(
    "_contrib_SparseEmbedding",
    (Param("deterministic", "bool", False, "accepted for MXNet's signature: the weight "
           "gradient is always summed in the order of the indices"),),
    doc="""``Embedding`` whose weight gradient is always row_sparse (MXNet's older name for
``Embedding(sparse_grad=True)``): the output is ``weight[data]``, of shape
``data.shape + (output_dim,)``; the weight gradient stores only the rows looked up. The
weight may be row_sparse too (``gluon.contrib.nn.SparseEmbedding`` pulls only the rows a
batch uses): a row it does not store reads as zeros.

An index outside ``[0, input_dim)`` is an ``MXNetError``, as in MXNet. ``deterministic``
changes nothing: mxlite sums repeated rows in the order of the indices on every call.

>>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
>>> x = mx.nd.array([2, 0])
>>> mx.nd.contrib.SparseEmbedding(x, w, input_dim=3, output_dim=2).asnumpy().tolist()
[[4.0, 5.0], [0.0, 1.0]]
"""))
