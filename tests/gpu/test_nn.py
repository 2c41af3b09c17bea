"""GPU kernels of the neural-network operators (mxlite/cuda/ops/activation.py, conv.py,
pooling.py, norm.py): what the shared operator tests cannot show.

* results do not depend on the launch configuration (the emulator's odd grids, or other
  block sizes on a CUDA device);
* the float32 activations and the float32 softmax use the CPU kernels' formulas and order
  of additions (mx_act.h), the normalisation statistics the CPU's (mx_norm.h), and pooling
  and col2im gather their sums in the CPU's order: CPU and GPU agree to the last bit where
  no math library is involved, within an ulp where one is;
* col2im gathers overlapping windows (stride < kernel, dilation, groups, 1-D to 3-D)
  correctly, against NumPy references written here;
* the kernels index with 64-bit ``mx_idx`` (a scan of their source, which needs no GPU).

Tests marked ``gpu`` run on ``mx.gpu(0)`` (a CUDA device, or the host emulator under
MXLITE_GPU_EMULATOR=1) and skip without one.
"""
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops import onednn
from mxlite import autograd
from mxlite.cuda import emulator, kernels, launch, runtime

FAMILIES = ("nn_act", "nn_softmax", "nn_conv", "nn_pool", "nn_norm")
# int parameters that are switches, not sizes or indices
FLAGS = {"kind", "mode", "log_mode", "include_pad", "p", "has_bias", "masked", "layout",
         "inverse", "has_xhat", "deviations"}
SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def on(ctx, fn, *arrays, **kwargs):
    """``fn`` of ``arrays`` (NumPy) on ``ctx``, its outputs as NumPy arrays. On the CPU the
    reference kernels run (oneDNN off): the GPU kernels mirror them operation for
    operation, so the two agree bit for bit."""
    with onednn.enabled(False):
        out = fn(*[mx.nd.array(a, ctx=ctx, dtype=a.dtype) for a in arrays], **kwargs)
    return [o.asnumpy() for o in out] if isinstance(out, (list, tuple)) else [out.asnumpy()]


def both(fn, *arrays, **kwargs):
    """(cpu outputs, gpu outputs) of ``fn``."""
    return on(mx.cpu(), fn, *arrays, **kwargs), on(mx.gpu(0), fn, *arrays, **kwargs)


def assert_same(cpu, gpu, maxulp=0):
    """Equal dtypes and shapes; values bit for bit (maxulp=0) or within ``maxulp`` ulps."""
    for c, g in zip(cpu, gpu):
        assert c.dtype == g.dtype and c.shape == g.shape
        if maxulp:
            np.testing.assert_array_max_ulp(g, c, maxulp=maxulp)
        else:
            np.testing.assert_array_equal(g, c)


# ---- kernel source: 64-bit indices --------------------------------------------------------
def test_kernels_index_with_64_bit_integers():
    seen = 0
    for family in FAMILIES:
        for k in kernels.family(family).values():
            seen += 1
            signature = k.code.split(f"void {k.name}(", 1)[1].split(")", 1)[0]
            for param in signature.split(","):
                words = param.replace("const", "").split()
                if "*" in param or words[0] in ("float", "double", "mx_conv_geom"):
                    continue
                expected = "int" if words[-1] in FLAGS else "mx_idx"
                assert words[0] == expected, (k.name, param)
            assert "MX_GRID_LOOP(" in k.code, k.name
            # the only int loops run over the 8 softmax lanes or the 3 spatial axes
            for bound in re.findall(r"for \(int \w+ = \d+; \w+ < (\w+);", k.code):
                assert bound in ("8", "3"), (k.name, bound)
    assert seen >= 20


# ---- launch configuration ---------------------------------------------------------------
@pytest.fixture
def launch_as(monkeypatch):
    """``launch_as(grid, block)``: later launches use that configuration."""
    def configure(grid, block):
        if runtime.backend() == "emulator":
            monkeypatch.setattr(emulator, "GRID", grid)
            monkeypatch.setattr(emulator, "BLOCK", block)
        else:
            monkeypatch.setattr(launch, "BLOCK", block)
            monkeypatch.setattr(launch, "_GRID_LIMIT", dict.fromkeys(
                set(launch._GRID_LIMIT) | {0}, grid))
    return configure


