"""GPU kernels of Pooling (max, avg, sum, lp), its gradient ops ``_pool_max_scatter``,
``_pool_max_gather``, ``_pool_backward``, and UpSampling (``mxlite/ops/pooling.py``).

One thread per output element for the forward pass and the gather; the input gradients
gather too: one thread per input element walks the windows that hold it in ascending
order and adds their head gradient (max: where the window's first maximum is that
element, found by a first pass into an int64 scratch), so the sums run in the CPU's order
and no two threads write one element. The window rules (clipping, avg's count with and
without padding, lp's powers) are the helpers of ``mx_conv.h``.
"""
import numpy as np

from ...ops import pooling as _cpu
from ...ops.common import compute_dtype, run_in, write_back
from . import attach
from .conv import add_into, deconv_forward, geom_record
from .nn_common import i32, i64, per_dtype

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


def _run(rctx, op_id, pool_type, x, h, out, geometry, include_pad, p_value=1):
    """Pooling kernel ``op_id`` (conv.pyx's ``pool`` ops: 0 forward, 1 max scatter, 2 max
    gather, 3 avg/sum backward) into ``out``, float16 through float32."""
    if out.size == 0:
        return
    xp = rctx.xp
    work = compute_dtype(out.dtype)
    x, h = (None if a is None else run_in(work, [a])[0] for a in (x, h))
    target = out if out.dtype == work else xp.empty(out.shape, work)
    g = geom_record(geometry)
    mode = _MODES[pool_type]
    n = target.size
    if op_id == 0:
        xp.launch(_FORWARD[work], n, x, target, g, i32(mode), i32(include_pad), i32(p_value),
                  i64(n))
    elif op_id == 2:
        xp.launch(_GATHER[work], n, x, h, target, g, i64(n))
    else:
        windows = h.size
        best = xp.empty((max(windows, 1),), np.int64)
        if op_id == 1:
            xp.launch(_ARGMAX[work], windows, x, best, g, i64(windows))
        xp.launch(_BACKWARD[work], n, h, best, target, g, i32(mode), i32(include_pad),
                  i64(n))
    write_back(xp, target, out)


def _pool(rctx, ins, outs, attrs):
    x = ins[0]
    kernel, stride, pad, in_sp, out_sp = _cpu.pool_geometry("Pooling", x.shape, attrs)
    _run(rctx, 0, attrs.pool_type, x, None, outs[0],
         _cpu._geom(x.shape[0], x.shape[1], in_sp, out_sp, kernel, stride, pad),
         _cpu._include_pad(attrs), attrs.p_value or 1)


def _scatter(rctx, ins, outs, attrs):
    x, g = ins
    _run(rctx, 1, "max", x, g, outs[0],
         _cpu._internal_geom("_pool_max_scatter", x.shape, attrs), True)


def _gather(rctx, ins, outs, attrs):
    x, h = ins
    _run(rctx, 2, "max", x, h, outs[0],
         _cpu._internal_geom("_pool_max_gather", x.shape, attrs), True)


def _backward(rctx, ins, outs, attrs):
    (g,) = ins
    out = outs[0]
    _run(rctx, 3, attrs.pool_type, None, g, out,
         _cpu._internal_geom("_pool_backward", out.shape, attrs), attrs.count_include_pad)


def _upsampling(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    work = compute_dtype(out.dtype)
    ins = run_in(work, ins)
    target = out if out.dtype == work else xp.empty(out.shape, work)
    if attrs.sample_type == "bilinear":
        p = _cpu._bilinear([x.shape for x in ins], attrs)
        if out.size:
            deconv_forward(xp, ins[0], ins[1], None, target, p["kernel"], p["stride"], (1, 1),
                           p["pad"], ins[0].shape[2:], out.shape[2:], p["num_group"])
        write_back(xp, target, out)
        return
    _, scales = _cpu._up_scales([x.shape for x in ins], attrs)
    n, _, oh, ow = out.shape
    summed = attrs.multi_input_mode == "sum"
    start = 0
    for i, (x, s) in enumerate(zip(ins, scales)):
        c, h, w = x.shape[1:]
        src = xp.broadcast_to(x.reshape(n, c, h, 1, w, 1), (n, c, h, s, w, s))
        if summed and i:
            block = xp.empty((n, c, h, s, w, s), work)
            xp.strided_copy(src, block)
            add_into(xp, target, block)
        elif summed or (start == 0 and c == target.shape[1]):
            xp.strided_copy(src, target.reshape(n, c, h, s, w, s))
        else:                   # channels [start, start + c) of the output
            block = xp.empty((n, c, h, s, w, s), work)
            xp.strided_copy(src, block)
            xp.copyto(target[:, start:start + c], block.reshape(n, c, oh, ow))
        start += c
    write_back(xp, target, out)


attach("Pooling", _pool)
attach("_pool_max_scatter", _scatter)
attach("_pool_max_gather", _gather)
attach("_pool_backward", _backward)
attach("UpSampling", _upsampling)
