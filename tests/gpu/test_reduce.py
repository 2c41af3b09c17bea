"""GPU reductions, finiteness checks, hardmax and optimizer updates (mxlite/cuda/ops/reduce.py,
finite.py, optimizer.py): what the shared operator tests cannot show.

* results do not depend on the launch configuration (the emulator's odd grids, or other
  block sizes on a CUDA device): the slicing of a reduction is a function of the shape;
* the multi-pass paths (many slices, few outputs) against float64 NumPy oracles, integer sums
  exact and wrapping, argmax/argmin ties between interleaved slices (the first index wins)
  and NaN rules;
* float16 data accumulates in float32; the kernels index with 64-bit ``mx_idx``;
* the ten optimizer updates equal the CPU bit for bit (one header of formulas), the AdamW
  skip on a non-finite scale happens on the device, overlaps are refused;
* all_finite / _has_nan / _has_inf write their flag on the device.

Every test runs on ``mx.gpu(0)`` (a CUDA device, or the host emulator under
MXLITE_GPU_EMULATOR=1) and skips without one.
"""
import contextlib

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.cuda import emulator, kernels, launch, runtime
from mxlite.cuda.ops import reduce as gpu_reduce

pytestmark = pytest.mark.gpu

F64 = np.float64


def gpu(a, dtype=None):
    return mx.nd.array(a, ctx=mx.gpu(0), dtype=dtype if dtype is not None else a.dtype)


@contextlib.contextmanager
def launch_config(grid, block):
    """Kernels launched inside run on ``grid`` blocks of ``block`` threads (grid-stride
    loops make every configuration correct; the results must not change either)."""
    if runtime.backend() == "emulator":
        saved = emulator.GRID, emulator.BLOCK
        emulator.GRID, emulator.BLOCK = grid, block
        try:
            yield
        finally:
            emulator.GRID, emulator.BLOCK = saved
    else:
        mx.nd.sum(mx.nd.ones((2,), ctx=mx.gpu(0))).wait_to_read()    # the device's limit is set
        saved = launch.BLOCK, dict(launch._GRID_LIMIT)
        launch.BLOCK = block
        for dev in launch._GRID_LIMIT:
            launch._GRID_LIMIT[dev] = grid
        try:
            yield
        finally:
            launch.BLOCK = saved[0]
            launch._GRID_LIMIT.update(saved[1])


CONFIGS = [(1, 1), (3, 5)] if runtime.backend() == "emulator" else [(1, 32), (7, 96), (4096, 1024)]


# ---- launch-configuration independence -----------------------------------------------------
def _several_results(rng):
    a = rng.standard_normal(40_000).astype(np.float32)
    a[::777] = np.nan
    b = rng.standard_normal((6, 500, 7))
    m = rng.integers(-5, 5, (300, 40)).astype(np.int32)
    w, g = rng.standard_normal(1000), rng.standard_normal(1000)
    mom = np.zeros(1000)
    W, G, M = gpu(w), gpu(g), gpu(mom)
    mx.nd.sgd_mom_update(W, G, M, lr=0.1, momentum=0.9, wd=0.01, out=W)
    return [mx.nd.nansum(gpu(a)), mx.nd.sum(gpu(b), axis=1), mx.nd.norm(gpu(b), axis=(0, 2)),
            mx.nd.prod(gpu(b[:, :10]), axis=1), mx.nd.argmax(gpu(a), axis=0),
            mx.nd.argmin(gpu(m), axis=0), mx.nd.max(gpu(m), axis=1),
            mx.nd.contrib.hardmax(gpu(b), axis=1), mx.nd.contrib.isnan(gpu(a)),
            mx.nd.contrib.all_finite(gpu(a)), W, M]


def test_results_do_not_depend_on_the_launch_configuration(rng):
    seed = int(rng.integers(1 << 30))
    runs = []
    for grid, block in CONFIGS:
        with launch_config(grid, block):
            runs.append([x.asnumpy() for x in _several_results(np.random.default_rng(seed))])
    for other in runs[1:]:
        for got, want in zip(other, runs[0]):
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_slices_depend_on_the_shape_alone():
    assert gpu_reduce.slices(1, 10 ** 8) == gpu_reduce.THREADS
    assert gpu_reduce.slices(1, gpu_reduce.PER_SLICE) == 1          # the final pass
    assert gpu_reduce.slices(10 ** 6, 10 ** 4) == 1                 # enough outputs already
    assert gpu_reduce.slices(3, 1000) == 1000 // gpu_reduce.PER_SLICE


