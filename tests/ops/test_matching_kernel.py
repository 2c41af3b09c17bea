"""contrib.bipartite_matching's compiled greedy matching (mxlite/_core/matching.pxi, in the
sorting extension) against the array path it replaces on the CPU
(``mxlite.ops.detection._greedy_match``, which other devices run): the same markers for
random score matrices with ties, NaN, both orders, thresholds, topk, every float dtype,
batches over several threads; bad arguments are clear errors."""
from types import SimpleNamespace

import numpy as np
import pytest

from mxlite._core import sorting as _k
from mxlite.device import cpu as _cpu
from mxlite.ops import detection as _detection

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the op: test_detection.py)

COMPILED = SimpleNamespace(kernels="cpu", xp=_cpu)
ARRAYS = SimpleNamespace(kernels="array path", xp=_cpu)


def _markers(rctx, h, attrs):
    b, n, m = h.shape
    rows, cols = np.full((b, n), -1, np.int64), np.full((b, m), -1, np.int64)
    _detection._match_block(rctx, h, attrs, rows, cols)
    return rows, cols


def _scores(rng, shape, dtype):
    """Scores on a coarse grid (many ties), some NaN."""
    h = rng.integers(-4, 5, shape) / 4.0
    h[rng.random(shape) < 0.05] = np.nan
    return h.astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("is_ascend, threshold, topk", [
    (False, -1e-12, -1), (False, 0.3, -1), (True, 0.5, -1), (False, -2.0, 2), (True, 9.0, 1)])
@pytest.mark.parametrize("shape", [(3000, 4, 4), (40, 7, 3), (5, 2, 9), (1, 30, 30)])
def test_kernel_matches_array_path(dtype, is_ascend, threshold, topk, shape):
    h = _scores(np.random.default_rng(shape[1] * 13 + shape[2]), shape, dtype)
    attrs = SimpleNamespace(is_ascend=is_ascend, threshold=threshold, topk=topk)
    got, want = _markers(COMPILED, h, attrs), _markers(ARRAYS, h, attrs)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert (got[0] >= 0).any() or threshold > 1           # the cases do match something


def test_bad_arguments_are_clear_errors():
    h = np.zeros((2, 3, 4), np.float32)
    rows, cols = np.full((2, 3), -1, np.int64), np.full((2, 4), -1, np.int64)
    with pytest.raises(ValueError, match="greedy_match: scores must be"):
        _k.greedy_match(h.astype(np.float16), rows, cols, 0.0, False, 3)
    with pytest.raises(ValueError, match="greedy_match: rows must be .* shape \\(2, 3\\)"):
        _k.greedy_match(h, rows[:1], cols, 0.0, False, 3)
    with pytest.raises(ValueError, match="greedy_match: cols must be"):
        _k.greedy_match(h, rows, cols.astype(np.int32), 0.0, False, 3)
    with pytest.raises(ValueError, match="limit must be in \\[0, 3\\]"):
        _k.greedy_match(h, rows, cols, 0.0, False, 4)
