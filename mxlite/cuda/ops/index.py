"""GPU compute functions of the index operators (``mxlite/ops/index.py``): take, pick,
one_hot and the gradient scatters ``_take_grad`` / ``_pick_grad``; importing this module
also attaches the shape, indexing, sequence, linear-algebra and sorting families.

As on the CPU, indices of any dtype first become int64 positions in one pass
(``index_positions_<dtype>``, the rules of ``mx_index.h`` shared with the Cython kernel), so
the data kernels never see an index outside its axis. Finding whether an index was invalid
is a host decision (the op raises): it reads two numbers back, which synchronizes, and is
skipped where no index can be invalid (integer indices in 'clip' or 'wrap' mode on a
non-empty axis; one_hot drops invalid indices).
"""
import numpy as np

from ...ops import index as _cpu
from ...ops.common import F16
from . import attach
from .gather import CARRIER, CTYPE, I64, carrier_scalar, check_range, segment_add
from ..kernels import kernel

_MODES = {"clip": 0, "wrap": 1, "raise": 2, "drop": 3}        # MX_MODE_* of mx_index.h


# ---- positions -----------------------------------------------------------------------------
def _positions_kernel(dt, ctype):
    if dt.kind == "f":
        value = "mx_half_to_float(idx[i])" if dt == F16 else "(double)idx[i]"
        conv = f"mx_float_index_position({value}, n, mode)"
    else:
        conv = "mx_index_position((int64_t)idx[i], n, mode)"
    name = f"mxlite_index_positions_{dt.name}"
    return kernel("index", name, f"""
#include "mx_index.h"
extern "C" __global__ void {name}(const {ctype}* idx, long long* pos, long long n,
                                  long long mode, mx_idx count) {{
    MX_GRID_LOOP(i, count) pos[i] = {conv};
}}
""")


_POSITIONS = {dt: _positions_kernel(dt, c) for dt, c in CTYPE.items() if dt != np.bool_}


def positions(xp, op, indices, n, mode, axis):
    """int64 positions of ``indices`` on an axis of size ``n`` under ``mode`` (same shape as
    ``indices``); raises the CPU's MXNetError for an invalid index unless mode is 'drop'."""
    raw = indices.view(np.uint8) if indices.dtype == np.bool_ else indices
    pos = xp.empty(indices.shape, I64)
    xp.launch(_POSITIONS[raw.dtype], raw.size, raw, pos, np.int64(n),
              np.int64(_MODES[mode]), np.int64(indices.size))
    can_fail = mode == "raise" or n == 0 or raw.dtype.kind == "f"
    if mode != "drop" and can_fail:
        count, first = check_range(xp, pos.reshape(-1), 0, max(n - 1, 0))
        if count:
            raise _cpu.bad_index_error(op, indices, first, n, axis)
    return pos


def to_int64(xp, a):
    """``a`` as C-contiguous int64 through the namespace's cast (floats truncated toward
    zero; NaN and values beyond int64 become its minimum, as NumPy's cast on x86, so a range
    check rejects them; an array method's cast would give 0 for NaN on a GPU)."""
    return xp.ascontiguousarray(a, I64)


# ---- take ----------------------------------------------------------------------------------
_TAKE = {size: kernel("index", f"mxlite_take_{size}", f"""
extern "C" __global__ void mxlite_take_{size}(const {c}* data, const long long* pos, {c}* out,
                                       mx_idx nidx, mx_idx n, mx_idx inner, mx_idx total) {{
    MX_GRID_LOOP(r, total) {{
        mx_idx i = r % inner, row = r / inner, j = row % nidx, o = row / nidx;
        out[r] = data[(o * n + pos[j]) * inner + i];
    }}
}}
""") for size, c in CARRIER.items()}


def _take(rctx, ins, outs, attrs):
    data, indices = ins
    out, xp = outs[0], rctx.xp
    ax = _cpu._axis("take", attrs.axis, data.shape)
    outer, n, inner = _cpu._split(data.shape, ax)
    if out.size == 0 and attrs.mode != "raise":
        return
    pos = positions(xp, "take", indices, n, attrs.mode, ax)
    xp.launch(_TAKE[data.dtype.itemsize], out.size, data, pos, out, np.int64(pos.size),
              np.int64(n), np.int64(inner), np.int64(out.size))


# ---- _take_grad: deterministic scatter-add -------------------------------------------------
_TAKE_TARGETS = kernel("index", "mxlite_take_targets", """
extern "C" __global__ void mxlite_take_targets(const long long* pos, long long* target,
                                               mx_idx nidx, mx_idx n, mx_idx inner,
                                               mx_idx total) {
    MX_GRID_LOOP(r, total) {
        mx_idx i = r % inner, row = r / inner, j = row % nidx, o = row / nidx;
        target[r] = (o * n + pos[j]) * inner + i;
    }
}
""")


