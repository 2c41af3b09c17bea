"""GPU kernels of the element-wise operators, creation ops and casts (mxlite/cuda/ops/elemwise.py,
creation.py, where_clip.py, mxlite/cuda/casts.py): what the shared operator tests cannot show.

* every variant of the binary kernels (same-size operands, a scalar by value on either side,
  a one-element array on either side, broadcasting through a layout that cannot merge) gives
  NumPy's values, float16 included;
* results do not depend on the launch configuration;
* conversions are NumPy's: float64 -> float16 in one rounding, float -> integer of NaN and
  out-of-range values as NumPy gives them on x86-64, every float16 bit pattern;
* arange holds exact int64 values, where/clip/fill/cast_into handle rows, strides and
  broadcasts;
* kernels index with 64-bit ``mx_idx`` (a scan of their source, which needs no GPU).

Tests marked ``gpu`` run on ``mx.gpu(0)`` (a CUDA device, or the host emulator under
MXLITE_GPU_EMULATOR=1) and skip without one.
"""
import platform
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite.cuda import kernels, runtime

from .test_nn import launch_as  # noqa: F401  (the launch-configuration fixture)

FAMILIES = [f for f in kernels.families()
            if f.startswith("elemwise_") or f in ("cast", "fill", "arange", "where", "clip",
                                                   "polygamma")]
X86 = platform.machine() in ("x86_64", "AMD64")


def gpu_array(a):
    return mx.nd.array(a, ctx=mx.gpu(0), dtype=a.dtype)


def assert_equal(got, want):
    """Same dtype and shape, equal values (NaN where NumPy has NaN)."""
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else got
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                  want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


# ---- kernel source ------------------------------------------------------------------------
def test_kernels_index_with_64_bit_integers():
    codes = {k.name: k.code for f in FAMILIES for k in kernels.family(f).values()}
    assert len(codes) > 900
    for name, code in codes.items():
        params = re.search(rf"void {name}\(([^)]*)\)", code).group(1)
        assert params.split(",")[-1].split() == ["mx_idx", "n"], name
        assert "MX_GRID_LOOP(i, n)" in code, name
        # no 32-bit index or size: the one int is polygamma's order
        assert re.findall(r"\b(?:int|unsigned)\b(?! order)", code) == [], name


# ---- binary variants ----------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (1,)), ((1, 1), (3, 4)),
                                    ((2, 1, 5), (3, 1)), ((4, 1, 3, 1), (1, 2, 1, 5)),
                                    ((1, 6), (6, 1)), ((0, 3), (1, 3))])
