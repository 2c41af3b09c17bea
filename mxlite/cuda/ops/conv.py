"""GPU kernels of Convolution, Deconvolution and ``_conv_weight_grad`` (``mxlite/ops/conv.py``).

The operators' compute functions are the CPU ones (``mxlite/ops/conv.py``), whose BLAS path
is the plan on both devices: im2col into a column buffer ``col[(c*K + k), n*L + l]``, one
batched product per batch chunk (``rctx.xp.matmul``: cuBLAS on GPU, the groups as the
batch), then a relayout from ``(F, N*L)`` to ``(N, F, L)`` with the bias; Deconvolution runs
the product first and col2im after it. On GPU they call the functions below, which take the
arguments of ``mxlite._core.conv``'s functions of the same names and are registered in
``mxlite.ops.common.DEVICE_KERNELS`` (``pooling.py`` adds ``pool``).

col2im *gathers*: one thread per image element adds the column entries that read it, taps
in ascending order (the CPU's order, so the sums round alike; no atomics, no race). The
geometry is the record ``mx_conv_geom`` of ``mx_conv.h`` (three spatial axes, 1-D and 2-D
padded with unit axes as on the CPU).
"""
import types

import numpy as np

from ..._core import conv as _k
from ...ops.common import DEVICE_KERNELS
from . import device_generic
from .nn_common import i32, i64, namespace_of, per_dtype

__all__ = ["GEOM", "geom_record", "im2col", "col2im", "fnl_to_nfl", "nfl_to_fnl", "add_bias",
           "add_into", "KERNELS"]

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


def im2col(x, col, geometry):
    """``col[(c*K + k), n*L + l]``: the input element under tap k of output position l."""
    namespace_of(x).launch(_IM2COL[x.dtype], col.size, x, col, geom_record(geometry),
                           i64(col.size))


def col2im(col, x, geometry):
    """``x`` (overwritten) = the adjoint of im2col applied to ``col``."""
    namespace_of(x).launch(_COL2IM[x.dtype], x.size, col, x, geom_record(geometry),
                           i64(x.size))


def fnl_to_nfl(src, bias, dst, N, F, L):
    """``dst[n, f, l] = src[f, n, l]`` (+ ``bias[f]`` unless ``bias`` is None)."""
    namespace_of(dst).launch(_FNL_TO_NFL[dst.dtype], dst.size, src,
                             src if bias is None else bias, dst, i64(N), i64(F), i64(L),
                             i32(bias is not None), i64(dst.size))


def nfl_to_fnl(src, dst, N, F, L):
    """``dst[f, n, l] = src[n, f, l]``."""
    namespace_of(dst).strided_copy(src.reshape(N, F, L).transpose(1, 0, 2),
                                   dst.reshape(F, N, L))


def add_bias(dst, bias, N, F, L):
    """``dst[n, f, l] += bias[f]`` in place."""
    namespace_of(dst).launch(_ADD_BIAS[dst.dtype], dst.size, dst, bias, i64(F), i64(L),
                             i64(dst.size))


def add_into(dst, src):
    """``dst += src`` (same size and dtype)."""
    namespace_of(dst).launch(_ADD_INTO[dst.dtype], dst.size, dst, src, i64(dst.size))


# mxlite._core.conv on the GPU (its fused float32 kernels are CPU-only: ops/conv.py's _fused)
KERNELS = types.SimpleNamespace(im2col=im2col, col2im=col2im, fnl_to_nfl=fnl_to_nfl,
                                nfl_to_fnl=nfl_to_fnl, add_bias=add_bias, add_into=add_into)
DEVICE_KERNELS[("gpu", _k.__name__)] = KERNELS
device_generic("Convolution", "Deconvolution", "_conv_weight_grad")
