"""Element-wise operators and casts on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch
and CuPy, and ``add`` against the device-to-device copy bandwidth.

Run ``pytest benchmarks/bench_elemwise_gpu.py`` (pytest-benchmark timings, one group per
case, and printed tables) or ``python benchmarks/bench_elemwise_gpu.py`` for the tables
alone. Every case skips without a CUDA device (the host emulator of the tests is not timed).
Each call allocates its output and is timed to completion (stream synchronized).
Goals (issue 11): add of 1e8 float32 at >= 90% of the copy bandwidth; a 10-element add
costs no more per call than CuPy's.
"""
from gpu_compare import backends, benchmark_tests, best_time, case, main, normal

N = 10 ** 8


def _add(lib, a, b):
    return a + b


def _half(lib, a):
    return a.astype("float16")


# every library's arrays share these operators; torch casts with ``half``
CASES = {
    "add 1e8": case(normal((N,), (N,)), same=_add),
    "add 10 (per call)": case(normal((10,), (10,)), same=_add),
    "mul scalar 1e8": case(normal((N,)), same=lambda lib, a: a * 2.5),
    "add (1e4,1e4)+(1e4,)": case(normal((10 ** 4, 10 ** 4), (10 ** 4,)), same=_add),
    "add (1e4,1e4)+(1e4,1)": case(normal((10 ** 4, 10 ** 4), (10 ** 4, 1)), same=_add),
    "sin 1e8": case(normal((N,)), same=lambda lib, a: lib.sin(a)),
    "add float16 1e8": case(normal((N,), (N,), dtype="float16"), same=_add),
    "cast float32->float16 1e8": case(normal((N,)), same=_half,
                                      torch=lambda lib, a: a.half()),
}
TITLE = "element-wise on GPU, best of 10"


def copy_bandwidth():
    """A line: add 1e8 float32's bytes per second as a share of a device-to-device copy of
    1e8 float32, and the copy's rate."""
    import cupy as cp
    src, dst = cp.ones(N, cp.float32), cp.empty(N, cp.float32)
    sync = cp.cuda.get_current_stream().synchronize

    def copy():
        dst.data.copy_from_device_async(src.data, src.nbytes)
        sync()
    t_copy = best_time(copy)
    t_add = best_time(backends(CASES["add 1e8"])["mxlite"])
    ratio, copy_rate = (3 * 4 * N / t_add) / (2 * 4 * N / t_copy), 2 * 4 * N / t_copy
    return f"add 1e8 float32: {ratio:.1%} of the copy bandwidth ({copy_rate / 1e12:.2f} TB/s)"


test_elemwise_gpu, test_elemwise_gpu_ratio_table = benchmark_tests(CASES, TITLE, copy_bandwidth)

if __name__ == "__main__":
    main(CASES, TITLE, copy_bandwidth)
