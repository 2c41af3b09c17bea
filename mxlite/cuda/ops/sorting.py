"""GPU compute functions of the sorting and scan operators (``mxlite/ops/sorting.py``):
sort, argsort, topk, cumsum, ``_take_along_axis`` and its adjoint, and smooth_l1.

Sorting is the array library's stable sort (``lib.sort``/``lib.argsort``: CuPy's radix sort
on a GPU), with the CPU's rules: descending order is the stable ascending sort of the
reversed axis, reversed back, so ties keep their order both ways and NaN sorts above every
number. topk takes the first k of that order (the set the CPU's partition picks). The
gathers and scatters along the axis are mxlite kernels; the scatter-add is deterministic
(``gather.segment_add``: bit-identical to the CPU). Finding an index outside the axis is a
host decision (the op raises): one number is read back, which synchronizes.
"""
import numpy as np

from ...ops import sorting as _cpu
from ...ops.common import compute_dtype, write_back
from . import attach
from .gather import CARRIER, CTYPE, I64, segment_add
from ..kernels import kernel
from .index import to_int64

# the flat offset in data (outer, n, inner) of the element that position t of an
# (outer, k, inner) index array names: -1 (and counted) outside [0, n)
_TARGETS = kernel("sorting", "mxlite_along_targets", """
extern "C" __global__ void mxlite_along_targets(const long long* pos, long long* target,
                                         unsigned long long* bad, mx_idx n, mx_idx k,
                                         mx_idx inner, mx_idx total) {
    MX_GRID_LOOP(t, total) {
        mx_idx i = t % inner, a = t / (k * inner);
        long long q = pos[t];
        if (q < 0 || q >= n) {
            target[t] = -1;
            atomicAdd(bad, 1ULL);
        } else {
            target[t] = (a * n + q) * inner + i;
        }
    }
}
""")

_MOVE = {(d, size): kernel("sorting", f"mxlite_along_{d}_{size}", f"""
extern "C" __global__ void mxlite_along_{d}_{size}(const {c}* src, const long long* target,
                                                   {c}* out, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        long long q = target[t];
        if (q >= 0) {"out[t] = src[q]" if d == "gather" else "out[q] = src[t]"};
    }}
}}
""") for d in ("gather", "scatter") for size, c in CARRIER.items()}


def _targets(xp, op, pos, n, k, inner):
    """Flat data offsets of the int64 positions ``pos`` ((outer, k, inner)); raises the
    CPU's MXNetError when one lies outside [0, n)."""
    target = xp.empty(pos.shape, I64)
    bad = xp.zeros((1,), np.uint64)
    if pos.size:
        xp.launch(_TARGETS, pos.size, pos, target, bad, np.int64(n), np.int64(k),
                  np.int64(inner), np.int64(pos.size))
        _cpu._bad_index(op, int(xp.to_host(bad)[0]), n)
    return target


def _along(xp, direction, src, target, out):
    if target.size:
        xp.launch(_MOVE[(direction, out.dtype.itemsize)], target.size, src, target, out,
                  np.int64(target.size))


# ---- _take_along_axis, _take_along_axis_grad -----------------------------------------------
def _along_geometry(op, data, indices, attrs):
    ax, outer, n, inner = _cpu._geometry(op, data.shape, attrs.axis)
    return n, (indices.shape[0] if ax is None else indices.shape[ax]), inner


def _take_along(rctx, ins, outs, attrs):
    data, indices = ins
    xp = rctx.xp
    n, k, inner = _along_geometry("_take_along_axis", data, indices, attrs)
    target = _targets(xp, "_take_along_axis", to_int64(xp, indices), n, k, inner)
    _along(xp, "gather", data, target, outs[0])