def _layer_outputs(rng):
    g = mx.gpu(0)
    x = mx.nd.array(rng.standard_normal((3, 4, 9, 10)), ctx=g)
    w = mx.nd.array(rng.standard_normal((6, 2, 3, 3)), ctx=g)
    conv = dict(kernel=(3, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1), num_filter=6,
                num_group=2)
    y = mx.nd.Convolution(x, w, mx.nd.array(rng.standard_normal(6), ctx=g), **conv)
    lengths = mx.nd.array(rng.integers(0, 11, (3, 4, 9)), ctx=g, dtype="int64")
    gamma, beta = mx.nd.ones(4, ctx=g), mx.nd.zeros(4, ctx=g)
    mm, mv = mx.nd.zeros(4, ctx=g), mx.nd.ones(4, ctx=g)
    with autograd.train_mode():
        bn = mx.nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
    pool = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1), pooling_convention="full")
    return [y, mx.nd.Deconvolution(y, w, no_bias=True, **dict(conv, num_filter=4)),
            mx.nd._internal._conv_weight_grad(x, y, **conv),
            mx.nd.softmax(x, axis=-1), mx.nd.log_softmax(x.astype("float32"), axis=1),
            mx.nd.softmax(x.astype("float64"), lengths, axis=-1, use_length=True),
            mx.nd.Pooling(x, pool_type="avg", count_include_pad=False, **pool),
            mx.nd._internal._pool_max_scatter(x, mx.nd.Pooling(x, **pool), pool_type="max",
                                              **pool),
            bn, mm, mv, mx.nd.LayerNorm(x, mx.nd.ones(10, ctx=g), mx.nd.zeros(10, ctx=g)),
            mx.nd.LeakyReLU(x, act_type="gelu"),
            mx.nd.Embedding(mx.nd.array([[3, 0], [1, 1]], ctx=g), w.reshape((6, 18)),
                            input_dim=6, output_dim=18)]


@pytest.mark.gpu
def test_results_do_not_depend_on_the_launch_configuration(rng, launch_as):
    seed = int(rng.integers(1 << 30))
    configs = [(1, 1), (5, 7)] if runtime.backend() == "emulator" else [(1, 32), (7, 96),
                                                                        (4096, 1024)]
    runs = []
    for grid, block in configs:
        launch_as(grid, block)
        runs.append([a.asnumpy() for a in _layer_outputs(np.random.default_rng(seed))])
    for other in runs[1:]:
        for got, want in zip(other, runs[0]):
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


