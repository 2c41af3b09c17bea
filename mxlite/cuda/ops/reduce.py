"""GPU reductions: sum, mean, prod, max, min, nansum, nanprod, norm, sum_to, argmax, argmin,
argmax_channel; with ``finite`` (isfinite & co., all_finite, hardmax) and ``optimizer``
(the fused update ops) imported from here.

The operators' compute functions are the CPU ones (``mxlite/ops/reduce.py``: axis planning,
dtype rules, one kernel call per group of reduced axes); on GPU they call the functions
below, which take the arguments of ``mxlite._core.reduce.reduce`` / ``argreduce`` and are
registered in ``mxlite.ops.common.DEVICE_KERNELS``.

Every call reduces ``x[outer, n, inner]`` over ``n`` into ``out[outer, inner]``, without
shared memory, in passes of one kernel each. A pass cuts the ``n`` elements of every output
into ``slices`` strided slices -- slice ``s`` holds elements ``s, s + slices, s + 2 slices,
...`` -- and one thread combines one slice in index order, so neighbouring threads read
neighbouring elements (coalesced for ``inner == 1`` too) and each output's partial results
form a row of ``slices`` values that the next pass reduces the same way. The number of
slices is a function of ``(outer * inner, n)`` alone (``slices``), never of the launch
configuration or the device, so every result is deterministic: float sums equal the CPU's
within rounding (another order), integer sums, max and min exactly; argmax/argmin give the
first extreme index exactly (ties between slices go to the smaller index; NaN counts as the
extreme, as on the CPU). The element transform, combine and identity of every op are the
strings of ``kernel_table.REDUCE`` the CPU template compiles.
"""
import types

import numpy as np

from ..._core import reduce as _cpu
from ..._core.kernel_table import ARG_BETTER, REDUCE
from ...base import MXNetError
from ...ops.common import DEVICE_KERNELS
from ...ops.reduce import _CONTINUE
from .. import runtime
from ..casts import CTYPE, convert, work_dtype
from ..kernels import kernel
from . import device_generic

__all__ = ["reduce", "argreduce", "slices", "arg_best", "KERNELS", "ARG_KERNELS"]

THREADS = 1 << 18       # work items a pass aims for (an H100 holds 132 x 2048 threads)
PER_SLICE = 32          # the fewest elements one thread combines in a pass

_INPUTS = ("float32", "float64", "int8", "uint8", "int32", "int64")
_LIMITS = {"int8": ("INT8_MIN", "INT8_MAX"), "uint8": ("0", "UINT8_MAX"),
           "int32": ("INT32_MIN", "INT32_MAX"), "int64": ("INT64_MIN", "INT64_MAX")}
# C accumulator type -> the dtype of the arrays holding it (uint64 sums are stored as int64)
_ACC_DTYPE = {"float": "float32", "double": "float64", "uint64_t": "int64", "int8_t": "int8",
              "uint8_t": "uint8", "int32_t": "int32", "int64_t": "int64"}
_OP_NAMES = {i: op for op, i in _cpu.OP_IDS.items()}
_NO_CPP_LIMITS = """#ifndef INFINITY
#define INFINITY (mx_std::numeric_limits<float>::infinity())
#endif
"""
# NVRTC has no <stdint.h> limits: the integer identities of max/min from libcu++
_NO_CPP_LIMITS += "".join(
    f"#ifndef {name}\n#define {name} (mx_std::numeric_limits<{ctype}>::{end}())\n#endif\n"
    for name, ctype, end in (("INT8_MIN", "int8_t", "min"), ("INT8_MAX", "int8_t", "max"),
                             ("UINT8_MAX", "uint8_t", "max"), ("INT32_MIN", "int32_t", "min"),
                             ("INT32_MAX", "int32_t", "max"), ("INT64_MIN", "int64_t", "min"),
                             ("INT64_MAX", "int64_t", "max")))


