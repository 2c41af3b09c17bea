"""``contrib.SyncBatchNorm``: BatchNorm whose training statistics cover the whole batch of a
data-parallel job, one device per MPI rank (``mx.kv.create('dist_sync')``), and
``_sync_sum``, the sum over ranks its forward and gradient use.

Without a started job (one process) both are BatchNorm and the identity. The dist kvstore
registers the job's reducer here (``set_rank_reducer``) when it starts, so the core never
imports the kvstore.
"""
import numpy as np

from ..base import op_error
from .norm import (MOVING_STATS_INIT, _BN_INPUTS, _BN_OUTPUTS, _BN_PARAMS,
                   _axis_backward_shape, _bn_shape, _bn_type, _param_shape, bn_forward,
                   bn_param_grads)
from .registry import OpDef, Param, get_op, register
from .shape_utils import normalize_axis, size_of

_reducer = None         # fn(flat float64 NumPy array): in place, the sum over every rank


def set_rank_reducer(reducer):
    """Make ``reducer(values)`` (an in-place sum over the job's ranks of a flat float64
    NumPy array; None: a single process) what SyncBatchNorm and ``_sync_sum`` use."""
    global _reducer
    _reducer = reducer


def _reduce_host(values):
    if _reducer is not None:
        _reducer(values)
    return values


# ---- _sync_sum: the sum over ranks, differentiable -------------------------------------------
_BLOCK = 1 << 22        # elements per allreduce of _sync_sum (bounded host memory)


def _sync_sum_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    if _reducer is None:
        xp.copyto(outs[0], ins[0])
        return
    src, dst = ins[0].reshape(-1), outs[0].reshape(-1)
    for lo in range(0, src.size, _BLOCK):
        hi = min(lo + _BLOCK, src.size)
        total = _reduce_host(xp.asnumpy(src[lo:hi]).astype(np.float64))
        xp.copyto(dst[lo:hi], xp.from_host(total.astype(dst.dtype)))


def _sync_sum_grad(F, node, ograds):
    """y_k = sum_r x_r on every rank k: dL/dx_r = sum_k dL_k/dy_k, the sum over ranks of
    the head gradients."""
    return [F._internal._sync_sum(ograds[0])]


register(OpDef(
    "_sync_sum", inputs=("data",), infer_shape=lambda shapes, attrs: [tuple(shapes[0])],
    backward_shape="same", infer_type=lambda dtypes, attrs: [dtypes[0]],
    compute={"cpu": _sync_sum_compute}, gradient=_sync_sum_grad, grad_needs=(),
    doc="""The element-wise sum of ``data`` over the ranks of a data-parallel job (every
rank gets the sum; summed in float64): SyncBatchNorm's statistics and gradients. The
identity in a single process. Its gradient is the same sum of the head gradients.
"""))


# ---- SyncBatchNorm ---------------------------------------------------------------------------
_SYNC_OUTPUTS = _BN_OUTPUTS + ("count",)


def _sync_shape(shapes, attrs):
    if attrs.ndev < 1:
        raise op_error("SyncBatchNorm", f"ndev must be >= 1, got {attrs.ndev}")
    return _bn_shape(shapes, attrs) + [(1,)]


def _sync_type(dtypes, attrs):
    out = _bn_type(dtypes, attrs)
    return out + [out[0]]


def _combine(rctx, mean, var, count):
    """The local batch mean and biased variance replaced (in place) by the job's: the
    per-channel sums and sums of squares, and the counts, summed over the ranks
    (``_sync_sum``), then ``mean = S / n`` and ``var = max(SS / n - mean**2, 0)``."""
    xp = rctx.xp
    sums = xp.empty(mean.shape, mean.dtype)
    squares = xp.empty(mean.shape, mean.dtype)
    _run(rctx, "_mul_scalar", [mean], [sums], scalar=float(count))
    _run(rctx, "square", [mean], [squares])
    _run(rctx, "elemwise_add", [squares, var], [squares])
    _run(rctx, "_mul_scalar", [squares], [squares], scalar=float(count))
    counts = xp.empty((1,), mean.dtype)
    counts.fill(count)
    for part in (sums, squares, counts):
        _run(rctx, "_sync_sum", [part], [part])
    n = float(xp.asnumpy(counts)[0])
    if n > 0:
        _run(rctx, "_div_scalar", [sums], [mean], scalar=n)
        _run(rctx, "_div_scalar", [squares], [var], scalar=n)
        _run(rctx, "square", [mean], [squares])
        _run(rctx, "elemwise_sub", [var, squares], [var])
        _run(rctx, "relu", [var], [var])        # rounding may leave -0.0...1
    return int(round(n))


def _run(rctx, name, ins, outs, **kw):
    """Run registered op ``name``'s compute function of ``rctx``'s device."""
    op = get_op(name)
    op.compute[rctx.kernels](rctx, ins, outs, op.parse_attrs(kw))


