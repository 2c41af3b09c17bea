"""oneDNN's pooling past 2**31 bytes: data of more than 2**29 float32 elements (byte offsets
past 32 bits, element counts below 2**31, so oneDNN takes them) gives on the far rows the
values NumPy computes there."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.ops import onednn

pytestmark = [pytest.mark.large,
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]

C, SIDE = 16, 6000                    # (1, 16, 6000, 6000) float32: 2.1 GiB
POOL = dict(kernel=(2, 2), stride=(2, 2), pad=(0, 0))


def _spy(monkeypatch, *names):
    """{name: calls oneDNN completed}: proves the oneDNN path ran, not the reference."""
    module, ran = onednn._load(), {n: 0 for n in names}

    def counting(name, real):
        def call(*args):
            real(*args)
            ran[name] += 1
        return call
    for n in names:
        monkeypatch.setattr(module, n, counting(n, getattr(module, n)))
    return ran


def _data():
    """Ones, with distinct values in the last two rows of every channel (the far end)."""
    x = mx.nd.ones((1, C, SIDE, SIDE))
    tail = np.random.default_rng(0).standard_normal((C, 2, SIDE)).astype(np.float32)
    x[0, :, -2:, :] = mx.nd.array(tail)
    return x, tail


def _windows(tail):
    """(C, SIDE // 2, 4): the 2x2 windows of the last two rows, in row-major window order."""
    return tail.reshape(C, 2, SIDE // 2, 2).transpose(0, 2, 1, 3).reshape(C, SIDE // 2, 4)


def test_max_and_avg_pooling_past_2_31_bytes(monkeypatch):
    ran = _spy(monkeypatch, "pool_forward")
    x, tail = _data()
    with onednn.enabled(True):
        ymax = mx.nd.Pooling(x, pool_type="max", **POOL)[0, :, -1, :].asnumpy()
        yavg = mx.nd.Pooling(x, pool_type="avg", **POOL)[0, :, -1, :].asnumpy()
    win = _windows(tail)
    np.testing.assert_array_equal(ymax, win.max(axis=2))
    np.testing.assert_allclose(yavg, win.mean(axis=2), rtol=1e-6, atol=1e-6)
    assert ran["pool_forward"] == 2


def test_max_scatter_and_avg_backward_past_2_31_bytes(monkeypatch):
    ran = _spy(monkeypatch, "pool_max_backward", "pool_avg_backward")
    x, tail = _data()
    n = SIDE // 2
    g = mx.nd.zeros((1, C, n, n))
    head = np.random.default_rng(1).standard_normal((C, n)).astype(np.float32)
    g[0, :, -1, :] = mx.nd.array(head)
    win = _windows(tail)
    with onednn.enabled(True):
        avg = mx.nd._internal._pool_backward(g, pool_type="avg", in_shape=(SIDE, SIDE),
                                             **POOL)[0, :, -2:, :].asnumpy()
        far = mx.nd._internal._pool_max_scatter(x, g, pool_type="max", out=x, **POOL)
        got = far[0, :, -2:, :].asnumpy()
    np.testing.assert_allclose(avg, np.repeat(np.repeat(head[:, None, :] / 4, 2, axis=1), 2,
                                              axis=2), rtol=1e-6)
    want = np.zeros((C, n, 4), np.float32)
    np.put_along_axis(want, win.argmax(axis=2)[..., None], head[..., None], axis=2)
    want = want.reshape(C, n, 2, 2).transpose(0, 2, 1, 3).reshape(C, 2, SIDE)
    np.testing.assert_array_equal(got, want)
    assert ran == {"pool_max_backward": 1, "pool_avg_backward": 1}