def _take_along_grad(rctx, ins, outs, attrs):
    """Repeated indices accumulate in index order (deterministic, as the CPU)."""
    grad, indices, data = ins
    out, xp = outs[0], rctx.xp
    n, k, inner = _along_geometry("_take_along_axis_grad", data, indices, attrs)
    target = _targets(xp, "_take_along_axis_grad", to_int64(xp, indices), n, k, inner)
    work = compute_dtype(out.dtype)
    acc = out if work == out.dtype else xp.empty(out.shape, work)
    xp.fill_zero(acc)
    segment_add(xp, xp.ascontiguousarray(grad, work), target, acc)
    write_back(xp, acc, out)


# ---- sort, argsort, topk -------------------------------------------------------------------
# The library's argsort holds int64 positions and a radix sort's double buffers for the whole
# input at once (over 70 GB for 2**32 int8 elements): a big input sorted along a later axis
# goes through it in blocks of rows along axis 0, so only one block's scratch exists at a time.
_ARGSORT_BLOCK = 2 ** 28


def _argsort(xp, x, axis, ascending):
    """int64 positions sorting ``x`` along ``axis``, stable both ways (the CPU's rule)."""
    if x.ndim > 1 and axis != 0 and x.size > _ARGSORT_BLOCK and x.shape[0] > 1:
        pos = xp.empty(x.shape, I64)
        step = max(1, _ARGSORT_BLOCK // (x.size // x.shape[0]))
        for r in range(0, x.shape[0], step):
            pos[r:r + step] = _argsort_whole(xp, x[r:r + step], axis, ascending)
        return pos
    return _argsort_whole(xp, x, axis, ascending)


def _argsort_whole(xp, x, axis, ascending):
    lib = xp.lib
    if ascending:
        pos = lib.argsort(x, axis=axis, kind="stable")
    elif x.dtype.kind in "biu":         # ~x reverses the order of every integer type and bool:
        pos = lib.argsort(~x, axis=axis, kind="stable")    # one sort, no reversed positions
    else:
        rev = lib.argsort(lib.flip(x, axis), axis=axis, kind="stable")
        pos = (x.shape[axis] - 1) - lib.flip(rev, axis)
    return xp.ascontiguousarray(pos, I64)


def _sort(rctx, ins, outs, attrs):
    xp = rctx.xp
    ax = _cpu._geometry("sort", ins[0].shape, attrs.axis)[0]
    out = outs[0].view(np.uint8) if outs[0].dtype == np.bool_ else outs[0]
    axis = 0 if ax is None else ax
    s = xp.lib.sort(_cpu._sort_input(ins[0], ax), axis=axis)
    xp.copyto(out, (s if attrs.is_ascend else xp.lib.flip(s, axis)).reshape(out.shape))


def _argsort_op(rctx, ins, outs, attrs):
    ax = _cpu._geometry("argsort", ins[0].shape, attrs.axis)[0]
    pos = _argsort(rctx.xp, _cpu._sort_input(ins[0], ax), 0 if ax is None else ax,
                   attrs.is_ascend)
    rctx.xp.cast_into(outs[0], pos.reshape(outs[0].shape))


def _topk(rctx, ins, outs, attrs):
    xp = rctx.xp
    ax, outer, n, inner, k = _cpu._topk_k("topk", ins[0].shape, attrs)
    axis = 0 if ax is None else ax
    x = _cpu._sort_input(ins[0], ax)
    pos = _argsort(xp, x, axis, attrs.is_ascend)
    if k < n:
        pos = xp.ascontiguousarray(pos[(slice(None),) * axis + (slice(0, k),)])
    target = _targets(xp, "topk", pos, n, k, inner)
    if attrs.ret_typ == "mask":
        mask = outs[0]
        xp.fill_zero(mask)
        _along(xp, "scatter", xp.ones(pos.shape, mask.dtype), target, mask)
        return
    if attrs.ret_typ in ("value", "both"):
        _along(xp, "gather", ins[0], target, outs[0])
    if attrs.ret_typ in ("indices", "both"):
        xp.cast_into(outs[-1], pos.reshape(outs[-1].shape))


# ---- cumsum --------------------------------------------------------------------------------
_CUMSUM = {dt: kernel("sorting", f"mxlite_cumsum_{dt.name}", f"""
extern "C" __global__ void mxlite_cumsum_{dt.name}(const {c}* x, {c}* out, mx_idx n, mx_idx inner,
                                            mx_idx columns) {{
    // one thread per (outer, inner) column, summing left to right as the CPU does
    MX_GRID_LOOP(col, columns) {{
        mx_idx base = (col / inner) * n * inner + col % inner;
        {c} acc = 0;
        for (mx_idx j = 0; j < n; ++j) {{
            acc = j == 0 ? x[base] : ({c})(acc + x[base + j * inner]);
            out[base + j * inner] = acc;
        }}
    }}
}}
""") for dt, c in CTYPE.items() if dt.name in _cpu._CUMSUM_DTYPES and dt.name != "float16"}


_SCAN_COLUMNS, _SCAN_LENGTH = 4096, 4096
# CuPy's scan faults (an illegal address) past 2**31 elements: the library scans at most this
# many elements at a time, each block adding the running total of the blocks before it
_SCAN_BLOCK = 2 ** 30


def _cumsum(rctx, ins, outs, attrs):
    """Left to right along the axis, one thread per column: the CPU's order (bit-identical).
    A long axis with few columns (too little parallelism for that) goes to the library's
    parallel scan instead (``lib.cumsum``: exact for integers; float sums then round in
    another order, within the dtype's tolerance of the CPU's)."""
    x, out, xp = ins[0], outs[0], rctx.xp
    ax, outer, n, inner = _cpu._geometry("cumsum", x.shape, attrs.axis)
    work = compute_dtype(out.dtype)
    src = xp.ascontiguousarray(x, work)
    target = out if work == out.dtype else xp.empty(out.shape, work)
    if n >= _SCAN_LENGTH and outer * inner < _SCAN_COLUMNS:
        _library_scan(xp, src.reshape(outer, n, inner), target.reshape(outer, n, inner))
    elif n:
        xp.launch(_CUMSUM[work], outer * inner, src, target, np.int64(n), np.int64(inner),
                  np.int64(outer * inner))
    write_back(xp, target, out)


def _library_scan(xp, src, target):
    """``target = cumsum(src, axis=1)`` for (outer, n, inner) arrays, in blocks along the
    axis of at most _SCAN_BLOCK elements; integer sums wrap exactly as one scan would."""
    outer, n, inner = src.shape
    step = max(1, _SCAN_BLOCK // (outer * inner))
    for j in range(0, n, step):
        part = xp.lib.cumsum(src[:, j:j + step], axis=1)
        if j:
            part += target[:, j - 1:j]
        target[:, j:j + step] = part


# ---- smooth_l1 -----------------------------------------------------------------------------
_SMOOTH_L1 = {dt: kernel("sorting", f"mxlite_smooth_l1_{dt.name}", f"""
#include "mx_index.h"
extern "C" __global__ void mxlite_smooth_l1_{dt.name}(const {CTYPE[dt]}* x, {CTYPE[dt]}* out,
                                               double sigma2, mx_idx n) {{
    MX_GRID_LOOP(i, n) out[i] = ({CTYPE[dt]})mx_smooth_l1((double)x[i], sigma2);
}}
""") for dt in (np.dtype(np.float32), np.dtype(np.float64))}


def _smooth_l1(rctx, ins, outs, attrs):
    x, out, xp = ins[0], outs[0], rctx.xp
    work = compute_dtype(out.dtype)
    src = xp.ascontiguousarray(x, work)
    target = out if work == out.dtype else xp.empty(out.shape, work)
    s = float(attrs.scalar)
    xp.launch(_SMOOTH_L1[work], out.size, src, target, np.float64(s * s), np.int64(out.size))
    write_back(xp, target, out)


for _name, _fn in (("_take_along_axis", _take_along), ("_take_along_axis_grad", _take_along_grad),
                   ("sort", _sort), ("argsort", _argsort_op), ("topk", _topk),
                   ("cumsum", _cumsum), ("smooth_l1", _smooth_l1)):
    attach(_name, _fn)