def slices(m, n):
    """How many strided slices a pass cuts each of ``m`` outputs' ``n`` elements into (1: the
    final pass, one thread per output). Depends on the shape alone."""
    s = min(THREADS // max(m, 1), n // PER_SLICE)
    return s if s >= 4 else 1


def _final(acc):
    """C statements applying the final step (1: mean over ``count``, 2: square root)."""
    if acc == "uint64_t":           # signed division truncating toward zero (C++, MXNet)
        return "if (final == 1) a = (uint64_t)((int64_t)a / (int64_t)count);"
    if acc in ("float", "double"):
        return "if (final == 1) a = a / (A)count;\n        else if (final == 2) a = mx::sqrt(a);"
    return ""                       # integer max/min: no final step


def _reduce_kernel(op, dtype):
    is_float = dtype.startswith("float")
    spec = REDUCE[op][0 if is_float else 1]
    if spec is None:
        return None
    T = CTYPE[dtype]
    lo, hi = _LIMITS.get(dtype, ("", ""))
    acc, tr, cb, ident = (f.format(T=T, LO=lo, HI=hi) for f in spec)
    name = f"mxlite_reduce_{op}_{dtype}"
    code = f"""{_NO_CPP_LIMITS}
static __device__ {acc} {name}_tr({T} v) {{ return {tr}; }}
static __device__ {acc} {name}_cb({acc} a, {acc} b) {{ return {cb}; }}
extern "C" __global__ void {name}(const {T}* x, {acc}* y, mx_idx outer, mx_idx n,
                                  mx_idx inner, mx_idx slices, mx_idx final, mx_idx count) {{
    typedef {acc} A;
    MX_GRID_LOOP(i, outer * slices * inner) {{
        mx_idx j = i % inner, r = i / inner, s = r % slices, o = r / slices;
        const {T}* p = x + (o * n + s) * inner + j;
        const mx_idx step = slices * inner;
        A a = ({acc})({ident});
        for (mx_idx k = s; k < n; k += slices, p += step) a = {name}_cb(a, {name}_tr(*p));
        {_final(acc)}
        y[i] = a;
    }}
}}
"""
    return kernel("reduce", name, code), np.dtype(_ACC_DTYPE[acc])


def _arg_kernel(which, kind, dtype):
    """The ``first`` pass over the data (float16 is compared as float32) or the ``merge``
    pass over (value, index) partial results of argmax/argmin."""
    S, V = CTYPE[dtype], CTYPE[work_dtype(dtype)]
    name = f"mxlite_arg{which}_{kind}_{dtype}"
    if kind == "first":     # indices increase along a slice: only a better value replaces
        params, index, take = f"const {S}* x", "{k}", f"{name}_better(v, b)"
    else:                   # slices interleave: of equal values the smaller index wins
        params, index = f"const {S}* x, const int64_t* xi", "xi[(o * n + {k}) * inner + j]"
        take = f"{name}_better(v, b) || (!{name}_better(b, v) && vi < bi)"
    return kernel("argreduce", name, f"""
static __device__ bool {name}_better({V} v, {V} b) {{ return {ARG_BETTER[which]}; }}
extern "C" __global__ void {name}({params}, {V}* yv, int64_t* yi, mx_idx outer, mx_idx n,
                                  mx_idx inner, mx_idx slices) {{
    MX_GRID_LOOP(i, outer * slices * inner) {{
        mx_idx j = i % inner, r = i / inner, s = r % slices, o = r / slices;
        const {S}* p = x + (o * n + s) * inner + j;
        const mx_idx step = slices * inner;
        {V} b = {convert(dtype, work_dtype(dtype), "*p")};
        int64_t bi = {index.format(k="s")};
        p += step;
        for (mx_idx k = s + slices; k < n; k += slices, p += step) {{
            {V} v = {convert(dtype, work_dtype(dtype), "*p")};
            int64_t vi = {index.format(k="k")};
            if ({take}) {{
                b = v;
                bi = vi;
            }}
        }}
        yv[i] = b;
        yi[i] = bi;
    }}
}}
""")


# (op, input dtype) -> (Kernel, accumulator dtype); (which, kind, dtype) -> Kernel
KERNELS = {}
for _op in REDUCE:
    for _dt in _INPUTS:
        _k = _reduce_kernel(_op, _dt)
        if _k is not None:
            KERNELS[(_op, _dt)] = _k
ARG_KERNELS = {(w, kind, dt): _arg_kernel(w, kind, dt) for w in ("max", "min")
               for kind in ("first", "merge") for dt in _INPUTS + ("float16",)
               if kind == "first" or dt != "float16"}


def _i64(*values):
    return tuple(np.int64(v) for v in values)


def reduce(op_id, x, out, outer, n, inner, final=0, count=1):
    """``mxlite._core.reduce.reduce`` on the GPU: reduce C-contiguous ``x`` viewed as
    ``(outer, n, inner)`` over ``n`` into ``out`` ``(outer, inner)`` of the accumulator dtype,
    with the final step ``final`` (1: divide by ``count``, 2: square root)."""
    xp = runtime.namespace_of(x)
    op = _OP_NAMES.get(op_id)
    found = KERNELS.get((op, x.dtype.name))
    if found is None:
        raise MXNetError(f"reduce: no GPU kernel for op {op} on dtype {x.dtype}")
    if out.dtype != found[1] or x.size != outer * n * inner or out.size != outer * inner:
        raise MXNetError(f"reduce: arrays {x.dtype}{x.shape} -> {out.dtype}{out.shape} do not "
                         f"match (outer, n, inner) = ({outer}, {n}, {inner}) for op {op}")
    if final == 1 and count == 0 and found[1].kind != "f":
        raise MXNetError(f"reduce: an integer mean over no elements (op {op}, {x.dtype})")
    m = outer * inner
    if m == 0:
        return
    while True:
        k, acc = KERNELS[(op, x.dtype.name)]
        s = slices(m, n)
        if s == 1:
            xp.launch(k, m, x, out, *_i64(outer, n, inner, 1, final, count))
            return
        part = xp.empty(outer * s * inner, acc)
        xp.launch(k, m * s, x, part, *_i64(outer, n, inner, s, 0, count))
        x, n, op = part, s, _CONTINUE[op]


def arg_best(which, x, out, outer, n, inner):
    """The int64 index along ``n`` of the first maximum (``which`` 'max') or minimum of
    ``x`` ``(outer, n, inner)`` into ``out`` ``(outer, inner)``; NaN counts as the extreme."""
    xp = runtime.namespace_of(x)
    dtype = x.dtype.name
    if (which, "first", dtype) not in ARG_KERNELS:
        raise MXNetError(f"arg{which}: no GPU kernel for dtype {x.dtype}")
    m = outer * inner
    if m == 0:
        return
    if n == 0:
        raise MXNetError(f"arg{which}: empty reduction (outer {outer}, inner {inner})")
    values, index, work = x, None, work_dtype(dtype)
    while True:
        s = slices(m, n)
        yv = xp.empty(m * s, work)
        yi = out if s == 1 else xp.empty(m * s, np.int64)
        if index is None:
            xp.launch(ARG_KERNELS[(which, "first", dtype)], m * s, values, yv, yi,
                      *_i64(outer, n, inner, s))
        else:
            xp.launch(ARG_KERNELS[(which, "merge", work)], m * s, values, index, yv, yi,
                      *_i64(outer, n, inner, s))
        if s == 1:
            return
        values, index, n = yv, yi, s


def argreduce(which, x, out, outer, n, inner):
    """``mxlite._core.reduce.argreduce`` on the GPU (``which`` 0: argmax, 1: argmin)."""
    if which not in (0, 1):
        raise MXNetError(f"argreduce: bad selector {which}")
    arg_best(("max", "min")[which], x, out, outer, n, inner)


DEVICE_KERNELS[("gpu", _cpu.__name__)] = types.SimpleNamespace(reduce=reduce,
                                                               argreduce=argreduce)
device_generic("sum", "mean", "prod", "max", "min", "nansum", "nanprod", "norm", "sum_to",
               "argmax", "argmin", "argmax_channel")

from . import finite, optimizer     # noqa: E402,F401  (attach on import)
