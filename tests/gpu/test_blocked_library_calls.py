"""The GPU paths that split one array-library call into blocks because the library fails on
the whole of a large array (found by the large-tensor table on an H100): CuPy's integer
matmul past 65535 tiles of its launch grid, its argsort's int64 scratch for 2**32 elements
(over 70 GB), and its scan past 2**31 elements. Here the block sizes are made tiny, so the
blocked code runs on small arrays and must give the CPU's results exactly."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.cuda.namespace import GpuNamespace
from mxlite.cuda.ops import sorting

pytestmark = pytest.mark.gpu


def _both(fn, *arrays, **kwargs):
    outs = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        args = [mx.nd.array(a, ctx=ctx, dtype=a.dtype) for a in arrays]
        outs.append(fn(*args, **kwargs).asnumpy())
    return outs


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float32"])
def test_integer_products_in_slabs(rng, monkeypatch, dtype):
    monkeypatch.setattr(GpuNamespace, "_INT_MATMUL_SLAB", 3)
    a = rng.integers(-9, 9, (2, 7, 5)).astype(dtype)
    b = rng.integers(-9, 9, (2, 5, 8)).astype(dtype)
    cpu, gpu = _both(mx.nd.batch_dot, a, b)
    np.testing.assert_array_equal(gpu, cpu)
    cpu, gpu = _both(mx.nd.dot, a[0], b[0])
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("ascending", [True, False])
def test_argsort_and_topk_in_blocks_of_rows(rng, monkeypatch, ascending):
    monkeypatch.setattr(sorting, "_ARGSORT_BLOCK", 20)
    x = rng.integers(0, 4, (11, 3, 7)).astype(np.int8)          # ties: stability shows
    for axis in (1, 2, -1, 0):
        cpu, gpu = _both(mx.nd.argsort, x, axis=axis, is_ascend=ascending)
        np.testing.assert_array_equal(gpu, cpu)
    cpu, gpu = _both(mx.nd.topk, x.astype(np.float32), axis=2, k=3, is_ascend=ascending,
                     ret_typ="indices")
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("shape, axis, dtype", [((6000,), 0, "int8"), ((2, 5000, 3), 1, "int32"),
                                                ((1, 4500, 1), 1, "float64")])
def test_long_cumsum_in_blocks(rng, monkeypatch, shape, axis, dtype):
    monkeypatch.setattr(sorting, "_SCAN_BLOCK", 1000)
    x = rng.integers(-100, 100, shape).astype(dtype)         # int8 sums wrap
    cpu, gpu = _both(mx.nd.cumsum, x, axis=axis, dtype=dtype)
    np.testing.assert_array_equal(gpu, cpu)
