"""Random numbers on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_random_gpu.py`` (pytest-benchmark timings, one group per
case, and a printed table of ratios) or ``python benchmarks/bench_random_gpu.py`` for the
table alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
Goal (issue 11): randint of 1e8 int64 at least as fast as the faster of torch and CuPy.
"""
import numpy as np

from gpu_compare import benchmark_tests, case, main, mx, needs_cuda

N = 10 ** 8


def _randint(low, high):
    """A case drawing N int64 integers in [low, high)."""
    return case(
        mxlite=lambda nd: nd.random.randint(low, high, shape=(N,), dtype="int64",
                                                ctx=mx.gpu()),
        torch=lambda t: t.randint(low, high, (N,), dtype=t.int64, device="cuda"),
        cupy=lambda cp: cp.random.randint(low, high, size=N, dtype=cp.int64))


CASES = {
    "randint int64 [0, 1000)": _randint(0, 1000),
    "randint int64 [0, 2^40)": _randint(0, 2 ** 40),
    "uniform float32": case(
        mxlite=lambda nd: nd.random.uniform(shape=(N,), ctx=mx.gpu()),
        torch=lambda t: t.rand((N,), device="cuda"),
        cupy=lambda cp: cp.random.random(N, dtype=cp.float32)),
    "normal float32": case(
        mxlite=lambda nd: nd.random.normal(shape=(N,), ctx=mx.gpu()),
        torch=lambda t: t.randn((N,), device="cuda"),
        cupy=lambda cp: cp.random.standard_normal(N, dtype=cp.float32)),
}
TITLE = f"random on GPU, {N:.0e} values, best of 10"

test_random_gpu, test_random_gpu_ratio_table = benchmark_tests(CASES, TITLE)


@needs_cuda
def test_randint_gpu_matches_the_cpu():
    """The numbers timed are the CPU's (same seed on both devices)."""
    mx.random.seed(5)
    cpu = mx.nd.random.randint(-2 ** 63, 2 ** 63, shape=(10 ** 6,), dtype="int64").asnumpy()
    mx.random.seed(5)
    got = mx.nd.random.randint(-2 ** 63, 2 ** 63, shape=(10 ** 6,), dtype="int64",
                               ctx=mx.gpu()).asnumpy()
    np.testing.assert_array_equal(got, cpu)


if __name__ == "__main__":
    main(CASES, TITLE)
