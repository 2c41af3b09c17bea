"""Neural-network layers on a CUDA device: mxlite (``ctx=mx.gpu()``) against torch (and
CuPy where it has the operation).

Run ``pytest benchmarks/bench_nn_gpu.py`` (pytest-benchmark timings, one group per case,
and a printed table of ratios) or ``python benchmarks/bench_nn_gpu.py`` for the table
alone. Every case skips without a CUDA device (the host emulator of the tests is not
timed). Each call allocates its outputs and is timed to completion (stream synchronized).
"""
from gpu_compare import benchmark_tests, case, main, mx, normal

IMAGES = (32, 64, 56, 56)
CONV = dict(kernel=(3, 3), pad=(1, 1), num_filter=64, no_bias=True)


def _bn_mx(nd, x, gamma, beta, mean, var):
    with mx.autograd.train_mode():
        return nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)


def _softmax_cupy(cp, x):
    e = cp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# float32, standard normal; torch calls through torch.nn.functional
CASES = {
    "Convolution 3x3 (32,64,56,56)": case(
        normal(IMAGES, (64, 64, 3, 3)), mxlite=lambda nd, x, w: nd.Convolution(x, w, **CONV),
        torch=lambda t, x, w: t.nn.functional.conv2d(x, w, padding=1)),
    "Deconvolution 3x3 (32,64,56,56)": case(
        normal(IMAGES, (64, 64, 3, 3)), mxlite=lambda nd, y, w: nd.Deconvolution(y, w, **CONV),
        torch=lambda t, y, w: t.nn.functional.conv_transpose2d(y, w, padding=1)),
    "Pooling max 2x2 (32,64,56,56)": case(
        normal(IMAGES), mxlite=lambda nd, x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2)),
        torch=lambda t, x: t.nn.functional.max_pool2d(x, 2)),
    "BatchNorm train (32,64,56,56)": case(
        normal(IMAGES, (64,), (64,), (64,), (64,)), mxlite=_bn_mx,
        torch=lambda t, x, g, b, m, v: t.nn.functional.batch_norm(x, m, v, g, b,
                                                                  training=True)),
    "LayerNorm (4096, 1024)": case(
        normal((4096, 1024), (1024,), (1024,)), mxlite=lambda nd, x, g, b: nd.LayerNorm(x, g, b),
        torch=lambda t, x, g, b: t.nn.functional.layer_norm(x, (1024,), g, b)),
    "softmax (4096, 1000)": case(
        normal((4096, 1000)), mxlite=lambda nd, x: nd.softmax(x),
        torch=lambda t, x: t.nn.functional.softmax(x, dim=-1), cupy=_softmax_cupy),
    "Activation gelu 1e7": case(
        normal((10 ** 7,)), mxlite=lambda nd, x: nd.LeakyReLU(x, act_type="gelu"),
        torch=lambda t, x: t.nn.functional.gelu(x)),
}
TITLE = "neural-network layers on GPU, float32, best of 10"

test_nn_gpu, test_nn_gpu_ratio_table = benchmark_tests(CASES, TITLE)

if __name__ == "__main__":
    main(CASES, TITLE)