def test_binary_variants_match_numpy(rng, dtype, shapes):
    a = (rng.standard_normal(shapes[0]) * 20).astype(dtype)
    b = (rng.standard_normal(shapes[1]) * 20).astype(dtype)
    ga, gb = gpu_array(a), gpu_array(b)
    with np.errstate(all="ignore"):
        for op, ref in (("broadcast_add", np.add), ("broadcast_mul", np.multiply),
                        ("broadcast_maximum", np.maximum), ("broadcast_greater", np.greater)):
            want = ref(a, b)
            if op == "broadcast_greater":
                want = want.astype(dtype)
            if dtype == "float16":      # computed in float32, rounded once
                want = ref(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
            assert_equal(getattr(mx.nd, op)(ga, gb), want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int64"])
def test_scalar_on_either_side(rng, dtype):
    x = (rng.standard_normal((5, 7)) * 10).astype(dtype)
    x[x == 0] = 3
    g = gpu_array(x)
    work = np.float32 if dtype == "float16" else x.dtype.type
    s = work(3)
    assert_equal(g - 3, (x.astype(work) - s).astype(dtype))
    assert_equal(3 - g, (s - x.astype(work)).astype(dtype))
    if x.dtype.kind == "f":
        assert_equal(2.5 / g, (work(2.5) / x.astype(work)).astype(dtype))
    else:   # integer division truncates toward zero; modulo takes the divisor's sign
        want_div = (np.trunc(7 / x.astype(np.float64))).astype(dtype)
        assert_equal(mx.nd._internal._rdiv_scalar(g, scalar=7), want_div)
        assert_equal(mx.nd._internal._rmod_scalar(g, scalar=7), np.mod(np.int64(7), x)
                     .astype(dtype))


@pytest.mark.gpu
def test_float32_scalar_beyond_float32_overflows_as_a_cast():
    x = gpu_array(np.array([1.0, -1.0, 0.0], np.float32))
    assert_equal(x * 1e300, np.array([np.inf, -np.inf, np.nan], np.float32))


@pytest.mark.gpu
def test_integer_scalar_comparisons_are_exact():
    x = np.array([0, 1, 200, 255], np.uint8)
    g = gpu_array(x)
    assert_equal(g > -1, np.ones(4, np.uint8))
    assert_equal(g >= 199.5, np.array([0, 0, 1, 1], np.uint8))
    assert_equal(g == 1.5, np.zeros(4, np.uint8))
    b = gpu_array(np.array([True, False]))
    assert_equal(mx.nd._internal._logical_and_scalar(b, scalar=np.nan), np.array([True, False]))


@pytest.mark.gpu
def test_mixed_dtypes_promote_as_on_cpu(rng):
    a = rng.integers(-50, 50, (4, 3)).astype(np.int32)
    b = rng.standard_normal((3,)).astype(np.float32)
    c = rng.integers(0, 2, (4, 3)).astype(bool)
    for x, y in ((a, b), (b, c), (c, c), (a.astype(np.int8), a.astype(np.uint8))):
        cpu = mx.nd.broadcast_add(mx.nd.array(x, dtype=x.dtype), mx.nd.array(y, dtype=y.dtype))
        assert_equal(mx.nd.broadcast_add(gpu_array(x), gpu_array(y)), cpu.asnumpy())


@pytest.mark.gpu
def test_integer_input_of_a_float_only_op_reads_as_float32():
    x = np.array([-3, 0, 7, 100], np.int64)
    assert_equal(mx.nd.sqrt(gpu_array(x)), mx.nd.sqrt(mx.nd.array(x, dtype=x.dtype)).asnumpy())
    assert mx.nd.sqrt(gpu_array(x)).dtype == np.float32


# ---- launch configuration -----------------------------------------------------------------
def _outputs(rng):
    x = gpu_array(rng.standard_normal((5, 1, 7)).astype(np.float32))
    y = gpu_array(rng.standard_normal((3, 1)).astype(np.float32))
    h = gpu_array(rng.standard_normal((33,)).astype(np.float16))
    i = gpu_array(rng.integers(-100, 100, (4, 9)).astype(np.int32))
    return [mx.nd.sin(x), x * y, x + 1, h * h, mx.nd.cast(x, dtype="float16"),
            mx.nd.cast(h, dtype="int8"), i / 7, mx.nd.where(x > 0, x, -x),
            mx.nd.clip(i, -5.5, 50),
            mx.nd.arange(3, 40, 2, repeat=3, ctx=mx.gpu(0), dtype="int64"),
            mx.nd.full((4, 5), 7.5, ctx=mx.gpu(0), dtype="float16"),
            mx.nd._internal._polygamma(x, n=1)]


@pytest.mark.gpu
def test_results_do_not_depend_on_the_launch_configuration(rng, launch_as):  # noqa: F811
    seed = int(rng.integers(1 << 30))
    emulated = runtime.backend() == "emulator"
    want = [a.asnumpy().view(np.uint8) for a in _outputs(np.random.default_rng(seed))]
    for grid, block in [(1, 1), (4, 7)] if emulated else [(1, 32), (4096, 1024)]:
        launch_as(grid, block)
        got = [a.asnumpy().view(np.uint8) for a in _outputs(np.random.default_rng(seed))]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# ---- conversions --------------------------------------------------------------------------
@pytest.mark.gpu
def test_float64_to_float16_rounds_once(rng):
    halfway = np.float64(1 + 2 ** -11)
    d = np.concatenate([[halfway + 2 ** -40, halfway, halfway - 2 ** -40, 65519.99, 65520.0,
                         -65520.0, 2 ** -25, 2 ** -25 * 1.0000001, 2 ** -24 * 1.5, 5e-324,
                         np.inf, -np.inf, np.nan, -0.0],
                        rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000)])
    with np.errstate(over="ignore"):
        want = d.astype(np.float16)
    got = mx.nd.cast(gpu_array(d), dtype="float16").asnumpy()
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)],
                                  want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()
    assert got[0] == np.float16(1.001)     # not 1: float32 would round twice


@pytest.mark.gpu
def test_every_float16_value_converts_as_numpy():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    g = gpu_array(h)
    for dt in ("float32", "float64", "bool"):
        got = mx.nd.cast(g, dtype=dt).asnumpy()
        want = h.astype(dt)
        nan = np.isnan(want) if dt != "bool" else np.zeros(h.shape, bool)
        np.testing.assert_array_equal(got[~nan], want[~nan])
        assert np.isnan(got[nan]).all()
    f = mx.nd.cast(g, dtype="float32")
    back = mx.nd.cast(f, dtype="float16").asnumpy().view(np.uint16)
    finite = ~np.isnan(h)
    np.testing.assert_array_equal(back[finite], h.view(np.uint16)[finite])