def _take_grad(rctx, ins, outs, attrs):
    """Duplicate indices accumulate in index order (bit-identical to the CPU: see
    ``gather.segment_add``); float16 sums in float32 and rounds once."""
    grad, indices, data = ins
    out, xp = outs[0], rctx.xp
    ax = _cpu._axis("_take_grad", attrs.axis, data.shape)
    outer, n, inner = _cpu._split(data.shape, ax)
    xp.fill_zero(out)
    if grad.size == 0:
        if attrs.mode == "raise":
            positions(xp, "_take_grad", indices, n, attrs.mode, ax)
        return
    pos = positions(xp, "_take_grad", indices, n, attrs.mode, ax)
    targets = xp.empty(grad.shape, I64)
    xp.launch(_TAKE_TARGETS, grad.size, pos, targets, np.int64(pos.size), np.int64(n),
              np.int64(inner), np.int64(grad.size))
    segment_add(xp, grad, targets, out)


# ---- pick and its adjoint ------------------------------------------------------------------
def _pick_kernel(direction, size, c):
    move = ("b[r] = a[(o * n + pos[r]) * inner + i];" if direction == "pick"
            else "b[(o * n + pos[r]) * inner + i] = a[r];")
    return kernel("index", f"mxlite_{direction}_{size}", f"""
extern "C" __global__ void mxlite_{direction}_{size}(const {c}* a, const long long* pos, {c}* b,
                                               mx_idx n, mx_idx inner, mx_idx count) {{
    MX_GRID_LOOP(r, count) {{
        mx_idx o = r / inner, i = r % inner;
        {move}
    }}
}}
""")


_PICK = {(d, size): _pick_kernel(d, size, c) for d in ("pick", "pick_grad")
         for size, c in CARRIER.items()}


def _pick_layout(op, data, index, attrs):
    ax, _ = _cpu._pick_geometry(op, data.shape, index.shape, attrs.axis, attrs.keepdims)
    outer, n, inner = _cpu._pick_split(data.shape, ax)
    return ("(flattened)" if ax is None else ax), outer, n, inner


def _pick(rctx, ins, outs, attrs):
    data, index = ins
    xp = rctx.xp
    ax, outer, n, inner = _pick_layout("pick", data, index, attrs)
    if outs[0].size == 0:
        return
    pos = positions(xp, "pick", index, n, attrs.mode, ax)
    xp.launch(_PICK[("pick", data.dtype.itemsize)], pos.size, data, pos, outs[0],
              np.int64(n), np.int64(inner), np.int64(pos.size))


def _pick_grad(rctx, ins, outs, attrs):
    """Every output of pick reads a different element: a plain scatter, no accumulation."""
    grad, index, data = ins
    out, xp = outs[0], rctx.xp
    ax, outer, n, inner = _pick_layout("_pick_grad", data, index, attrs)
    xp.fill_zero(out)
    if grad.size == 0:
        return
    pos = positions(xp, "_pick_grad", index, n, attrs.mode, ax)
    xp.launch(_PICK[("pick_grad", out.dtype.itemsize)], pos.size, grad, pos, out,
              np.int64(n), np.int64(inner), np.int64(pos.size))


# ---- one_hot -------------------------------------------------------------------------------
_ONE_HOT = {size: kernel("index", f"mxlite_one_hot_{size}", f"""
extern "C" __global__ void mxlite_one_hot_{size}(const long long* pos, {c}* out, mx_idx depth,
                                          {c} on, {c} off, mx_idx total) {{
    MX_GRID_LOOP(k, total) out[k] = pos[k / depth] == k % depth ? on : off;
}}
""") for size, c in CARRIER.items()}


def _one_hot(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    on, off = _cpu._one_hot_values(attrs)
    pos = positions(xp, "one_hot", ins[0], attrs.depth, "drop", -1)
    if out.size == 0:
        return
    xp.launch(_ONE_HOT[out.dtype.itemsize], out.size, pos, out, np.int64(attrs.depth),
              carrier_scalar(on, out.dtype), carrier_scalar(off, out.dtype),
              np.int64(out.size))


attach("take", _take)
attach("_take_grad", _take_grad)
attach("pick", _pick)
attach("_pick_grad", _pick_grad)
attach("one_hot", _one_hot)

from . import shape, indexing, sequence, linalg, sorting    # noqa: E402,F401  (attach)
