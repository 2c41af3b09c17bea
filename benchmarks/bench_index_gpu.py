"""Index, scatter, sort, scan and product operators on a CUDA device: mxlite
(``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_index_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_index_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
mxlite's scatter-add is deterministic (a stable sort of the targets, then one thread per
run of equal targets); torch's ``index_add_`` and CuPy's ``scatter_add`` use float atomics.
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

ROWS, WIDTH, PICKS, TARGETS = 10 ** 6, 64, 10 ** 6, 10 ** 5


def _take_inputs(rng):
    return (rng.standard_normal((ROWS, WIDTH), dtype=np.float32),
            rng.integers(0, ROWS, PICKS))


def _scatter_inputs(rng):
    return (rng.standard_normal((PICKS, WIDTH), dtype=np.float32),
            rng.integers(0, TARGETS, PICKS))


def _scatter_cupy(cp, g, idx):
    import cupyx
    out = cp.zeros((TARGETS, WIDTH), cp.float32)
    cupyx.scatter_add(out, idx, g)
    return out


# name -> (host inputs from a Generator, mxlite call, torch call, cupy call); the calls take
# the inputs converted to their library (index arrays int64)
CASES = {
    "take 1e6 of (1e6, 64)": (
        _take_inputs, lambda x, i: mx.nd.take(x, i),
        lambda t, x, i: t.index_select(x, 0, i), lambda cp, x, i: cp.take(x, i, axis=0)),
    "take grad 1e6 -> 1e5 rows": (
        _scatter_inputs,
        lambda g, i: mx.nd._internal._take_grad(g, i, mx.nd.zeros((TARGETS, WIDTH),
                                                                  ctx=mx.gpu())),
        lambda t, g, i: t.zeros((TARGETS, WIDTH), device="cuda").index_add_(0, i, g),
        _scatter_cupy),
    "argsort 1e7 float32": (
        lambda rng: (rng.standard_normal(10 ** 7, dtype=np.float32),),
        lambda x: mx.nd.argsort(x, dtype="int64"), lambda t, x: t.argsort(x, stable=True),
        lambda cp, x: cp.argsort(x)),
    "cumsum (1e4, 1e4) axis=0": (
        lambda rng: (rng.standard_normal((10 ** 4, 10 ** 4), dtype=np.float32),),
        lambda x: mx.nd.cumsum(x, axis=0), lambda t, x: t.cumsum(x, 0),
        lambda cp, x: cp.cumsum(x, axis=0)),
    "dot (4096, 4096) float32": (
        lambda rng: (rng.standard_normal((4096, 4096), dtype=np.float32),) * 2,
        lambda a, b: mx.nd.dot(a, b), lambda t, a, b: t.matmul(a, b),
        lambda cp, a, b: cp.matmul(a, b)),
}


def backends(name):
    """{backend: a call that runs the case and waits for the result}."""
    make, mx_call, torch_call, cupy_call = CASES[name]
    import cupy as cp
    host = make(np.random.default_rng(0))
    nds = [mx.nd.array(h, dtype=h.dtype, ctx=mx.gpu()) for h in host]
    cps = [cp.asarray(h) for h in host]
    fns = {"mxlite": lambda: mx_call(*nds).wait_to_read()}

    def run_cupy():
        cupy_call(cp, *cps)
        cp.cuda.get_current_stream().synchronize()
    fns["cupy"] = run_cupy
    try:
        import torch
    except ImportError:
        return fns
    if torch.cuda.is_available():
        ts = [torch.as_tensor(h, device="cuda") for h in host]

        def run_torch():
            torch_call(torch, *ts)
            torch.cuda.synchronize()
        fns["torch"] = run_torch
    return fns


TITLE = "index, scatter, sort, scan and product ops on GPU, best of 10"


@needs_cuda
@pytest.mark.parametrize("backend", ["mxlite", "torch", "cupy"])
@pytest.mark.parametrize("name", list(CASES))
def test_index_gpu(benchmark, name, backend):
    fns = backends(name)
    if backend not in fns:
        pytest.skip(f"{backend} with CUDA is not installed")
    benchmark.group = f"{name} (GPU)"
    benchmark(fns[backend])


@needs_cuda
def test_take_grad_gpu_is_the_cpu_result():
    """The scatter-add timed is the CPU's, bit for bit (deterministic order)."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal((10 ** 5, 8), dtype=np.float32)
    idx = rng.integers(0, 100, 10 ** 5)
    res = [mx.nd._internal._take_grad(mx.nd.array(g, ctx=c), mx.nd.array(idx, dtype="int64",
                                                                         ctx=c),
                                      mx.nd.zeros((100, 8), ctx=c)).asnumpy()
           for c in (mx.cpu(), mx.gpu())]
    assert res[0].tobytes() == res[1].tobytes()


@needs_cuda
def test_index_gpu_ratio_table(capsys):
    """Print other / mxlite for every case."""
    rows = timings(CASES, backends)
    with capsys.disabled():
        print_ratios(TITLE, rows)


if __name__ == "__main__":
    if not has_cuda():
        sys.exit(f"no CUDA device: {runtime.unavailable_reason()}")
    print_ratios(TITLE, timings(CASES, backends))
