"""contrib.box_decode's compiled kernel (mxlite/_core/boxes.pxi, in the resample extension)
against the array path it replaces on the CPU (``mxlite.ops.detection._decode_block``, the
path other devices run): bit for bit for float16, float32 and float64, both anchor formats,
with and without the exponents' cap, NaN, batches over several threads; bad arguments are
clear errors."""
from types import SimpleNamespace

import numpy as np
import pytest

from mxlite._core import resample as _k
from mxlite.base import MXNetError
from mxlite.device import cpu as _cpu
from mxlite.ops import detection as _detection
from mxlite.ops.registry import Attrs

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the op: test_detection.py)

CPU = SimpleNamespace(kernels="cpu", xp=_cpu)


def _attrs(fmt, clip, stds=(0.1, 0.2, 0.5, 0.3)):
    return Attrs([("format", fmt), ("clip", clip)] +
                 [(f"std{k}", s) for k, s in enumerate(stds)])


def _same_bits(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    bits = np.dtype(f"u{got.dtype.itemsize}")
    same = got.view(bits) == want.view(bits)
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    assert (same | both_nan).all()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("fmt", ["corner", "center"])
@pytest.mark.parametrize("clip", [-1.0, 0.8, 1e-50])
def test_kernel_matches_array_path(dtype, fmt, clip):
    rng = np.random.default_rng(len(dtype))
    data = rng.normal(0, 2, (3, 20000, 4)).astype(dtype)
    anchors = rng.uniform(0, 50, (1, 20000, 4)).astype(dtype)
    data[0, :3] = np.nan
    got = np.empty_like(data)
    _detection._box_decode_compute(CPU, [data, anchors], [got], _attrs(fmt, clip))
    want = np.empty_like(data)
    _detection._decode_block(CPU, data, anchors, want, _attrs(fmt, clip))
    _same_bits(got, want)


def test_bad_arguments_are_clear_errors():
    d, a = np.zeros((2, 3, 4), np.float32), np.zeros((1, 3, 4), np.float32)
    with pytest.raises(MXNetError, match="box_decode: data, anchors and out must share"):
        _k.box_decode(d, a.astype(np.float64), np.zeros_like(d), [1.0] * 4, None, True)
    with pytest.raises(MXNetError, match="box_decode: need anchors"):
        _k.box_decode(d, np.zeros((1, 2, 4), np.float32), np.zeros_like(d), [1.0] * 4, None,
                      True)
    with pytest.raises(MXNetError, match="box_decode: out must be a C-contiguous"):
        _k.box_decode(d, a, np.zeros((2, 3, 8), np.float32)[:, :, ::2], [1.0] * 4, None, True)
