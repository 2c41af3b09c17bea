"""Debug operators: contrib.isfinite/isinf/isnan, all_finite and hardmax against NumPy.

    pytest benchmarks/bench_debug.py                 # pytest-benchmark, grouped by case
    python benchmarks/bench_debug.py [--quick]       # a table of ratios to NumPy

Output widths differ: mxlite returns 1/0 in the input's dtype (float32: 4 bytes per element,
MXNet's contract) while ``np.isfinite`` returns bool (1 byte). So each test is compared
with raw ``np.isfinite`` *and* with ``np.isfinite(a).astype(np.float32)``, NumPy's way to
the same output. ``mxnet-style`` runs MXNet 1.x's Python composition (``data == data`` and
``abs(data) != inf``, combined with ``logical_and``) on mxlite's own kernels; ``mxnet 1.x``
is the real thing, timed when ``import mxnet`` works (MXNet 1.9.1 needs NumPy < 1.24, so
run this file from a virtual environment holding both, with the checkout on PYTHONPATH).
"""
import os
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import mx  # noqa: E402  (puts the checkout on sys.path)

try:            # the real MXNet 1.x, when installed (it needs NumPy < 1.24: use its own venv)
    import mxnet
except Exception:                                   # noqa: BLE001 (any import failure)
    mxnet = None

