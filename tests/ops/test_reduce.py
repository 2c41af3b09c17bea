"""Reductions (mxlite/ops/reduce.py) against NumPy oracles.

sum/mean/prod/max/min/nansum/nanprod for every dtype and axis form (None, int, negative,
tuple, (), exclude, keepdims), 0-d and empty inputs, shapes that take each kernel path
(contiguous rows, long rows cut into chunks, columns, columns split over rows, several
non-adjacent axis groups), float32 accuracy, NaN rules, argmax/argmin, norm, sum_to and the
error paths.

Oracles compute in float64 (floats) or wrapping int64 (integers) and cast to the dtype the
MXNet rules give; shapes follow MXNet 1.x (a full reduction gives shape (1,)).
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.registry import NON_DIFFERENTIABLE, REGISTRY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "uint8", "int32", "int64")
ALL_DTYPES = FLOATS + INTS + ("bool",)
OPS = ("sum", "mean", "prod", "max", "min", "nansum", "nanprod")
F64 = np.float64
TOL = {"float16": 3e-3, "float32": 2e-6, "float64": 1e-13}

AXIS_CASES = [None, (), 0, 1, 2, -1, -3, (0, 2), (2, 0), (1, 2), (0, 1), (0, 1, 2), (-1, 0)]


# ---- oracles ---------------------------------------------------------------------------------
def expected_axes(ndim, axis, exclude=False):
    """MXNet 1.x: None or () reduces every axis; exclude reduces the axes not listed."""
    if axis is None or axis == ():
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % ndim for a in axes)
    if exclude:
        return tuple(a for a in range(ndim) if a not in axes)
    return axes


def expected_dtype(name, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_ and name not in ("max", "min"):
        return np.dtype("float32") if name == "mean" else np.dtype("int64")
    return dtype


def oracle(name, a, axis=None, keepdims=False, exclude=False):
    """The reduction computed by NumPy at higher precision, in MXNet's dtype and shape."""
    axes = expected_axes(a.ndim, axis, exclude)
    out_dt = expected_dtype(name, a.dtype)
    if name in ("max", "min"):
        r = getattr(np, name)(a, axis=axes, keepdims=True)
    elif a.dtype.kind == "f" or name == "mean" and a.dtype == np.bool_:
        fn = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "nansum": np.nansum,
              "nanprod": np.nanprod}[name]
        r = fn(a.astype(F64), axis=axes, keepdims=True)
    else:
        w = a.astype(np.int64)
        if name in ("sum", "nansum", "mean"):
            r = np.sum(w, axis=axes, keepdims=True)
            if name == "mean":
                n = int(np.prod([a.shape[i] for i in axes]))
                r = np.where(r < 0, -((-r) // n), r // n)   # truncation toward zero
        else:
            r = np.prod(w, axis=axes, keepdims=True)       # wraps modulo 2**64
    r = np.asarray(r).astype(out_dt)
    if not keepdims:
        r = r.reshape([d for i, d in enumerate(r.shape) if i not in axes] or [1])
    return r


def sample(rng, shape, dtype, name="sum"):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    if name in ("prod", "nanprod"):
        return (rng.uniform(0.7, 1.3, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def check(got, want, a=None):
    """Exact for integers and bool, relative to the sum of magnitudes for floats."""
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else got
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        tol = TOL[want.dtype.name]
        scale = 1.0 if a is None or a.size == 0 else float(np.max(np.abs(a.astype(F64))))
        n = 1 if a is None else max(a.size, 1)
        np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=tol,
                                   atol=tol * scale * min(n, 64), equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# ---- values: every op x dtype x axis form ----------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", OPS)
def test_reduce_every_axis_form(name, dtype, rng):
    a = sample(rng, (3, 4, 5), dtype, name)
    x = mx.nd.array(a, dtype=dtype)
    for axis in AXIS_CASES:
        for keepdims in (False, True):
            got = getattr(mx.nd, name)(x, axis=axis, keepdims=keepdims)
            check(got, oracle(name, a, axis, keepdims), a)
    for axis in (0, (0, 2), (1,), (0, 1, 2), (-1,)):
        for keepdims in (False, True):
            got = getattr(mx.nd, name)(x, axis=axis, keepdims=keepdims, exclude=True)
            check(got, oracle(name, a, axis, keepdims, exclude=True), a)


@pytest.mark.parametrize("name", OPS)
def test_full_reduction_has_mxnet_shape(name, rng):
    a = sample(rng, (2, 3), "float32", name)
    assert getattr(mx.nd, name)(mx.nd.array(a)).shape == (1,)
    assert getattr(mx.nd, name)(mx.nd.array(a), keepdims=True).shape == (1, 1)


@pytest.mark.parametrize("dtype", ("float32", "int32", "bool"))
@pytest.mark.parametrize("name", OPS)
def test_zero_dim_input(name, dtype, rng):
    a = sample(rng, (), dtype, name)
    x = mx.nd.array(a, dtype=dtype)
    check(getattr(mx.nd, name)(x), oracle(name, a), a)
    got = getattr(mx.nd, name)(x, keepdims=True)
    check(got, oracle(name, a, keepdims=True), a)
    assert got.shape == ()


@pytest.mark.parametrize("dtype", ("float32", "float64", "int8", "int64"))
@pytest.mark.parametrize("name", OPS)
def test_transposed_and_odd_shapes(name, dtype, rng):
    for shape in ((7, 1, 9), (1, 13), (5, 1), (2, 3, 1, 4), (6, 5, 4, 3)):
        a = np.ascontiguousarray(sample(rng, shape, dtype, name).T)
        x = mx.nd.array(a, dtype=dtype)
        for axis in (None, 0, -1, (0, a.ndim - 1), tuple(range(1, a.ndim))):
            check(getattr(mx.nd, name)(x, axis=axis), oracle(name, a, axis), a)


# Each shape/axis pair drives a different kernel path (see mxlite/_core/reduce.pyx.in):
# rows in parallel, long rows cut into chunks, columns, columns split over row ranges,
# column tiles, and reductions in several steps over non-adjacent axes.
KERNEL_PATHS = [
    ((300, 700), 1), ((3, 100_003), 1), ((200_001,), 0), ((100_000, 3), 0),
    ((40_000, 5), 0), ((7, 20_000, 3), 1), ((3, 2_500, 40), (0, 1)), ((5, 3_000), 0),
    ((2, 2_000, 2_100), 1), ((20, 30, 40, 50), (0, 2)), ((20, 30, 40, 50), (1, 3)),
    ((20, 30, 40, 50), (0, 1, 3)), ((20, 30, 40, 50), (0, 3)),
]


@pytest.mark.parametrize("dtype", ("float32", "float64", "int8", "int32", "uint8"))
@pytest.mark.parametrize("shape,axis", KERNEL_PATHS)
def test_kernel_paths(shape, axis, dtype, rng):
    a = sample(rng, shape, dtype)
    x = mx.nd.array(a, dtype=dtype)
    for name in ("sum", "max", "min", "mean"):
        check(getattr(mx.nd, name)(x, axis=axis), oracle(name, a, axis), a)
    if isinstance(axis, int):
        np.testing.assert_array_equal(mx.nd.argmax(x, axis=axis).asnumpy(),
                                      np.argmax(a, axis=axis))
        np.testing.assert_array_equal(mx.nd.argmin(x, axis=axis).asnumpy(),
                                      np.argmin(a, axis=axis))


@settings(max_examples=60)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
       dtype=st.sampled_from(["float64", "int32", "bool"]),
       name=st.sampled_from(["sum", "prod", "max", "min", "mean"]),
       keepdims=st.booleans())
def test_reduce_random_shapes(data, shape, dtype, name, keepdims):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = sample(rng, shape, dtype, name)
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda v: v
                              % max(len(shape), 1), max_size=len(shape))) if shape else []
    axis = tuple(axes) if axes else None
    x = mx.nd.array(a, dtype=dtype)
    red = expected_axes(a.ndim, axis)
    empty_axis = np.prod([shape[i] for i in red]) == 0
    fn = getattr(mx.nd, name)
    if empty_axis and (name in ("max", "min") or name == "mean" and dtype == "int32"):
        with pytest.raises(MXNetError, match=name):
            fn(x, axis=axis, keepdims=keepdims)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy: mean of empty slice
        want = oracle(name, a, axis, keepdims)
    check(fn(x, axis=axis, keepdims=keepdims), want, a)


# ---- accuracy, dtypes, special values ----------------------------------------------------------
def test_float32_sum_is_accurate(rng):
    a = rng.random(1_000_000).astype(np.float32)
    ref = a.astype(F64).sum()
    got = float(mx.nd.sum(mx.nd.array(a)).asscalar())
    assert abs(got - ref) / ref < 1e-6
    # the same data summed down columns (the cascade path), and as a mean
    b = a.reshape(250_000, 4)
    got_cols = mx.nd.sum(mx.nd.array(b), axis=0).asnumpy().astype(F64)
    ref_cols = b.astype(F64).sum(axis=0)
    assert np.max(np.abs(got_cols - ref_cols) / ref_cols) < 1e-6
    assert abs(float(mx.nd.mean(mx.nd.array(a)).asscalar()) - ref / a.size) < 1e-6 * 0.5


def test_float16_accumulates_in_float32(rng):
    a = np.full(20_000, 1.0, np.float16)         # a float16 running sum stalls at 2048
    got = mx.nd.sum(mx.nd.array(a, dtype=a.dtype))
    assert got.dtype == np.float16 and float(got.asscalar()) == 20_000
    b = rng.uniform(0, 1, (64, 3000)).astype(np.float16)
    want = b.astype(F64).sum(axis=1)
    got = mx.nd.sum(mx.nd.array(b, dtype=b.dtype), axis=1)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.asnumpy().astype(F64), want, rtol=1e-3)


