"""Data-parallel training with ``mx.kv.create('dist_sync')`` over MPI.

An MLP classifies synthetic data (points from a random teacher network). Each of the N
ranks takes its 1/N of every batch; ``kv.push`` sums the gradients of all ranks (one
allreduce, small tensors fused) and the optimizer in the store applies the same update on
every rank, so the run trains exactly the model one process would train on the whole batch.

    python -m mxlite.launch -n 2 examples/distributed_train.py    # or: mpiexec -n 2 python ...
    python examples/distributed_train.py                          # one process, same result

Each rank prints its throughput; rank 0 prints the final loss over the whole data set as
``final loss = <value>``, equal (to float32 rounding) for any number of ranks. Needs
``pip install mxlite[dist]``; ``--kvstore local`` runs without MPI.
"""
import argparse
import time

import numpy as np

import mxlite as mx
from mxlite import autograd, nd

FEATURES, HIDDEN, CLASSES = 32, 64, 4


def make_data(samples, seed=0):
    """Points and the labels a random two-layer teacher gives them (the same on every rank)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, FEATURES)).astype(np.float32)
    teacher = rng.standard_normal((FEATURES, CLASSES)).astype(np.float32)
    y = np.argmax(np.tanh(x @ teacher) + 0.1 * rng.standard_normal((samples, CLASSES)), axis=1)
    return nd.array(x), nd.array(y)


def init_params(seed):
    rng = np.random.default_rng(seed)
    shapes = {"fc1_weight": (HIDDEN, FEATURES), "fc1_bias": (HIDDEN,),
              "fc2_weight": (HIDDEN, HIDDEN), "fc2_bias": (HIDDEN,),
              "fc3_weight": (CLASSES, HIDDEN), "fc3_bias": (CLASSES,)}
    return {k: nd.array(rng.standard_normal(s) * (0.0 if k.endswith("bias") else 0.2))
            for k, s in shapes.items()}


def forward(params, x):
    h = nd.relu(nd.FullyConnected(x, params["fc1_weight"], params["fc1_bias"], num_hidden=HIDDEN))
    h = nd.relu(nd.FullyConnected(h, params["fc2_weight"], params["fc2_bias"], num_hidden=HIDDEN))
    return nd.FullyConnected(h, params["fc3_weight"], params["fc3_bias"], num_hidden=CLASSES)


def summed_loss(params, x, y):
    """Softmax cross-entropy summed over the samples (the optimizer divides by the batch)."""
    logp = nd.log_softmax(forward(params, x), axis=1)
    return -nd.pick(logp, y, axis=1).sum()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kvstore", default="dist_sync", help="dist_sync (default) or local")
    parser.add_argument("--batch", type=int, default=256, help="global batch (all ranks)")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--samples", type=int, default=4096)
    args = parser.parse_args()

    kv = mx.kv.create(args.kvstore)
    rank, workers = kv.rank, kv.num_workers
    if args.batch % workers:
        raise SystemExit(f"--batch {args.batch} is not divisible by {workers} ranks")
    part = args.batch // workers
    x, y = make_data(args.samples)
    params = init_params(seed=rank)             # kv.init keeps rank 0's values on every rank
    keys = sorted(params)
    kv.init(keys, [params[k] for k in keys])
    kv.pull(keys, out=[params[k] for k in keys])
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=3e-3, rescale_grad=1.0 / args.batch))
    for p in params.values():
        p.attach_grad()

    kv.barrier()
    start = time.perf_counter()
    for step in range(args.steps):
        first = (step * args.batch) % args.samples + rank * part
        xb, yb = x[first:first + part], y[first:first + part]
        with autograd.record():
            loss = summed_loss(params, xb, yb)
        loss.backward()
        kv.push(keys, [params[k].grad for k in keys])      # summed over ranks, then Adam
        kv.pull(keys, out=[params[k] for k in keys])
    elapsed = time.perf_counter() - start
    print(f"rank {rank}/{workers}: {args.steps * part / elapsed:,.0f} samples/s "
          f"({args.steps} steps of {part} samples in {elapsed:.2f} s)", flush=True)

    final = float(summed_loss(params, x, y).asscalar()) / args.samples
    kv.barrier()
    if rank == 0:
        print(f"final loss = {final:.5f}")


if __name__ == "__main__":
    main()
