"""Reductions, finiteness checks and an optimizer update on a CUDA device: mxlite
(``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_reduce_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_reduce_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
Goals (issue 11): sum, argmax and isfinite of 1e8 float32 at least as fast as the faster of
torch and CuPy.
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
# name -> (size, mxlite call, torch call, cupy call), each taking the input array of its
# library (float32, standard normal; 2-D cases are (1e4, 1e4))
CASES = {
    "sum": (N, lambda x: mx.nd.sum(x), lambda t, x: t.sum(x), lambda cp, x: cp.sum(x)),
    "sum axis=0 (1e4, 1e4)": (
        (10 ** 4, 10 ** 4), lambda x: mx.nd.sum(x, axis=0), lambda t, x: t.sum(x, dim=0),
        lambda cp, x: cp.sum(x, axis=0)),
    "sum axis=1 (1e4, 1e4)": (
        (10 ** 4, 10 ** 4), lambda x: mx.nd.sum(x, axis=1), lambda t, x: t.sum(x, dim=1),
        lambda cp, x: cp.sum(x, axis=1)),
    "argmax": (N, lambda x: mx.nd.argmax(x, axis=0), lambda t, x: t.argmax(x),
               lambda cp, x: cp.argmax(x)),
    "isfinite": (N, lambda x: mx.nd.contrib.isfinite(x), lambda t, x: t.isfinite(x),
                 lambda cp, x: cp.isfinite(x)),
    "all_finite": (N, lambda x: mx.nd.contrib.all_finite(x),
                   lambda t, x: t.isfinite(x).all(), lambda cp, x: cp.isfinite(x).all()),
}


def backends(name):
    """{backend: a call that runs the case and waits for the result}."""
    shape, mx_call, torch_call, cupy_call = CASES[name]
    import cupy as cp
    data = cp.random.standard_normal(shape, dtype=cp.float32)
    x = mx.nd.array(cp.asnumpy(data), ctx=mx.gpu())
    fns = {"mxlite": lambda: mx_call(x).wait_to_read()}

    def run_cupy():
        cupy_call(cp, data)
        cp.cuda.get_current_stream().synchronize()
    fns["cupy"] = run_cupy
    try:
        import torch
    except ImportError:
        return fns
    if torch.cuda.is_available():
        t = torch.as_tensor(cp.asnumpy(data), device="cuda")

        def run_torch():
            torch_call(torch, t)
            torch.cuda.synchronize()
        fns["torch"] = run_torch
    return fns


TITLE = "reductions on GPU, float32, best of 10"


@needs_cuda
@pytest.mark.parametrize("backend", ["mxlite", "torch", "cupy"])
@pytest.mark.parametrize("name", list(CASES))
def test_reduce_gpu(benchmark, name, backend):
    fns = backends(name)
    if backend not in fns:
        pytest.skip(f"{backend} with CUDA is not installed")
    benchmark.group = f"{name} (GPU)"
    benchmark(fns[backend])


@needs_cuda
def test_sum_gpu_is_the_float64_sum():
    """The value timed is right (float32 within rounding of the float64 sum)."""
    a = np.random.default_rng(3).standard_normal(10 ** 7).astype(np.float32)
    got = mx.nd.sum(mx.nd.array(a, ctx=mx.gpu())).asscalar()
    np.testing.assert_allclose(got, a.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)


@needs_cuda
def test_reduce_gpu_ratio_table(capsys):
    """Print other / mxlite for every case (the table the goals refer to)."""
    rows = timings(CASES, backends)
    with capsys.disabled():
        print_ratios(TITLE, rows)


if __name__ == "__main__":
    if not has_cuda():
        sys.exit(f"no CUDA device: {runtime.unavailable_reason()}")
    print_ratios(TITLE, timings(CASES, backends))
