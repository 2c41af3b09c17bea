"""Element-wise operators and casts on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch
and CuPy, and ``add`` against the device-to-device copy bandwidth.

Run ``pytest benchmarks/bench_elemwise_gpu.py`` (pytest-benchmark timings, one group per
case, and printed tables) or ``python benchmarks/bench_elemwise_gpu.py`` for the tables
alone. Every case skips without a CUDA device (the host emulator of the tests is not timed).
Each call allocates its output and is timed to completion (stream synchronized).
Goals (issue 11): add of 1e8 float32 at >= 90% of the copy bandwidth; a 10-element add
costs no more per call than CuPy's.
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
from gpu_compare import best_time, has_cuda, needs_cuda, print_ratios, timings  # noqa: E402
from mxlite.cuda import runtime  # noqa: E402

N = 10 ** 8
# name -> (input shapes, dtype, operation on the inputs of any library: the arrays support
# the same operators; ``cast`` / ``sin`` take the library as the first argument)
CASES = {
    "add 1e8": ([(N,), (N,)], "float32", lambda lib, a, b: a + b),
    "add 10 (per call)": ([(10,), (10,)], "float32", lambda lib, a, b: a + b),
    "mul scalar 1e8": ([(N,)], "float32", lambda lib, a: a * 2.5),
    "add (1e4,1e4)+(1e4,)": ([(10 ** 4, 10 ** 4), (10 ** 4,)], "float32",
                             lambda lib, a, b: a + b),
    "add (1e4,1e4)+(1e4,1)": ([(10 ** 4, 10 ** 4), (10 ** 4, 1)], "float32",
                              lambda lib, a, b: a + b),
    "sin 1e8": ([(N,)], "float32", lambda lib, a: lib["sin"](a)),
    "add float16 1e8": ([(N,), (N,)], "float16", lambda lib, a, b: a + b),
    "cast float32->float16 1e8": ([(N,)], "float32", lambda lib, a: lib["half"](a)),
}


def _libraries():
    """{backend: (array maker from NumPy, library functions, synchronize)}."""
    import cupy as cp
    libs = {
        "mxlite": (lambda a: mx.nd.array(a, ctx=mx.gpu(), dtype=a.dtype),
                   {"sin": mx.nd.sin, "half": lambda a: a.astype("float16")},
                   mx.nd.waitall),
        "cupy": (cp.asarray, {"sin": cp.sin, "half": lambda a: a.astype(cp.float16)},
                 lambda: cp.cuda.get_current_stream().synchronize()),
    }
    try:
        import torch
    except ImportError:
        return libs
    if torch.cuda.is_available():
        libs["torch"] = (lambda a: torch.as_tensor(a, device="cuda"),
                         {"sin": torch.sin, "half": lambda a: a.half()},
                         torch.cuda.synchronize)
    return libs


def backends(name):
    """{backend: a call that runs the case and waits for the result}."""
    shapes, dtype, op = CASES[name]
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(s, dtype=np.float32).astype(dtype) for s in shapes]
    fns = {}
    for backend, (make, lib, sync) in _libraries().items():
        arrays = [make(a) for a in host]

        def run(op=op, lib=lib, arrays=arrays, sync=sync):
            op(lib, *arrays)
            sync()
        fns[backend] = run
    return fns


def copy_bandwidth_ratio():
    """(add 1e8 float32 in bytes per second) / (device-to-device copy of 1e8 float32)."""
    import cupy as cp
    src, dst = cp.ones(N, cp.float32), cp.empty(N, cp.float32)
    sync = cp.cuda.get_current_stream().synchronize

    def copy():
        dst.data.copy_from_device_async(src.data, src.nbytes)
        sync()
    t_copy = best_time(copy)
    t_add = best_time(backends("add 1e8")["mxlite"])
    return (3 * 4 * N / t_add) / (2 * 4 * N / t_copy), 2 * 4 * N / t_copy


TITLE = "element-wise on GPU, best of 10"


@needs_cuda
@pytest.mark.parametrize("backend", ["mxlite", "torch", "cupy"])
@pytest.mark.parametrize("name", list(CASES))
def test_elemwise_gpu(benchmark, name, backend):
    fns = backends(name)
    if backend not in fns:
        pytest.skip(f"{backend} with CUDA is not installed")
    benchmark.group = f"{name} (GPU)"
    benchmark(fns[backend])


@needs_cuda
def test_elemwise_gpu_ratio_table(capsys):
    """Print other / mxlite for every case, and add's share of the copy bandwidth."""
    rows = timings(CASES, backends)
    ratio, copy = copy_bandwidth_ratio()
    with capsys.disabled():
        print_ratios(TITLE, rows)
        print(f"add 1e8 float32: {ratio:.1%} of the copy bandwidth ({copy / 1e12:.2f} TB/s)")


if __name__ == "__main__":
    if not has_cuda():
        sys.exit(f"no CUDA device: {runtime.unavailable_reason()}")
    print_ratios(TITLE, timings(CASES, backends))
    ratio, copy = copy_bandwidth_ratio()
    print(f"add 1e8 float32: {ratio:.1%} of the copy bandwidth ({copy / 1e12:.2f} TB/s)")
