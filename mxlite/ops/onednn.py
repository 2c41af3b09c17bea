"""oneDNN under the heavy CPU operators: finding the library, and the one place that chooses,
per call, between a oneDNN primitive and the reference kernel.

oneDNN (the ``onednn-cpu-gomp`` wheel, the library MXNet's and torch's CPU builds use for the
same kernels) is optional at import: ``mxlite/_core/dnnl`` links against nothing, and
imports once ``mxlite._core.load_onednn`` has loaded ``libdnnl`` with global symbols from
that wheel's files (or ``$MXLITE_ONEDNN_LIBRARY``). Without it every op runs its Cython
reference kernel.

The choice (``primitives``) is oneDNN when all of these hold, else the reference kernel:

* oneDNN loaded, and not switched off: ``MXLITE_ONEDNN=0``, or ``MXLITE_DETERMINISTIC=1``
  (MXNet's ``MXNET_ENFORCE_DETERMINISM=1`` too)
  (oneDNN picks its kernels by the CPU's instruction set and may split reductions by the
  thread count, so its float32 sums can differ in the last bits between machines and
  thread counts; the reference kernels give the same bits for any thread count);
* the arrays are on the CPU, C-contiguous, float32 or bfloat16 (bfloat16 operands with
  float32 accumulation: ``work_dtype``; float16 is computed in float32 as everywhere);
* every array has fewer than 2**31 elements: the reference kernels index with int64 at any
  size and the large-tensor table proves them past 2**32 elements; oneDNN is proven here
  past 2**31 bytes per operand (tests/large/test_onednn_offsets.py), not past 2**31
  elements, so larger arrays stay on the proven kernels;
* the problem is large enough to gain from oneDNN (``worth_it``: a primitive call has a
  fixed cost of a few hundred microseconds on busy cores);
* oneDNN accepts the problem: a primitive it refuses (``Refused``) falls back too.

``tests/ops/test_onednn.py`` compares every oneDNN path with the reference kernel.

Weights kept in oneDNN's layout (opt-in, ``keep_weights`` or ``MXLITE_ONEDNN_WEIGHT_CACHE_MB``):
a convolution reorders its weight into the blocked layout its primitive wants on every call.
With a byte budget set, the weight of a Gluon ``Parameter`` is reordered once per version of
the parameter instead, and the copy kept (least recently used out past the budget). The
version is the NDArray's, bumped by every write through mxlite (operators, ``out=``,
``x[...] = ``, optimizers, ``set_data``, kvstore pulls); a buffer handed out for writes
mxlite does not see (``__array__`` without a copy, DLPack) is never kept. The budget is 0 by
default: a kept copy is a second copy of every weight (measured: ResNet-50 inference at
batch 1, 11-16% less time for 87-91 MB more memory; benchmarks/bench_onednn_weights.py),
and a training step reads each weight version once per pass anyway.
"""
import contextlib
import itertools
import os
import weakref

import numpy as np

from ..base import BFLOAT16, MXNetError
from .common import compute_dtype

__all__ = ["available", "primitives", "run", "enabled", "status", "work_dtype",
           "keep_weights", "track", "untrack", "weight_stamp"]

_LIMIT = 1 << 31
_F32 = np.dtype(np.float32)
_BF16 = BFLOAT16              # None without ml_dtypes (compare only when it is not None)
_state = {"module": None, "why": None, "on": None, "any_size": False}


def _load():
    if _state["module"] is not None or _state["why"] is not None:
        return _state["module"]
    from .. import _core
    if not _core.load_onednn():
        _state["why"] = _core.onednn_missing
        return None
    try:
        from .._core import dnnl
    except ImportError as e:         # built without oneDNN's headers
        _state["why"] = f"mxlite was built without its oneDNN kernels: {e}"
        return None
    # with freed memory kept in the process (mxlite.device.memory), scratch is freed after
    # each call and reused from the heap: kept per thread, it would be a second copy
    from ..device import memory
    dnnl.set_scratch_keep(0 if memory.configured else 64 << 20)
    _state["module"] = dnnl
    mb = os.environ.get("MXLITE_ONEDNN_WEIGHT_CACHE_MB")
    if mb:
        try:
            keep_weights(float(mb) * (1 << 20))
        except ValueError:
            raise MXNetError("MXLITE_ONEDNN_WEIGHT_CACHE_MB must be a number of megabytes, "
                             f"got {mb!r}") from None
    return dnnl


