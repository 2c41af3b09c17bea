"""GPU kernels of ``mxlite/ops/nn.py``: FullyConnected, Activation, LeakyReLU, the softmax
family, softmax_cross_entropy, SoftmaxOutput and the regression outputs.

The element formulas are those of the CPU kernels: the activations and their float32
variants (GELU and softrelu in float32, ELU / SELU in double inside) come from ``mx_act.h``
(``mx_act_f64``, ``mx_act_f32_one``), relu /
sigmoid / tanh / softsign from the expressions of ``kernel_table.UNARY``. The float32 softmax
adds in the CPU's order (eight lanes, lane ``i mod 8``, the tail to lane 0, combined
pairwise) with the same ``mx_expf``, so its sums round alike; float64 and masked rows use the
libm-style path (``mx::exp``/``mx::log``: within an ulp of the CPU's libm). One thread runs
one softmax row (a column of ``inner`` rows for a middle axis: adjacent threads then read
adjacent elements). Products go to ``rctx.xp.matmul`` (cuBLAS).
"""
import numpy as np

from ..._core import activation as _act_ids
from ..._core.kernel_table import UNARY
from ...base import op_error
from ...ops import nn as _nn
from ...ops.common import in_work_dtype, run_in, write_back
from ...ops.registry import get_op as _get_op
from . import attach
from .nn_common import FLOATS, f64, i32, i64, per_dtype, work_float

_FAMILY = "nn_act"

def _act_kernels():
    """activation kinds of mx_act.h (ids of ``mxlite._core.activation.ACT_IDS``): float32
    through the float32 kernels' formulas, float64 through ``mx_act_f64``."""
    exprs = {np.dtype("float32"): "mx_act_f32_one(kind, x[i], a, b)",
             np.dtype("float64"): "mx_act_f64(kind, x[i], a, b)"}
    return {dt: per_dtype(_FAMILY, "activation", """
#include "mx_act.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* y, mx_idx n, int kind, double a,
                                   double b) {
    MX_GRID_LOOP(i, n) y[i] = ${expr};
}
""", dtypes=(dt,), expr=exprs[dt])[dt] for dt in FLOATS}


_ACT = _act_kernels()
# the kinds of mx_act.h's enum, shared with the CPU kernels
ACT_IDS = _act_ids.ACT_IDS

_UNARY = {name: per_dtype(_FAMILY, name, """
extern "C" __global__ void ${name}(const ${T}* xs, ${T}* y, mx_idx n) {
    typedef ${T} T;
    MX_GRID_LOOP(i, n) {
        T x = xs[i];
        y[i] = ${expr};
    }
}
""", expr=UNARY[name][0]) for name in ("relu", "sigmoid", "tanh", "softsign")}

_PRELU = per_dtype(_FAMILY, "prelu", """
extern "C" __global__ void ${name}(const ${T}* x, const ${T}* gamma, ${T}* y, mx_idx n,
                                   mx_idx c, mx_idx inner) {
    MX_GRID_LOOP(i, n) {
        ${T} v = x[i], g = gamma[(i / inner) % c];
        y[i] = v > 0 ? v : g * v;
    }
}
""")

# RReLU: y = x * (slope + (x > 0) * (1 - slope)), the CPU's operations in its order
_RRELU = per_dtype(_FAMILY, "rrelu_apply", """
extern "C" __global__ void ${name}(const ${T}* x, const ${T}* slope, ${T}* y, mx_idx n,
                                   mx_idx slope_stride) {
    MX_GRID_LOOP(i, n) {
        ${T} v = x[i], m = slope[i * slope_stride];
        ${T} one_minus = (${T})1 - m;
        one_minus = (${T})(v > 0) * one_minus;
        y[i] = v * (m + one_minus);
    }
}
""")

_BIAS_ROWS = per_dtype(_FAMILY, "fc_bias", """
extern "C" __global__ void ${name}(${T}* y, const ${T}* bias, mx_idx n, mx_idx h) {
    MX_GRID_LOOP(i, n) y[i] = y[i] + bias[i % h];
}
""")