# ---- multi-pass reductions against NumPy -----------------------------------------------------
@pytest.mark.parametrize("shape, axis", [((200_003,), None), ((3, 70_001), 1), ((70_001, 3), 0),
                                         ((5, 9_000, 4), 1), ((2, 3, 4, 50_000), (1, 3))])
def test_long_float_sums_match_float64_numpy(rng, shape, axis):
    a = rng.standard_normal(shape)
    for dtype, rtol in (("float32", 2e-5), ("float64", 1e-12)):
        x = a.astype(dtype)
        got = mx.nd.sum(gpu(x), axis=axis).asnumpy()
        want = x.astype(F64).sum(axis=axis)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.astype(F64).reshape(want.shape), want,
                                   rtol=rtol, atol=rtol * np.abs(x).sum() / x.size ** 0.5)
    mean = mx.nd.mean(gpu(a), axis=axis).asnumpy()
    np.testing.assert_allclose(mean.reshape(np.shape(a.mean(axis=axis))), a.mean(axis=axis),
                               rtol=1e-12, atol=1e-15)


def test_integer_sums_are_exact_and_wrap(rng):
    a = rng.integers(-2 ** 62, 2 ** 62, 100_000, dtype=np.int64)
    assert mx.nd.sum(gpu(a)).asnumpy()[0] == a.sum()            # NumPy wraps the same way
    b = rng.integers(-100, 100, (7, 30_000)).astype(np.int8)
    np.testing.assert_array_equal(mx.nd.sum(gpu(b), axis=1).asnumpy(),
                                  b.astype(np.int64).sum(axis=1).astype(np.int8))
    # an integer mean is the exact sum divided by the count, truncated toward zero
    c = np.array([[-7, 0, 0], [7, 1, 0]], np.int32)
    np.testing.assert_array_equal(mx.nd.mean(gpu(c), axis=1).asnumpy(), [-2, 2])


def test_max_min_propagate_nan_and_prod_over_many_slices(rng):
    a = rng.uniform(0.999, 1.001, 100_000)
    a[77_777] = np.nan
    assert np.isnan(mx.nd.max(gpu(a)).asnumpy()[0]) and np.isnan(mx.nd.min(gpu(a)).asnumpy()[0])
    np.testing.assert_allclose(mx.nd.nanprod(gpu(a)).asnumpy()[0], np.nanprod(a), rtol=1e-10)
    np.testing.assert_allclose(mx.nd.nansum(gpu(a)).asnumpy()[0], np.nansum(a), rtol=1e-13)


def test_float16_accumulates_in_float32():
    x = np.ones(3000, np.float16)           # float16 arithmetic would stop at 2048
    assert mx.nd.sum(gpu(x)).asnumpy()[0] == 3000
    assert mx.nd.sum(gpu(x)).dtype == np.float16


# ---- argmax / argmin ----------------------------------------------------------------------------
def test_argmax_ties_across_slices_give_the_first_index():
    n = 200_000                             # many slices: equal maxima fall in different ones
    a = np.zeros(n, np.float32)
    for pos in (150_001, 99_999, 123, 124, 180_000):
        a[pos] = 5.0
    assert mx.nd.argmax(gpu(a), axis=0).asnumpy()[0] == 123
    assert mx.nd.argmin(gpu(-a), axis=0).asnumpy()[0] == 123
    a[170_000] = np.nan
    a[160_000] = np.nan
    assert mx.nd.argmax(gpu(a), axis=0).asnumpy()[0] == 160_000      # the first NaN
    assert mx.nd.argmin(gpu(a), axis=0).asnumpy()[0] == 160_000


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_argmax_with_few_values_matches_numpy(rng, dtype):
    a = rng.integers(0, 3, (4, 30_000, 3)).astype(dtype)
    for axis in (0, 1, 2):
        got = mx.nd.argmax(gpu(a), axis=axis).asnumpy()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.argmax(a, axis=axis))
        np.testing.assert_array_equal(mx.nd.argmin(gpu(a), axis=axis).asnumpy(),
                                      np.argmin(a, axis=axis))


def test_argmax_channel_on_gpu():
    a = np.array([[1, 3, 3], [7, 2, 7]], np.float32)
    got = mx.nd.argmax_channel(gpu(a))
    assert got.dtype == np.float32 and got.asnumpy().tolist() == [1.0, 0.0]


# ---- hardmax and the finiteness checks --------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_hardmax_matches_one_hot_of_numpy_argmax(rng, dtype):
    a = rng.integers(0, 4, (3, 5, 70)).astype(dtype)
    for axis in (0, 1, 2):
        got = mx.nd.contrib.hardmax(gpu(a), axis=axis).asnumpy()
        want = np.zeros(a.shape, dtype)
        np.put_along_axis(want, np.expand_dims(np.argmax(a, axis=axis), axis), 1, axis=axis)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)