def test_integer_sums_wrap_in_the_input_dtype_and_mean_truncates():
    a = np.full(300, 255, np.uint8)
    assert mx.nd.sum(mx.nd.array(a, dtype=a.dtype)).asnumpy()[0] == (300 * 255) % 256
    big = np.array([2**62, 2**62, 2**62 - 1, 5], np.int64)
    assert mx.nd.sum(mx.nd.array(big, dtype=big.dtype)).asnumpy()[0] == big.sum()  # wraps
    m = mx.nd.mean(mx.nd.array([[-7, 0], [2, 0]], dtype="int32"), axis=1).asnumpy()
    np.testing.assert_array_equal(m, np.array([-3, 1], np.int32))         # -3.5 -> -3
    # int8 mean of values that overflow an int8 running sum
    c = np.full(1000, 100, np.int8)
    assert mx.nd.mean(mx.nd.array(c, dtype=c.dtype)).asnumpy()[0] == 100


def test_bool_inputs():
    a = np.array([[True, False, True], [False, False, True]])
    x = mx.nd.array(a, dtype="bool")
    s = mx.nd.sum(x, axis=1)
    assert s.dtype == np.int64
    np.testing.assert_array_equal(s.asnumpy(), [2, 1])
    assert mx.nd.max(x, axis=0).dtype == np.bool_
    np.testing.assert_array_equal(mx.nd.max(x, axis=0).asnumpy(), [True, False, True])
    np.testing.assert_array_equal(mx.nd.min(x, axis=1).asnumpy(), [False, False])
    np.testing.assert_allclose(mx.nd.mean(x).asnumpy(), [0.5])


