"""oneDNN past 2**31 bytes: operands of more than 2**29 float32 elements (byte offsets past
32 bits; mxlite hands oneDNN arrays of up to 2**31 elements, larger ones go to the reference
kernels) give the values NumPy computes on the far rows."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.ops import onednn

pytestmark = [pytest.mark.large,
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]


def test_matmul_with_an_operand_past_2_31_bytes():
    rows = (1 << 20) + 3
    a = np.empty((rows, 640), np.float32)          # 2.5 GiB
    a[:] = np.arange(640, dtype=np.float32) / 640
    a[-3:] = np.random.default_rng(0).standard_normal((3, 640))
    b = np.random.default_rng(1).standard_normal((640, 4)).astype(np.float32)
    out = mx.nd.dot(mx.nd.array(a), mx.nd.array(b)).asnumpy()
    np.testing.assert_allclose(out[-3:], a[-3:].astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out[0], a[0].astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_convolution_with_operands_past_2_31_bytes():
    n, c, side = 1, 16, 6000                        # 2.1 GiB in, 2.1 GiB out
    x = mx.nd.ones((n, c, side, side))
    x[0, :, -1, -2:] = mx.nd.array(np.arange(c * 2, dtype=np.float32).reshape(c, 2))
    w = mx.nd.array(np.random.default_rng(2).standard_normal((c, c, 1, 1)))
    with onednn.enabled(True):
        y = mx.nd.Convolution(x, w, kernel=(1, 1), num_filter=c, no_bias=True)
    wn = w.asnumpy()[:, :, 0, 0].astype(np.float64)
    far = x[0, :, -1, -2:].asnumpy().astype(np.float64)          # (c, 2)
    np.testing.assert_allclose(y[0, :, -1, -2:].asnumpy(), wn @ far, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y[0, :, 0, 0].asnumpy(), wn.sum(axis=1), rtol=1e-4, atol=1e-4)
