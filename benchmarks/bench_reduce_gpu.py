"""Reductions, finiteness checks and an optimizer update on a CUDA device: mxlite
(``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_reduce_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_reduce_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
Goals (issue 11): sum, argmax and isfinite of 1e8 float32 at least as fast as the faster of
torch and CuPy.
"""
import numpy as np

from gpu_compare import benchmark_tests, case, main, mx, needs_cuda, normal

N = 10 ** 8
SQUARE = (10 ** 4, 10 ** 4)
# float32, standard normal
CASES = {
    "sum": case(normal((N,)), same=lambda lib, x: lib.sum(x)),
    "sum axis=0 (1e4, 1e4)": case(
        normal(SQUARE), mxlite=lambda nd, x: nd.sum(x, axis=0),
        torch=lambda t, x: t.sum(x, dim=0), cupy=lambda cp, x: cp.sum(x, axis=0)),
    "sum axis=1 (1e4, 1e4)": case(
        normal(SQUARE), mxlite=lambda nd, x: nd.sum(x, axis=1),
        torch=lambda t, x: t.sum(x, dim=1), cupy=lambda cp, x: cp.sum(x, axis=1)),
    "argmax": case(normal((N,)), mxlite=lambda nd, x: nd.argmax(x, axis=0),
                   torch=lambda t, x: t.argmax(x), cupy=lambda cp, x: cp.argmax(x)),
    "isfinite": case(normal((N,)), mxlite=lambda nd, x: nd.contrib.isfinite(x),
                     same=lambda lib, x: lib.isfinite(x)),
    "all_finite": case(normal((N,)), mxlite=lambda nd, x: nd.contrib.all_finite(x),
                       same=lambda lib, x: lib.isfinite(x).all()),
}
TITLE = "reductions on GPU, float32, best of 10"

test_reduce_gpu, test_reduce_gpu_ratio_table = benchmark_tests(CASES, TITLE)


@needs_cuda
def test_sum_gpu_is_the_float64_sum():
    """The value timed is right (float32 within rounding of the float64 sum)."""
    a = np.random.default_rng(3).standard_normal(10 ** 7).astype(np.float32)
    got = mx.nd.sum(mx.nd.array(a, ctx=mx.gpu())).asscalar()
    np.testing.assert_allclose(got, a.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)


if __name__ == "__main__":
    main(CASES, TITLE)
