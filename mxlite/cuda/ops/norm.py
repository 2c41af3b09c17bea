"""GPU kernels of BatchNorm, LayerNorm, InstanceNorm, L2Normalization, ``_norm_project``
and Embedding (``mxlite/ops/norm.py``; Dropout is with the random operators).

BatchNorm, LayerNorm, InstanceNorm and L2Normalization run the CPU compute functions, which
on GPU call the functions below: they take the arguments of ``mxlite._core.norm``'s
functions of the same names and are registered in ``mxlite.ops.common.DEVICE_KERNELS``.
``_norm_project`` (its train flag read on the device, where the CPU reads it on the host)
and Embedding have compute functions of their own here.

The plan and the arithmetic are the CPU's (``mx_norm.h``, shared with norm.pyx): every
array is a C-contiguous ``(P, Q, R)`` block; statistics run in double with two passes per
group, a contiguous row summed with four accumulators in the CPU's order (a float32 row of
LayerNorm or of ``_norm_project``: in the CPU's 16 float lanes per block, ``mx_norm.h``), so
the results round alike on both devices. One thread computes one group's statistics (a row of
LayerNorm and InstanceNorm, a column ``(p, r)`` of a middle axis); BatchNorm's channel
statistics and its gradient's projection first sum each contiguous row on its own thread,
then add a channel's row sums in order (the CPU's order, as wide as the data). The affine
passes run one thread per element. BatchNorm updates its moving statistics in place in
training, as on the CPU; ``_norm_project`` reads its train flag on the device (no host
round trip).
"""
import types

import numpy as np

from ..._core import norm as _k
from ...ops import norm as _cpu
from ...ops.common import DEVICE_KERNELS
from . import attach, device_generic
from .nn_common import f64, i32, i64, namespace_of, per_dtype

__all__ = ["moments", "channel_moments", "rnorm", "finish", "ema", "apply", "layer_norm_rows",
           "KERNELS"]

_FAMILY = "nn_norm"

_MOMENTS = per_dtype(_FAMILY, "norm_moments", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* mean, ${T}* var, mx_idx P, mx_idx Q,
                                   mx_idx R) {
    MX_GRID_LOOP(t, P * R) {
        mx_idx p = t / R, r = t - p * R;
        double m, ss = 0.0;
        if (R == 1) {                   // a contiguous row
            m = Q > 0 ? mx_norm_row_sum(x + p * Q, Q) / Q : 0.0;
            ss = mx_norm_row_ssd(x + p * Q, Q, m);
        } else {
            const ${T}* col = x + p * Q * R + r;
            m = 0.0;
            for (mx_idx q = 0; q < Q; q++) m += col[q * R];
            m = Q > 0 ? m / Q : 0.0;
            for (mx_idx q = 0; q < Q; q++) {
                double d = col[q * R] - m;
                ss += d * d;
            }
        }
        mean[t] = (${T})m;
        var[t] = (${T})(Q > 0 ? ss / Q : 0.0);
    }
}
""")

# BatchNorm's statistics of channel c of an (A, C, B) block, in the CPU's order but A * C
# threads wide: each row (a, c) of B summed alone, then each channel adds its A row sums in
# order (the CPU's s += row_sum(a)), for the mean and then for the squared deviations.
_ROW_SUMS = per_dtype(_FAMILY, "norm_row_sums", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* x, const double* mean, double* part,
                                   int deviations, mx_idx C, mx_idx B, mx_idx rows) {
    MX_GRID_LOOP(k, rows) {
        const ${T}* row = x + k * B;
        part[k] = deviations ? mx_norm_row_ssd(row, B, mean[k % C]) : mx_norm_row_sum(row, B);
    }
}
""")

_CHANNEL_TOTAL = per_dtype(_FAMILY, "norm_channel_total", """
extern "C" __global__ void ${name}(const double* part, double* exact, ${T}* out, mx_idx A,
                                   mx_idx C, mx_idx count) {
    MX_GRID_LOOP(c, C) {
        double s = 0.0;
        for (mx_idx a = 0; a < A; a++) s += part[a * C + c];
        s = count > 0 ? s / count : 0.0;
        exact[c] = s;
        out[c] = (${T})s;
    }
}
""")

