"""Fused optimizer updates (adam_update, sgd_mom_update) against NumPy and PyTorch.

    python benchmarks/bench_optimizer.py [--quick]

For each size the same float32 update runs as: mxlite's fused operator with ``out=weight``
(one pass, states in place); NumPy's best composition (in-place ufuncs with ``out=``, no
temporaries beyond one scratch buffer); and, when installed, PyTorch's ``torch.optim``
step (``foreach`` and, where the build supports it on CPU, ``fused``). A ratio is the other
backend's time / mxlite's time: above 1 mxlite is faster. Results are checked against each
other before timing. Times are minimums of several samples.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mxlite as mx  # noqa: E402

try:
    import torch
except Exception:                                   # noqa: BLE001 (any import failure)
    torch = None

LR, B1, B2, EPS, MOM = 1e-3, 0.9, 0.999, 1e-8, 0.9


def best_time(fn, repeat=7, min_s=0.05):
    fn()
    number, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_s or number >= 1 << 16:
            break
        number *= 2
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def add_torch(fns, w0, g0, name, make):
    """fns["torch <name> <mode>"]: one step of ``make([param], mode)``, a torch optimizer in
    its foreach and fused modes (a mode this build lacks is left out); no torch, none."""
    if torch is None:
        return
    for mode in ("foreach", "fused"):
        p = torch.nn.Parameter(torch.from_numpy(w0.copy()))
        p.grad = torch.from_numpy(g0.copy())
        try:
            opt = make([p], mode)
            opt.step()
        except Exception:                       # noqa: BLE001 (unsupported on this build)
            continue
        fns[f"torch {name} {mode}"] = (opt.step, None)


def adam_backends(n):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(n).astype(np.float32)
    g0 = rng.standard_normal(n).astype(np.float32)
    fns = {}

    w, g = mx.nd.array(w0), mx.nd.array(g0)
    m, v = mx.nd.zeros((n,)), mx.nd.zeros((n,))
    fns["mxlite adam_update"] = (lambda: mx.nd.adam_update(w, g, m, v, lr=LR, out=w),
                                 lambda: w.asnumpy())

    nw, ng = w0.copy(), g0.copy()
    nm, nv, tmp = np.zeros(n, np.float32), np.zeros(n, np.float32), np.empty(n, np.float32)

    def numpy_adam():
        np.multiply(nm, B1, out=nm)
        np.multiply(ng, 1 - B1, out=tmp)
        np.add(nm, tmp, out=nm)
        np.multiply(nv, B2, out=nv)
        np.multiply(ng, ng, out=tmp)
        np.multiply(tmp, 1 - B2, out=tmp)
        np.add(nv, tmp, out=nv)
        np.sqrt(nv, out=tmp)
        np.add(tmp, EPS, out=tmp)
        np.divide(nm, tmp, out=tmp)
        np.multiply(tmp, LR, out=tmp)
        np.subtract(nw, tmp, out=nw)
    fns["numpy (in place)"] = (numpy_adam, lambda: nw)

    # bias correction off is not an option in torch: compare one step's value only through
    # the check below (first steps differ by the correction)
    add_torch(fns, w0, g0, "Adam",
              lambda params, mode: torch.optim.Adam(params, lr=LR, betas=(B1, B2), eps=EPS,
                                                    **{mode: True}))
    return fns


def sgd_backends(n):
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(n).astype(np.float32)
    g0 = rng.standard_normal(n).astype(np.float32)
    fns = {}
    w, g, mom = mx.nd.array(w0), mx.nd.array(g0), mx.nd.zeros((n,))
    fns["mxlite sgd_mom_update"] = (
        lambda: mx.nd.sgd_mom_update(w, g, mom, lr=LR, momentum=MOM, out=w), lambda: w.asnumpy())
    nw, ng, nmom, tmp = w0.copy(), g0.copy(), np.zeros(n, np.float32), np.empty(n, np.float32)

    def numpy_sgd():
        np.multiply(nmom, MOM, out=nmom)
        np.multiply(ng, LR, out=tmp)
        np.subtract(nmom, tmp, out=nmom)
        np.add(nw, nmom, out=nw)
    fns["numpy (in place)"] = (numpy_sgd, lambda: nw)
    add_torch(fns, w0, g0, "SGD",
              lambda params, mode: torch.optim.SGD(params, lr=LR, momentum=MOM,
                                                   **{mode: True}))
    return fns


def check(fns, steps=3):
    """The mxlite and NumPy weights agree after the same number of steps."""
    values = []
    for name, (fn, value) in fns.items():
        if value is None:
            continue
        for _ in range(steps):
            fn()
        values.append((name, value().copy()))
    (n0, v0), (n1, v1) = values[:2]
    np.testing.assert_allclose(v0, v1, rtol=1e-4, atol=1e-5, err_msg=f"{n0} vs {n1}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    sizes = [10 ** 3, 10 ** 5, 10 ** 6] if args.quick else [10 ** 3, 10 ** 6, 10 ** 7]
    print(f"{'case':34s} {'time':>10s} {'ratio':>8s}")
    for label, make in (("adam", adam_backends), ("sgd momentum", sgd_backends)):
        for n in sizes:
            fns = make(n)
            check(fns)
            times = {name: best_time(fn) for name, (fn, _) in fns.items()}
            ours = next(t for name, t in times.items() if name.startswith("mxlite"))
            for name, t in times.items():
                ratio = "" if name.startswith("mxlite") else f"{t / ours:.2f}x"
                print(f"{label + ' ' + format(n, '.0e') + ' ' + name:34s} "
                      f"{t * 1e6:8.1f}us {ratio:>8s}")


if __name__ == "__main__":
    main()
