"""GPU finiteness checks, the constraint check and hardmax (``mxlite/ops/debug.py``).

* ``contrib.isfinite``/``isinf``/``isnan``/``isposinf``/``isneginf``: the float-bit tests
  of ``kernel_table.FINITE_*`` (the strings the CPU template compiles: one 16- or 32-bit
  word per element, float64 as its high word with the low word folded into bit 0), one
  kernel per (test, float dtype); the CPU compute function calls ``classify`` below.
* ``contrib.all_finite`` and ``_has_nan``/``_has_inf``: a scan kernel writes the flag's new
  value into the (1,) float32 output on the device where an element counts -- no early
  exit (threads never read what others write) and no device-to-host read: the flag stays on
  the GPU until someone reads it. Several arrays of one dtype (a model's gradients) take one
  launch over a table of their addresses and sizes (one small host-to-device copy).
* ``_npx_constraint_check``: the CPU function unchanged (the array's ``all()``, one flag
  read back to decide whether to raise).
* ``contrib.hardmax``: the first-maximum indices of ``reduce.arg_best`` (float16 compared
  as float32, NaN the maximum), then one kernel writing the one-hot rows.
"""
import types

import numpy as np

from ..._core import finite as _cpu
from ..._core.kernel_table import (FINITE_FLOATS, FINITE_LOAD, FINITE_SCANS, FINITE_STORE,
                                   FINITE_TESTS, finite_bits)
from ...base import MXNetError
from ...ops.common import DEVICE_KERNELS
from .. import runtime
from ..casts import CTYPE, DTYPES, convert
from ..kernels import kernel
from . import attach, device_generic
from .reduce import arg_best

__all__ = ["classify", "any_into", "hardmax"]

_ROWS = {row[0]: row for row in FINITE_FLOATS}


def _test_kernel(test, expr, dt):
    row = _ROWS[dt]
    U, one = row[1], row[6]
    value = f"(({finite_bits(expr, row)}) ? ({U}){one} : ({U})0)"
    name = f"mxlite_{test}_{dt}"
    return kernel("finite", name, f"""
extern "C" __global__ void {name}(const {U}* x, {U}* y, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        {U} b;
        {FINITE_LOAD[dt]}
        {FINITE_STORE[dt] % value}
    }}
}}
""")


def _scan_kernel(scan, expr, dt):
    U = _ROWS[dt][1]
    name = f"mxlite_any_{scan}_{dt}"
    return kernel("finite", name, f"""
extern "C" __global__ void {name}(const {U}* x, float* flag, float value, mx_idx n) {{
    MX_GRID_LOOP(i, n) {{
        {U} b;
        {FINITE_LOAD[dt]}
        if ({finite_bits(expr, _ROWS[dt])}) *flag = value;
    }}
}}
""")


def _scan_many_kernel(scan, expr, dt):
    """The scan over several arrays of one dtype in one launch: ``arrays`` holds (address,
    size) pairs."""
    U = _ROWS[dt][1]
    name = f"mxlite_any_{scan}_{dt}_many"
    return kernel("finite", name, f"""
extern "C" __global__ void {name}(const int64_t* arrays, mx_idx count, float* flag,
                                  float value) {{
    for (mx_idx a = 0; a < count; a++) {{
        const {U}* x = (const {U}*)arrays[2 * a];
        MX_GRID_LOOP(i, arrays[2 * a + 1]) {{
            {U} b;
            {FINITE_LOAD[dt]}
            if ({finite_bits(expr, _ROWS[dt])}) *flag = value;
        }}
    }}
}}
""")


def _hardmax_kernel(dt):
    T = CTYPE[dt]
    name = f"mxlite_hardmax_{dt}"
    return kernel("finite", name, f"""
extern "C" __global__ void {name}(const int64_t* at, {T}* y, mx_idx n, mx_idx inner,
                                  mx_idx total) {{
    MX_GRID_LOOP(i, total) {{
        mx_idx j = i % inner, r = i / inner, k = r % n, o = r / n;
        y[i] = at[o * inner + j] == k ? {convert("int32", dt, "1")} : ({T})0;
    }}
}}
""")