_SM_FAMILY = "nn_softmax"
# float32, no mask, contiguous rows: mx_softmax_row_f32's arithmetic in its order
_SM_ROWS_F32 = per_dtype(_SM_FAMILY, "softmax_rows", """
#include "mx_act.h"
extern "C" __global__ void ${name}(const float* x, float* y, mx_idx outer, mx_idx n,
                                   float scale, int log_mode) {
    const float inf = mx_std::numeric_limits<float>::infinity();
    MX_GRID_LOOP(o, outer) {
        const float* xr = x + o * n;
        float* yr = y + o * n;
        mx_idx full = n - n % 8, i;
        float lane_max[8];
        for (int k = 0; k < 8; k++) lane_max[k] = -inf;
        for (i = 0; i < full; i++) {
            float v = scale * xr[i];
            lane_max[i % 8] = v > lane_max[i % 8] ? v : lane_max[i % 8];
        }
        for (; i < n; i++) {
            float v = scale * xr[i];
            lane_max[0] = v > lane_max[0] ? v : lane_max[0];
        }
        float m = lane_max[0];
        for (int k = 1; k < 8; k++) m = lane_max[k] > m ? lane_max[k] : m;
        if (m == -inf) m = 0.0f;
        if (m != m) {
            for (i = 0; i < n; i++) yr[i] = m;
            continue;
        }
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (i = 0; i < n; i++) {
            float e = mx_expf(scale * xr[i] - m);
            if (!log_mode) yr[i] = e;
            s[i < full ? i % 8 : 0] += e;
        }
        double tot = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
        if (log_mode) {
            float lse = (float)mx::log(tot);
            for (i = 0; i < n; i++) yr[i] = (scale * xr[i] - m) - lse;
        } else {
            float inv = (float)(1.0 / tot);
            for (i = 0; i < n; i++) yr[i] = yr[i] * inv;
        }
    }
}
""", dtypes=("float32",))[np.dtype("float32")]

# float32, no mask, a middle axis: mx_softmax_block_f32 per column (o, j)
_SM_COLS_F32 = per_dtype(_SM_FAMILY, "softmax_cols", """
#include "mx_act.h"
extern "C" __global__ void ${name}(const float* x, float* y, mx_idx outer, mx_idx n,
                                   mx_idx inner, float scale, int log_mode) {
    const float inf = mx_std::numeric_limits<float>::infinity();
    MX_GRID_LOOP(t, outer * inner) {
        mx_idx o = t / inner, j = t - o * inner, k;
        const float* xc = x + o * n * inner + j;
        float* yc = y + o * n * inner + j;
        float m = -inf;
        for (k = 0; k < n; k++) {
            float v = scale * xc[k * inner];
            m = v > m ? v : m;
        }
        m = m == -inf ? 0.0f : m;
        double s = 0.0;
        for (k = 0; k < n; k++) {
            float e = mx_expf(scale * xc[k * inner] - m);
            if (!log_mode) yc[k * inner] = e;      // log mode reads x again: y == x is safe
            s += e;
        }
        if (log_mode) {
            m = m + (float)mx::log(s);
            for (k = 0; k < n; k++) yc[k * inner] = scale * xc[k * inner] - m;
        } else {
            float inv = (float)(1.0 / s);
            for (k = 0; k < n; k++) yc[k * inner] = yc[k * inner] * inv;
        }
    }
}
""", dtypes=("float32",))[np.dtype("float32")]

# the general row (float64, or a length mask): activation.pyx's _softmax_row in double
_SM_ROW = per_dtype(_SM_FAMILY, "softmax", """
extern "C" __global__ void ${name}(const ${T}* x, ${T}* y, mx_idx outer, mx_idx n,
                                   mx_idx inner, double scale, int log_mode,
                                   const long long* length, int masked) {
    const double inf = mx_std::numeric_limits<double>::infinity();
    MX_GRID_LOOP(r, outer * inner) {
        mx_idx o = r / inner, j = r - o * inner, k;
        const ${T}* xr = x + o * n * inner + j;
        ${T}* yr = y + o * n * inner + j;
        mx_idx len = masked ? (mx_idx)length[r] : n;
        double m = -inf, s = 0.0, v;
        for (k = 0; k < len; k++) {
            v = scale * xr[k * inner];
            if (v > m) m = v;
        }
        if (m == -inf) m = 0.0;
        if (!log_mode) {
            for (k = 0; k < len; k++) {
                v = mx::exp(scale * xr[k * inner] - m);
                yr[k * inner] = (${T})v;
                s += v;
            }
            s = 1.0 / s;
            for (k = 0; k < len; k++) yr[k * inner] = (${T})(yr[k * inner] * s);
        } else {
            for (k = 0; k < len; k++) s += mx::exp(scale * xr[k * inner] - m);
            double lse = m + mx::log(s);
            for (k = 0; k < len; k++) yr[k * inner] = (${T})(scale * xr[k * inner] - lse);
        }
        for (k = len; k < n; k++) yr[k * inner] = 0;
    }
}
""")