def _sync_compute(rctx, ins, outs, attrs):
    if attrs.ndev > 1 and _reducer is None:
        raise op_error("SyncBatchNorm", f"ndev={attrs.ndev}: the devices of one process run "
                       "one after another and cannot share statistics in mxlite; run one "
                       "device per process in an MPI job (mx.kv.create('dist_sync')), where "
                       "SyncBatchNorm covers every rank's batch")
    x = ins[0]
    ax = normalize_axis("SyncBatchNorm", attrs.axis, x.ndim)
    local = size_of(x.shape) // max(x.shape[ax], 1)
    counted = {}

    def combine(rctx, mean, var, count):
        counted["n"] = _combine(rctx, mean, var, count)
        return counted["n"]

    bn_forward(rctx, ins, outs, attrs, combine)
    outs[6].fill(counted.get("n", local))


def _sync_grad(F, node, ograds):
    """BatchNorm's gradient with the channel means taken over the whole job: with
    G = gy * gamma' + g_xhat, t the train flag, N the job's count per channel and S(.) the
    per-channel sum over every rank (``_sync_sum`` of the local sums),

    dx = r * G + t * (xhat * (-S(g_r) * r^2 / N - r * S(G * xhat) / N) + S(g_mean) / N
         - r * S(G) / N),

    dgamma = sum(gy * xhat) + g_gamma' (0 under fix_gamma), dbeta = sum(gy) (this rank's
    share: the kvstore sums parameter gradients). In one process S is the identity and N
    the batch's count: BatchNorm's gradient."""
    _, mean, r, xhat, gamma_used, flag, count = node.outputs
    gy, gmean, gr, gxhat, ggamma = ograds[:5]
    attrs, wants = node.attrs, node.wants
    shape = tuple(node.output_shapes[0])
    ax = normalize_axis("SyncBatchNorm", attrs.axis, len(shape))
    c = shape[ax]
    kept = _param_shape(shape, ax)
    dgamma, dbeta = bn_param_grads(F, node, gy, xhat, ggamma, ax, c)
    dx = None
    if wants[0]:
        g = F.broadcast_mul(gy, F.reshape(gamma_used, shape=kept)) + gxhat
        rk = F.reshape(r, shape=kept)

        n = F.reshape(count, shape=(1,) * len(kept))

        def job_mean(v):        # S(v) / N, kept-shaped
            return F.broadcast_div(F.reshape(F._internal._sync_sum(v), shape=kept), n)

        s_g = job_mean(F.sum(g, axis=ax, exclude=True))
        s_gx = job_mean(F.sum(g * xhat, axis=ax, exclude=True))
        s_gr = job_mean(gr)
        s_gmean = job_mean(gmean)
        stats = F.broadcast_add(
            F.broadcast_mul(xhat, -(s_gr * rk * rk) - rk * s_gx), s_gmean - rk * s_g)
        dx = F.broadcast_mul(g, rk) + F.broadcast_mul(flag, stats)
    return [dx, dgamma, dbeta, None, None]


register(OpDef(
    "_contrib_SyncBatchNorm", inputs=_BN_INPUTS,
    params=_BN_PARAMS + (
        Param("ndev", "int", 1, "The number of devices the statistics cover: 1, or any "
                                "count in an MPI job (every rank takes part)"),
        Param("key", "str", "", "Accepted for compatibility (MXNet paired the devices of "
                                "one process by it)")),
    infer_shape=_sync_shape, infer_type=_sync_type, compute={"cpu": _sync_compute},
    gradient=_sync_grad, grad_needs=("outputs",), num_outputs=7,
    output_names=_SYNC_OUTPUTS, in_place=True,
    num_visible_outputs=lambda attrs: 3 if attrs.output_mean_var else 1,
    aux_inputs=("moving_mean", "moving_var"), mutate_inputs=("moving_mean", "moving_var"),
    var_init=MOVING_STATS_INIT, backward_shape=_axis_backward_shape,
    doc="""Batch normalisation over the whole batch of a data-parallel job: BatchNorm's
inputs, parameters and outputs, with the training statistics (batch mean and biased
variance, and the moving averages they feed) taken over every rank's data.

The ranks are the processes of an MPI job with one device each (``mx.kv.create(
'dist_sync')`` starts it; every rank must make the same SyncBatchNorm calls). The gradient
is a graph of registered ops whose channel means are summed over the ranks too
(``_sync_sum``), so it is exact to any order. In a single process it is BatchNorm.

Differences from MXNet 1.x: MXNet synchronised the ``ndev`` devices of one process (paired
by ``key``) and never across machines; mxlite runs the devices of one process one after
another, so it synchronises ranks instead: ``ndev > 1`` outside an MPI job raises
MXNetError rather than normalising each device alone.

>>> x = mx.nd.array([[1.0, 10.0], [3.0, 30.0]])
>>> with mx.autograd.train_mode():
...     y = mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2),
...                                     mx.nd.ones(2), eps=1e-8, key="bn0")
>>> [round(v, 4) for v in y.asnumpy().ravel().tolist()]
[-1.0, -1.0, 1.0, 1.0]
"""))