def test_float16_classes_and_flags_on_the_device():
    x = np.array([1.0, np.inf, -np.inf, np.nan, -0.0, 65504.0], np.float16)
    np.testing.assert_array_equal(mx.nd.contrib.isfinite(gpu(x)).asnumpy(), np.isfinite(x))
    np.testing.assert_array_equal(mx.nd.contrib.isneginf(gpu(x)).asnumpy(), np.isneginf(x))
    assert gpu(x).has_nan() and gpu(x).has_inf()
    finite = gpu(np.arange(5.0))
    assert mx.nd.contrib.all_finite(finite, gpu(np.arange(3, dtype=np.int32))).asscalar() == 1
    flag = mx.nd.array([1.0], ctx=mx.gpu(0))
    mx.nd.contrib.all_finite(gpu(x), init_output=False, out=flag)
    assert flag.asscalar() == 0
    mx.nd.contrib.all_finite(finite, init_output=False, out=flag)   # only ever cleared
    assert flag.asscalar() == 0


@pytest.mark.parametrize("bad", [None, 0, 2, 4])
def test_all_finite_over_many_arrays_of_mixed_dtypes(rng, bad):
    """Several arrays of one dtype share one launch (a table of addresses and sizes)."""
    arrays = [rng.standard_normal(n).astype(dt) for n, dt in
              ((7, np.float32), (3000, np.float64), (1, np.float32), (50, np.float16),
               (999, np.float32))]
    if bad is not None:
        arrays[bad][-1] = np.inf
    ints = np.arange(4, dtype=np.int64)
    with launch_config(*CONFIGS[-1]):
        flag = mx.nd.multi_all_finite(*[gpu(a) for a in arrays], gpu(ints))
    assert flag.asnumpy().tolist() == [0.0 if bad is not None else 1.0]
    has_inf = mx.nd.array([0.0], ctx=mx.gpu(0))
    for a in arrays:
        has_inf = mx.nd.maximum(has_inf, gpu(a).has_inf())
    assert has_inf.asscalar() == (bad is not None)


def test_float64_words_classify_by_both_halves():
    # a NaN whose payload is in the low word only; the smallest subnormal; the largest double
    bits = np.array([0x7FF0000000000001, 0x0000000000000001, 0x7FEFFFFFFFFFFFFF,
                     0xFFF0000000000000], np.uint64)
    x = bits.view(np.float64)
    for test, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        got = getattr(mx.nd.contrib, test)(gpu(x)).asnumpy()
        np.testing.assert_array_equal(got, ref(x).astype(np.float64))


# ---- optimizer updates ---------------------------------------------------------------------------
_UPDATES = {
    "sgd_update": 0, "sgd_mom_update": 1, "nag_mom_update": 1, "adam_update": 2,
    "rmsprop_update": 1, "rmspropalex_update": 3, "signsgd_update": 0, "signum_update": 1,
    "ftrl_update": 2, "_contrib_adamw_update": 2, "ftml_update": 3, "lamb_update_phase1": 2,
}
_PARAMS = {"lr": 0.05, "wd": 0.01, "rescale_grad": 0.7, "clip_gradient": 0.9, "momentum": 0.9,
           "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6, "gamma1": 0.9, "gamma2": 0.8,
           "clip_weights": 1.5, "lamda1": 0.01, "beta": 1.0, "wd_lh": 0.02, "eta": 0.5, "t": 3}


def _update(name, ctx, arrays, params):
    op = getattr(mx.nd, name) if hasattr(mx.nd, name) else getattr(mx.nd.contrib, "adamw_update")
    nd = [mx.nd.array(a, ctx=ctx, dtype=a.dtype) for a in arrays]
    kw = {k: v for k, v in params.items() if k in op.__signature__.parameters}
    if name == "_contrib_adamw_update":
        kw.pop("rescale_grad", None)
        op(*nd[:4], mx.nd.array([0.7], ctx=ctx), out=nd[0], **kw)
    else:
        op(*nd, out=nd[0], **kw)
    return [x.asnumpy() for x in nd]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("clip", [0.9, -1.0])