def _switched_on():
    if _state["on"] is None:
        _state["on"] = (os.environ.get("MXLITE_ONEDNN", "1") != "0"
                        and os.environ.get("MXLITE_DETERMINISTIC", "0") != "1"
                        and os.environ.get("MXNET_ENFORCE_DETERMINISM", "0") != "1")
    return _state["on"]


def switched_on():
    """False under ``MXLITE_ONEDNN=0`` or ``MXLITE_DETERMINISTIC=1`` (and within
    ``enabled(False)``)."""
    return _switched_on()


def available():
    """True when the oneDNN library and mxlite's primitives over it are loaded."""
    return _load() is not None


def status():
    """A line saying whether oneDNN runs and why not (for bug reports and the benchmarks)."""
    module = _load()
    if module is None:
        return _state["why"]
    v = ".".join(map(str, module.version()))
    return f"oneDNN {v}" + ("" if _switched_on() else
                            " loaded, switched off (MXLITE_ONEDNN=0 or MXLITE_DETERMINISTIC=1)")


@contextlib.contextmanager
def enabled(flag, any_size=None):
    """Within the block, oneDNN is used (``True``, where available) or not (``False``):
    for tests that compare its results with the reference kernels. ``any_size=True``: for
    small problems too (``worth_it`` says yes to all), so tests can use small shapes
    (None keeps the current setting)."""
    before = _state["on"], _state["any_size"]
    _state["on"] = bool(flag)
    if any_size is not None:
        _state["any_size"] = bool(any_size)
    try:
        yield
    finally:
        _state["on"], _state["any_size"] = before


def work_dtype(xp, dtype):
    """The dtype a oneDNN-backed op computes in for outputs of ``dtype``: bfloat16 itself
    where oneDNN will run it (bfloat16 operands, float32 accumulation inside the primitive),
    else what the reference kernels compute in (float32 for float16 and bfloat16). A
    bfloat16 problem oneDNN then refuses is computed by the caller in float32
    (``conv._widened``)."""
    dtype = np.dtype(dtype)
    if _BF16 is not None and dtype == _BF16 and getattr(xp, "name", None) == "cpu" \
            and _switched_on() and _load() is not None:
        return dtype
    return compute_dtype(dtype)


def primitives(xp, *arrays, contiguous=True):
    """The oneDNN module for a call on ``arrays`` (None entries skipped), or None where the
    reference kernel must run (see the module docstring). ``contiguous=False``: the
    function takes strided views (it checks their strides itself)."""
    if getattr(xp, "name", None) != "cpu" or not _switched_on():
        return None
    module = _load()
    if module is None:
        return None
    first = arrays[0].dtype
    if first != _F32 and (_BF16 is None or first != _BF16):
        return None
    for a in arrays:
        if a is not None and (a.dtype != first or a.size >= _LIMIT
                              or (contiguous and not a.flags.c_contiguous)):
            return None
    return module


def _per_row(a):
    """The elements of one leading-axis row of ``a`` (a weight's fan-in)."""
    return a.size // a.shape[0] if a.shape and a.shape[0] else 0


