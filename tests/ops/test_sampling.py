"""Per-element samplers (``_sample_*``), nd.random's array-parameter dispatch and float16
draws in blocks (``mxlite/ops/sampling.py``, ``mxlite/ops/random.py``)."""
import numpy as np
import pytest
from scipy import stats

import mxlite as mx
from mxlite._core import random as _k
from mxlite.base import MXNetError
from mxlite.ops import random as _random


# ---- float16 draws in blocks ------------------------------------------------------------------
@pytest.mark.parametrize("dist,params", [("uniform", dict(low=-2.0, high=3.0)),
                                         ("normal", dict(loc=1.0, scale=2.0)),
                                         ("exponential", dict(lam=2.0)),
                                         ("gamma", dict(alpha=2.5, beta=0.5)),
                                         ("poisson", dict(lam=4.0))])
def test_float16_blocks_equal_the_whole_float32_draw_rounded(monkeypatch, dist, params):
    """A float16 output larger than a block is drawn block by block (no full float32
    temporary); its samples are still the float32 draw of the whole, rounded."""
    monkeypatch.setattr(_random, "F16_BLOCK", 2 * _k.CHUNK)
    n = 5 * _k.CHUNK + 7
    mx.random.seed(11)
    half = getattr(mx.nd.random, dist)(shape=(n,), dtype="float16", **params).asnumpy()
    mx.random.seed(11)
    full = getattr(mx.nd.random, dist)(shape=(n,), dtype="float32", **params).asnumpy()
    np.testing.assert_array_equal(half, full.astype(np.float16))


def test_float16_block_draw_allocates_one_block(monkeypatch):
    """The float32 scratch of a float16 draw is one block, not the output's size."""
    monkeypatch.setattr(_random, "F16_BLOCK", 2 * _k.CHUNK)
    from mxlite.device import cpu as _cpu
    sizes, orig = [], _cpu.empty

    def spy(shape, dtype=None, *a, **kw):
        if np.dtype(dtype) == np.float32:
            sizes.append(int(np.prod(shape)))
        return orig(shape, dtype, *a, **kw)
    monkeypatch.setattr(_cpu, "empty", spy)
    mx.nd.random.uniform(shape=(7 * _k.CHUNK,), dtype="float16").wait_to_read()
    assert sizes and max(sizes) <= 2 * _k.CHUNK