def test_nan_rules():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], np.float32)
    x = mx.nd.array(a)
    np.testing.assert_array_equal(mx.nd.max(x, axis=1).asnumpy(), [np.nan, 5.0])
    np.testing.assert_array_equal(mx.nd.min(x, axis=1).asnumpy(), [np.nan, -np.inf])
    np.testing.assert_array_equal(mx.nd.max(x, axis=0).asnumpy(), [4.0, np.nan, 3.0])
    np.testing.assert_array_equal(mx.nd.nansum(x, axis=1).asnumpy(), [4.0, -np.inf])
    np.testing.assert_array_equal(mx.nd.nanprod(x, axis=1).asnumpy(), [3.0, -np.inf])
    np.testing.assert_array_equal(mx.nd.nansum(x, axis=0).asnumpy(), [5.0, 5.0, -np.inf])
    assert np.isnan(mx.nd.sum(x).asscalar())
    # a NaN anywhere in a long row (chunked path) still wins
    b = np.zeros(100_000, np.float64)
    b[77_777] = np.nan
    assert np.isnan(mx.nd.max(mx.nd.array(b, dtype=b.dtype)).asscalar())
    assert mx.nd.argmax(mx.nd.array(b, dtype=b.dtype)).asscalar() == 77_777
    assert mx.nd.argmin(mx.nd.array(b, dtype=b.dtype)).asscalar() == 77_777
    # columns split over row ranges: the first NaN of each column, in row order
    d = np.zeros((100_000, 3))
    d[[90_000, 30_000, 99_999], [0, 0, 2]] = np.nan
    d[5, 1] = 1.0
    for fn in (mx.nd.argmax, mx.nd.argmin):
        np.testing.assert_array_equal(fn(mx.nd.array(d, dtype="float64"), axis=0).asnumpy(),
                                      [30_000, 5 if fn is mx.nd.argmax else 0, 99_999])
    np.testing.assert_array_equal(mx.nd.max(mx.nd.array(d, dtype="float64"), axis=0).asnumpy(),
                                  [np.nan, 1.0, np.nan])
    # inf - inf inside one partial sum is NaN for nansum too (NumPy)
    c = np.array([np.inf, -np.inf, np.nan, 1.0])
    assert np.isnan(mx.nd.nansum(mx.nd.array(c, dtype="float64")).asscalar())


