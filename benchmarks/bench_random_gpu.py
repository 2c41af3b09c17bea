"""Random numbers on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_random_gpu.py`` (pytest-benchmark timings, one group per
case, and a printed table of ratios) or ``python benchmarks/bench_random_gpu.py`` for the
table alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
Goal (issue 11): randint of 1e8 int64 at least as fast as the faster of torch and CuPy.
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):           # run from a checkout without installing
    if path not in sys.path:
        sys.path.insert(0, path)

import mxlite as mx  # noqa: E402
from gpu_compare import has_cuda, needs_cuda, print_ratios, timings  # noqa: E402
from mxlite.cuda import runtime  # noqa: E402

N = 10 ** 8
# name -> (mxlite call, torch call, cupy call), each taking n
CASES = {
    "randint int64 [0, 1000)": (
        lambda n: mx.nd.random.randint(0, 1000, shape=(n,), dtype="int64", ctx=mx.gpu()),
        lambda torch, n: torch.randint(0, 1000, (n,), dtype=torch.int64, device="cuda"),
        lambda cp, n: cp.random.randint(0, 1000, size=n, dtype=cp.int64)),
    "randint int64 [0, 2^40)": (
        lambda n: mx.nd.random.randint(0, 2 ** 40, shape=(n,), dtype="int64", ctx=mx.gpu()),
        lambda torch, n: torch.randint(0, 2 ** 40, (n,), dtype=torch.int64, device="cuda"),
        lambda cp, n: cp.random.randint(0, 2 ** 40, size=n, dtype=cp.int64)),
    "uniform float32": (
        lambda n: mx.nd.random.uniform(shape=(n,), ctx=mx.gpu()),
        lambda torch, n: torch.rand((n,), device="cuda"),
        lambda cp, n: cp.random.random(n, dtype=cp.float32)),
    "normal float32": (
        lambda n: mx.nd.random.normal(shape=(n,), ctx=mx.gpu()),
        lambda torch, n: torch.randn((n,), device="cuda"),
        lambda cp, n: cp.random.standard_normal(n, dtype=cp.float32)),
}


def backends(name, n=N):
    """{backend: a call that draws and waits for the result}."""
    mx_call, torch_call, cupy_call = CASES[name]
    import cupy as cp
    fns = {}

    def run_mx():
        mx_call(n).wait_to_read()
    fns["mxlite"] = run_mx

    def run_cupy():
        cupy_call(cp, n)
        cp.cuda.get_current_stream().synchronize()
    fns["cupy"] = run_cupy
    try:
        import torch
    except ImportError:
        return fns
    if torch.cuda.is_available():
        def run_torch():
            torch_call(torch, n)
            torch.cuda.synchronize()
        fns["torch"] = run_torch
    return fns


TITLE = f"random on GPU, {N:.0e} values, best of 10"


@needs_cuda
@pytest.mark.parametrize("backend", ["mxlite", "torch", "cupy"])
@pytest.mark.parametrize("name", list(CASES))
def test_random_gpu(benchmark, name, backend):
    fns = backends(name)
    if backend not in fns:
        pytest.skip(f"{backend} with CUDA is not installed")
    benchmark.group = f"{name} 1e8 (GPU)"
    benchmark(fns[backend])


@needs_cuda
def test_randint_gpu_matches_the_cpu():
    """The numbers timed are the CPU's (same seed on both devices)."""
    mx.random.seed(5)
    cpu = mx.nd.random.randint(-2 ** 63, 2 ** 63, shape=(10 ** 6,), dtype="int64").asnumpy()
    mx.random.seed(5)
    got = mx.nd.random.randint(-2 ** 63, 2 ** 63, shape=(10 ** 6,), dtype="int64",
                               ctx=mx.gpu()).asnumpy()
    np.testing.assert_array_equal(got, cpu)


@needs_cuda
def test_random_gpu_ratio_table(capsys):
    """Print other / mxlite for every case (the table the goal refers to)."""
    rows = timings(CASES, backends)
    with capsys.disabled():
        print_ratios(TITLE, rows)


if __name__ == "__main__":
    if not has_cuda():
        sys.exit(f"no CUDA device: {runtime.unavailable_reason()}")
    print_ratios(TITLE, timings(CASES, backends))
