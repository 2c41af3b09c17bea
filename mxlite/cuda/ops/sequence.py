"""GPU compute functions of SequenceMask, SequenceLast, SequenceReverse and
``_sequence_last_grad`` (``mxlite/ops/sequence.py``): one launch each, one thread per element
of the rows moved (any dtype, by element size). Checking the lengths is a host decision (a
bad one raises): it reads two numbers back, which synchronizes."""
import functools

import numpy as np

from ...base import op_error
from ...ops import sequence as _cpu
from . import attach
from .gather import CARRIER, carrier_scalar, check_range
from ..kernels import kernel
from .index import to_int64

# the row of (time t, batch b) in the (T, B, R) (axis 0) or (B, T, R) (axis 1) layout
_ROW = "(axis == 0 ? (t) * B + (b) : (b) * T + (t))"


def _row(t, b):
    return _ROW.replace("(t)", f"({t})").replace("(b)", f"({b})")


def _kernels(size, c):
    args = "mx_idx T, mx_idx B, mx_idx R, long long axis"
    mask = kernel("sequence", f"mxlite_seq_mask_{size}", f"""
extern "C" __global__ void mxlite_seq_mask_{size}({c}* out, const long long* L, {c} value, {args},
                                           mx_idx total) {{
    MX_GRID_LOOP(k, total) {{
        mx_idx row = k / R;
        mx_idx t = axis == 0 ? row / B : row % T, b = axis == 0 ? row % B : row / T;
        if (t >= L[b]) out[k] = value;
    }}
}}
""")
    last = {}
    for name, move in (("seq_last", "out[k] = data[src];"),
                       ("seq_last_scatter", "data[src] = out[k];")):
        const = "const " if name == "seq_last" else ""
        cout = "" if name == "seq_last" else "const "
        last[name] = kernel("sequence", f"mxlite_{name}_{size}", f"""
extern "C" __global__ void mxlite_{name}_{size}({const}{c}* data, const long long* L,
                                                 {cout}{c}* out, {args}, mx_idx total) {{
    MX_GRID_LOOP(k, total) {{
        mx_idx b = k / R, r = k % R;
        mx_idx src = {_row("L[b] - 1", "b")} * R + r;
        {move}
    }}
}}
""")
    reverse = kernel("sequence", f"mxlite_seq_reverse_{size}", f"""
extern "C" __global__ void mxlite_seq_reverse_{size}(const {c}* data, const long long* L, {c}* out,
                                              {args}, mx_idx total) {{
    MX_GRID_LOOP(k, total) {{
        mx_idx row = k / R, r = k % R;
        mx_idx t = axis == 0 ? row / B : row % T, b = axis == 0 ? row % B : row / T;
        mx_idx src = t < L[b] ? L[b] - 1 - t : t;
        out[k] = data[{_row("src", "b")} * R + r];
    }}
}}
""")
    return {"mask": mask, "reverse": reverse, **last}


_K = {size: _kernels(size, c) for size, c in CARRIER.items()}


def _lengths(rctx, op, ins, attrs, B, T, lo, hi):
    return _cpu._lengths(rctx, op, ins, attrs, B, T, lo, hi,
                         count_bad=functools.partial(check_range, rctx.xp),
                         to_int64=functools.partial(to_int64, rctx.xp))


def _geometry(T, B, R, attrs):
    return np.int64(T), np.int64(B), np.int64(R), np.int64(attrs.axis)


def _mask(rctx, ins, outs, attrs):
    data, out, xp = ins[0], outs[0], rctx.xp
    T, B, R = _cpu._layout("SequenceMask", data.shape, None, attrs)
    xp.copyto(out, data)
    if not attrs.use_sequence_length:
        return
    lengths = _lengths(rctx, "SequenceMask", ins, attrs, B, T, -2 ** 62, None)
    if out.size == 0:
        return
    value = carrier_scalar(xp.scalar(attrs.value, out.dtype), out.dtype)
    xp.launch(_K[out.dtype.itemsize]["mask"], out.size, out, lengths,
              value, *_geometry(T, B, R, attrs), np.int64(out.size))


def _last(rctx, ins, outs, attrs):
    data, xp = ins[0], rctx.xp
    T, B, R = _cpu._layout("SequenceLast", data.shape, None, attrs)
    if B * R == 0:
        return
    if T == 0:
        raise op_error("SequenceLast", f"data has no time steps (shape {data.shape})")
    lengths = _lengths(rctx, "SequenceLast", ins, attrs, B, T, 1, T)
    xp.launch(_K[data.dtype.itemsize]["seq_last"], B * R, data, lengths, outs[0],
              *_geometry(T, B, R, attrs), np.int64(B * R))


def _last_grad(rctx, ins, outs, attrs):
    grad, data = ins[0], ins[1]
    out, xp = outs[0], rctx.xp
    T, B, R = _cpu._layout("_sequence_last_grad", data.shape, None, attrs)
    xp.fill_zero(out)
    if B * R == 0:
        return
    lengths = _lengths(rctx, "_sequence_last_grad", ins, attrs, B, T, 1, T)
    xp.launch(_K[out.dtype.itemsize]["seq_last_scatter"], B * R, out, lengths, grad,
              *_geometry(T, B, R, attrs), np.int64(B * R))


def _reverse(rctx, ins, outs, attrs):
    data, xp = ins[0], rctx.xp
    T, B, R = _cpu._layout("SequenceReverse", data.shape, None, attrs)
    if data.size == 0:
        return
    lengths = _lengths(rctx, "SequenceReverse", ins, attrs, B, T, 0, T)
    xp.launch(_K[data.dtype.itemsize]["reverse"], data.size, data, lengths, outs[0],
              *_geometry(T, B, R, attrs), np.int64(data.size))


attach("SequenceMask", _mask)
attach("SequenceLast", _last)
attach("_sequence_last_grad", _last_grad)
attach("SequenceReverse", _reverse)
