"""_histogram's compiled uniform bins (mxlite/_core/histogram.pxi, in the sorting extension)
against the array path it replaces on the CPU (``mxlite.ops.array_ops._hist_compute`` with
the kernel's dtypes switched off: the path the GPU runs) and against NumPy: the same counts for
every dtype it takes, values at the range's ends, outside it, NaN, more values than one
thread's chunk; bad arguments are clear errors."""
from types import SimpleNamespace

import numpy as np
import pytest

from mxlite._core import sorting as _k
from mxlite.device import cpu as _cpu
from mxlite.ops import array_ops as _array_ops
from mxlite.ops.registry import Attrs

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the op: test_array_ops.py)

CPU = SimpleNamespace(kernels="cpu", xp=_cpu)


def _counts(data, bins, lo, hi):
    counts, edges = np.empty(bins, np.int64), np.empty(bins + 1, np.float64)
    attrs = Attrs([("bin_cnt", bins), ("range", (lo, hi))])
    _array_ops._hist_compute(CPU, [data], [counts, edges], attrs)
    return counts


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("bins, lo, hi", [(10, 0, 10), (7, -3.5, 20.25), (1, 2, 2), (300, -1, 1)])
def test_counts_match_array_path_and_numpy(dtype, bins, lo, hi, monkeypatch):
    rng = np.random.default_rng(bins)
    x = rng.uniform(-40, 60, 300_000)
    if np.dtype(dtype).kind == "f":
        x[:4] = [np.nan, lo, hi, np.nextafter(hi, 99)]
    x = x.astype(dtype)
    got = _counts(x, bins, lo, hi)
    monkeypatch.setattr(_array_ops, "_HIST_KINDS", "")           # the array path
    np.testing.assert_array_equal(got, _counts(x, bins, lo, hi))
    lo_w, hi_w = _array_ops._hist_range(Attrs([("range", (lo, hi))]))
    finite = x[~np.isnan(x.astype(np.float64))]
    np.testing.assert_array_equal(got, np.histogram(finite.astype(np.float64), bins,
                                                    (lo_w, hi_w))[0])


def test_bad_arguments_are_clear_errors():
    counts = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match="uniform_histogram: data must be"):
        _k.uniform_histogram(np.zeros(3, np.float16), counts, 0.0, 1.0)
    with pytest.raises(ValueError, match="uniform_histogram: counts must be"):
        _k.uniform_histogram(np.zeros(3), counts.astype(np.int32), 0.0, 1.0)
    with pytest.raises(ValueError, match="need lo < hi"):
        _k.uniform_histogram(np.zeros(3), counts, 1.0, 1.0)
