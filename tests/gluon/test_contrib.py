"""mxlite/gluon/contrib: the concurrent containers, Identity, the pixel shuffles (against
NumPy reshapes written here), SyncBatchNorm in one process (= BatchNorm), the contrib rnn
cells, and errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import nn
from mxlite.gluon.contrib import nn as cnn
from mxlite.gluon.contrib import rnn as crnn


@pytest.mark.parametrize("hybridize", [False, True])
def test_hybrid_concurrent_concatenates_its_children(hybridize):
    net = cnn.HybridConcurrent(axis=1)
    net.add(nn.Dense(3, in_units=4), cnn.Identity(), nn.Dense(2, in_units=4))
    net.initialize()
    if hybridize:
        net.hybridize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=(5, 4)))
    y = net(x).asnumpy()
    d1, d2 = list(net._children.values())[0], list(net._children.values())[2]
    want = np.concatenate([d1(x).asnumpy(), x.asnumpy(), d2(x).asnumpy()], axis=1)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_concurrent_runs_imperatively():
    net = cnn.Concurrent(axis=0)
    net.add(cnn.Identity(), cnn.Identity())
    x = mx.nd.arange(6).reshape((2, 3))
    np.testing.assert_array_equal(net(x).asnumpy(), np.concatenate([x.asnumpy()] * 2))


def _shuffled(x, f):
    """NumPy pixel shuffle: (N, C*prod f, *s) -> (N, C, *(s*f))."""
    n, cf, *space = x.shape
    d = len(f)
    c = cf // int(np.prod(f))
    y = x.reshape((n, c) + tuple(f) + tuple(space))
    order = (0, 1) + tuple(a for i in range(d) for a in (2 + d + i, 2 + i))
    return y.transpose(order).reshape((n, c) + tuple(s * k for s, k in zip(space, f)))


@pytest.mark.parametrize("block, factor, shape", [
    (cnn.PixelShuffle1D, 3, (2, 6, 5)),
    (cnn.PixelShuffle2D, (2, 3), (2, 12, 3, 4)),
    (cnn.PixelShuffle2D, 2, (1, 8, 2, 2)),
    (cnn.PixelShuffle3D, (2, 1, 2), (1, 8, 2, 3, 2))])
@pytest.mark.parametrize("hybridize", [False, True])
def test_pixel_shuffle_against_numpy(block, factor, shape, hybridize):
    net = block(factor)
    if hybridize:
        net.hybridize()
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    f = (factor,) * (len(shape) - 2) if isinstance(factor, int) else factor
    np.testing.assert_array_equal(net(mx.nd.array(x)).asnumpy(), _shuffled(x, f))


def test_pixel_shuffle_refuses_bad_factors():
    with pytest.raises(MXNetError, match="PixelShuffle2D: factor"):
        cnn.PixelShuffle2D((2, 0))
    with pytest.raises(MXNetError, match="PixelShuffle3D: factor"):
        cnn.PixelShuffle3D((2, 2))


def test_sync_batchnorm_in_one_process_is_batchnorm():
    x = mx.nd.array(np.random.default_rng(1).normal(size=(4, 3, 5, 5)))
    sync, plain = cnn.SyncBatchNorm(in_channels=3, num_devices=1), nn.BatchNorm(in_channels=3)
    for net in (sync, plain):
        net.initialize()
    with mx.autograd.record():
        a, b = sync(x), plain(x)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sync.running_mean.data().asnumpy(),
                               plain.running_mean.data().asnumpy(), rtol=1e-6)



def test_contrib_rnn_cells_are_gluon_rnn_s():
    assert crnn.LSTMPCell is mx.gluon.rnn.rnn_cell.LSTMPCell
    assert crnn.VariationalDropoutCell is mx.gluon.rnn.rnn_cell.VariationalDropoutCell
    assert mx.gluon.contrib.nn.HybridConcurrent is cnn.HybridConcurrent