# Each function's work (multiply-adds, or elements for pooling) from its arrays, and the
# least work oneDNN takes: a primitive call costs 0.03 ms on idle cores and up to 0.3 ms
# on busy ones (its reorders and OpenMP regions each wake the threads), so small problems
# run faster on the reference kernels. The thresholds are crossovers measured on 2 busy
# cores (benchmarks/bench_onednn_small.py): a 2**24-MAC convolution took 0.6x the time on
# the reference, a 2**27 one 4-5x on oneDNN; max pooling crossed over between 2**15 and
# 2**18 elements. BLAS products run on one thread (below 2**30 MACs: mxlite.device.blas),
# which leaves no BLAS thread spinning beside oneDNN's.
_WORK = {
    "conv_forward": (lambda x, w, b, y: y.size * _per_row(w), 1 << 25),
    "conv_backward_data": (lambda gy, w, gx: gy.size * _per_row(w), 1 << 25),
    "conv_backward_weights": (lambda x, gy, gw: gy.size * _per_row(gw), 1 << 25),
    "matmul": (lambda a, b, c: c.size * a.shape[-1], 1 << 22),
    "pool_forward": (lambda x, y: x.size, 1 << 17),
    "pool_max_backward": (lambda x, h, gx: x.size, 1 << 17),
    "pool_avg_backward": (lambda h, gx: gx.size, 1 << 17),
    "softmax_backward": (lambda y, g, dx: dx.size, 1 << 17),
    "lrn_forward": (lambda x, y: x.size, 1 << 12),
}


# the functions that may read a kept weight copy, and which of their arrays is the weight
_WEIGHT_ARGUMENT = {"conv_forward": 1, "conv_backward_data": 1}


def worth_it(function, arrays):
    """False when ``function``'s problem is too small to gain from oneDNN (``_WORK``)."""
    work, least = _WORK.get(function, (None, 0))
    return work is None or _state["any_size"] or work(*arrays) >= least


def run(xp, function, arrays, *args, contiguous=True):
    """Run oneDNN's ``function(*arrays, *args)`` when ``primitives`` allows it and the problem
    is large enough (``worth_it``); True when it ran, False when the reference kernel must
    (oneDNN off, a small problem, or oneDNN refusing it)."""
    module = primitives(xp, *arrays, contiguous=contiguous)
    if module is None or not worth_it(function, arrays):
        return False
    kwargs = {}
    if _tracked and function in _WEIGHT_ARGUMENT:
        stamp = weight_stamp(arrays[_WEIGHT_ARGUMENT[function]])
        if stamp is not None:
            kwargs["stamp"] = stamp
    try:
        getattr(module, function)(*arrays, *args, **kwargs)
    except module.Refused:
        return False
    return True


# ---- weights kept in oneDNN's layout (opt-in; see the module docstring) ----------------------
# id(buffer) -> (weak reference to the buffer, its NDArray's version list, serial); serials
# are never reused, so a kept copy of a dead buffer can never match a new one at its address
_tracked = {}
_serials = itertools.count(1)
_kept = {"bytes": 0}


def keep_weights(nbytes):
    """Keep up to ``nbytes`` of weights in oneDNN's layout across calls (0: none, the
    default); returns the previous budget."""
    before = _kept["bytes"]
    _kept["bytes"] = max(0, int(nbytes))
    module = _load()
    if module is not None:
        module.set_weight_cache_bytes(_kept["bytes"])
    return before


def keeping_weights():
    """True when a weight budget is set (``keep_weights``)."""
    return _kept["bytes"] > 0


def track(array):
    """Let convolutions keep ``array``'s buffer (an NDArray: a parameter's weight) in
    oneDNN's layout, once per version (nothing while no budget is set)."""
    data = array._data
    if not _kept["bytes"] or not isinstance(data, np.ndarray):
        return
    key = id(data)
    entry = _tracked.get(key)
    if entry is not None and entry[0]() is data and (entry[1] is array._version
                                                     or entry[2] == 0):     # untracked
        return
    _tracked[key] = (weakref.ref(data, lambda _, k=key: _tracked.pop(k, None)),
                     array._version, next(_serials))


def untrack(data):
    """Never keep a copy of buffer ``data`` again (it was handed out for writes mxlite does
    not see: its versions no longer tell its changes)."""
    entry = _tracked.get(id(data))
    if entry is not None and entry[0]() is data:
        _tracked[id(data)] = (entry[0], [-1], 0)        # serial 0: never kept


def weight_stamp(w):
    """``(serial, version)`` of weight ``w`` (a tracked buffer, or a view of one), or None."""
    if not _tracked:
        return None
    for a in (w, w.base):
        entry = _tracked.get(id(a)) if a is not None else None
        if entry is not None and entry[0]() is a:
            return None if entry[2] == 0 else (entry[2], entry[1][0])
    return None
