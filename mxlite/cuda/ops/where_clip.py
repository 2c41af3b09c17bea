"""GPU compute functions of ``where`` and ``clip`` (``mxlite/ops/index.py``).

``where`` moves bytes: one kernel per (condition type, element size), the condition tested
as the CPU's ``nonzero_mask`` tests it (non-zero is true, NaN too; float16 on its bits, so -0
is false), element-wise or one condition per row. ``clip`` has one kernel per dtype with the
CPU's bounds (``_dtype_bounds``: exact, limited to the dtype) and expression; float16 clips
in float32 and rounds once, bool clips as uint8.
"""
import math

import numpy as np

from ...base import op_error
from ...ops.index import _clip_bounds, _dtype_bounds
from ..casts import BY_CHAR, CTYPE, DTYPES, convert, work_dtype
from ..kernels import kernel
from . import attach

# condition kinds: (C type, test of the condition value c); every 1-byte dtype is a byte test
_CONDITIONS = {"byte": ("uint8_t", "c != 0"), "float16": ("uint16_t", "(c & 0x7fffu) != 0"),
               "float32": ("float", "c != 0"), "float64": ("double", "c != 0"),
               "int32": ("int32_t", "c != 0"), "int64": ("int64_t", "c != 0")}


def _where_kernels():
    """{(condition kind, element size): (element-wise kernel, per-row kernel)}."""
    table = {}
    for kind, (ctype, test) in _CONDITIONS.items():
        for size in (1, 2, 4, 8):
            u = f"uint{8 * size}_t"
            k = f"mxlite_where_{kind}_{size}"
            same = kernel("where", k, f"""
extern "C" __global__ void {k}(const {ctype}* cond, const {u}* x, const {u}* y, {u}* out,
                               mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        const {ctype} c = cond[i];
        out[i] = ({test}) ? x[i] : y[i];
    }}
}}
""")
            rows = kernel("where", k + "_rows", f"""
extern "C" __global__ void {k}_rows(const {ctype}* cond, const {u}* x, const {u}* y,
                                    {u}* out, const mx_idx block, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        const {ctype} c = cond[i / block];
        out[i] = ({test}) ? x[i] : y[i];
    }}
}}
""")
            table[(kind, size)] = (same, rows)
    return table


_WHERE = _where_kernels()


def _condition_kind(cond):
    if cond.itemsize == 1:
        return "byte"
    kind = BY_CHAR.get(cond.dtype.char)
    if kind not in _CONDITIONS:
        raise op_error("where", f"condition of dtype {cond.dtype} is not supported on GPU")
    return kind


def _where_compute(rctx, ins, outs, attrs):
    cond, x, y = ins
    out = outs[0]
    n = out.size
    if n == 0:
        return
    same, rows = _WHERE[(_condition_kind(cond), out.itemsize)]
    if cond.shape == x.shape:
        rctx.xp.launch(same, n, cond, x, y, out, np.int64(n))
    else:
        rctx.xp.launch(rows, n, cond, x, y, out, np.int64(n // x.shape[0]), np.int64(n))


_F32_INF = float(2 ** 128 - 2 ** 103)    # the least magnitude that rounds to float32 inf


def _float32_bound(v):
    """A clip bound (a float) as float32, rounded as the CPU's C conversion: beyond float32
    it is the infinity of its sign (a bound above float16's range clips nothing)."""
    return np.float32(v) if abs(v) < _F32_INF else np.float32(math.copysign(math.inf, v))


def _clip_kernels():
    """{dtype char: (kernel, NumPy type of its bounds)}: v < lo ? lo : (v > hi ? hi : v), so
    NaN passes through (comparisons with NaN are false)."""
    table = {}
    for dt in DTYPES:
        work = "uint8" if dt == "bool" else work_dtype(dt)
        s, w = CTYPE[dt], CTYPE[work]
        k = f"mxlite_clip_{dt}"
        code = f"""
extern "C" __global__ void {k}(const {s}* x, {s}* y, const {w} lo, const {w} hi, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        const {w} v = {convert(dt, work, "x[i]")};
        y[i] = {convert(work, dt, "(v < lo ? lo : (v > hi ? hi : v))")};
    }}
}}
"""
        table[dt] = (kernel("clip", k, code), _float32_bound if work == "float32" else
                     np.dtype(work).type)
    return {char: table[name] for char, name in BY_CHAR.items()}


_CLIP = _clip_kernels()


def _clip_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    lo, hi = _dtype_bounds(x.dtype, *_clip_bounds(attrs))
    k, bound = _CLIP[x.dtype.char]
    n = y.size
    rctx.xp.launch(k, n, x, y, bound(lo), bound(hi), np.int64(n))


attach("where", _where_compute)
attach("clip", _clip_compute)