# L2Normalization: out[p, r] = 1 / sqrt(sum_q x[p, q, r]^2 + eps)
_RNORM = per_dtype(_FAMILY, "norm_rnorm", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* out, mx_idx P, mx_idx Q, mx_idx R,
                                   double eps) {
    MX_GRID_LOOP(t, P * R) {
        mx_idx p = t / R, r = t - p * R;
        const ${T}* col = x + p * Q * R + r;
        double acc = 0.0;
        for (mx_idx q = 0; q < Q; q++) acc += (double)col[q * R] * col[q * R];
        out[t] = (${T})mx_norm_finish(acc, eps, 1);
    }
}
""")

_FINISH = per_dtype(_FAMILY, "norm_finish", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(${T}* v, mx_idx n, double eps, int inverse) {
    MX_GRID_LOOP(i, n) v[i] = (${T})mx_norm_finish(v[i], eps, inverse);
}
""")

_EMA = per_dtype(_FAMILY, "norm_ema", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(${T}* moving, const ${T}* batch, mx_idx n,
                                   double momentum) {
    MX_GRID_LOOP(i, n) moving[i] = (${T})mx_norm_ema(moving[i], batch[i], momentum);
}
""")

# y = (x - mean[s]) * scale[s] * gamma[g] + beta[g], s and g from per-axis strides
_APPLY = per_dtype(_FAMILY, "norm_apply", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* x, const ${T}* mean, const ${T}* scale,
                                   const ${T}* gamma, const ${T}* beta, ${T}* y, ${T}* xhat,
                                   int has_xhat, mx_idx Q, mx_idx R, mx_idx sp, mx_idx sq,
                                   mx_idx sr, mx_idx gp, mx_idx gq, mx_idx gr, mx_idx n) {
    MX_GRID_LOOP(i, n) {
        mx_idx r = i % R, pq = i / R, q = pq % Q, p = pq / Q;
        mx_idx s = p * sp + q * sq + r * sr, g = p * gp + q * gq + r * gr;
        ${T} h = mx_norm_xhat(x[i], mean[s], scale[s]);
        if (has_xhat) xhat[i] = h;
        y[i] = h * gamma[g] + beta[g];
    }
}
""")

# _norm_project, layout 0: groups (p, k) of a (P, Q, R) block over q, one thread a group.
# t is read from the flag on the device.
_PROJECT_ROWS = per_dtype(_FAMILY, "norm_project_rows", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* g, const ${T}* xh, const ${T}* r,
                                   const ${T}* a, const ${T}* b, const ${T}* flag, ${T}* out,
                                   mx_idx Q, mx_idx R, mx_idx groups) {
    double t = (double)flag[0], n = (double)Q;
    ${T} tf = (${T})t;
    MX_GRID_LOOP(k, groups) {
        if (R == 1) {                   // a contiguous row, statistics in T
            const ${T}* gr = g + k * Q;
            const ${T}* xr = xh + k * Q;
            double sg = 0.0, sgx = 0.0;
            mx_norm_lanes_sums2(gr, xr, Q, &sg, &sgx);
            ${T} mg = (${T})(n > 0 ? sg / n : 0.0), mgx = (${T})(n > 0 ? sgx / n : 0.0);
            for (mx_idx q = 0; q < Q; q++)
                out[k * Q + q] = mx_norm_project(r[k], gr[q], tf, mg, xr[q], mgx, a[k], b[k]);
            continue;
        }
        mx_idx base = (k / R) * Q * R + k % R;
        double sg = 0.0, sgx = 0.0;
        for (mx_idx q = 0; q < Q; q++) {
            sg += g[base + q * R];
            sgx += (double)g[base + q * R] * xh[base + q * R];
        }
        sg = n > 0 ? sg / n : 0.0;
        sgx = n > 0 ? sgx / n : 0.0;
        for (mx_idx q = 0; q < Q; q++) {
            mx_idx j = base + q * R;
            out[j] = mx_norm_project(r[k], g[j], t, sg, xh[j], sgx, a[k], b[k]);
        }
    }
}
""")

# layout 1 (BatchNorm): channel c of an (A, C, B) block over a and b, in three passes as
# wide as the data: each row's two sums, each channel's means (rows added in order: the
# CPU's sums), then the output element-wise
_PROJECT_ROW_SUMS = per_dtype(_FAMILY, "norm_project_row_sums", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* g, const ${T}* xh, double* part, mx_idx B,
                                   mx_idx rows) {
    MX_GRID_LOOP(k, rows) {
        double sg = 0.0, sgx = 0.0;
        mx_norm_lanes_sums2(g + k * B, xh + k * B, B, &sg, &sgx);
        part[2 * k] = sg;
        part[2 * k + 1] = sgx;
    }
}
""")