# ---- the CPU kernels' formulas and order ----------------------------------------------------
def _points(rng, dtype):
    x = np.concatenate([np.linspace(-30, 30, 2001), rng.standard_normal(999) * 5,
                        [0.0, -0.0, 1e-30, -1e-30, 88.0, -104.0, 700.0, -800.0]])
    return x.astype(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("act, params", [("elu", {"slope": 0.25}), ("selu", {}),
                                         ("gelu", {}), ("leaky", {"slope": 0.1})])
def test_float32_activations_equal_the_cpu_bit_for_bit(rng, act, params):
    # float32 computes in double with mx_math.h's exp/expm1/erfc: no math library, so a
    # CUDA device rounds alike too
    x = _points(rng, np.float32)
    assert_same(*both(mx.nd.LeakyReLU, x, act_type=act, **params))


@pytest.mark.gpu
@pytest.mark.parametrize("act", ["softrelu", "sigmoid", "tanh", "relu", "softsign"])
def test_activation_matches_the_cpu(rng, act):
    for dtype in ("float32", "float64"):
        cpu, gpu = both(mx.nd.Activation, _points(rng, dtype), act_type=act)
        # exp/log/tanh come from each device's math library: CUDA documents up to 2 ulps for
        # expf/logf, glibc under 1, and 1 / (1 + e) rounds once more on each side
        assert_same(cpu, gpu, maxulp=4)


@pytest.mark.gpu
@pytest.mark.parametrize("shape, axis", [((5, 37), -1), ((3, 8), 1), ((4, 13, 6), 1),
                                         ((2, 1, 1000), -1)])
def test_float32_softmax_equals_the_cpu_bit_for_bit(rng, shape, axis):
    x = (rng.standard_normal(shape) * 20).astype(np.float32)
    x.reshape(-1)[::7] = 80.0                          # terms near exp's overflow
    for fn in (mx.nd.softmax, mx.nd.log_softmax, mx.nd.softmin):
        cpu, gpu = both(fn, x, axis=axis, temperature=0.7)
        # the same mx_expf and sums in the same order; only log() comes from a library
        assert_same(cpu, gpu, maxulp=0 if fn is not mx.nd.log_softmax else 1)


@pytest.mark.gpu
def test_masked_and_float16_softmax_match_the_cpu(rng):
    x = rng.standard_normal((4, 6, 5))
    lengths = rng.integers(0, 7, (4, 5)).astype(np.int64)
    for dtype in ("float16", "float32", "float64"):
        cpu, gpu = both(mx.nd.softmax, x.astype(dtype), lengths, axis=1, use_length=True)
        assert_same(cpu, gpu, maxulp=1)
    cpu, gpu = both(mx.nd.softmax_cross_entropy, x[:, :, 0], np.array([0, 5, 2, 3.0]))
    assert_same(cpu, gpu, maxulp=4)


@pytest.mark.gpu
def test_normalisation_statistics_equal_the_cpu(rng):
    x = rng.standard_normal((5, 6, 7, 3)) * 3 + 1
    for dtype in ("float32", "float64"):
        xs = x.astype(dtype)
        ones, zeros = np.ones(6, dtype), np.zeros(6, dtype)
        for axis in (1, -1):
            c = xs.shape[axis]
            cpu, gpu = both(mx.nd.LayerNorm, xs, np.ones(c, dtype), np.zeros(c, dtype),
                            axis=axis, output_mean_var=True)
            assert_same(cpu, gpu, maxulp=1)
        assert_same(*both(mx.nd.InstanceNorm, xs, ones, zeros), maxulp=1)
        for mode in ("instance", "channel", "spatial"):
            assert_same(*both(mx.nd.L2Normalization, xs, mode=mode), maxulp=1)
        for shape in ((105, 6), (5, 6, 21)):            # BatchNorm's two statistics layouts
            data = xs.reshape(shape)
            results = []
            for ctx in (mx.cpu(), mx.gpu(0)):
                args = [mx.nd.array(a, ctx=ctx, dtype=dtype) for a in
                        (data, ones, zeros, zeros, ones)]
                with autograd.train_mode():
                    out = mx.nd.BatchNorm(*args, fix_gamma=False, momentum=0.8,
                                          output_mean_var=True)
                results.append([o.asnumpy() for o in out] + [args[3].asnumpy(),
                                                             args[4].asnumpy()])
            assert_same(*results, maxulp=1)        # moving statistics updated alike


@pytest.mark.gpu
def test_norm_project_reads_its_flag_on_the_device(rng):
    g, xhat = rng.standard_normal((2, 2, 4, 3))
    # BatchNorm's layout (kept axis 1), LayerNorm's rows, and statistics over a leading axis
    for axis, exclude, kept in ((1, True, (1, 4, 1)), (-1, False, (2, 4, 1)),
                                (0, False, (1, 4, 3))):
        r, a, b = rng.random((3,) + kept)
        for t in (0.0, 1.0):
            cpu, gpu = both(mx.nd._internal._norm_project, g, xhat, r, np.array([t]), a, b,
                            axis=axis, exclude=exclude)
            assert_same(cpu, gpu)


# ---- convolution: col2im gathers ------------------------------------------------------------
def _taps(k, dilate, stride, out_sp):
    """(tap, slices of the padded input that tap reads for every output position)."""
    for tap in np.ndindex(*k):
        yield tap, tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                         for t, d, s, o in zip(tap, dilate, stride, out_sp))


def np_conv(x, w, stride, pad, dilate, groups):
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    k = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1
              for i in range(nd)]
    f, cg = w.shape[0], x.shape[1] // groups
    fg = f // groups
    out = np.zeros((x.shape[0], f) + tuple(out_sp))
    for tap, sl in _taps(k, dilate, stride, out_sp):
        patch = xp[(slice(None), slice(None)) + sl]
        for gi in range(groups):
            out[:, gi * fg:(gi + 1) * fg] += np.einsum(
                "nc...,fc->nf...", patch[:, gi * cg:(gi + 1) * cg],
                w[(slice(gi * fg, (gi + 1) * fg), slice(None)) + tap])
    return out


