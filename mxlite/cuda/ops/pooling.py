"""GPU kernels of Pooling (max, avg, sum, lp), its gradient ops ``_pool_max_scatter``,
``_pool_max_gather``, ``_pool_backward``, and UpSampling (``mxlite/ops/pooling.py``).

The operators' compute functions are the CPU ones; on GPU they call ``pool`` below (the
arguments of ``mxlite._core.conv.pool``, registered with the convolution kernels of
``conv.py``), and UpSampling runs on the strided copies of ``rctx.xp`` and the
Deconvolution plan.

One thread per output element for the forward pass and the gather; the input gradients
gather too: one thread per input element walks the windows that hold it in ascending
order and adds their head gradient (max: where the window's first maximum is that
element, found by a first pass into an int64 scratch), so the sums run in the CPU's order
and no two threads write one element. The window rules (clipping, avg's count with and
without padding, lp's powers) are the helpers of ``mx_conv.h``.
"""
import numpy as np

from . import device_generic
from .conv import KERNELS, geom_record
from .nn_common import i32, i64, namespace_of, per_dtype

__all__ = ["pool"]

_FAMILY = "nn_pool"
_MODES = {"max": 0, "avg": 1, "sum": 2, "lp": 3}       # MX_POOL_* of mx_conv.h

_FORWARD = per_dtype(_FAMILY, "pool", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* out, const mx_conv_geom g, int mode,
                                   int include_pad, int p, mx_idx total) {
    mx_idx vi = mx_conv_vi(g), vo = mx_conv_vo(g);
    MX_GRID_LOOP(i, total) {
        mx_idx plane = i / vo;
        const ${T}* xp = x + plane * vi;
        long long o[3], lo[3], hi[3];
        mx_conv_out_pos(g, i - plane * vo, o);
        if (mode == MX_POOL_MAX) {
            long long t = mx_pool_argmax(xp, g, o);
            out[i] = t >= 0 ? xp[t] : (${T})0;
            continue;
        }
        ${T} sc = (${T})mx_pool_scale(g, o, mode, include_pad), acc = 0;
        mx_pool_window(g, o, lo, hi);
        for (long long z = lo[0]; z < hi[0]; z++)
            for (long long y = lo[1]; y < hi[1]; y++)
                for (long long xx = lo[2]; xx < hi[2]; xx++)
                    acc = acc + mx_pool_power(xp[(z * g.in[1] + y) * g.in[2] + xx], p);
        out[i] = mode != MX_POOL_LP ? acc * sc : mx_pool_root(acc, p);
    }
}
""")

_ARGMAX = per_dtype(_FAMILY, "pool_argmax", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* x, long long* best, const mx_conv_geom g,
                                   mx_idx total) {
    mx_idx vi = mx_conv_vi(g), vo = mx_conv_vo(g);
    MX_GRID_LOOP(i, total) {
        mx_idx plane = i / vo;
        long long o[3];
        mx_conv_out_pos(g, i - plane * vo, o);
        best[i] = mx_pool_argmax(x + plane * vi, g, o);
    }
}
""")

# max gather: out[w] = h at the window's first maximum of x (0 for an empty window)
_GATHER = per_dtype(_FAMILY, "pool_max_gather", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* x, const ${T}* h, ${T}* out,
                                   const mx_conv_geom g, mx_idx total) {
    mx_idx vi = mx_conv_vi(g), vo = mx_conv_vo(g);
    MX_GRID_LOOP(i, total) {
        mx_idx plane = i / vo;
        long long o[3];
        mx_conv_out_pos(g, i - plane * vo, o);
        long long t = mx_pool_argmax(x + plane * vi, g, o);
        out[i] = t >= 0 ? h[plane * vi + t] : (${T})0;
    }
}
""")

# input gradients, gathered over the windows holding each input element (ascending):
# max (best != NULL): h[w] where w's first maximum is this element; avg/sum: h[w] * scale(w)
_BACKWARD = per_dtype(_FAMILY, "pool_input_grad", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* h, const long long* best, ${T}* out,
                                   const mx_conv_geom g, int mode, int include_pad,
                                   mx_idx total) {
    mx_idx vi = mx_conv_vi(g), vo = mx_conv_vo(g);
    MX_GRID_LOOP(i, total) {
        mx_idx plane = i / vi, t = i - plane * vi;
        long long pos[3] = {t / (g.in[1] * g.in[2]), (t / g.in[2]) % g.in[1], t % g.in[2]};
        long long lo[3], hi[3], o[3];
        for (int a = 0; a < 3; a++) mx_conv_windows_of(g, a, pos[a], &lo[a], &hi[a]);
        const ${T}* hp = h + plane * vo;
        ${T} acc = 0;
        for (o[0] = lo[0]; o[0] < hi[0]; o[0]++)
            for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
                for (o[2] = lo[2]; o[2] < hi[2]; o[2]++) {
                    mx_idx w = (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];
                    if (mode == MX_POOL_MAX) {
                        if (best[plane * vo + w] == t) acc += hp[w];
                    } else {
                        ${T} v = hp[w] * (${T})mx_pool_scale(g, o, mode, include_pad);
                        acc += v;
                    }
                }
        out[i] = acc;
    }
}
""")


def pool(op, pool_type, x, h, out, geometry, count_include_pad=True, p_value=1):
    """``mxlite._core.conv.pool`` on the GPU: op 0 forward (``out`` from ``x``), 1 max
    scatter (``h`` added at each window's first maximum of ``x``), 2 max gather (``out``
    reads ``h`` there), 3 avg/sum backward (the adjoint of op 0 applied to ``h``)."""
    xp = namespace_of(out)
    g = geom_record(geometry)
    mode = _MODES[pool_type]
    n = out.size
    if op == 0:
        xp.launch(_FORWARD[out.dtype], n, x, out, g, i32(mode), i32(count_include_pad),
                  i32(p_value), i64(n))
    elif op == 2:
        xp.launch(_GATHER[out.dtype], n, x, h, out, g, i64(n))
    else:
        windows = h.size
        best = xp.empty((max(windows, 1),), np.int64)
        if op == 1:
            xp.launch(_ARGMAX[out.dtype], windows, x, best, g, i64(windows))
        xp.launch(_BACKWARD[out.dtype], n, h, best, out, g, i32(mode),
                  i32(count_include_pad), i64(n))


KERNELS.pool = pool         # conv.pyx holds the pooling kernels too
device_generic("Pooling", "_pool_max_scatter", "_pool_max_gather", "_pool_backward",
               "UpSampling")
