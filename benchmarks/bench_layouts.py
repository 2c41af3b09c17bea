"""The cost of channels-last layouts: Convolution (3x3, 32 filters, pad 1) and Pooling (max
2x2 stride 2; avg 3x3 pad 1) on a (32, 16, 32, 32) float32 batch, channels first (NCHW)
against channels last (NHWC), forward and forward + backward, beside torch's
``channels_last`` memory format (an optional benchmark dependency) in the same run.

mxlite runs a channels-last call through the channels-first kernels on transposed copies
made a batch chunk at a time (mxlite/ops/conv.py ``channels_first_compute``); the ratio
NHWC / NCHW is that overhead. torch's ratio shows what its native channels-last kernels
cost or save on the same machine.

    pytest benchmarks/bench_layouts.py           # pytest-benchmark tables
    python benchmarks/bench_layouts.py           # times and NHWC / NCHW ratios

Each layout's result is checked against the other's (moved channels last) before timing.
"""
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from timing import best_time

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None

N, C, H, W, FILTERS = 32, 16, 32, 32, 32
CASES = ("conv forward", "conv forward+backward", "max pool forward+backward",
         "avg pool forward+backward")
LAYOUTS = ("NCHW", "NHWC")


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((FILTERS, C, 3, 3)) * 0.2).astype(np.float32)
    return x, w


def _last(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


def mxlite_steps(layout):
    """``{case: fn}`` for mxlite in ``layout``; each fn returns its result (an NDArray, in
    the layout)."""
    x, w = _data()
    if layout == "NHWC":
        x, w = _last(x), _last(w)
    x, w = mx.nd.array(x), mx.nd.array(w)
    x.attach_grad()
    w.attach_grad()
    conv = dict(kernel=(3, 3), pad=(1, 1), num_filter=FILTERS, no_bias=True, layout=layout)
    pools = {"max": dict(kernel=(2, 2), stride=(2, 2), pool_type="max", layout=layout),
             "avg": dict(kernel=(3, 3), pad=(1, 1), pool_type="avg", layout=layout)}

    def conv_forward():
        return mx.nd.Convolution(x, w, **conv)

    def conv_backward():
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, **conv)
        y.backward()
        return w.grad

    def pool_backward(kind):
        def step():
            with mx.autograd.record():
                y = mx.nd.Pooling(x, **pools[kind])
            y.backward()
            return x.grad
        return step

    return dict(zip(CASES, (conv_forward, conv_backward, pool_backward("max"),
                            pool_backward("avg"))))


def torch_steps(layout):
    """The same steps in torch, ``channels_last`` memory for NHWC (None without torch).
    Results come back as NumPy arrays in ``layout``'s axis order."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    x, w = (torch.tensor(a).contiguous(memory_format=fmt) for a in _data())
    x.requires_grad_(True)
    w.requires_grad_(True)
    F = torch.nn.functional

    def conv_forward():
        return F.conv2d(x, w, padding=1)

    def conv_backward():
        w.grad = None
        y = F.conv2d(x, w, padding=1)
        y.backward(torch.ones_like(y))
        return w.grad

    def pool_backward(kind):
        def step():
            x.grad = None
            y = (F.max_pool2d(x, 2, 2) if kind == "max"
                 else F.avg_pool2d(x, 3, 1, 1, count_include_pad=True))
            y.backward(torch.ones_like(y))
            return x.grad
        return step

    return dict(zip(CASES, (conv_forward, conv_backward, pool_backward("max"),
                            pool_backward("avg"))))


def _numpy(v, layout):
    """A result as NumPy in the channels-first order."""
    if isinstance(v, mx.nd.NDArray):
        a = v.asnumpy()
        return np.moveaxis(a, -1, 1) if layout == "NHWC" else a
    return v.detach().numpy()          # torch: logical NCHW whatever the memory format


def check(case):
    """The NHWC result equals the NCHW one (moved), for mxlite and torch."""
    for steps in (mxlite_steps, torch_steps):
        if steps("NCHW") is None:
            continue
        first, last = (_numpy(steps(lay)[case](), lay) for lay in LAYOUTS)
        # float32 sums of up to N*H*W terms, added in another order (torch's kernels)
        scale = float(np.abs(first).max())
        np.testing.assert_allclose(last, first, rtol=1e-3, atol=1e-5 * scale)


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES)
def test_layouts(benchmark, case, layout, backend):
    steps = (mxlite_steps if backend == "mxlite" else torch_steps)(layout)
    if steps is None:
        pytest.skip("torch is not installed")
    check(case)
    benchmark.group = f"{case} on ({N}, {C}, {H}, {W}): NCHW vs NHWC"
    benchmark(steps[case])


def main():
    print(f"data ({N}, {C}, {H}, {W}) float32; conv 3x3 x {FILTERS} pad 1; max pool 2x2/2; "
          f"avg pool 3x3 pad 1 (best of 20, ms)")
    backends = [("mxlite", mxlite_steps)] + ([("torch", torch_steps)] if torch else [])
    for case in CASES:
        check(case)
        line = f"  {case:26s}"
        for name, steps in backends:
            first, last = (best_time(steps(lay)[case], repeat=20) for lay in LAYOUTS)
            line += (f"  {name} NCHW {first * 1e3:7.2f}  NHWC {last * 1e3:7.2f}  "
                     f"(x{last / first:.2f})")
        print(line)


if __name__ == "__main__":
    sys.exit(main())