SIZES = {"1e6": 10 ** 6, "1e7": 10 ** 7, "1e8": 10 ** 8}
TESTS = ("isfinite", "isinf", "isnan")
NUMPY = {"isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan}


def mxnet_style(test, x):
    """MXNet 1.x's python/mxnet/ndarray/contrib.py definitions."""
    if test == "isfinite":
        return mx.nd.broadcast_logical_and(x.abs() != np.inf, x == x)
    if test == "isinf":
        return x.abs() == np.inf
    return x != x


_inputs = {}      # one input alive at a time (the 1e8 one is 400 MB)


def float_input(n):
    """float32 normals with 0.1% infinities and NaNs spread through them."""
    if n not in _inputs:
        _inputs.clear()
        rng = np.random.default_rng(0)
        a = rng.standard_normal(n, dtype=np.float32)
        k = max(n // 1000, 3)
        a[rng.integers(0, n, k)] = np.inf
        a[rng.integers(0, n, k)] = -np.inf
        a[rng.integers(0, n, k)] = np.nan
        _inputs[n] = (a, mx.nd.array(a))
    return _inputs[n]


def elementwise_backends(test, n):
    """{backend: callable} for one element-wise test on n float32 elements."""
    a, x = float_input(n)
    out = mx.nd.empty(x.shape, dtype="float32")
    op = getattr(mx.nd.contrib, test)
    ref = NUMPY[test]
    fns = {
        "mxlite": lambda: op(x),
        "mxlite out=": lambda: op(x, out=out),
        "numpy bool": lambda: ref(a),
        "numpy float32": lambda: ref(a).astype(np.float32),
        "mxnet-style": lambda: mxnet_style(test, x),
    }
    if mxnet is not None:
        mx_op, mx_x = getattr(mxnet.nd.contrib, test), mxnet.nd.array(a)
        fns["mxnet 1.x"] = lambda: _mxnet_wait(mx_op(mx_x))
    return fns


def _mxnet_wait(result):
    result.wait_to_read()       # MXNet computes asynchronously
    return result


def all_finite_backends(n, count=1):
    """all_finite over ``count`` finite arrays of n // count elements (the common case)."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(n // count, dtype=np.float32) for _ in range(count)]
    handles = [mx.nd.array(g) for g in arrays]
    fns = {
        "mxlite": lambda: mx.nd.contrib.all_finite(*handles),
        "numpy": lambda: all(np.isfinite(g).all() for g in arrays),
        "mxnet-style": lambda: [mxnet_style("isfinite", h).min() for h in handles],
    }
    if mxnet is not None:
        mx_arrays = [mxnet.nd.array(g) for g in arrays]
        fns["mxnet 1.x"] = lambda: _mxnet_wait(mxnet.nd.multi_all_finite(*mx_arrays,
                                                                         num_arrays=count))
    return fns


def hardmax_numpy(a, axis=-1):
    out = np.zeros_like(a)
    np.put_along_axis(out, np.expand_dims(np.argmax(a, axis=axis), axis), 1, axis=axis)
    return out


def hardmax_backends(shape=(1024, 1000), axis=-1):
    a = np.random.default_rng(2).standard_normal(shape, dtype=np.float32)
    x = mx.nd.array(a)
    return {
        "mxlite": lambda: mx.nd.contrib.hardmax(x, axis=axis),
        "numpy": lambda: hardmax_numpy(a, axis),
    }


def _np(r):
    return r.asnumpy() if hasattr(r, "asnumpy") else np.asarray(r)     # mxlite or mxnet


def check(fns, want):
    """Every backend gives NumPy's answer ``want`` (as 1/0 values) before it is timed."""
    for backend, fn in fns.items():
        got = _np(fn()).astype(np.float64).reshape(np.shape(want))
        np.testing.assert_array_equal(got, np.asarray(want, np.float64),
                                      err_msg=f"{backend} disagrees")


# ---- pytest-benchmark ------------------------------------------------------------------------
_checked = set()


@pytest.mark.parametrize("backend", ["mxlite", "mxlite out=", "numpy bool", "numpy float32",
                                     "mxnet-style", "mxnet 1.x"])
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("test", TESTS)
def test_elementwise(benchmark, test, size, backend):
    n = SIZES[size]
    fns = elementwise_backends(test, n)
    if (test, n) not in _checked:
        check(fns, NUMPY[test](float_input(n)[0]))
        _checked.add((test, n))
    if backend not in fns:
        pytest.skip("mxnet is not installed")
    benchmark.group = f"{test} {size} float32"
    benchmark(fns[backend])
    benchmark.extra_info["GB/s read"] = round(4 * n / benchmark.stats.stats.median / 1e9, 2)


@pytest.mark.parametrize("backend", ["mxlite", "numpy", "mxnet-style", "mxnet 1.x"])
@pytest.mark.parametrize("count", [1, 100])
def test_all_finite(benchmark, count, backend):
    fns = all_finite_backends(10 ** 7, count)
    if backend not in fns:
        pytest.skip("mxnet is not installed")
    benchmark.group = f"all_finite 1e7 float32 in {count} array(s)"
    benchmark(fns[backend])


@pytest.mark.parametrize("backend", ["mxlite", "numpy"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_hardmax(benchmark, axis, backend):
    fns = hardmax_backends(axis=axis)
    check({"mxlite": fns["mxlite"]}, fns["numpy"]())
    benchmark.group = f"hardmax (1024, 1000) float32 axis={axis}"
    benchmark(fns[backend])


# ---- a table of ratios -----------------------------------------------------------------------
def best_time(fn, repeat=7, min_s=0.05):
    """Seconds per call: the best of ``repeat`` samples (timeit's advice: the others measure
    the machine's other load, not the code), each sample at least ``min_s`` long."""
    number, samples = 1, []
    while True:                                    # calls per sample: at least min_s long
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= min_s or number >= 1 << 16:
            break
        number *= 2
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return min(samples)


def _row(name, fns, base="mxlite"):
    times = {b: best_time(fn) for b, fn in fns.items()}
    cells = "  ".join(f"{b} {times[b] * 1e3:8.3f} ms ({times[b] / times[base]:5.2f}x)"
                      for b in fns)
    print(f"{name:<32} {cells}", flush=True)


def main(argv):
    quick = "--quick" in argv
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"cpu count {os.cpu_count()}, OMP_NUM_THREADS={threads}; each time is followed by "
          "(its time / mxlite's): above 1x mxlite is faster")
    for test in TESTS:
        for size, n in SIZES.items():
            if quick and n > 10 ** 7:
                continue
            fns = elementwise_backends(test, n)
            check(fns, NUMPY[test](float_input(n)[0]))
            _row(f"{test} {size} float32", fns)
    for count in (1, 100):
        _row(f"all_finite 1e7 in {count} array(s)", all_finite_backends(10 ** 7, count))
    for axis in (-1, 0):
        fns = hardmax_backends(axis=axis)
        check({"mxlite": fns["mxlite"]}, fns["numpy"]())
        _row(f"hardmax (1024, 1000) axis={axis}", fns)


if __name__ == "__main__":
    main(sys.argv[1:])
