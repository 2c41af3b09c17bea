"""The float32 row sums in lanes (mx_norm.h, mx_norm_rows.h) on both devices: rows longer
than one block of 256, where the CPU's SIMD registers and the GPU's scalar lanes must add the
same values in the same order; and LayerNorm's fused backward on the GPU (array path)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd

from .test_nn import assert_same, both


@pytest.mark.gpu
@pytest.mark.parametrize("q", [15, 256, 1000, 4099])
def test_layer_norm_float32_rows_equal_the_cpu(rng, q):
    x = (rng.standard_normal((6, q)) * 3 + 100).astype("float32")
    gamma, beta = np.ones(q, "float32"), np.zeros(q, "float32")
    cpu, gpu = both(mx.nd.LayerNorm, x, gamma, beta, output_mean_var=True)
    assert_same(cpu, gpu, maxulp=1)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,axis", [((6, 1000), 1), ((3, 4, 700), (0, 2))])
def test_norm_project_float32_long_rows_equal_the_cpu(rng, shape, axis):
    """LayerNorm's rows and BatchNorm's channels (rows of 700 per channel)."""
    g, xhat = (rng.standard_normal(shape).astype("float32") for _ in range(2))
    kept = tuple(1 if i in np.atleast_1d(axis) % len(shape) else d for i, d in enumerate(shape))
    r, a, b = (rng.uniform(0.5, 1.5, kept).astype("float32") for _ in range(3))
    cpu, gpu = both(mx.nd._internal._norm_project, g, xhat, r, np.ones(1, "float32"), a, b,
                    axis=axis)
    assert_same(cpu, gpu, maxulp=2)


@pytest.mark.gpu
def test_layer_norm_gradient_on_the_gpu_matches_the_cpu(rng):
    x = rng.standard_normal((5, 300)).astype("float32")
    grads = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        xs, gs, bs = (mx.nd.array(a, ctx=ctx) for a in (x, np.ones(300, "float32"),
                                                        np.zeros(300, "float32")))
        for v in (xs, gs, bs):
            v.attach_grad()
        with autograd.record():
            y = mx.nd.LayerNorm(xs, gs, bs)
        y.backward(mx.nd.array(x * 0.5 + 1, ctx=ctx))
        grads.append([v.grad.asnumpy() for v in (xs, gs, bs)])
    for c, g in zip(*grads):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
