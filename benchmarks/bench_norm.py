"""LayerNorm, BatchNorm (training), InstanceNorm and GroupNorm on the CPU: mxlite beside
torch, forward and forward + backward, interleaved round by round.

torch runs in its own interpreter (``--torch``, default /tmp/torchvenv/bin/python) as a
worker that times one call per request; each round times one mxlite call, then asks the
worker for one torch call (a short sleep between calls lets each side's OpenMP workers stop
spinning), so both systems see the same machine load. Prints the median
and quartiles (ms) of each and of the per-round ratio mxlite / torch.

    python benchmarks/bench_norm.py [--rounds 200] [--threads 2] [--only LayerNorm]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

CASES = [
    ("LayerNorm", (1024, 256)), ("LayerNorm", (64, 64)), ("LayerNorm", (4096, 1024)),
    ("BatchNorm", (32, 64, 16, 16)), ("BatchNorm", (8, 64, 56, 56)),
    ("InstanceNorm", (32, 64, 16, 16)), ("GroupNorm", (32, 64, 16, 16)),
]
GROUPS = 8

# The torch worker: builds every case, then answers "index mode" lines with one call's time.
TORCH_WORKER = r'''
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
cases = json.loads(sys.argv[2])
def build(op, shape, groups):
    x = torch.randn(*shape, requires_grad=True)
    c = shape[-1] if op == "LayerNorm" else shape[1]
    mod = {"LayerNorm": lambda: torch.nn.LayerNorm(c),
           "BatchNorm": lambda: torch.nn.BatchNorm2d(c),
           "InstanceNorm": lambda: torch.nn.InstanceNorm2d(c, affine=True),
           "GroupNorm": lambda: torch.nn.GroupNorm(groups, c)}[op]()
    mod.train()
    og = torch.ones(shape)
    def fw():
        with torch.no_grad():
            mod(x)
    def fwbw():
        mod(x).backward(og)
    return {"fw": fw, "fwbw": fwbw}
fns = [build(op, tuple(s), g) for op, s, g in cases]
for f in fns:
    f["fw"](); f["fwbw"]()
print("ready", flush=True)
for line in sys.stdin:
    i, mode = line.split()
    fn = fns[int(i)][mode]
    t = time.perf_counter(); fn(); t = time.perf_counter() - t
    print(t, flush=True)
'''


def mxlite_case(op, shape):
    """{'fw': callable, 'fwbw': callable} of one case in mxlite (training mode, gamma and
    beta attached)."""
    import mxlite as mx
    nd = mx.nd
    c = shape[-1] if op == "LayerNorm" else shape[1]
    x = nd.array(np.random.randn(*shape).astype("float32"))
    # MXNet's GroupNorm takes one gamma and beta per group (torch's: per channel)
    k = GROUPS if op == "GroupNorm" else c
    gamma, beta = nd.ones((k,)), nd.zeros((k,))
    for a in (x, gamma, beta):
        a.attach_grad()
    mm, mv = nd.zeros((c,)), nd.ones((c,))
    og = nd.ones(shape)
    call = {"LayerNorm": lambda: nd.LayerNorm(x, gamma, beta),
            "BatchNorm": lambda: nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False),
            "InstanceNorm": lambda: nd.InstanceNorm(x, gamma, beta, eps=1e-5),
            "GroupNorm": lambda: nd.GroupNorm(x, gamma, beta, num_groups=GROUPS)}[op]

    def fw():
        with mx.autograd.train_mode():
            call().wait_to_read()

    def fwbw():
        with mx.autograd.record():
            y = call()
        y.backward(og)
        nd.waitall()
    return {"fw": fw, "fwbw": fwbw}


def quartiles(values):
    q1, med, q3 = np.percentile(np.asarray(values), [25, 50, 75])
    return med, q1, q3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--torch", default="/tmp/torchvenv/bin/python")
    ap.add_argument("--only", default=None, help="run the cases of this op only")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds of sleep between calls: OpenMP workers spin-wait a while "
                         "after a parallel region and would take the cores from the other "
                         "system's next call")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    cases = [(op, s) for op, s in CASES if args.only in (None, op)]
    worker = subprocess.Popen(
        [args.torch, "-c", TORCH_WORKER, str(args.threads),
         json.dumps([(op, s, GROUPS) for op, s in cases])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert worker.stdout.readline().strip() == "ready"
    print(f"{'case':34s} {'mode':5s} {'mxlite ms (q1-q3)':>22s} {'torch ms (q1-q3)':>22s} "
          f"{'ratio (q1-q3)':>18s}")
    for i, (op, shape) in enumerate(cases):
        fns = mxlite_case(op, shape)
        for mode in ("fw", "fwbw"):
            fns[mode]()
            ours, theirs = [], []
            for _ in range(args.rounds):
                t = time.perf_counter()
                fns[mode]()
                ours.append(time.perf_counter() - t)
                time.sleep(args.gap)
                worker.stdin.write(f"{i} {mode}\n")
                worker.stdin.flush()
                theirs.append(float(worker.stdout.readline()))
                time.sleep(args.gap)
            o, t = quartiles(ours), quartiles(theirs)
            r = quartiles(np.asarray(ours) / np.asarray(theirs))
            print(f"{op + ' ' + str(shape):34s} {mode:5s} "
                  f"{o[0] * 1e3:8.3f} ({o[1] * 1e3:.3f}-{o[2] * 1e3:.3f}) "
                  f"{t[0] * 1e3:8.3f} ({t[1] * 1e3:.3f}-{t[2] * 1e3:.3f}) "
                  f"{r[0]:6.2f} ({r[1]:.2f}-{r[2]:.2f})", flush=True)
    worker.stdin.close()
    worker.wait()


if __name__ == "__main__":
    sys.exit(main())
