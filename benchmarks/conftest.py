"""pytest-benchmark glue: one case, one backend per test, grouped by case for comparison.

The benchmarks are not part of the test suite (``testpaths = tests``); run them with
``pytest benchmarks/bench_*.py``.
"""
import pytest

from cases import CASES, check_against_numpy

_built = {}      # the one case whose inputs are alive (1e8-element cases are large)


def _backends(key):
    if key not in _built:
        _built.clear()
        case = CASES[key]
        fns = case.make(case.size)
        check_against_numpy(fns, case.rtol)
        _built[key] = fns
    return _built[key]


@pytest.fixture
def run_case(benchmark):
    """``run_case(key, backend)`` times one backend of ``CASES[key]``; skips a missing one."""

    def run(key, backend):
        case = CASES[key]
        fns = _backends(key)
        if backend not in fns:
            reason = ("torch is not installed" if backend == "torch"
                      else "the mxlite operator is not registered yet")
            pytest.skip(reason)
        benchmark.group = case.name
        benchmark(fns[backend])
        median = benchmark.stats.stats.median
        if case.bytes_per_call:
            benchmark.extra_info["GB/s"] = round(case.bytes_per_call(case.size) / median / 1e9, 2)
        if case.flops_per_call:
            benchmark.extra_info["GFLOP/s"] = round(case.flops_per_call(case.size) / median / 1e9, 2)

    return run
