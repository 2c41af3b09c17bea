"""Executor forward+backward against the imperative autograd version of the same MLP.

    python benchmarks/bench_symbol.py [--quick]

The 784-256-256-10 MLP (batch 64, float32; FullyConnected + relu, FullyConnected + tanh,
FullyConnected, SoftmaxOutput) runs one training step -- forward, backward into the weight
gradients -- as:

* ``executor``: ``mx.sym`` graph, ``simple_bind`` (gradients for the weights and biases,
  grad_req 'null' for data and label), ``forward(is_train=True)`` + ``backward()``;
* ``imperative``: the same ops through ``mx.nd`` under ``autograd.record()`` with
  ``attach_grad`` on the weights and biases, then ``backward()``;
* ``torch`` (when installed): the same network with torch.nn.functional and cross-entropy
  (its gradient differs from SoftmaxOutput's by the 1/batch factor only), for scale.

The two mxlite versions are checked against each other (outputs and gradients) before
timing, in the same process. The goal is executor time <= imperative time: the ratio
printed is executor / imperative (at most 1 is met), of the minimum and of the median
per-call time over calls that alternate between the versions.
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

SIZES = (784, 256, 256, 10)
BATCH = 64


def interleaved_times(fns, calls):
    """Per-call times of each function in ``fns``, the functions taking turns call by call
    (so a change in machine load hits every function alike), the order rotating each round
    (with two functions each follows each equally often): {name: sorted list}."""
    times = {k: [] for k in fns}
    clock = time.perf_counter
    items = list(fns.items())
    for i in range(calls):
        shift = i % len(items)
        for k, fn in items[shift:] + items[:shift]:
            start = clock()
            fn()
            times[k].append(clock() - start)
    return {k: sorted(v) for k, v in times.items()}


def params(seed=0):
    """NumPy weights/biases (He-like scale), input batch and integer labels."""
    rng = np.random.default_rng(seed)
    p = {}
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:]), 1):
        p[f"fc{i}_weight"] = (rng.standard_normal((n_out, n_in)) * (2 / n_in) ** 0.5).astype(
            np.float32)
        p[f"fc{i}_bias"] = (rng.standard_normal(n_out) * 0.1).astype(np.float32)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.float32)
    return p, x, y


def mlp_symbol():
    """The network as a Symbol (arguments data, fc*_weight, fc*_bias, softmax_label)."""
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=SIZES[1], name="fc1"),
                          act_type="relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=SIZES[2], name="fc2"),
                          act_type="tanh")
    h = mx.sym.FullyConnected(h, num_hidden=SIZES[3], name="fc3")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def make_executor(p, x, y):
    sym = mlp_symbol()
    reqs = {n: ("null" if n in ("data", "softmax_label") else "write")
            for n in sym.list_arguments()}
    exe = sym.simple_bind(mx.cpu(), grad_req=reqs, data=x.shape, softmax_label=y.shape)
    exe.copy_params_from({k: mx.nd.array(v) for k, v in p.items()})
    exe.arg_dict["data"][:] = x
    exe.arg_dict["softmax_label"][:] = y

    def step():
        exe.forward(is_train=True)
        exe.backward()
        return exe.outputs[0], {k: g for k, g in exe.grad_dict.items() if g is not None}
    return step


def make_imperative(p, x, y):
    w = {k: mx.nd.array(v) for k, v in p.items()}
    for a in w.values():
        a.attach_grad()
    xd, yd = mx.nd.array(x), mx.nd.array(y)
    nd = mx.nd

    def step():
        with mx.autograd.record():
            h = nd.Activation(nd.FullyConnected(xd, w["fc1_weight"], w["fc1_bias"],
                                                num_hidden=SIZES[1]), act_type="relu")
            h = nd.Activation(nd.FullyConnected(h, w["fc2_weight"], w["fc2_bias"],
                                                num_hidden=SIZES[2]), act_type="tanh")
            h = nd.FullyConnected(h, w["fc3_weight"], w["fc3_bias"], num_hidden=SIZES[3])
            out = nd.SoftmaxOutput(h, yd)
        out.backward()
        return out, {k: a.grad for k, a in w.items()}
    return step


def make_torch(p, x, y):
    if torch is None:
        return None
    w = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()
    F = torch.nn.functional

    def step():
        for a in w.values():
            a.grad = None
        h = torch.relu(F.linear(xt, w["fc1_weight"], w["fc1_bias"]))
        h = torch.tanh(F.linear(h, w["fc2_weight"], w["fc2_bias"]))
        h = F.linear(h, w["fc3_weight"], w["fc3_bias"])
        F.cross_entropy(h, yt, reduction="sum").backward()
    return step


def check(exe_step, imp_step):
    """The executor and the imperative step agree: outputs and every gradient. Not bit for
    bit here: a product this large runs on one or two OpenBLAS threads depending on machine
    load (mxlite/device/blas.py), which moves the last bits; tests/test_duality.py checks
    bit-identity op by op on small shapes."""
    out_e, g_e = exe_step()
    out_i, g_i = imp_step()
    np.testing.assert_allclose(out_e.asnumpy(), out_i.asnumpy(), rtol=1e-5, atol=1e-7)
    assert set(g_e) == set(g_i), (sorted(g_e), sorted(g_i))
    for k in g_e:
        np.testing.assert_allclose(g_e[k].asnumpy(), g_i[k].asnumpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=k)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter samples")
    args = parser.parse_args(argv)
    calls = 200 if args.quick else 2000
    p, x, y = params()
    exe_step, imp_step = make_executor(p, x, y), make_imperative(p, x, y)
    check(exe_step, imp_step)
    fns = {"executor": exe_step, "imperative": imp_step}
    times = interleaved_times(fns, calls)
    torch_step = make_torch(p, x, y)
    if torch_step is not None:          # alone: a third version in the rotation would
        fns["torch"] = torch_step       # follow one of the two more often than the other
        times.update(interleaved_times({"torch": torch_step}, calls))
    best = {k: v[0] for k, v in times.items()}
    median = {k: v[len(v) // 2] for k, v in times.items()}
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32, forward+backward "
          f"({calls} interleaved calls each)")
    for k in fns:
        print(f"  {k:<10} min {best[k] * 1e3:7.3f} ms   median {median[k] * 1e3:7.3f} ms")
    ratio = best["executor"] / best["imperative"]
    print(f"  executor / imperative = {ratio:.3f} (min), "
          f"{median['executor'] / median['imperative']:.3f} (median); goal <= 1")
    if "torch" in best:
        print(f"  executor / torch      = {ratio * best['imperative'] / best['torch']:.3f} (min)")
    return ratio


if __name__ == "__main__":
    main()
