"""Index, scatter, sort, scan and product operators on a CUDA device: mxlite
(``ctx=mx.gpu()``) against torch and CuPy.

Run ``pytest benchmarks/bench_index_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_index_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its output and is timed to completion (stream synchronized).
mxlite's scatter-add is deterministic (a stable sort of the targets, then one thread per
run of equal targets); torch's ``index_add_`` and CuPy's ``scatter_add`` use float atomics.
"""
import numpy as np

from gpu_compare import benchmark_tests, case, main, mx, needs_cuda, normal

ROWS, WIDTH, PICKS, TARGETS = 10 ** 6, 64, 10 ** 6, 10 ** 5


def _take_inputs(rng):
    return (rng.standard_normal((ROWS, WIDTH), dtype=np.float32),
            rng.integers(0, ROWS, PICKS))


def _scatter_inputs(rng):
    return (rng.standard_normal((PICKS, WIDTH), dtype=np.float32),
            rng.integers(0, TARGETS, PICKS))


def _take_grad_mx(nd, g, idx):
    return nd._internal._take_grad(g, idx, nd.zeros((TARGETS, WIDTH), ctx=mx.gpu()))


def _scatter_cupy(cp, g, idx):
    import cupyx
    out = cp.zeros((TARGETS, WIDTH), cp.float32)
    cupyx.scatter_add(out, idx, g)
    return out


# index arrays are int64
CASES = {
    "take 1e6 of (1e6, 64)": case(
        _take_inputs, mxlite=lambda nd, x, i: nd.take(x, i),
        torch=lambda t, x, i: t.index_select(x, 0, i), cupy=lambda cp, x, i: cp.take(x, i, axis=0)),
    "take grad 1e6 -> 1e5 rows": case(
        _scatter_inputs, mxlite=_take_grad_mx,
        torch=lambda t, g, i: t.zeros((TARGETS, WIDTH), device="cuda").index_add_(0, i, g),
        cupy=_scatter_cupy),
    "argsort 1e7 float32": case(
        normal((10 ** 7,)), mxlite=lambda nd, x: nd.argsort(x, dtype="int64"),
        torch=lambda t, x: t.argsort(x, stable=True), cupy=lambda cp, x: cp.argsort(x)),
    "cumsum (1e4, 1e4) axis=0": case(
        normal((10 ** 4, 10 ** 4)), mxlite=lambda nd, x: nd.cumsum(x, axis=0),
        torch=lambda t, x: t.cumsum(x, 0), cupy=lambda cp, x: cp.cumsum(x, axis=0)),
    "dot (4096, 4096) float32": case(
        lambda rng: (rng.standard_normal((4096, 4096), dtype=np.float32),) * 2,
        mxlite=lambda nd, a, b: nd.dot(a, b), same=lambda lib, a, b: lib.matmul(a, b)),
}
TITLE = "index, scatter, sort, scan and product ops on GPU, best of 10"

test_index_gpu, test_index_gpu_ratio_table = benchmark_tests(CASES, TITLE)


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


if __name__ == "__main__":
    main(CASES, TITLE)