@pytest.mark.parametrize("name", list(_UPDATES))
def test_optimizer_updates_equal_the_cpu_bit_for_bit(rng, name, dtype, clip):
    n = 5000
    w = rng.standard_normal(n).astype(dtype)
    g = (2 * rng.standard_normal(n)).astype(dtype)
    g[::101] = np.nan
    states = [np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(_UPDATES[name])]
    params = dict(_PARAMS, clip_gradient=clip, clip_grad=clip)     # ftml_update: clip_grad
    want = _update(name, mx.cpu(), [w, g] + states, params)
    got = _update(name, mx.gpu(0), [w, g] + states, params)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(_bits(a), _bits(b), err_msg=f"{name} array {k}")


def _bits(a):
    """The bytes of ``a`` with every NaN written as one NaN: a NaN's payload is the device's
    own (CUDA writes 0x7fffffff for an operation on NaN, x86 passes on an operand's payload),
    so NaN positions and every other value are compared bit for bit."""
    a = a.copy()
    a[np.isnan(a)] = np.nan
    return a.view(np.uint8)


def test_adamw_skips_on_a_non_finite_scale_on_the_device():
    w, g = gpu(np.arange(4.0)), gpu(np.ones(4))
    mean, var = gpu(np.zeros(4)), gpu(np.zeros(4))
    out = gpu(np.full(4, -1.0))
    for scale in (np.nan, np.inf, 0.0):
        mx.nd.contrib.adamw_update(w, g, mean, var, gpu(np.array([scale], np.float32)),
                                   lr=0.1, eta=1.0, out=out)
        np.testing.assert_array_equal(out.asnumpy(), np.arange(4.0))
        assert not mean.asnumpy().any() and not var.asnumpy().any()


def test_optimizer_overlaps_are_refused_before_writing():
    w, g = gpu(np.ones(6)), gpu(np.ones(6))
    mom = gpu(np.zeros(6))
    with pytest.raises(MXNetError, match="'mom' and 'mom'|share memory"):
        mx.nd.adam_update(w, g, mom, mom, lr=0.1, out=w)
    np.testing.assert_array_equal(w.asnumpy(), np.ones(6))
    np.testing.assert_array_equal(mom.asnumpy(), np.zeros(6))


# ---- kernel source -------------------------------------------------------------------------------
@pytest.mark.parametrize("family", ["reduce", "argreduce", "finite", "optimizer"])
def test_kernels_index_with_64_bit_integers(family):
    """Sizes, extents and loop counters are mx_idx (64-bit), so arrays past 2^32 elements
    index correctly."""
    ks = kernels.family(family)
    assert ks
    for k in ks.values():
        signature = k.code.split(f"void {k.name}(", 1)[1].split(")", 1)[0]
        scalars = [p.split() for p in signature.split(",") if "*" not in p]
        integers = [p for p in scalars if p[0] not in ("float", "double", "mx_optim_params",
                                                       "const")]
        assert integers and all(p[0] == "mx_idx" for p in integers), (k.name, signature)
        assert "MX_GRID_LOOP(i, " in k.code and "for (int" not in k.code, k.name


def _mp_run(ctx, w, g, states):
    """Two multi-precision SGD steps and a mixed-precision LAMB step on ``ctx``."""
    w16 = mx.nd.array(w, ctx=ctx, dtype="float16")
    g16 = mx.nd.array(g, ctx=ctx, dtype="float16")
    master = w16.astype("float32")
    mom, mean, var = [mx.nd.array(s, ctx=ctx, dtype="float32") for s in states]
    mx.nd.mp_sgd_mom_update(w16, g16, mom, master, lr=0.1, momentum=0.9, wd=0.01,
                            clip_gradient=0.9, out=w16)
    mx.nd.mp_nag_mom_update(w16, g16, mom, master, lr=0.1, momentum=0.9, out=w16)
    mx.nd.mp_sgd_update(w16, g16, master, lr=0.05, out=w16)
    step = mx.nd.mp_lamb_update_phase1(w16, g16, mean, var, master, t=2, wd=0.01)
    # the norms on the host: a device reduction may sum in another order
    r1, r2 = (mx.nd.array([np.linalg.norm(x.asnumpy())], ctx=ctx) for x in (master, step))
    mx.nd.mp_lamb_update_phase2(w16, step, r1, r2, master, lr=0.01, upper_bound=5.0, out=w16)
    return [x.asnumpy() for x in (w16, master, mom, mean, var, step)]


def test_multi_precision_updates_equal_the_cpu_bit_for_bit(rng):
    n = 3000
    w, g = rng.standard_normal(n), 2 * rng.standard_normal(n)
    states = [np.abs(rng.standard_normal(n)) for _ in range(3)]
    want = _mp_run(mx.cpu(), w, g, states)
    got = _mp_run(mx.gpu(0), w, g, states)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(_bits(a), _bits(b), err_msg=f"array {k}")
