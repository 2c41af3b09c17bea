"""The transcendental activations on the CPU, float32: mxlite beside torch, forward and
forward + backward (autograd), interleaved round by round.

gelu, elu, selu (``LeakyReLU``), softrelu, sigmoid, tanh (``Activation``) against
``torch.nn.functional`` gelu (erf form), elu, selu, softplus, sigmoid, tanh, at 1M elements
(the GELU of a transformer block, 16 x 64 x 1024) and 16M. torch runs in its own interpreter
(``--torch``, default /tmp/torchvenv/bin/python) as a worker that times one call per request;
each round times one mxlite call, then one torch call, so both see the same machine load.
Prints the median and quartiles (ms) of each and of the per-round ratio mxlite / torch.

    python benchmarks/bench_activation.py [--rounds 50] [--threads 2] [--only gelu] [--sizes 1M]
                                          [--gap 0.005]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import quartiles  # noqa: E402

ACTS = ["gelu", "elu", "selu", "softrelu", "sigmoid", "tanh"]
SIZES = {"1M": 1 << 20, "16M": 1 << 24}

TORCH_WORKER = r'''
import json, sys, time, torch
import torch.nn.functional as F
torch.set_num_threads(int(sys.argv[1]))
fn = {"gelu": F.gelu, "elu": F.elu, "selu": F.selu, "softrelu": F.softplus,
      "sigmoid": torch.sigmoid, "tanh": torch.tanh}
cases = {}
for act, n in json.loads(sys.argv[2]):
    x = torch.randn(n, requires_grad=True)
    og = torch.ones(n)
    def fw(f=fn[act], x=x):
        with torch.no_grad():
            f(x)
    def fwbw(f=fn[act], x=x, og=og):
        f(x).backward(og)
    cases[f"{act} {n}"] = {"fw": fw, "fwbw": fwbw}
print("ready", flush=True)
for line in sys.stdin:
    act, n, mode = line.split()
    f = cases[f"{act} {n}"][mode]
    t = time.perf_counter(); f(); t = time.perf_counter() - t
    print(t, flush=True)
'''


def mxlite_case(act, n):
    """{'fw': callable, 'fwbw': callable} of one activation over n float32 elements."""
    import mxlite as mx
    nd = mx.nd
    x = nd.array(np.random.randn(n).astype("float32"))
    x.attach_grad()
    og = nd.ones((n,))
    if act in ("gelu", "elu", "selu"):
        kw = {"slope": 1.0} if act == "elu" else {}
        call = lambda: nd.LeakyReLU(x, act_type=act, **kw)  # noqa: E731
    else:
        call = lambda: nd.Activation(x, act_type=act)  # noqa: E731

    def fw():
        call().wait_to_read()

    def fwbw():
        with mx.autograd.record():
            y = call()
        y.backward(og)
        nd.waitall()
    return {"fw": fw, "fwbw": fwbw}


def _fmt(q, scale=1e3):
    return f"{q['median'] * scale:8.3f} ({q['q1'] * scale:.3f}-{q['q3'] * scale:.3f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--torch", default="/tmp/torchvenv/bin/python")
    ap.add_argument("--only", default=None, help="comma-separated activations")
    ap.add_argument("--sizes", default="1M,16M", help="comma-separated of 1M, 16M")
    ap.add_argument("--gap", type=float, default=0.005,
                    help="seconds of sleep after each call: OpenMP workers spin a while after "
                         "a parallel region and would take the cores from the other side")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    acts = args.only.split(",") if args.only else ACTS
    cases = [(a, SIZES[s]) for s in args.sizes.split(",") for a in acts]
    worker = subprocess.Popen([args.torch, "-c", TORCH_WORKER, str(args.threads),
                               json.dumps(cases)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert worker.stdout.readline().strip() == "ready"
    print(f"{'case':16s} {'mode':5s} {'mxlite ms (q1-q3)':>24s} {'torch ms (q1-q3)':>24s} "
          f"{'ratio (q1-q3)':>18s}")
    for act, n in cases:
        fns = mxlite_case(act, n)
        for mode in ("fw", "fwbw"):
            ours, theirs = [], []
            for r in range(args.rounds + 1):           # round 0 warms both up
                t = time.perf_counter()
                fns[mode]()
                t = time.perf_counter() - t
                time.sleep(args.gap)
                worker.stdin.write(f"{act} {n} {mode}\n")
                worker.stdin.flush()
                tt = float(worker.stdout.readline())
                time.sleep(args.gap)
                if r:
                    ours.append(t)
                    theirs.append(tt)
            ratio = quartiles(np.asarray(ours) / np.asarray(theirs))
            print(f"{act + ' ' + str(n >> 20) + 'M':16s} {mode:5s} {_fmt(quartiles(ours))} "
                  f"{_fmt(quartiles(theirs))} {ratio['median']:6.2f} "
                  f"({ratio['q1']:.2f}-{ratio['q3']:.2f})", flush=True)
    worker.stdin.close()
    worker.wait()


if __name__ == "__main__":
    sys.exit(main())
