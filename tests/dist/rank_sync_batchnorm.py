"""Rank script: SyncBatchNorm over the ranks of a ``dist_sync`` job equals BatchNorm over
the whole batch (every rank's part stacked): outputs, moving statistics, and gradients of
the data (this rank's part), gamma and beta (summed over the ranks), to the second order.
Run with ``mpiexec -n N python rank_sync_batchnorm.py`` (tests/dist/test_sync_batchnorm.py).
"""
import numpy as np

import mxlite as mx
from rankrun import run_checks

PER_RANK = (3, 4, 5)       # this rank's batch: 3 items of 4 channels, 5 positions each


def whole_batch(n):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((PER_RANK[0] * n,) + PER_RANK[1:])
    head = rng.standard_normal(x.shape)
    gamma, beta = rng.uniform(0.5, 1.5, 4), rng.uniform(-1, 1, 4)
    return x, head, gamma, beta


def run(op, x, head, gamma, beta, **kw):
    """(y, moving mean, moving var, dx, dgamma, dbeta, d(sum of dx**2)/dx) in float64."""
    arrays = [mx.nd.array(a, dtype="float64") for a in (x, gamma, beta)]
    for a in arrays:
        a.attach_grad()
    mm, mv = mx.nd.zeros(4, dtype="float64"), mx.nd.ones(4, dtype="float64")
    with mx.autograd.record():
        y = op(*arrays, mm, mv, fix_gamma=False, **kw)
        (dx,) = mx.autograd.grad(y, [arrays[0]], head_grads=mx.nd.array(head, dtype="float64"),
                                 create_graph=True)
        penalty = (dx * dx).sum()
    penalty.backward()
    return [y.asnumpy(), mm.asnumpy(), mv.asnumpy(), dx.asnumpy(),
            arrays[0].grad.asnumpy(), arrays[1].grad.asnumpy(), arrays[2].grad.asnumpy()]


def check_sync_batchnorm_is_batchnorm_over_the_job():
    kv = mx.kv.create("dist_sync")
    n, rank = kv.num_workers, kv.rank
    x, head, gamma, beta = whole_batch(n)
    mine = slice(rank * PER_RANK[0], (rank + 1) * PER_RANK[0])
    got = run(mx.nd.contrib.SyncBatchNorm, x[mine], head[mine], gamma, beta, ndev=n, key="a")
    want = run(mx.nd.BatchNorm, x, head, gamma, beta)
    names = ["output", "moving_mean", "moving_var", "dx", "d2x", "d2gamma", "d2beta"]
    for name, g, w in zip(names, got, want):
        if name in ("output", "dx", "d2x"):
            w = w[mine]                 # this rank's items
        elif name in ("d2gamma", "d2beta"):
            total = mx.nd.array(g, dtype="float64")     # parameter gradients: summed
            kv.init(f"sum_{name}", mx.nd.zeros(g.shape, dtype="float64"))
            kv.pushpull(f"sum_{name}", total, out=total)
            g = total.asnumpy()
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=name)


def check_sync_sum_sums_over_the_ranks():
    kv = mx.kv.create("dist_sync")
    x = mx.nd.array([kv.rank + 1.0, 2.0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._sync_sum(x)
    y.backward(mx.nd.array([1.0, kv.rank], dtype="float64"))
    n = kv.num_workers
    np.testing.assert_array_equal(y.asnumpy(), [n * (n + 1) / 2, 2.0 * n])
    np.testing.assert_array_equal(x.grad.asnumpy(), [n, n * (n - 1) / 2])


if __name__ == "__main__":
    run_checks(globals(), mx.kv.create("dist_sync").rank)
