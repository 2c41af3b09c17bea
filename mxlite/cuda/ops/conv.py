"""GPU kernels of Convolution, Deconvolution and ``_conv_weight_grad`` (``mxlite/ops/conv.py``).

The plan is the CPU's BLAS path: im2col into a column buffer ``col[(c*K + k), n*L + l]``,
one batched product per batch chunk (``rctx.xp.matmul``: cuBLAS, the groups as the batch),
then a relayout from ``(F, N*L)`` to ``(N, F, L)`` with the bias. Deconvolution runs the
product first and col2im after it. col2im *gathers*: one thread per image element adds the
column entries that read it, taps in ascending order (the CPU's order, so the sums round
alike; no atomics, no race). The geometry is the record ``mx_conv_geom`` of
``mx_conv.h`` (three spatial axes, 1-D and 2-D padded with unit axes as on the CPU).
"""
import numpy as np

from ...ops import conv as _cpu
from ...ops.common import in_work_dtype, write_back
from ...ops.shape_utils import size_of
from . import attach
from .nn_common import i32, i64, per_dtype

_FAMILY = "nn_conv"

GEOM = np.dtype([("N", "<i8"), ("C", "<i8"), ("in", "<i8", (3,)), ("out", "<i8", (3,)),
                 ("kernel", "<i8", (3,)), ("stride", "<i8", (3,)), ("pad", "<i8", (3,)),
                 ("dilate", "<i8", (3,))])


def geom_record(geometry):
    """The ``mx_conv_geom`` record of a CPU geometry tuple ``(N, C, in, out, kernel,
    stride, pad, dilate)`` (spatial tuples of 3)."""
    rec = np.zeros((), GEOM)
    for field, value in zip(GEOM.names, geometry):
        rec[field] = value
    return rec[()]


