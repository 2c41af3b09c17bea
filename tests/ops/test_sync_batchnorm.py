"""contrib.SyncBatchNorm in one process is BatchNorm (values, moving statistics, gradients);
ndev > 1 outside an MPI job is refused. The job itself: tests/dist/test_sync_batchnorm.py."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


@pytest.mark.parametrize("train", [True, False])
def test_one_process_is_batchnorm(train):
    rng = np.random.default_rng(0)
    x, head = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    results = []
    for op in (mx.nd.contrib.SyncBatchNorm, mx.nd.BatchNorm):
        data, gamma = mx.nd.array(x), mx.nd.array([1.0, 2.0, 0.5])
        data.attach_grad()
        gamma.attach_grad()
        mm, mv = mx.nd.zeros(3), mx.nd.ones(3)
        with mx.autograd.record(train_mode=train):
            y, mean, rstd = op(data, gamma, mx.nd.zeros(3), mm, mv, fix_gamma=False,
                               output_mean_var=True)
        y.backward(mx.nd.array(head))
        results.append([a.asnumpy() for a in (y, mean, rstd, mm, mv, data.grad, gamma.grad)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_devices_of_one_process_cannot_synchronise():
    x = mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match="ndev=2"):
        with mx.autograd.train_mode():
            mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3),
                                        mx.nd.ones(3), ndev=2, key="k")
