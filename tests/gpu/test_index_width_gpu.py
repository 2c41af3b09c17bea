"""The GPU index-width benchmark's 32-bit variant (benchmarks/bench_index_width_gpu.py) must
compute what the 64-bit kernels compute, so its timings compare the same arithmetic; on the
host emulator in CI, on a CUDA device where there is one."""
import os
import sys

import numpy as np
import pytest

import mxlite as mx

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks")
pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, BENCHMARKS)
    try:
        import bench_index_width_gpu
        yield bench_index_width_gpu
    finally:
        sys.path.remove(BENCHMARKS)


def test_the_32_bit_variant_gives_the_same_results(bench):
    digests = bench.check()
    assert len(digests) == 9
    differ = {name: pair for name, pair in digests.items() if pair[0] != pair[1]}
    assert not differ, differ


def test_the_32_bit_variant_narrows_the_index_parameters(bench, monkeypatch):
    narrowed = []
    original = bench._narrow

    def spy(kernel, args):
        out = original(kernel, args)
        narrowed.append(sum(isinstance(a, np.int32) for a in out))
        return out
    monkeypatch.setattr(bench, "_narrow", spy)
    with bench.index_type_32(), mx.gpu(0):
        y = mx.nd.ones((5,)) + mx.nd.ones((5,))
        assert y.asnumpy().tolist() == [2.0] * 5
    assert narrowed and all(n >= 1 for n in narrowed)
    fill = bench.kernels._FAMILIES["fill"]["mxlite_fill_1"]     # (y, v, mx_idx n)
    assert bench._narrow(fill, [None, np.uint8(1), np.int64(7)])[2].dtype == np.int32
    with pytest.raises(OverflowError):
        bench._narrow(fill, [None, np.uint8(1), np.int64(2 ** 31)])