def np_deconv(y, w, stride, pad, dilate, groups, out_sp):
    """The adjoint of np_conv in its data: each input element scattered through the taps."""
    cin, fg = w.shape[:2]
    cg, k = cin // groups, w.shape[2:]
    full = np.zeros((y.shape[0], fg * groups) + tuple(o + 2 * p for o, p in zip(out_sp, pad)))
    for tap, sl in _taps(k, dilate, stride, y.shape[2:]):
        for gi in range(groups):
            full[(slice(None), slice(gi * fg, (gi + 1) * fg)) + sl] += np.einsum(
                "nc...,cf->nf...", y[:, gi * cg:(gi + 1) * cg],
                w[(slice(gi * cg, (gi + 1) * cg), slice(None)) + tap])
    return full[(slice(None), slice(None)) + tuple(slice(p, p + o)
                                                   for p, o in zip(pad, out_sp))]


@pytest.mark.gpu
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_col2im_gathers_overlapping_windows(rng, nd):
    k, s, d, p = (3, 2, 1)[:nd], (2, 1, 2)[:nd], (2, 1, 1)[:nd], (1, 2, 0)[:nd]
    spatial = (9, 7, 6)[:nd]
    x = rng.standard_normal((2, 4) + spatial)
    w = rng.standard_normal((6, 2) + k)
    params = dict(kernel=k, stride=s, dilate=d, pad=p, num_group=2)
    g = mx.gpu(0)
    y = mx.nd.Convolution(mx.nd.array(x, ctx=g, dtype="float64"),
                          mx.nd.array(w, ctx=g, dtype="float64"), no_bias=True,
                          num_filter=6, **params)
    np.testing.assert_allclose(y.asnumpy(), np_conv(x, w, s, p, d, 2), rtol=1e-12, atol=1e-12)
    h = rng.standard_normal(y.shape)
    wt = rng.standard_normal((6, 2) + k)        # Deconvolution: (C_in, filters / group, *k)
    adj = tuple((spatial[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) % s[i] for i in range(nd))
    back = mx.nd.Deconvolution(mx.nd.array(h, ctx=g, dtype="float64"),
                               mx.nd.array(wt, ctx=g, dtype="float64"), no_bias=True,
                               num_filter=4, adj=adj, **params)
    assert back.shape == x.shape
    np.testing.assert_allclose(back.asnumpy(), np_deconv(h, wt, s, p, d, 2, spatial),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_float16_layers_compute_in_float32(rng):
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float16)
    w = (rng.standard_normal((4, 3, 3, 3)) / 3).astype(np.float16)
    cases = [(mx.nd.Convolution, (x, w), dict(kernel=(3, 3), num_filter=4, no_bias=True)),
             (mx.nd.Pooling, (x,), dict(kernel=(2, 2), stride=(2, 2), pool_type="avg")),
             (mx.nd.Activation, (x,), dict(act_type="softrelu")),
             (mx.nd.UpSampling, (x,), dict(scale=2, sample_type="nearest"))]
    for fn, args, kwargs in cases:
        cpu, gpu = both(fn, *args, **kwargs)
        assert gpu[0].dtype == np.float16
        np.testing.assert_allclose(gpu[0].astype(np.float32), cpu[0].astype(np.float32),
                                   rtol=2e-3, atol=2e-3)


# ---- pooling gradients gather in the CPU's order -------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pooling_gradients_equal_the_cpu_bit_for_bit(rng, dtype):
    x = rng.integers(0, 4, (2, 3, 7, 9)).astype(dtype)      # ties: the first maximum wins
    pool = dict(kernel=(3, 3), stride=(2, 1), pad=(1, 1), pooling_convention="full")
    head = rng.standard_normal((2, 3, 4, 9)).astype(dtype)
    ops = mx.nd._internal
    assert_same(*both(ops._pool_max_scatter, x, head, pool_type="max", **pool))
    assert_same(*both(ops._pool_max_gather, x, x + 1, pool_type="max", **pool))
    for kind, include in (("avg", False), ("avg", True), ("sum", True)):
        assert_same(*both(ops._pool_backward, head, pool_type=kind, in_shape=(7, 9),
                          count_include_pad=include, **pool))
    for kind in ("max", "avg", "sum", "lp"):
        # lp's p-th root is the math library's pow (CUDA documents up to 2 ulps for double)
        assert_same(*both(mx.nd.Pooling, x, pool_type=kind, p_value=3, **pool),
                    maxulp=3 if kind == "lp" else 1)
