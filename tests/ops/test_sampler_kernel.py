"""The compiled gather of the bilinear sampler (mxlite/_core/sampler.pxi, in the resample
extension: BilinearSampler, _bilinear_sampler_d, the deformable convolutions) against the
array path it replaces on the CPU (``mxlite.ops.spatial._sample_compute`` with any other
device's kernels, the path the GPU runs): bit for bit for points inside, on the border of
and outside the image, every derivative order, float32 and float64, batches over several
threads; bad arguments are clear errors."""
from types import SimpleNamespace

import numpy as np
import pytest

from mxlite._core import resample as _k
from mxlite.base import MXNetError
from mxlite.device import cpu as _cpu
from mxlite.ops import spatial as _spatial

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the ops: test_spatial.py)

COMPILED = SimpleNamespace(kernels="cpu", xp=_cpu)
ARRAYS = SimpleNamespace(kernels="array path", xp=_cpu)


def _same_bits(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def _run(rctx, data, grid, dx, dy):
    out = np.empty(data.shape[:2] + grid.shape[2:], data.dtype)
    _spatial._sample_compute(dx, dy)(rctx, [data, grid], [out], None)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dx, dy", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("shape, points", [((3, 5, 9, 11), (13, 17)), ((1, 1, 2, 3), (4, 1)),
                                           ((2, 40, 16, 16), (32, 32))])
def test_gather_matches_array_path(dtype, dx, dy, shape, points):
    rng = np.random.default_rng(shape[1] + 10 * dx + dy)
    data = rng.normal(size=shape).astype(dtype)
    grid = rng.uniform(-1.3, 1.3, (shape[0], 2) + points).astype(dtype)   # some outside
    grid[0, :, 0, 0] = (1.0, -1.0)                                         # on the border
    _same_bits(_run(COMPILED, data, grid, dx, dy), _run(ARRAYS, data, grid, dx, dy))


def test_bad_arguments_are_clear_errors():
    x = np.zeros((2, 3, 10), np.float32)
    idx, wt, out = np.zeros((4, 2, 5), np.int64), np.zeros((4, 2, 5), np.float32), \
        np.zeros((2, 3, 5), np.float32)
    with pytest.raises(MXNetError, match="bilinear_gather: index must lie in \\[0, 10\\)"):
        _k.bilinear_gather(x, idx + 10, wt, out)
    with pytest.raises(MXNetError, match="share float32 or float64"):
        _k.bilinear_gather(x, idx, wt.astype(np.float64), out)
    with pytest.raises(MXNetError, match="need index and weight"):
        _k.bilinear_gather(x, idx[:3].copy(), wt[:3].copy(), out)
    with pytest.raises(MXNetError, match="x must be a C-contiguous 3-D"):
        _k.bilinear_gather(x[:, :, ::2], idx, wt, out)
