"""``dist_sync`` against raw mpi4py: allreduce overhead and tensor fusion.

    python benchmarks/bench_kvstore.py [--ranks 2] [--quick]

Starts itself on ``--ranks`` MPI ranks (``mpiexec`` beside Python, else on PATH) and
times, on the same float32 buffers:

* ``kv.pushpull(key, grad)`` (in place) and ``kv.pushpull(key, grad, out=out)`` against
  ``comm.Allreduce(MPI.IN_PLACE, grad)`` / ``comm.Allreduce(grad, out)``, for 4 MB and 400 MB
  (``--quick``: 4 MB and 40 MB). The ratio kv / raw is the store's overhead (goal: <= 1.05);
* the agreement round every collective store call makes (``kv.barrier``) against
  ``comm.Barrier``;
* a model of 100 small parameters (16 to 16384 elements, 0.8 MB in all): one ``pushpull``
  of all keys (fused into one allreduce), the same call with fusion off (one allreduce per
  tensor), one ``pushpull`` call per key, and 100 raw ``Allreduce`` calls.

Samples of the competing methods alternate, each preceded by a barrier; the table gives the
minimum and the median over samples (rank 0's clock). On a shared machine trust the
minimums.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mxlite as mx  # noqa: E402


def relaunch(ranks, argv):
    """Run this script on ``ranks`` MPI ranks and return their exit status."""
    import subprocess
    from mxlite.launch import find_mpiexec
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.exit("bench_kvstore: mpiexec not found (pip install mxlite[dist])")
    env = dict(os.environ, MXLITE_BENCH_KV_CHILD="1")
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.call([mpiexec, "-n", str(ranks), sys.executable, os.path.abspath(__file__)]
                           + argv, env=env)


def sample(methods, comm, repeat):
    """``{name: [seconds, ...]}``: ``repeat`` rounds, each method once per round."""
    times = {name: [] for name in methods}
    for _ in range(repeat):
        for name, fn in methods.items():
            comm.Barrier()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def report(title, times, baseline, rank):
    if rank != 0:
        return
    base = min(times[baseline])
    print(f"\n{title}")
    print(f"  {'method':<44} {'min':>10} {'median':>10} {'vs ' + baseline:>14}")
    for name, ts in times.items():
        print(f"  {name:<44} {min(ts) * 1e3:>8.3f}ms {statistics.median(ts) * 1e3:>8.3f}ms "
              f"{min(ts) / base:>13.3f}x")


def bench_sizes(kv, comm, MPI, sizes_mb, repeat):
    for mb in sizes_mb:
        n = int(mb * 1e6) // 4
        key = f"g{mb}"
        grad, out = mx.nd.ones((n,)), mx.nd.zeros((n,))
        kv.init(key, mx.nd.zeros((n,)))
        raw_grad, raw_out = grad._data, out._data
        methods = {
            "raw Allreduce(IN_PLACE, grad)": lambda: comm.Allreduce(MPI.IN_PLACE, raw_grad),
            "kv.pushpull(key, grad)": lambda: kv.pushpull(key, grad),
            "raw Allreduce(grad, out)": lambda: comm.Allreduce(raw_grad, raw_out),
            "kv.pushpull(key, grad, out=out)": lambda: kv.pushpull(key, grad, out=out),
        }
        times = sample(methods, comm, repeat)
        report(f"{mb:g} MB float32 ({n:,} elements), {comm.Get_size()} ranks", times,
               "raw Allreduce(IN_PLACE, grad)", comm.Get_rank())
        if comm.Get_rank() == 0:
            for kv_name, raw_name in (("kv.pushpull(key, grad)", "raw Allreduce(IN_PLACE, grad)"),
                                      ("kv.pushpull(key, grad, out=out)", "raw Allreduce(grad, out)")):
                print(f"  overhead {kv_name}: {min(times[kv_name]) / min(times[raw_name]):.3f}x "
                      f"(min), {statistics.median(times[kv_name]) / statistics.median(times[raw_name]):.3f}x (median)")
        del grad, out, raw_grad, raw_out


def bench_fusion(kv, comm, MPI, repeat):
    rng = np.random.default_rng(0)
    sizes = np.exp(rng.uniform(np.log(16), np.log(16384), 100)).astype(int)
    keys = [f"p{i}" for i in range(100)]
    kv.init(keys, [mx.nd.zeros((int(s),)) for s in sizes])
    grads = [mx.nd.ones((int(s),)) for s in sizes]
    raws = [g._data for g in grads]

    def no_fusion():
        old = kv.fusion_threshold
        kv.fusion_threshold = 0
        kv.pushpull(keys, grads)
        kv.fusion_threshold = old

    def per_key():
        for k, g in zip(keys, grads):
            kv.pushpull(k, g)

    def raw_per_tensor():
        for r in raws:
            comm.Allreduce(MPI.IN_PLACE, r)

    methods = {"kv.pushpull(100 keys) fused": lambda: kv.pushpull(keys, grads),
               "kv.pushpull(100 keys) fusion off": no_fusion,
               "100 kv.pushpull calls (one key each)": per_key,
               "100 raw Allreduce calls": raw_per_tensor}
    times = sample(methods, comm, repeat)
    report(f"100 parameters, {int(sizes.sum()) * 4 / 1e6:.2f} MB float32, {comm.Get_size()} ranks",
           times, "kv.pushpull(100 keys) fused", comm.Get_rank())


def bench_agreement(kv, comm, repeat):
    """The fixed cost of a store call: its agreement round (``kv.barrier`` is nothing else)."""
    times = sample({"raw comm.Barrier()": comm.Barrier, "kv.barrier() (one agreement)": kv.barrier},
                   comm, repeat)
    report("the agreement every collective store call makes", times, "raw comm.Barrier()",
           comm.Get_rank())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="40 MB instead of 400 MB")
    parser.add_argument("--repeat", type=int, default=None, help="samples per method")
    args = parser.parse_args()
    if not os.environ.get("MXLITE_BENCH_KV_CHILD"):
        sys.exit(relaunch(args.ranks, sys.argv[1:]))
    kv = mx.kv.create("dist_sync")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    if comm.Get_rank() == 0:
        print(f"bench_kvstore: {comm.Get_size()} ranks, {os.cpu_count()} cores, "
              f"{MPI.Get_library_version().splitlines()[0]}, OMP_NUM_THREADS="
              f"{os.environ.get('OMP_NUM_THREADS')}")
    bench_sizes(kv, comm, MPI, [4], args.repeat or 100)
    bench_sizes(kv, comm, MPI, [40] if args.quick else [400], args.repeat or 7)
    bench_fusion(kv, comm, MPI, args.repeat or 30)
    bench_agreement(kv, comm, args.repeat or 200)


if __name__ == "__main__":
    main()