_IM2COL = per_dtype(_FAMILY, "im2col", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* x, ${T}* col, const mx_conv_geom g,
                                   mx_idx total) {
    mx_idx vk = mx_conv_vk(g), vo = mx_conv_vo(g), nl = g.N * vo;
    MX_GRID_LOOP(i, total) {
        mx_idx r = i / nl, q = i - r * nl, n = q / vo, l = q - n * vo;
        mx_idx c = r / vk, kk = r - c * vk;
        mx_idx k[3] = {kk / (g.kernel[1] * g.kernel[2]), (kk / g.kernel[2]) % g.kernel[1],
                       kk % g.kernel[2]};
        long long o[3];
        mx_conv_out_pos(g, l, o);
        mx_idx src = n * g.C + c;
        bool inside = true;
        for (int a = 0; a < 3; a++) {
            mx_idx p = o[a] * g.stride[a] - g.pad[a] + k[a] * g.dilate[a];
            inside = inside && p >= 0 && p < g.in[a];
            src = src * g.in[a] + p;
        }
        col[i] = inside ? x[src] : (${T})0;
    }
}
""")

# the adjoint of im2col, gathered: image element (n, c, z, y, x) sums col over the taps
# whose output position reads it, taps in ascending order (conv.pyx's col2im order)
_COL2IM = per_dtype(_FAMILY, "col2im", """
#include "mx_conv.h"
extern "C" __global__ void ${name}(const ${T}* col, ${T}* x, const mx_conv_geom g,
                                   mx_idx total) {
    mx_idx vi = mx_conv_vi(g), vk = mx_conv_vk(g), vo = mx_conv_vo(g);
    MX_GRID_LOOP(i, total) {
        mx_idx plane = i / vi, t = i - plane * vi, n = plane / g.C, c = plane - n * g.C;
        mx_idx pos[3] = {t / (g.in[1] * g.in[2]), (t / g.in[2]) % g.in[1], t % g.in[2]};
        const ${T}* src = col + (c * vk * g.N + n) * vo;
        ${T} acc = 0;
        for (mx_idx ka = 0; ka < g.kernel[0]; ka++) {
            mx_idx rz = pos[0] + g.pad[0] - ka * g.dilate[0];
            if (rz < 0 || rz % g.stride[0] || rz / g.stride[0] >= g.out[0]) continue;
            for (mx_idx kb = 0; kb < g.kernel[1]; kb++) {
                mx_idx ry = pos[1] + g.pad[1] - kb * g.dilate[1];
                if (ry < 0 || ry % g.stride[1] || ry / g.stride[1] >= g.out[1]) continue;
                for (mx_idx kc = 0; kc < g.kernel[2]; kc++) {
                    mx_idx rx = pos[2] + g.pad[2] - kc * g.dilate[2];
                    if (rx < 0 || rx % g.stride[2] || rx / g.stride[2] >= g.out[2]) continue;
                    mx_idx kk = (ka * g.kernel[1] + kb) * g.kernel[2] + kc;
                    mx_idx l = ((rz / g.stride[0]) * g.out[1] + ry / g.stride[1]) * g.out[2]
                               + rx / g.stride[2];
                    acc += src[kk * g.N * vo + l];
                }
            }
        }
        x[i] = acc;
    }
}
""")

# dst[n, f, l] = src[f, n, l] (+ bias[f])
_FNL_TO_NFL = per_dtype(_FAMILY, "fnl_to_nfl", """
extern "C" __global__ void ${name}(const ${T}* src, const ${T}* bias, ${T}* dst, mx_idx N,
                                   mx_idx F, mx_idx L, int has_bias, mx_idx total) {
    MX_GRID_LOOP(i, total) {
        mx_idx l = i % L, nf = i / L, f = nf % F, n = nf / F;
        ${T} v = src[(f * N + n) * L + l];
        dst[i] = has_bias ? v + bias[f] : v;
    }
}
""")

# dst[n, f, l] += bias[f]
_ADD_BIAS = per_dtype(_FAMILY, "add_bias", """
extern "C" __global__ void ${name}(${T}* dst, const ${T}* bias, mx_idx F, mx_idx L,
                                   mx_idx total) {
    MX_GRID_LOOP(i, total) dst[i] = dst[i] + bias[(i / L) % F];
}
""")

_ADD_INTO = per_dtype(_FAMILY, "add_into", """
extern "C" __global__ void ${name}(${T}* dst, const ${T}* src, mx_idx total) {
    MX_GRID_LOOP(i, total) dst[i] = dst[i] + src[i];
}
""")


def im2col(xp, x, col, geometry):
    """``col[(c*K + k), n*L + l]``: the input element under tap k of output position l."""
    xp.launch(_IM2COL[x.dtype], col.size, x, col, geom_record(geometry), i64(col.size))


def col2im(xp, col, x, geometry):
    """``x`` (overwritten) = the adjoint of im2col applied to ``col``."""
    xp.launch(_COL2IM[x.dtype], x.size, col, x, geom_record(geometry), i64(x.size))


def add_bias(xp, dst, bias, f, l):
    """``dst[n, f, l] += bias[f]`` in place."""
    xp.launch(_ADD_BIAS[dst.dtype], dst.size, dst, bias, i64(f), i64(l), i64(dst.size))


def add_into(xp, dst, src):
    """``dst += src`` (same size and dtype)."""
    xp.launch(_ADD_INTO[dst.dtype], dst.size, dst, src, i64(dst.size))


def _fnl_to_nfl(xp, src, bias, dst, n, f, l):
    xp.launch(_FNL_TO_NFL[dst.dtype], dst.size, src, src if bias is None else bias, dst,
              i64(n), i64(f), i64(l), i32(bias is not None), i64(dst.size))


def _nfl_to_fnl(xp, src, dst, n, f, l):
    xp.strided_copy(src.reshape(n, f, l).transpose(1, 0, 2), dst.reshape(f, n, l))


def conv_forward(xp, x, w, b, target, kernel, stride, dilate, pad, in_sp, out_sp, g):
    """target (N, F, *out) = conv(x, w) (+ b): im2col, one batched product per batch chunk."""
    n, c = x.shape[:2]
    f = w.shape[0]
    k, l = size_of(kernel), size_of(out_sp)
    cg = c // g * k
    wg = w.reshape(g, f // g, cg)
    for s, nb in _cpu._chunks(n, c * k * l):
        col = xp.empty((c * k, nb * l), target.dtype)
        im2col(xp, x[s:s + nb], col, _cpu._geom(nb, c, in_sp, out_sp, kernel, stride, pad,
                                                 dilate))
        tmp = xp.empty((f, nb * l), target.dtype)
        xp.matmul(wg, col.reshape(g, cg, nb * l), tmp.reshape(g, f // g, nb * l))
        _fnl_to_nfl(xp, tmp, b, target[s:s + nb], nb, f, l)


def deconv_forward(xp, y, w, b, target, kernel, stride, dilate, pad, y_sp, out_sp, g):
    """target (N, F, *out) = the adjoint of conv(., w) applied to y (+ b): one batched
    product per batch chunk, then col2im."""
    n, cin = y.shape[:2]
    f = target.shape[1]
    k, l = size_of(kernel), size_of(y_sp)
    wt = w.reshape(g, cin // g, f // g * k).transpose(0, 2, 1)
    for s, nb in _cpu._chunks(n, f * k * l):
        yt = xp.empty((cin, nb * l), target.dtype)
        _nfl_to_fnl(xp, y[s:s + nb], yt, nb, cin, l)
        col = xp.empty((f * k, nb * l), target.dtype)
        xp.matmul(wt, yt.reshape(g, cin // g, nb * l), col.reshape(g, f // g * k, nb * l))
        col2im(xp, col, target[s:s + nb], _cpu._geom(nb, f, out_sp, y_sp, kernel, stride,
                                                     pad, dilate))
    if b is not None:
        add_bias(xp, target, b, f, size_of(out_sp))


def _in_work_dtype(run):
    """The compute function of ``run(xp, ins, target, attrs)``: the inputs in the compute
    dtype (float16 through float32), the result written back into the output; nothing to do
    for an empty output."""
    def compute(rctx, ins, outs, attrs):
        out, xp = outs[0], rctx.xp
        if out.size == 0:
            return
        _, ins, target = in_work_dtype(xp, ins, out)
        run(xp, ins, target, attrs)
        write_back(xp, target, out)
    compute.__doc__ = run.__doc__
    return compute


def _bias(ins, attrs):
    return None if attrs.no_bias else ins[2]


@_in_work_dtype
def _conv(xp, ins, target, attrs):
    """Convolution on GPU."""
    x, w = ins[:2]
    geometry = _cpu.conv_geometry("Convolution", x.shape, attrs)
    conv_forward(xp, x, w, _bias(ins, attrs), target, *geometry, attrs.num_group)


@_in_work_dtype
def _deconv(xp, ins, target, attrs):
    """Deconvolution on GPU."""
    y, w, b = ins[0], ins[1], _bias(ins, attrs)
    kernel, stride, dilate, pad, _, y_sp, out_sp = _cpu.deconv_geometry("Deconvolution",
                                                                        y.shape, attrs)
    if y.shape[1] == 0:
        xp.fill_zero(target)
        if b is not None:
            add_bias(xp, target, b, target.shape[1], size_of(out_sp))
    else:
        deconv_forward(xp, y, w, b, target, kernel, stride, dilate, pad, y_sp, out_sp,
                       attrs.num_group)


@_in_work_dtype
def _weight_grad(xp, ins, target, attrs):
    """_conv_weight_grad on GPU: the batch chunks' products added in order."""
    x, gy = ins
    work = target.dtype
    kernel, stride, dilate, pad, in_sp, out_sp = _cpu.conv_geometry(
        "_conv_weight_grad", x.shape, attrs, tuple(gy.shape[2:]))
    n, c = x.shape[:2]
    f, g = attrs.num_filter, attrs.num_group
    k, l = size_of(kernel), size_of(out_sp)
    cg = c // g * k
    if n == 0 or l == 0:
        xp.fill_zero(target)
    tmp = None
    for i, (s, nb) in enumerate(_cpu._chunks(n, c * k * l) if l else []):
        col = xp.empty((c * k, nb * l), work)
        im2col(xp, x[s:s + nb], col, _cpu._geom(nb, c, in_sp, out_sp, kernel, stride, pad,
                                                 dilate))
        gt = xp.empty((f, nb * l), work)
        _nfl_to_fnl(xp, gy[s:s + nb], gt, nb, f, l)
        if i and tmp is None:
            tmp = xp.empty(target.shape, work)
        dst = tmp if i else target
        xp.matmul(gt.reshape(g, f // g, nb * l), col.reshape(g, cg, nb * l).transpose(0, 2, 1),
                  dst.reshape(g, f // g, cg))
        if i:
            add_into(xp, target, tmp)


attach("Convolution", _conv)
attach("Deconvolution", _deconv)
attach("_conv_weight_grad", _weight_grad)