TESTS = {(test, row[0]): _test_kernel(test, expr, row[0])
         for test, expr in FINITE_TESTS for row in FINITE_FLOATS}
SCANS = {(scan, row[0]): _scan_kernel(scan, expr, row[0])
         for scan, expr in FINITE_SCANS for row in FINITE_FLOATS}
SCANS_MANY = {(scan, row[0]): _scan_many_kernel(scan, expr, row[0])
              for scan, expr in FINITE_SCANS for row in FINITE_FLOATS}
HARDMAX = {dt: _hardmax_kernel(dt) for dt in DTYPES if dt != "bool"}
_TEST_NAMES = {i: test for test, i in _cpu.TEST_IDS.items()}


def classify(test_id, x, y):
    """``mxlite._core.finite.classify`` on the GPU: ``y`` = 1 where ``x`` passes the test,
    else 0, in ``x``'s dtype (``y`` may be ``x``); integer and bool arrays are finite."""
    test = _TEST_NAMES.get(test_id)
    if test is None or x.dtype != y.dtype or x.size != y.size:
        raise MXNetError(f"classify: bad test id {test_id} or arrays ({x.dtype}, {x.size}) -> "
                         f"({y.dtype}, {y.size})")
    if x.dtype.kind != "f":
        y.fill(1 if test == "isfinite" else 0)
        return
    runtime.namespace_of(x).launch(TESTS[(test, x.dtype.name)], x.size, x, y, np.int64(x.size))


def any_into(scan, arrays, flag, value):
    """Write ``value`` into the one-element float32 ``flag`` where an element of a float
    array of ``arrays`` counts for ``scan`` (nonfinite, nan, inf); integers never count."""
    xp = runtime.namespace_of(flag)
    by_dtype = {}
    for a in arrays:
        if a.dtype.kind == "f" and a.size:
            by_dtype.setdefault(a.dtype.name, []).append(a)
    for dtype, group in by_dtype.items():
        if len(group) == 1:
            a = group[0]
            xp.launch(SCANS[(scan, dtype)], a.size, a, flag, np.float32(value),
                      np.int64(a.size))
            continue
        # many arrays (a model's gradients): one launch over a table of (address, size)
        table = xp.from_host(np.array([(xp.data_ptr(a), a.size) for a in group], np.int64))
        xp.launch(SCANS_MANY[(scan, dtype)], max(a.size for a in group), table,
                  np.int64(len(group)), flag, np.float32(value))


def hardmax(x, y, outer, n, inner):
    """``mxlite._core.finite.hardmax`` on the GPU: ``y`` = the one-hot of the first maximum
    of ``x`` ``(outer, n, inner)`` along ``n`` (NaN counts as the maximum)."""
    xp = runtime.namespace_of(x)
    if x.dtype != y.dtype or x.dtype.name not in HARDMAX:
        raise MXNetError(f"hardmax: no GPU kernel for {x.dtype} -> {y.dtype}")
    total = outer * n * inner
    if total == 0:
        return
    at = xp.empty(outer * inner, np.int64)
    arg_best("max", x, at, outer, n, inner)
    xp.launch(HARDMAX[x.dtype.name], total, at, y, *(np.int64(v) for v in (n, inner, total)))


def _all_finite(rctx, ins, outs, attrs):
    """The flag is set to 1 (``init_output``) and cleared on the device by any non-finite
    element."""
    if attrs.init_output:
        outs[0].fill(1)
    any_into("nonfinite", ins, outs[0], 0.0)


def _has(scan):
    def compute(rctx, ins, outs, attrs):
        outs[0].fill(0)
        any_into(scan, ins, outs[0], 1.0)
    return compute


DEVICE_KERNELS[("gpu", _cpu.__name__)] = types.SimpleNamespace(classify=classify,
                                                               hardmax=hardmax)
device_generic(*(f"_contrib_{test}" for test, _ in FINITE_TESTS), "_contrib_hardmax")
attach("_contrib_all_finite", _all_finite)
attach("_has_nan", _has("nan"))
attach("_has_inf", _has("inf"))
# npx.constraint_check: CuPy's all() on the device, one flag read to decide whether to raise
device_generic("_npx_constraint_check")
