"""contrib.count_sketch's compiled bucket sums (mxlite/_core/sorting.pyx ``bucket_add``)
against the array path it replaces on the CPU (NumPy's unbuffered ``add.at``, still run for
other dtypes and devices): bit for bit, for buckets hit many times, float32 and float64,
rows over several threads; bad arguments are clear errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite._core import sorting as _k
from mxlite.ops import contrib_math as _contrib_math

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the op: test_contrib_math)


def _sketch(x, h, s, out_dim):
    return mx.nd.contrib.count_sketch(mx.nd.array(x, dtype=x.dtype), mx.nd.array(h),
                                      mx.nd.array(s, dtype=x.dtype), out_dim=out_dim).asnumpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows, d, out_dim", [(20000, 16, 4), (3, 50, 7), (1, 5, 1)])
def test_bucket_sums_match_add_at(dtype, rows, d, out_dim, monkeypatch):
    rng = np.random.default_rng(d)
    x = rng.normal(0, 100, (rows, d)).astype(dtype)
    h = rng.integers(0, out_dim, d).astype(np.float32)
    s = rng.choice([-1.0, 1.0], d).astype(dtype)
    got = _sketch(x, h, s, out_dim)
    monkeypatch.setattr(_contrib_math, "_SKETCH_DTYPES", ())            # the add.at path
    want = _sketch(x, h, s, out_dim)
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


def test_bad_arguments_are_clear_errors():
    x, out = np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)
    sign = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="bucket_add: idx 4 outside \\[0, 4\\)"):
        _k.bucket_add(x, np.array([0, 4, 1]), sign, out)
    with pytest.raises(ValueError, match="bucket_add: need idx and sign of 3"):
        _k.bucket_add(x, np.array([0, 1]), sign, out)