_PROJECT_CHANNEL_MEANS = per_dtype(_FAMILY, "norm_project_channel_means", """
extern "C" __global__ void ${name}(const double* part, ${T}* means, mx_idx A, mx_idx C,
                                   mx_idx count) {
    MX_GRID_LOOP(c, C) {
        double sg = 0.0, sgx = 0.0, n = (double)count;
        for (mx_idx a = 0; a < A; a++) {
            sg += part[2 * (a * C + c)];
            sgx += part[2 * (a * C + c) + 1];
        }
        means[2 * c] = (${T})(n > 0 ? sg / n : 0.0);
        means[2 * c + 1] = (${T})(n > 0 ? sgx / n : 0.0);
    }
}
""")

_PROJECT_CHANNELS = per_dtype(_FAMILY, "norm_project_channels", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* g, const ${T}* xh, const ${T}* r,
                                   const ${T}* a, const ${T}* b, const ${T}* flag,
                                   const ${T}* means, ${T}* out, mx_idx C, mx_idx B,
                                   mx_idx n) {
    ${T} tf = (${T})(double)flag[0];
    MX_GRID_LOOP(i, n) {
        mx_idx c = (i / B) % C;
        out[i] = mx_norm_project(r[c], g[i], tf, means[2 * c], xh[i], means[2 * c + 1], a[c],
                                 b[c]);
    }
}
""")

_EMB_ROWS = per_dtype(_FAMILY, "embedding_rows", """
extern "C" __global__ void ${name}(const ${T}* weight, const long long* pos, ${T}* out,
                                   mx_idx dim, mx_idx n) {
    MX_GRID_LOOP(i, n) out[i] = weight[pos[i / dim] * dim + i % dim];
}
""", dtypes=("float16", "float32", "float64"))


# LayerNorm's rows: mean, std and 1 / std of each contiguous row (mx_norm_row_stats: float32
# in the CPU's lanes), one thread a row
_ROW_STATS = per_dtype(_FAMILY, "norm_row_stats", """
#include "mx_norm.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* mean, ${T}* std, ${T}* rstd,
                                   mx_idx P, mx_idx Q, double eps) {
    MX_GRID_LOOP(p, P) mx_norm_row_stats(x + p * Q, Q, eps, mean + p, std + p, rstd + p);
}
""")


# ---- mxlite._core.norm on the GPU ----------------------------------------------------------
def moments(x, P, Q, R, mean, var):
    """``mean[p, r]``, ``var[p, r]`` (biased) of ``x[p, :, r]`` for the (P, Q, R) block x."""
    if P > 0 and R > 0:
        namespace_of(x).launch(_MOMENTS[x.dtype], P * R, x, mean, var, i64(P), i64(Q), i64(R))


def channel_moments(x, A, C, B, mean, var):
    """``mean[c]``, ``var[c]`` (biased) of ``x[:, c, :]`` for the (A, C, B) block x."""
    if C == 0:
        return
    xp = namespace_of(x)
    part = xp.empty((max(A * C, 1),), np.float64)
    exact = xp.empty((C,), np.float64)
    for deviations, out in ((0, mean), (1, var)):
        xp.launch(_ROW_SUMS[x.dtype], A * C, x, exact, part, i32(deviations), i64(C), i64(B),
                  i64(A * C))
        xp.launch(_CHANNEL_TOTAL[x.dtype], C, part, exact, out, i64(A), i64(C), i64(A * B))


def rnorm(x, P, Q, R, eps, out):
    """``out[p, r] = 1 / sqrt(sum_q x[p, q, r]**2 + eps)`` (L2Normalization)."""
    if P > 0 and R > 0:
        namespace_of(x).launch(_RNORM[x.dtype], P * R, x, out, i64(P), i64(Q), i64(R),
                               f64(eps))


def finish(var, eps, inverse):
    """In place: ``var`` becomes ``1 / sqrt(var + eps)`` (inverse) or ``sqrt(var + eps)``."""
    namespace_of(var).launch(_FINISH[var.dtype], var.size, var, i64(var.size), f64(eps),
                             i32(inverse))


def ema(moving, batch, momentum):
    """In place: ``moving = momentum * moving + (1 - momentum) * batch``."""
    namespace_of(moving).launch(_EMA[moving.dtype], moving.size, moving, batch,
                                i64(moving.size), f64(momentum))


def apply(x, P, Q, R, mean, scale, stat_strides, gamma, beta, param_strides, y, xhat=None):
    """``y = (x - mean[s]) * scale[s] * gamma[g] + beta[g]`` over the (P, Q, R) block (see
    ``mxlite._core.norm.apply``); ``xhat`` receives ``(x - mean[s]) * scale[s]``."""
    n = P * Q * R
    if n:
        namespace_of(x).launch(_APPLY[x.dtype], n, x, mean, scale, gamma, beta, y,
                               y if xhat is None else xhat, i32(xhat is not None), i64(Q),
                               i64(R), *map(i64, stat_strides), *map(i64, param_strides),
                               i64(n))


def layer_norm_rows(x, P, Q, gamma, beta, eps, y, mean, std):
    """LayerNorm over the contiguous rows of the (P, Q) block ``x`` (see
    ``mxlite._core.norm.layer_norm_rows``): each row's statistics, then the affine pass."""
    if P <= 0:
        return
    xp = namespace_of(x)
    rstd = xp.empty(std.shape, std.dtype)
    xp.launch(_ROW_STATS[x.dtype], P, x, mean, std, rstd, i64(P), i64(Q), f64(eps))
    apply(x, P, 1, Q, mean, rstd, (1, 0, 0), gamma, beta, (0, 0, 1), y)


