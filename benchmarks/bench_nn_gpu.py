"""Neural-network layers on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch (and
CuPy where it has the operation).

Run ``pytest benchmarks/bench_nn_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_nn_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its outputs and is timed to completion (stream synchronized).
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):           # run from a checkout without installing
    if path not in sys.path:
        sys.path.insert(0, path)

import mxlite as mx  # noqa: E402
from gpu_compare import has_cuda, needs_cuda, print_ratios, timings  # noqa: E402

IMAGES = (32, 64, 56, 56)
CONV = dict(kernel=(3, 3), pad=(1, 1), num_filter=64, no_bias=True)


def _bn_mx(x, gamma, beta, mean, var):
    with mx.autograd.train_mode():
        return mx.nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)


# name -> (input shapes, mxlite call, torch call (F = torch.nn.functional), cupy call or None)
CASES = {
    "Convolution 3x3 (32,64,56,56)": (
        [IMAGES, (64, 64, 3, 3)], lambda x, w: mx.nd.Convolution(x, w, **CONV),
        lambda F, x, w: F.conv2d(x, w, padding=1), None),
    "Deconvolution 3x3 (32,64,56,56)": (
        [IMAGES, (64, 64, 3, 3)], lambda y, w: mx.nd.Deconvolution(y, w, **CONV),
        lambda F, y, w: F.conv_transpose2d(y, w, padding=1), None),
    "Pooling max 2x2 (32,64,56,56)": (
        [IMAGES], lambda x: mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2)),
        lambda F, x: F.max_pool2d(x, 2), None),
    "BatchNorm train (32,64,56,56)": (
        [IMAGES, (64,), (64,), (64,), (64,)], _bn_mx,
        lambda F, x, g, b, m, v: F.batch_norm(x, m, v, g, b, training=True), None),
    "LayerNorm (4096, 1024)": (
        [(4096, 1024), (1024,), (1024,)], lambda x, g, b: mx.nd.LayerNorm(x, g, b),
        lambda F, x, g, b: F.layer_norm(x, (1024,), g, b), None),
    "softmax (4096, 1000)": (
        [(4096, 1000)], lambda x: mx.nd.softmax(x),
        lambda F, x: F.softmax(x, dim=-1),
        lambda cp, x: (lambda e: e / e.sum(axis=-1, keepdims=True))(
            cp.exp(x - x.max(axis=-1, keepdims=True)))),
    "Activation gelu 1e7": (
        [(10 ** 7,)], lambda x: mx.nd.LeakyReLU(x, act_type="gelu"),
        lambda F, x: F.gelu(x), None),
}


def backends(name):
    """{backend: a call that runs the case and waits for the result}."""
    shapes, mx_call, torch_call, cupy_call = CASES[name]
    import cupy as cp
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args = [mx.nd.array(a, ctx=mx.gpu()) for a in host]

    def run_mxlite():
        mx_call(*args)
        mx.nd.waitall()
    fns = {"mxlite": run_mxlite}
    if cupy_call is not None:
        data = [cp.asarray(a) for a in host]

        def run_cupy():
            cupy_call(cp, *data)
            cp.cuda.get_current_stream().synchronize()
        fns["cupy"] = run_cupy
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return fns
    if torch.cuda.is_available():
        tensors = [torch.as_tensor(a, device="cuda") for a in host]

        def run_torch():
            torch_call(F, *tensors)
            torch.cuda.synchronize()
        fns["torch"] = run_torch
    return fns


TITLE = "neural-network layers on GPU, float32, best of 10"


@needs_cuda
@pytest.mark.parametrize("backend", ["mxlite", "torch", "cupy"])
@pytest.mark.parametrize("name", list(CASES))
def test_nn_gpu(benchmark, name, backend):
    fns = backends(name)
    if backend not in fns:
        pytest.skip(f"{backend} has no such case here (or is not installed with CUDA)")
    benchmark.group = f"{name} (GPU)"
    benchmark(fns[backend])


@needs_cuda
def test_nn_gpu_ratio_table(capsys):
    """Print other / mxlite for every case."""
    rows = timings(CASES, backends)
    with capsys.disabled():
        print_ratios(TITLE, rows)


if __name__ == "__main__":
    if not has_cuda():
        sys.exit("no CUDA device: the GPU benchmarks need CuPy with a GPU")
    print_ratios(TITLE, timings(CASES, backends))