def test_empty_reductions():
    z = mx.nd.array(np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(mx.nd.sum(z, axis=0).asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(mx.nd.prod(z, axis=0).asnumpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(mx.nd.nansum(z).asnumpy(), [0.0])
    assert mx.nd.sum(z, axis=1).shape == (0,)
    assert mx.nd.max(z, axis=1).shape == (0,)           # nothing to compute: not an error
    assert mx.nd.argmax(z, axis=1).shape == (0,)
    assert np.isnan(mx.nd.mean(z, axis=0).asnumpy()).all()
    zi = mx.nd.array(np.zeros((0, 3), np.int32), dtype="int32")
    np.testing.assert_array_equal(mx.nd.sum(zi, axis=0).asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(mx.nd.prod(zi, axis=0).asnumpy(), [1, 1, 1])
    with pytest.raises(MXNetError, match="mean"):
        mx.nd.mean(zi, axis=0)
    for name in ("max", "min"):
        with pytest.raises(MXNetError, match=rf"{name}: .*empty.*\(0, 3\)"):
            getattr(mx.nd, name)(z, axis=0)
        with pytest.raises(MXNetError, match=rf"{name}: .*empty"):
            getattr(mx.nd, name)(z)
    for name in ("argmax", "argmin"):
        with pytest.raises(MXNetError, match=rf"{name}: .*empty.*\(0, 3\)"):
            getattr(mx.nd, name)(z, axis=0)
        with pytest.raises(MXNetError, match=rf"{name}: .*empty"):
            getattr(mx.nd, name)(z)


# ---- argmax / argmin ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ("argmax", "argmin"))
def test_arg_values(name, dtype, rng):
    # few distinct values: many ties, and the first index must win
    a = rng.integers(0, 3, (4, 5, 6)).astype(dtype)
    x = mx.nd.array(a, dtype=dtype)
    ref = getattr(np, name)
    for axis in (0, 1, 2, -1, -3):
        got = getattr(mx.nd, name)(x, axis=axis)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.asnumpy(), ref(a, axis=axis))
        got = getattr(mx.nd, name)(x, axis=axis, keepdims=True)
        np.testing.assert_array_equal(got.asnumpy(), ref(a, axis=axis, keepdims=True))
    got = getattr(mx.nd, name)(x)
    np.testing.assert_array_equal(got.asnumpy(), [ref(a)])
    assert getattr(mx.nd, name)(x, keepdims=True).shape == (1, 1, 1)


def test_arg_ties_and_long_rows():
    a = np.array([[1, 5, 5, 0, 5], [2, 2, 2, 2, 2]], np.float32)
    np.testing.assert_array_equal(mx.nd.argmax(mx.nd.array(a), axis=1).asnumpy(), [1, 0])
    np.testing.assert_array_equal(mx.nd.argmin(mx.nd.array(a), axis=1).asnumpy(), [3, 0])
    # a row cut into chunks: the maximum repeated in several chunks -> the first one
    b = np.zeros(200_000, np.int8)
    b[[150_000, 40_000, 199_999]] = 9
    assert mx.nd.argmax(mx.nd.array(b, dtype="int8")).asscalar() == 40_000
    b[[3, 100_000]] = -9
    assert mx.nd.argmin(mx.nd.array(b, dtype="int8")).asscalar() == 3
    assert REGISTRY["argmax"].gradient == NON_DIFFERENTIABLE
    assert REGISTRY["argmin"].gradient == NON_DIFFERENTIABLE


# ---- norm -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_norm(dtype, rng):
    a = sample(rng, (3, 4, 5), dtype)
    if np.dtype(dtype).kind in "iu":
        a = (a % 50).astype(dtype)
    x = mx.nd.array(a, dtype=dtype)
    out_dt = np.dtype(dtype) if dtype in FLOATS else np.dtype("float32")
    w = a.astype(F64)
    for ord_ in (1, 2):
        for axis, keepdims in ((None, False), (1, False), (-1, True), ((0, 2), False),
                               ((1, 2), True)):
            got = mx.nd.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
            red = expected_axes(3, axis)
            if ord_ == 1:
                want = np.abs(w).sum(axis=red, keepdims=True)
            else:
                want = np.sqrt((w * w).sum(axis=red, keepdims=True))
            if not keepdims:
                want = want.reshape([d for i, d in enumerate(want.shape) if i not in red] or [1])
            check(got, want.astype(out_dt), a)


def test_norm_options():
    x = mx.nd.array([[3.0, 4.0], [6.0, 8.0]])
    assert mx.nd.norm(x).asnumpy().tolist() == [np.float32(np.sqrt(125.0))]
    np.testing.assert_allclose(mx.nd.norm(x, axis=1).asnumpy(), [5.0, 10.0])
    got = mx.nd.norm(x, out_dtype="float64")
    assert got.dtype == np.float64
    # float32 squares are summed in float64: no overflow above sqrt(float32 max)
    big = mx.nd.array(np.full(4, 1e30, np.float32))
    np.testing.assert_allclose(mx.nd.norm(big).asnumpy(), [2e30], rtol=1e-6)
    with pytest.raises(MXNetError, match="norm: .*ord"):
        mx.nd.norm(x, ord=3)
    with pytest.raises(MXNetError, match="norm: .*axis"):
        mx.nd.norm(x, axis=2)


# ---- sum_to -----------------------------------------------------------------------------------
SUM_TO_CASES = [
    ((2, 3, 4), (3, 4)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 3, 1)), ((2, 3, 4), ()),
    ((2, 3, 4), (1,)), ((2, 3, 4), (2, 3, 4)), ((5, 1, 4), (1, 4)), ((0, 3), (3,)),
    ((0, 3), (1, 3)), ((4, 0), (4, 1)), ((6, 7, 8, 9), (7, 1, 9)),
]


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "float16"))
@pytest.mark.parametrize("big,small", SUM_TO_CASES)
def test_sum_to_inverts_broadcasting(big, small, dtype, rng):
    x = sample(rng, small, dtype)
    data = np.ascontiguousarray(np.broadcast_to(x, big)) + sample(rng, big, dtype) \
        if dtype != "int32" else sample(rng, big, dtype) % 1000
    got = mx.nd.sum_to(mx.nd.array(data, dtype=dtype), shape=small)
    assert got.shape == x.shape
    lead = len(big) - len(small)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(small)
                                      if s == 1 and big[lead + i] != 1)
    want = data.astype(np.int64 if dtype == "int32" else F64).sum(axis=axes, keepdims=True)
    check(got, want.reshape(small).astype(dtype), data)


