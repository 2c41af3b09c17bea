"""Gather and scatter kernels shared by the GPU index, indexing, sorting and sequence ops.

Data movement has one kernel per element size (1, 2, 4, 8 bytes: any dtype is moved as raw
bytes, float16 and bool included); accumulation has one per dtype. Every index, size and
offset is 64-bit (``mx_idx``, ``long long``), so arrays beyond 2^32 elements index
correctly.

Scatter-adds are **deterministic** and bit-identical to the CPU: the flat target of every
source element is sorted stably (``lib.argsort``, a radix sort on the GPU), and one thread per
run of equal targets adds that run's values in source order, the order of the CPU loops and
of ``numpy.add.at``. No float atomics, so the result never depends on thread scheduling; the
cost is one sort of the int64 targets, and a run of many repeats of one target is added by
one thread.
"""
import numpy as np

from .. import casts as _casts
from ..kernels import kernel

__all__ = ["CTYPE", "CARRIER", "carrier_scalar", "check_range", "gather_flat", "segment_add",
           "scatter_last", "sorted_targets"]

# C type of each dtype (float16 as its 16 bits, bool as a byte)
CTYPE = {np.dtype(name): ctype for name, ctype in _casts.CTYPE.items()}
# the unsigned type that moves an element of each size
CARRIER = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "uint64_t"}
_CARRIER_NP = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
I64 = np.dtype(np.int64)


def carrier_scalar(value, dtype):
    """``value`` of ``dtype`` as the unsigned scalar of its size (kernels take raw bits)."""
    raw = np.array(value, dtype).tobytes()
    return np.frombuffer(raw, _CARRIER_NP[len(raw)])[0]


# ---- range check: how many values lie outside [lo, hi], and the first one ------------------
_CHECK = kernel("gather", "mxlite_check_range", """
extern "C" __global__ void mxlite_check_range(const long long* v, unsigned long long* res,
                                       long long lo, long long hi, mx_idx n) {
    MX_GRID_LOOP(i, n) {
        if (v[i] < lo || v[i] > hi) {
            atomicAdd(&res[0], 1ULL);
            atomicMin(&res[1], (unsigned long long)i);
        }
    }
}
""")


def check_range(xp, values, lo, hi):
    """(count, first position) of the int64 ``values`` outside [lo, hi]; (0, -1) if none.
    Reads two numbers back to the host: it synchronizes (the caller raises on a bad one)."""
    if values.size == 0:
        return 0, -1
    res = xp.from_host(np.array([0, np.iinfo(np.uint64).max], np.uint64))
    xp.launch(_CHECK, values.size, values, res, np.int64(lo), np.int64(hi),
              np.int64(values.size))
    count, first = (int(v) for v in xp.to_host(res))
    return count, (first if count else -1)


# ---- gather through flat offsets -----------------------------------------------------------
_GATHER = {size: kernel("gather", f"mxlite_gather_flat_{size}", f"""
extern "C" __global__ void mxlite_gather_flat_{size}(const {c}* src, const long long* idx,
                                                     {c}* out, mx_idx n) {{
    MX_GRID_LOOP(i, n) out[i] = src[idx[i]];
}}
""") for size, c in CARRIER.items()}


def gather_flat(xp, src, idx, out):
    """``out.flat[i] = src.flat[idx.flat[i]]`` (C-contiguous arrays of one dtype; int64
    ``idx`` inside ``src``)."""
    xp.launch(_GATHER[out.dtype.itemsize], out.size, src, idx, out, np.int64(out.size))


# ---- deterministic scatter-add over sorted flat targets ------------------------------------
def _segment_add_code(name, ctype, acc, load, store, step):
    return f"""
extern "C" __global__ void {name}(const {ctype}* src, const long long* order,
                                  const long long* target, {ctype}* out, mx_idx m) {{
    MX_GRID_LOOP(s, m) {{
        long long t = target[s];
        if (t < 0 || (s > 0 && target[s - 1] == t)) continue;   // not the start of a run
        {acc} a = {load};
        for (mx_idx r = s; r < m && target[r] == t; ++r) {step}
        out[t] = {store};
    }}
}}
"""


def _segment_kernels():
    ks = {}
    for dt, c in CTYPE.items():
        if dt == np.dtype(np.float16):
            continue
        if dt == np.dtype(np.bool_):        # numpy.add.at on bool is a logical or
            step = "a = (uint8_t)(a | (src[order[r]] != 0));"
        else:
            step = f"a = ({c})(a + src[order[r]]);"
        name = f"mxlite_segment_add_{dt.name}"
        ks[(dt, False)] = kernel("gather", name,
                                 _segment_add_code(name, c, c, "out[t]", "a", step))
    # float16: summed in float32 and rounded once (the gradients' rule), or rounded after every
    # addition (numpy.add.at on float16, which _getitem_scatter reproduces)
    steps = {False: "a += mx_half_to_float(src[order[r]]);",
             True: "a = mx_half_to_float(mx_float_to_half(a + mx_half_to_float(src[order[r]])));"}
    for each, step in steps.items():
        name = "mxlite_segment_add_float16" + ("_stepwise" if each else "")
        ks[(np.dtype(np.float16), each)] = kernel(
            "gather", name, _segment_add_code(name, "uint16_t", "float",
                                              "mx_half_to_float(out[t])",
                                              "mx_float_to_half(a)", step))
    return ks


_SEGMENT_ADD = _segment_kernels()


def sorted_targets(xp, targets):
    """(order, sorted targets): the stable sort of the flat int64 ``targets`` (the library's
    sort: radix on the GPU), so equal targets form runs in source order."""
    lib = xp.lib
    flat = targets.reshape(-1)
    order = lib.argsort(flat, kind="stable")
    return order, lib.take(flat, order)


def segment_add(xp, src, targets, out, round_each=False):
    """``out.flat[targets[j]] += src.flat[j]`` for every j, repeated targets accumulating in
    the order of j (a target below 0 is skipped). ``src`` and ``out`` C-contiguous, one
    dtype. float16 sums in float32 and rounds once, or after each addition with
    ``round_each`` (``numpy.add.at``'s float16 arithmetic)."""
    if src.size == 0:
        return
    order, sorted_t = sorted_targets(xp, targets)
    half = out.dtype == np.dtype(np.float16)
    k = _SEGMENT_ADD[(out.dtype, bool(round_each) and half)]
    xp.launch(k, src.size, src, order, sorted_t, out, np.int64(src.size))


# ---- scatter where the last write wins ------------------------------------------------------
_SCATTER_LAST = {size: kernel("gather", f"mxlite_scatter_last_{size}", f"""
extern "C" __global__ void mxlite_scatter_last_{size}(const {c}* src, const long long* order,
                                               const long long* target, {c}* out, mx_idx m) {{
    MX_GRID_LOOP(s, m) {{
        // the last source of a run of equal targets (the sort is stable): the last write
        if (s + 1 < m && target[s + 1] == target[s]) continue;
        out[target[s]] = src[order[s]];
    }}
}}
""") for size, c in CARRIER.items()}


def scatter_last(xp, src, targets, out):
    """``out.flat[targets[j]] = src.flat[j]`` in the order of j: where targets repeat, the
    last write wins (NumPy's assignment order), on any number of threads."""
    if src.size == 0:
        return
    order, sorted_t = sorted_targets(xp, targets)
    xp.launch(_SCATTER_LAST[out.dtype.itemsize], src.size, src, order, sorted_t, out,
              np.int64(src.size))