@pytest.mark.gpu
@pytest.mark.skipif(not X86, reason="NumPy's float -> int conversion of NaN and out-of-range "
                                    "values is the x86-64 instruction's; the GPU gives that")
@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
def test_float_to_integer_as_numpy_on_x86(src):
    v = np.array([300.5, -300.5, np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, 255.9, -1.5,
                  2147483653.0, -2147483649.0, -0.7, 65504], np.float64)
    with np.errstate(all="ignore"):
        x = v.astype(src)
        for dt in ("int8", "uint8", "int32", "int64", "bool"):
            assert_equal(mx.nd.cast(gpu_array(x), dtype=dt), x.astype(dt))


@pytest.mark.gpu
def test_integer_conversions_wrap_and_round_as_numpy(rng):
    x = rng.integers(-(1 << 62), 1 << 62, 500, dtype=np.int64)
    x[:4] = [0, -1, (1 << 53) + 1, 65519]
    g = gpu_array(x)
    for dt in ("int8", "uint8", "int32", "float32", "float64", "float16", "bool"):
        with np.errstate(over="ignore"):
            assert_equal(mx.nd.cast(g, dtype=dt), x.astype(dt))


# ---- creation, where, clip, namespace -------------------------------------------------------
@pytest.mark.gpu
def test_arange_is_exact_for_large_int64():
    start = (1 << 62) + 1
    got = mx.nd.arange(start, start + 10, 3, ctx=mx.gpu(0), dtype="int64", repeat=2)
    want = np.repeat(np.arange(start, start + 10, 3, dtype=np.int64), 2)
    assert_equal(got, want)
    assert_equal(mx.nd.arange(0.5, 3, 0.25, ctx=mx.gpu(0), dtype="float16"),
                 (0.5 + 0.25 * np.arange(10, dtype=np.float64)).astype(np.float16))


@pytest.mark.gpu
@pytest.mark.parametrize("cond_dtype", ["float16", "float32", "float64", "int32", "int64",
                                        "uint8", "bool"])
def test_where_tests_the_condition_as_the_cpu(rng, cond_dtype):
    x = rng.standard_normal((4, 3)).astype(np.float64)
    y = -x
    cond = np.array([0, 1, 2, 0]).astype(cond_dtype)
    if cond_dtype.startswith("float"):
        cond = np.array([-0.0, np.nan, 0.5, 0.0], cond_dtype)
    want_rows = np.where(cond.astype(bool)[:, None], x, y)
    assert_equal(mx.nd.where(gpu_array(cond), gpu_array(x), gpu_array(y)), want_rows)
    full = np.resize(cond, x.shape)
    assert_equal(mx.nd.where(gpu_array(full), gpu_array(x.astype(np.float16)),
                             gpu_array(y.astype(np.float16))),
                 np.where(full.astype(bool), x, y).astype(np.float16))


@pytest.mark.gpu
def test_clip_float16_bounds_and_nan():
    x = np.array([np.nan, -np.inf, -1, 0.3, 2, 65504], np.float16)
    got = mx.nd.clip(gpu_array(x), -0.5, 1e300)
    want = np.clip(x.astype(np.float32), np.float32(-0.5), np.inf).astype(np.float16)
    assert_equal(got, want)
    assert_equal(mx.nd.clip(gpu_array(np.array([True, False])), 0.5, 3),
                 np.array([True, True]))


@pytest.mark.gpu
def test_fill_zero_and_cast_into_strided_views(rng):
    ns = runtime.namespace()
    a = ns.from_host(rng.standard_normal((6, 8)))
    view = a[::2, 1::3]
    ns.fill_zero(view)
    host = ns.asnumpy(a)
    assert (host[::2, 1::3] == 0).all() and (host[1::2] != 0).all()
    dst = ns.empty((3, 4, 5), np.float16)
    src = ns.from_host(np.arange(5, dtype=np.int64) - 2)
    ns.cast_into(dst, src)                     # broadcast source, dtype change
    assert_equal(ns.asnumpy(dst), np.broadcast_to(np.arange(5) - 2, (3, 4, 5))
                 .astype(np.float16))
    dst64 = ns.empty((4, 3), np.float64)
    ns.cast_into(dst64, ns.from_host(np.arange(12, dtype=np.int32).reshape(3, 4)).T)
    assert_equal(ns.asnumpy(dst64), np.arange(12).reshape(3, 4).T.astype(np.float64))