KERNELS = types.SimpleNamespace(moments=moments, channel_moments=channel_moments, rnorm=rnorm,
                                finish=finish, ema=ema, apply=apply,
                                layer_norm_rows=layer_norm_rows)
DEVICE_KERNELS[("gpu", _k.__name__)] = KERNELS


# ---- operators with a GPU plan of their own -------------------------------------------------
def _norm_project(rctx, ins, outs, attrs):
    g, xhat, r, flag, a, b = ins
    out, xp = outs[0], rctx.xp
    layout, p, q, rr, _ = _cpu._proj_plan(g.shape, attrs)
    if g.size == 0:
        return
    if layout == 0:
        xp.launch(_PROJECT_ROWS[g.dtype], p * rr, g, xhat, r, a, b, flag, out, i64(q),
                  i64(rr), i64(p * rr))
        return
    part = xp.empty((2 * p * q,), np.float64)
    means = xp.empty((2 * q,), g.dtype)
    xp.launch(_PROJECT_ROW_SUMS[g.dtype], p * q, g, xhat, part, i64(rr), i64(p * q))
    xp.launch(_PROJECT_CHANNEL_MEANS[g.dtype], q, part, means, i64(p), i64(q), i64(p * rr))
    xp.launch(_PROJECT_CHANNELS[g.dtype], g.size, g, xhat, r, a, b, flag, means, out, i64(q),
              i64(rr), i64(g.size))


def _embedding_of(name):
    def embedding(rctx, ins, outs, attrs):
        from .index import positions        # the index rules of mx_index.h, on GPU
        data, weight = ins
        out, xp = outs[0], rctx.xp
        pos = positions(xp, name, data, attrs.input_dim, "raise", 0)
        if out.size:
            xp.launch(_EMB_ROWS[weight.dtype], out.size, weight, pos, out,
                      i64(attrs.output_dim), i64(out.size))
    return embedding


device_generic("BatchNorm", "LayerNorm", "InstanceNorm", "L2Normalization",
               "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm", "_sync_sum",
               "_layer_norm_grad")
attach("_norm_project", _norm_project)
for _name in ("Embedding", "_contrib_SparseEmbedding"):
    attach(_name, _embedding_of(_name))