# -sum_i logp[i, label_i] in double, in row order (one thread: the CPU's order)
_NLL = per_dtype(_SM_FAMILY, "nll_sum", """
extern "C" __global__ void ${name}(const ${T}* logp, const long long* label, ${T}* out,
                                   mx_idx rows, mx_idx classes) {
    MX_GRID_LOOP(t, 1) {
        double s = 0.0;
        for (mx_idx i = 0; i < rows; i++) s -= logp[i * classes + label[i]];
        out[0] = (${T})s;
    }
}
""")


def _launch_elementwise(xp, kernel, x, y, *args):
    xp.launch(kernel, y.size, x, y, i64(y.size), *args)


def _activation_kernel(xp, kind, x, y, a=0.0, b=1.0):
    """``y = kind(x)`` (an ``ACT_IDS`` kind) for float32/float64 arrays of one size."""
    _launch_elementwise(xp, _ACT[x.dtype], x, y, i32(ACT_IDS[kind]), f64(a), f64(b))


# ---- FullyConnected ---------------------------------------------------------------------------
def _fc(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    _, ins, target = in_work_dtype(xp, ins, out)
    data, weight = ins[0], ins[1]
    h, k = weight.shape
    rows = out.size // h if h else 0
    t2 = target.reshape(rows, h)
    if t2.size:
        xp.matmul(data.reshape(rows, k), weight.T, t2)      # y = x W^T (cuBLAS)
        if not attrs.no_bias:
            xp.launch(_BIAS_ROWS[t2.dtype], t2.size, t2, ins[2].reshape(h), i64(t2.size),
                      i64(h))
    write_back(xp, target, out)


# ---- Activation, LeakyReLU -----------------------------------------------------------------
def _activation(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    _, (x,), target = in_work_dtype(xp, ins[:1], out)
    kind = attrs.act_type
    if kind == "softrelu":
        _activation_kernel(xp, "softrelu", x, target)
    else:
        _launch_elementwise(xp, _UNARY[kind][x.dtype], x, target)
    write_back(xp, target, out)


def _rrelu_slopes(rctx, x, attrs):
    """``(slopes, stride)``: each element's negative-side slope, drawn in training from
    [lower_bound, upper_bound) by the GPU compute of ``_random_uniform`` (one draw from the
    device's random stream, as on the CPU; its samples stay below upper_bound, where the CPU
    kernel may round one onto it), the bounds' mean otherwise (one element, stride 0)."""
    lo, hi = attrs.lower_bound, attrs.upper_bound
    xp = rctx.xp
    if rctx.is_train and hi > lo:
        uniform = _get_op("_random_uniform")
        compute = uniform.compute.get("gpu")
        if compute is None:
            raise op_error("LeakyReLU", "act_type='rrelu' in training draws its slopes with "
                           "_random_uniform, which has no kernel for gpu")
        slopes = xp.empty(x.shape, x.dtype)
        compute(rctx, [], [slopes], uniform.parse_attrs(
            {"low": lo, "high": hi, "shape": x.shape, "dtype": x.dtype.name}))
        return slopes, 1
    slope = xp.empty((1,), x.dtype)
    slope.fill((lo + hi) / 2)
    return slope, 0


def _leaky(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    _, ins, target = in_work_dtype(xp, ins, out)
    x = ins[0]
    kind = attrs.act_type
    if x.size == 0:
        pass
    elif kind == "prelu":
        outer, c, inner = _nn._prelu_geometry(x.shape, ins[1].shape)
        xp.launch(_PRELU[x.dtype], x.size, x, ins[1], target, i64(x.size), i64(c),
                  i64(inner))
    elif kind == "rrelu":
        slopes, stride = _rrelu_slopes(rctx, x, attrs)
        xp.launch(_RRELU[x.dtype], x.size, x, slopes, target, i64(x.size), i64(stride))
    elif kind == "selu":
        _activation_kernel(xp, "selu", x, target, _nn._SELU_ALPHA, _nn._SELU_LAMBDA)
    else:
        _activation_kernel(xp, kind, x, target, attrs.slope)
    write_back(xp, target, out)


# ---- softmax family --------------------------------------------------------------------------
def run_softmax(rctx, x, out, axis, mode, scale, length=None):
    """``out = softmax(scale * x)`` (mode 0) or log-softmax (mode 1) along ``axis``, in
    float32 or float64 (the wider of x's and out's), cast into ``out``
    (``mxlite.ops.nn.run_softmax`` on GPU)."""
    xp = rctx.xp
    f64_ = np.dtype(np.float64)
    work = f64_ if f64_ in (x.dtype, out.dtype) else np.dtype(np.float32)
    (xw,) = run_in(work, [x])
    target = out if out.dtype == work else xp.empty(out.shape, work)
    outer, n, inner = _nn._split_axis(x.shape, axis)
    if x.size:
        if length is not None:
            length = xp.ascontiguousarray(length.reshape(-1), np.int64)
            if length.size:
                # raising needs the values on the host (a synchronisation)
                lo, hi = int(xp.lib.min(length)), int(xp.lib.max(length))
                if lo < 0 or hi > n:
                    raise op_error("softmax", f"length values must lie in [0, {n}], got "
                                   f"{lo}..{hi}")
        if work == np.float32 and length is None:
            if inner == 1:
                xp.launch(_SM_ROWS_F32, outer, xw, target, i64(outer), i64(n),
                          np.float32(scale), i32(mode))
            else:
                xp.launch(_SM_COLS_F32, outer * inner, xw, target, i64(outer), i64(n),
                          i64(inner), np.float32(scale), i32(mode))
        else:
            lengths = length if length is not None else xp.zeros((1,), np.int64)
            xp.launch(_SM_ROW[work], outer * inner, xw, target, i64(outer), i64(n),
                      i64(inner), f64(scale), i32(mode), lengths,
                      i32(length is not None))
    write_back(xp, target, out)


def _softmax_fn(name):
    mode, sign = _nn._SOFTMAX_MODES[name]

    def compute(rctx, ins, outs, attrs):
        x = ins[0]
        ax = _nn._norm_axis(name, attrs.axis, x.ndim)
        t = attrs.temperature
        scale = sign if t is None else sign / t
        run_softmax(rctx, x, outs[0], ax, mode, scale, ins[1] if attrs.use_length else None)
    return compute


def _sce(rctx, ins, outs, attrs):
    data, label = ins
    xp = rctx.xp
    work = work_float(data.dtype)
    rows, classes = data.shape
    lab = xp.ascontiguousarray(_nn._labels(rctx, "softmax_cross_entropy", label, classes))
    logp = xp.empty(data.shape, work)
    run_softmax(rctx, data, logp, 1, 1, 1.0)
    total = xp.zeros((1,), work)
    if rows:
        xp.launch(_NLL[work], 1, logp, lab, total, i64(rows), i64(classes))
    xp.cast_into(outs[0], total)


def _softmax_output(rctx, ins, outs, attrs):
    data = ins[0]
    shape, ax = _nn._softmax_output_geometry(data.shape, attrs)
    run_softmax(rctx, data.reshape(shape), outs[0].reshape(shape), ax, 0, 1.0)


def _regression_fn(name):
    sigmoid = _nn._REGRESSION[name][0] == "sigmoid"

    def compute(rctx, ins, outs, attrs):
        x, out, xp = ins[0], outs[0], rctx.xp
        if sigmoid:
            _, (xw,), target = in_work_dtype(xp, [x], out)
            if x.size:
                _launch_elementwise(xp, _UNARY["sigmoid"][xw.dtype], xw, target)
            write_back(xp, target, out)
        else:
            xp.copyto(out, x)
    return compute


def _gelu_derivative(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    _, (x,), target = in_work_dtype(xp, ins[:1], out)
    _activation_kernel(xp, "d_gelu" if attrs.order == 1 else "d2_gelu", x, target)
    write_back(xp, target, out)


attach("_gelu_derivative", _gelu_derivative)
attach("FullyConnected", _fc)
attach("Activation", _activation)
attach("LeakyReLU", _leaky)
for _name in ("softmax", "log_softmax", "softmin"):
    attach(_name, _softmax_fn(_name))
attach("softmax_cross_entropy", _sce)
attach("SoftmaxOutput", _softmax_output)
for _name in _nn._REGRESSION:
    attach(_name, _regression_fn(_name))
