"""Rank script: data-parallel training through ``dist_sync`` equals one process.

An MLP is trained for several steps with SGD (momentum) and Adam, each of the N ranks on
its 1/N of every batch. The same run in one process is made on every rank:

* with a ``local`` store given the N per-part gradients as a list (MXNet's multi-device
  way): the sums are the same additions, so the weights must be bit-identical (for
  N = 2, where MPI's sum of two numbers has one order);
* on the whole batch at once (one backward): equal within float32 tolerance.

Every rank must also end with the same weights.
"""
import numpy as np

import mxlite as mx
from mxlite.kvstore import mpi as kv_mpi
from rankrun import run_checks

BATCH, STEPS = 16, 5
SHAPES = {"fc1_weight": (16, 10), "fc1_bias": (16,), "fc2_weight": (3, 16), "fc2_bias": (3,)}
KEYS = list(SHAPES)


def initial_params(seed):
    rng = np.random.default_rng(seed)
    return {k: mx.nd.array(rng.standard_normal(s) * 0.3) for k, s in SHAPES.items()}


def batch(step):
    rng = np.random.default_rng(1000 + step)
    return (mx.nd.array(rng.standard_normal((BATCH, 10))),
            mx.nd.array(rng.standard_normal((BATCH, 3))))


def part(array, index, parts):
    size = BATCH // parts
    return array[index * size:(index + 1) * size]


def gradients(params, x, y):
    """Gradients of the summed squared error of the MLP on (x, y)."""
    for p in params.values():
        p.attach_grad()
    with mx.autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(x, params["fc1_weight"], params["fc1_bias"],
                                             num_hidden=16))
        out = mx.nd.FullyConnected(h, params["fc2_weight"], params["fc2_bias"], num_hidden=3)
        loss = ((out - y) ** 2).sum()
    loss.backward()
    return [params[k].grad.copy() for k in KEYS]


def make_optimizer(name):
    if name == "sgd":
        return mx.optimizer.SGD(learning_rate=0.05, momentum=0.9, rescale_grad=1.0 / BATCH)
    return mx.optimizer.Adam(learning_rate=0.01, rescale_grad=1.0 / BATCH)


def train_dist(name, update_on_kvstore=True):
    """The data-parallel run: this rank's part of each batch."""
    kv = mx.kv.create("dist_sync")
    n, r = kv.num_workers, kv.rank
    params = initial_params(seed=r)                 # init keeps rank 0's values
    kv.init(KEYS, [params[k] for k in KEYS])
    kv.pull(KEYS, out=[params[k] for k in KEYS])
    updater = None
    if update_on_kvstore:
        kv.set_optimizer(make_optimizer(name))
    else:
        updater = mx.optimizer.get_updater(make_optimizer(name))
    for step in range(STEPS):
        x, y = batch(step)
        grads = gradients(params, part(x, r, n), part(y, r, n))
        if update_on_kvstore:
            kv.push(KEYS, grads)
            kv.pull(KEYS, out=[params[k] for k in KEYS])
        else:
            kv.pushpull(KEYS, grads)
            for i, k in enumerate(KEYS):
                updater(i, grads[i], params[k])
    return {k: v.asnumpy() for k, v in params.items()}, n


def train_one_process(name, parts):
    """One process; ``parts`` > 1 pushes the per-part gradients as a list (summed by the
    local store), ``parts`` == 1 uses the whole batch in one backward."""
    kv = mx.kv.create("local")
    params = initial_params(seed=0)
    kv.init(KEYS, [params[k] for k in KEYS])
    kv.set_optimizer(make_optimizer(name))
    for step in range(STEPS):
        x, y = batch(step)
        per_part = [gradients(params, part(x, i, parts), part(y, i, parts))
                    for i in range(parts)]
        kv.push(KEYS, [[g[j] for g in per_part] for j in range(len(KEYS))])
        kv.pull(KEYS, out=[params[k] for k in KEYS])
    return {k: v.asnumpy() for k, v in params.items()}


def same_on_every_rank(params):
    blobs = kv_mpi.world().comm.allgather(b"".join(params[k].tobytes() for k in KEYS))
    assert all(b == blobs[0] for b in blobs), "ranks ended with different weights"


def compare(name, dist, n):
    same_on_every_rank(dist)
    if n == 2:
        exact = train_one_process(name, parts=n)
        for k in KEYS:
            np.testing.assert_array_equal(dist[k], exact[k], err_msg=f"{name} {k}")
    whole = train_one_process(name, parts=1)
    for k in KEYS:
        np.testing.assert_allclose(dist[k], whole[k], rtol=1e-5, atol=1e-6, err_msg=k)
    moved = max(np.abs(dist[k] - initial_params(0)[k].asnumpy()).max() for k in KEYS)
    assert moved > 1e-3, "training did not move the weights"


def check_sgd_momentum_update_on_kvstore():
    compare("sgd", *train_dist("sgd"))


def check_adam_update_on_kvstore():
    compare("adam", *train_dist("adam"))


def check_sgd_momentum_pushpull_then_local_update():
    compare("sgd", *train_dist("sgd", update_on_kvstore=False))


def check_adam_pushpull_then_local_update():
    compare("adam", *train_dist("adam", update_on_kvstore=False))


if __name__ == "__main__":
    run_checks(globals(), kv_mpi.world().rank)