def test_sum_to_round_trip(rng):
    x = rng.uniform(-1, 1, (3, 1, 5)).astype(np.float32)
    big = np.ascontiguousarray(np.broadcast_to(x, (2, 3, 4, 5)))
    got = mx.nd.sum_to(mx.nd.array(big), shape=x.shape)
    np.testing.assert_allclose(got.asnumpy(), x * 8, rtol=1e-6)


@pytest.mark.parametrize("big,small", [((2, 3), (2,)), ((2, 3), (4, 2, 3)), ((2, 3), (3, 3)),
                                       ((2, 3), (2, -3)), ((0, 3), (2, 3))])
def test_sum_to_rejects_non_broadcastable(big, small):
    with pytest.raises(MXNetError, match=r"sum_to: .*does not broadcast"):
        mx.nd.sum_to(mx.nd.array(np.zeros(big, np.float32)), shape=small)


# ---- errors, front end -------------------------------------------------------------------------
@pytest.mark.parametrize("name", OPS)
def test_bad_axes(name):
    x = mx.nd.array(np.zeros((2, 3), np.float32))
    fn = getattr(mx.nd, name)
    with pytest.raises(MXNetError, match=rf"{name}: axis=2 is out of range"):
        fn(x, axis=2)
    with pytest.raises(MXNetError, match=rf"{name}: .*out of range"):
        fn(x, axis=(0, -3))
    with pytest.raises(MXNetError, match=rf"{name}: .*repeats an axis"):
        fn(x, axis=(1, -1))
    with pytest.raises(MXNetError, match=rf"{name}: .*axis"):
        fn(x, axis=1.5)
    with pytest.raises(MXNetError, match=rf"{name}: axis=0 is out of range"):
        fn(mx.nd.array(np.float32(1)), axis=0)


