"""Rank script: ``Trainer(kvstore='dist_sync')`` trains data-parallel.

Each of the N ranks trains a small Gluon net (initialized from a rank-dependent seed, so
the Trainer's first step must broadcast rank 0's weights) on its 1/N of every batch; the
weights must be the same on every rank and equal (within float32 tolerance) to one
process training on the whole batches. Launched by tests/gluon/test_trainer_dist.py.
"""
import os
import sys

import numpy as np

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dist"))
from rankrun import run_checks  # noqa: E402

BATCH, STEPS = 8, 4


def net_and_data(seed):
    mx.random.seed(seed)
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(6, activation="tanh", in_units=5), nn.Dense(2, in_units=6))
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(7)
    batches = [(rng.standard_normal((BATCH, 5)), rng.standard_normal((BATCH, 2)))
               for _ in range(STEPS)]
    return net, batches


def train(kvstore, rank, parts, optimizer):
    net, batches = net_and_data(seed=rank)
    net.hybridize()
    params = {"learning_rate": 0.1, "momentum": 0.9} if optimizer == "sgd" else \
        {"learning_rate": 0.01}
    trainer = gluon.Trainer(net.collect_params(), optimizer, params, kvstore=kvstore)
    size = BATCH // parts
    for x, y in batches:
        xs = mx.nd.array(x[rank * size:(rank + 1) * size])
        ys = mx.nd.array(y[rank * size:(rank + 1) * size])
        with autograd.record():
            loss = ((net(xs) - ys) ** 2).sum()
        loss.backward()
        trainer.step(BATCH)
    return [p.data().asnumpy() for p in net.collect_params().values()], trainer


def check_sgd_and_adam_match_one_process():
    for optimizer in ("sgd", "adam"):
        kv = mx.kv.create("dist_sync")
        dist, trainer = train(kv, kv.rank, kv.num_workers, optimizer)
        assert trainer._update_on_kvstore, "a dist store applies the optimizer"
        blobs = kv._world.comm.allgather(b"".join(a.tobytes() for a in dist))
        assert all(b == blobs[0] for b in blobs), "ranks ended with different weights"
        whole, _ = train("device", 0, 1, optimizer)
        for a, b in zip(dist, whole):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    from mxlite.kvstore import mpi as kv_mpi
    run_checks(globals(), kv_mpi.world().rank)
