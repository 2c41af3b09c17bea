"""Pooling, BatchNorm and LayerNorm on oneDNN, on mxlite's reference kernels and in torch, on
the shapes of a ResNet-style CNN and a transformer, called in turn (interleaved) so a noisy
machine slows them alike.

    python benchmarks/bench_onednn_nn.py [--repeat 30]

torch runs in its own process (``$TORCH_PYTHON``, default ``/tmp/torchvenv/bin/python``: a
separate environment), driven over a pipe; each process times its own calls, so the pipe is
not in the times. A round runs each backend in turn for one untimed call and then
``--number`` timed ones (their mean is the round's time): the OpenMP threads of the process
that ran last keep spinning for a while after it, which would otherwise be charged to the
first call of the next backend (on 2 cores it made torch's calls 3-5 times slower). mxlite's two columns switch oneDNN per call
(``onednn.enabled``; ``norm.ONEDNN_NORM`` for the normalisations, off by default because
this benchmark measured it slower). Before timing, every backend's result is checked against
the reference kernel's (float32 tolerance).

Each line: median milliseconds [quartiles], and the per-round ratios reference/oneDNN and
torch/mxlite-default (above 1: the second is faster), as median [quartiles].
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (kind, data shape, params)
CASES = {
    "max-pool 3x3/2 (8,64,56,56) fwd": ("pool", (8, 64, 56, 56),
                                        dict(kernel=3, stride=2, pad=1, type="max", bwd=False)),
    "max-pool 3x3/2 (8,64,56,56) fwd+bwd": ("pool", (8, 64, 56, 56),
                                            dict(kernel=3, stride=2, pad=1, type="max",
                                                 bwd=True)),
    "avg-pool 2x2/2 (32,64,32,32) fwd+bwd": ("pool", (32, 64, 32, 32),
                                             dict(kernel=2, stride=2, pad=0, type="avg",
                                                  bwd=True)),
    "global avg-pool (32,64,32,32) fwd+bwd": ("pool", (32, 64, 32, 32),
                                              dict(kernel=32, stride=1, pad=0, type="avg",
                                                   bwd=True, global_pool=True)),
    "BatchNorm train (32,64,32,32) fwd+bwd": ("bn", (32, 64, 32, 32), {}),
    "LayerNorm (1024,256) fwd+bwd": ("ln", (16 * 64, 256), {}),
}


def _inputs(kind, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    c = shape[1] if kind == "bn" else shape[-1]
    gamma = (1 + 0.1 * rng.standard_normal(c)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(c)).astype(np.float32)
    return x, gamma, beta


# ---- mxlite ----------------------------------------------------------------------------------
def mxlite_case(name):
    """fn(use_onednn) -> the data gradient (or output) of the case, as NumPy on demand."""
    import mxlite as mx
    from mxlite.ops import norm, onednn
    kind, shape, p = CASES[name]
    x, gamma, beta = (mx.nd.array(a) for a in _inputs(kind, shape))
    mm, mv = mx.nd.zeros(gamma.shape), mx.nd.ones(gamma.shape)
    x.attach_grad()

    def forward():
        if kind == "pool":
            k = (p["kernel"],) * 2
            return mx.nd.Pooling(x, kernel=k, stride=(p["stride"],) * 2, pad=(p["pad"],) * 2,
                                 pool_type=p["type"], global_pool=p.get("global_pool", False))
        if kind == "bn":
            return mx.nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
        return mx.nd.LayerNorm(x, gamma, beta)

    def step(use_onednn):
        before = norm.ONEDNN_NORM
        norm.ONEDNN_NORM = use_onednn if use_onednn is not None else before
        try:
            with onednn.enabled(use_onednn is not False):
                if kind == "pool" and not p["bwd"]:
                    y = forward()
                    y.wait_to_read()
                    return y
                with mx.autograd.record():
                    y = forward()
                y.backward()
                x.grad.wait_to_read()
                return x.grad
        finally:
            norm.ONEDNN_NORM = before
    return step


# ---- torch (its own process) ---------------------------------------------------------------------
def torch_case(name):
    import torch
    F = torch.nn.functional
    kind, shape, p = CASES[name]
    x, gamma, beta = (torch.tensor(a) for a in _inputs(kind, shape))
    x.requires_grad_(True)
    mm, mv = torch.zeros(gamma.shape), torch.ones(gamma.shape)

    def forward():
        if kind == "pool":
            if p.get("global_pool"):
                return F.adaptive_avg_pool2d(x, 1)
            pool = F.max_pool2d if p["type"] == "max" else F.avg_pool2d
            return pool(x, p["kernel"], p["stride"], p["pad"])
        if kind == "bn":
            return F.batch_norm(x, mm, mv, gamma, beta, training=True, momentum=0.1,
                                eps=1e-3)
        return F.layer_norm(x, (shape[-1],), gamma, beta, eps=1e-5)

    def step():
        if kind == "pool" and not p["bwd"]:
            with torch.no_grad():
                return forward()
        x.grad = None
        y = forward()
        y.backward(torch.ones_like(y))
        return x.grad
    return step


def _block(fn, number):
    """One untimed call of ``fn``, then the mean seconds of ``number`` timed ones."""
    fn()
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def torch_worker():
    """Reads 'number<TAB>name' (prints ``_block``'s seconds) or 'check<TAB>name<TAB>path'
    (saves the result) lines until end of input."""
    import torch
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    steps = {}
    for line in sys.stdin:
        words = line.rstrip("\n").split("\t")
        name = words[-1] if words[0] != "check" else words[1]
        if name not in steps:
            steps[name] = torch_case(name)
        if words[0] == "check":
            np.save(words[2], steps[name]().detach().numpy())
            print("ok", flush=True)
            continue
        print(_block(steps[name], int(words[0])), flush=True)


class Torch:
    """The torch worker process, or None where its Python cannot be run."""

    def __init__(self):
        python = os.environ.get("TORCH_PYTHON", "/tmp/torchvenv/bin/python")
        self.proc = None
        if not os.path.exists(python):
            return
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--torch-worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def timed(self, name, number):
        def call():
            self.proc.stdin.write(f"{number}\t{name}\n")
            self.proc.stdin.flush()
            return float(self.proc.stdout.readline())
        return call

    def result(self, name, path):
        self.proc.stdin.write(f"check\t{name}\t{path}\n")
        self.proc.stdin.flush()
        self.proc.stdout.readline()
        return np.load(path)

    def close(self):
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()


def _check(name, step, torch):
    ref = step(False).asnumpy()
    others = {"oneDNN": step(True).asnumpy()}
    if torch.proc:
        others["torch"] = torch.result(name, f"/tmp/bench_onednn_nn_{os.getpid()}.npy")
    scale = max(1.0, float(np.abs(ref).max()))
    for who, got in others.items():
        np.testing.assert_allclose(got.reshape(ref.shape), ref, rtol=1e-3, atol=1e-4 * scale,
                                   err_msg=f"{name}: {who} against the reference kernel")


def _fmt(q, scale=1e3):
    return f"{q['median'] * scale:7.3f} [{q['q1'] * scale:.3f}-{q['q3'] * scale:.3f}]"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="rounds")
    ap.add_argument("--number", type=int, default=5, help="timed calls per round")
    args = ap.parse_args(argv)
    sys.path.insert(0, HERE)
    from timing import quartiles
    from mxlite.ops import onednn
    torch = Torch()
    print(f"{onednn.status()}; torch: {'yes' if torch.proc else 'not found'}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; {args.repeat} rounds of "
          f"{args.number} calls")
    print(f"{'case':40s} {'oneDNN ms':>22s} {'reference ms':>22s} {'default ms':>22s} "
          f"{'torch ms':>22s} {'ref/oneDNN':>20s} {'torch/default':>20s}")
    try:
        for name in CASES:
            step = mxlite_case(name)
            _check(name, step, torch)
            n = args.number
            fns = {"dnnl": lambda: _block(lambda: step(True), n),
                   "ref": lambda: _block(lambda: step(False), n),
                   "default": lambda: _block(lambda: step(None), n)}
            if torch.proc:
                fns["torch"] = torch.timed(name, n)
            rounds = {k: [] for k in fns}
            for _ in range(args.repeat):
                for k, fn in fns.items():
                    rounds[k].append(fn())
            r = {k: np.asarray(v) for k, v in rounds.items()}
            line = f"{name:40s} " + " ".join(_fmt(quartiles(r[k])).rjust(22)
                                             for k in ("dnnl", "ref", "default"))
            line += " " + (_fmt(quartiles(r["torch"])).rjust(22) if "torch" in r
                           else "-".rjust(22))
            line += " " + _fmt(quartiles(r["ref"] / r["dnnl"]), 1).rjust(20)
            if "torch" in r:
                line += " " + _fmt(quartiles(r["torch"] / r["default"]), 1).rjust(20)
            print(line, flush=True)
    finally:
        torch.close()


if __name__ == "__main__":
    if "--torch-worker" in sys.argv:
        torch_worker()
    else:
        sys.exit(main())