def test_arg_bad_axis():
    x = mx.nd.array(np.zeros((2, 3), np.float32))
    with pytest.raises(MXNetError, match="argmax: axis=2 is out of range"):
        mx.nd.argmax(x, axis=2)
    with pytest.raises(MXNetError, match="argmin: .*axis"):
        mx.nd.argmin(x, axis=(0, 1))


def test_aliases_fluent_methods_and_out(rng):
    a = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    x = mx.nd.array(a)
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(x.max(axis=0).asnumpy(), a.max(axis=0))
    np.testing.assert_array_equal(x.argmin(axis=1).asnumpy(), a.argmin(axis=1))
    np.testing.assert_allclose(mx.nd.sum_axis(x, axis=0).asnumpy(), a.sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(mx.nd.max_axis(x, axis=1).asnumpy(), a.max(axis=1))
    np.testing.assert_array_equal(mx.nd.min_axis(x, 1, True).asnumpy(),
                                  a.min(axis=1, keepdims=True))
    out = mx.nd.array(np.zeros(6, np.float32))
    mx.nd.mean(x, axis=0, out=out)
    np.testing.assert_allclose(out.asnumpy(), a.mean(axis=0), rtol=1e-5)


# CPU-specific: compares the bits of a CPU run on one OpenMP thread (the GPU sums in another
# order; its launch-configuration independence is tested in tests/gpu/test_reduce.py)
@pytest.mark.cpu_only
def test_result_does_not_depend_on_the_thread_count():
    """Work is split by shape only (fixed chunks), so 1 thread gives the same bits as many."""
    script = ("import sys, numpy as np, mxlite as mx\n"
              "a = np.random.default_rng(5).random(300_007).astype(np.float32)\n"
              "r = [mx.nd.sum(mx.nd.array(a)), mx.nd.sum(mx.nd.array(a[:300_000].reshape(-1, 3)),"
              " axis=0), mx.nd.norm(mx.nd.array(a))]\n"
              "sys.stdout.write(repr([x.asnumpy().tolist() for x in r]))\n")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    one = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         check=True).stdout
    a = np.random.default_rng(5).random(300_007).astype(np.float32)
    here = [mx.nd.sum(mx.nd.array(a)), mx.nd.sum(mx.nd.array(a[:300_000].reshape(-1, 3)), axis=0),
            mx.nd.norm(mx.nd.array(a))]
    assert one == repr([x.asnumpy().tolist() for x in here])


@pytest.mark.parametrize("big,small", [((2, 3, 4), (3, 1)), ((2, 3, 4), ()), ((4, 1, 3), (1, 1, 3)),
                                       ((2, 3), (2, 3))])
def test_sum_to_gradient_is_broadcast_to(big, small):
    """sum_to and broadcast_to are each other's gradient; squaring the output makes the
    higher-order VJPs depend on x, so orders 2 and 3 check the pair together."""
    from mxlite.test_utils import check_grads
    x = mx.nd.array(np.random.default_rng(3).uniform(-1, 1, big), dtype="float64")
    check_grads(lambda v: mx.nd.sum_to(v, shape=small) ** 2, [x], order=3, name="sum_to")
    assert REGISTRY["sum_to"].grad_needs == frozenset()
