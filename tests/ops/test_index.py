"""Index operators against NumPy (mxlite/ops/index.py): take, pick, one_hot, where, clip and the
gradient scatters _take_grad / _pick_grad."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.registry import NON_DIFFERENTIABLE, get_op

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool"]
INDEX_DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64"]
SETTINGS = settings(max_examples=50, deadline=None)
BIG = 70_000          # above PARALLEL_MIN (65536): the kernels' parallel paths

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)
seeds = st.integers(0, 2 ** 32 - 1)


def rand(shape, dtype, seed=0):
    """Random values of ``dtype``, distinct enough that a misplaced element shows."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.asarray(rng.random(shape) > 0.5)
    if dt.kind == "u":
        return rng.integers(0, 250, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-120, 120, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def rand_indices(shape, dtype, lo, hi, seed=0):
    """Indices in [lo, hi] of ``dtype``; float dtypes get fractional parts (truncated by the op)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "u":
        lo = max(lo, 0)
    if dt == np.int8:
        lo, hi = max(lo, -128), min(hi, 127)
    if dt.kind == "f":
        v = rng.integers(lo, hi + 1, shape).astype(np.float64)
        frac = rng.uniform(0, 0.9, shape)
        v = v + np.where(v >= 0, frac, -frac)        # truncation brings it back to the integer
        return v.astype(dt)
    return rng.integers(lo, hi + 1, shape).astype(dt)


def truncated(indices):
    """What the ops read: float indices truncated toward zero, as int64."""
    return np.trunc(indices.astype(np.float64)).astype(np.int64)


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def check(result, expected):
    got = result.asnumpy()
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if got.dtype == np.float16:     # moved as raw bytes: bit-exact
        np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
    else:
        np.testing.assert_array_equal(got, expected)


# ---- take ----------------------------------------------------------------------------------
@SETTINGS
@given(shape=shapes, idx_shape=st.lists(st.integers(0, 3), max_size=2).map(tuple),
       dtype=st.sampled_from(DTYPES), idx_dtype=st.sampled_from(INDEX_DTYPES),
       mode=st.sampled_from(["clip", "wrap"]), axis_pick=st.integers(0, 100), seed=seeds)
def test_take_matches_numpy(shape, idx_shape, dtype, idx_dtype, mode, axis_pick, seed):
    axis = axis_pick % (2 * len(shape)) - len(shape)          # negative and positive axes
    n = shape[axis]
    a = rand(shape, dtype, seed)
    idx = rand_indices(idx_shape, idx_dtype, -2 * n - 3, 2 * n + 3, seed + 1)
    ax = axis % len(shape)
    out_shape = shape[:ax] + idx_shape + shape[ax + 1:]
    if n == 0 and np.prod(out_shape) > 0:      # nothing to clip or wrap to
        with pytest.raises(MXNetError, match=f"take: cannot index axis {ax} of size 0"):
            mx.nd.take(nd(a), nd(idx), axis=axis, mode=mode)
        return
    got = mx.nd.take(nd(a), nd(idx), axis=axis, mode=mode)
    expected = (np.take(a, truncated(idx), axis=axis, mode=mode) if n
                else np.empty(out_shape, a.dtype))
    check(got, expected)


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_take_examples(mode):
    x = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
    got = mx.nd.take(nd(x), mx.nd.array([[0, 1], [1, 2]]), mode=mode)
    check(got, np.array([[[1, 2], [3, 4]], [[3, 4], [5, 6]]], np.float32))
    if mode == "wrap":
        got = mx.nd.take(nd(x), mx.nd.array([[0, 3], [-1, -2]]), axis=1, mode="wrap")
        check(got, np.array([[[1, 2], [2, 1]], [[3, 4], [4, 3]], [[5, 6], [6, 5]]], np.float32))
    if mode == "clip":
        check(mx.nd.take(mx.nd.array([4., 5., 6.]), mx.nd.array([3]), axis=-1),
              np.array([6.], np.float32))


def test_take_zero_dim_and_empty_indices():
    a = rand((4, 3), "float64", 3)
    check(mx.nd.take(nd(a), mx.nd.array(2, dtype="int64")), a[2])
    check(mx.nd.take(nd(a), nd(np.zeros((0,), np.int32)), axis=1),
          np.zeros((4, 0), np.float64))
    check(mx.nd.take(nd(a), nd(np.zeros((2, 0), np.int32))), np.zeros((2, 0, 3)))


def test_take_transposed_source():
    base = rand((5, 7), "int32", 4)
    a = base.T                                    # a non-contiguous NumPy source
    idx = np.array([[6, 0], [3, 3]], np.int64)
    check(mx.nd.take(mx.nd.array(a, dtype="int32"), nd(idx), axis=0), np.take(a, idx, axis=0))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "uint8"])
def test_take_large_parallel(dtype):
    a = rand((BIG // 50, 50), dtype, 5)           # row copies
    idx = rand_indices((BIG // 10,), "int64", -10, a.shape[0] + 10, 6)
    check(mx.nd.take(nd(a), nd(idx), mode="wrap"), np.take(a, idx, axis=0, mode="wrap"))
    b = rand((3, BIG), dtype, 7)                  # element gathers along the last axis
    idx = rand_indices((BIG,), "float32", -5, BIG + 5, 8)
    check(mx.nd.take(nd(b), nd(idx), axis=1), np.take(b, truncated(idx), axis=1, mode="clip"))


def test_take_raise_mode():
    a = rand((3, 4), "float32", 9)
    idx = np.array([[0, 3], [2, 1]], np.int32)
    check(mx.nd.take(nd(a), nd(idx), axis=1, mode="raise"), np.take(a, idx, axis=1))
    with pytest.raises(MXNetError, match=r"take: index 4 .* axis 1 of size 4"):
        mx.nd.take(nd(a), nd(np.array([0, 4, 1], np.int64)), axis=1, mode="raise")
    with pytest.raises(MXNetError, match=r"take: index -1 .* axis 0 of size 3"):
        mx.nd.take(nd(a), nd(np.array([-1], np.int64)), mode="raise")
    with pytest.raises(MXNetError, match=r"take: index 3.5 .* size 3"):
        mx.nd.take(nd(a), mx.nd.array([1, 3.5]), mode="raise")
    big = np.zeros(BIG, np.int64)
    big[BIG - 3] = 1000                             # found by the parallel conversion pass
    with pytest.raises(MXNetError, match=rf"take: index 1000 at position {BIG - 3} .* size 3"):
        mx.nd.take(nd(a), nd(big), mode="raise")


def test_take_errors():
    a = mx.nd.array(rand((3, 4), "float32"))
    with pytest.raises(MXNetError, match=r"take: axis=2 is out of range .*\(3, 4\)"):
        mx.nd.take(a, mx.nd.array([0]), axis=2)
    with pytest.raises(MXNetError, match="take: axis=-3"):
        mx.nd.take(a, mx.nd.array([0]), axis=-3)
    with pytest.raises(MXNetError, match="take: data must have at least one dimension"):
        mx.nd.take(mx.nd.array(1.0), mx.nd.array([0]))
    with pytest.raises(MXNetError, match="take: index nan .* not a number"):
        mx.nd.take(a, mx.nd.array([0, float("nan")]))
    with pytest.raises(MXNetError, match="take: cannot index axis 1 of size 0"):
        mx.nd.take(mx.nd.array(np.zeros((2, 0))), mx.nd.array([0]), axis=1, mode="wrap")
    with pytest.raises(MXNetError, match="take: parameter 'mode'"):
        mx.nd.take(a, mx.nd.array([0]), mode="nearest")


def test_take_out_argument():
    a = rand((4, 2), "float32", 11)
    out = mx.nd.array(np.zeros((3, 2), np.float32))
    mx.nd.take(nd(a), mx.nd.array([3, 0, 0]), out=out)
    check(out, a[[3, 0, 0]])


# ---- pick ----------------------------------------------------------------------------------
@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
       dtype=st.sampled_from(DTYPES), idx_dtype=st.sampled_from(INDEX_DTYPES),
       mode=st.sampled_from(["clip", "wrap"]), keepdims=st.booleans(),
       index_kept=st.booleans(), axis_pick=st.integers(0, 100), seed=seeds)
def test_pick_matches_take_along_axis(shape, dtype, idx_dtype, mode, keepdims, index_kept,
                                      axis_pick, seed):
    axis = axis_pick % (2 * len(shape)) - len(shape)
    ax = axis % len(shape)
    n = shape[ax]
    data = rand(shape, dtype, seed)
    kept = shape[:ax] + (1,) + shape[ax + 1:]
    idx = rand_indices(kept, idx_dtype, -2 * n - 2, 2 * n + 2, seed + 1)
    if not index_kept:
        idx = idx.reshape(shape[:ax] + shape[ax + 1:])
    pos = truncated(idx).reshape(kept)
    pos = np.clip(pos, 0, n - 1) if mode == "clip" else np.mod(pos, n)
    expected = np.take_along_axis(data, pos, axis=ax)
    if not keepdims:    # MXNet 1.x: along the only axis the result has shape (1,)
        expected = expected.reshape(shape[:ax] + shape[ax + 1:] or (1,))
    got = mx.nd.pick(nd(data), nd(idx), axis=axis, keepdims=keepdims, mode=mode)
    check(got, expected)


def test_pick_examples():
    x = mx.nd.array([[1., 2.], [3., 4.], [5., 6.]])
    check(mx.nd.pick(x, mx.nd.array([0, 1]), 0), np.array([1., 4.], np.float32))
    check(mx.nd.pick(x, mx.nd.array([0, 1, 0]), 1), np.array([1., 4., 5.], np.float32))
    check(mx.nd.pick(x, mx.nd.array([2, -1, -2]), 1, mode="wrap"),
          np.array([1., 4., 5.], np.float32))
    check(mx.nd.pick(x, mx.nd.array([[1.], [0.], [2.]]), 1, keepdims=True),
          np.array([[2.], [3.], [6.]], np.float32))
    check(mx.nd.pick(x, mx.nd.array([4]), axis=None), np.array([5.], np.float32))
    check(mx.nd.pick(mx.nd.array([7., 8., 9.]), mx.nd.array(2)), np.array([9.], np.float32))
    check(mx.nd.pick(x, mx.nd.array(7), axis=None, keepdims=True, mode="wrap"),
          np.array([[2.]], np.float32))


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8"])
def test_pick_large_parallel(dtype):
    data = rand((BIG, 3), dtype, 12)
    idx = rand_indices((BIG,), "int32", -1, 4, 13)
    expected = np.take_along_axis(data, np.clip(idx, 0, 2)[:, None].astype(np.int64), 1)[:, 0]
    check(mx.nd.pick(nd(data), nd(idx)), expected)
    data = rand((2, 5, BIG // 2), dtype, 14)          # inner > 1: picks along a middle axis
    idx = rand_indices((2, BIG // 2), "float64", 0, 4, 15)
    expected = np.take_along_axis(data, truncated(idx)[:, None, :], 1)[:, 0, :]
    check(mx.nd.pick(nd(data), nd(idx), axis=1), expected)


def test_pick_errors():
    x = mx.nd.array(rand((3, 4), "float32"))
    with pytest.raises(MXNetError, match=r"pick: index has shape \(4,\).*\(3, 4\)"):
        mx.nd.pick(x, mx.nd.array([0, 1, 2, 3]), axis=1)
    with pytest.raises(MXNetError, match="pick: axis=2 is out of range"):
        mx.nd.pick(x, mx.nd.array([0, 1, 2]), axis=2)
    with pytest.raises(MXNetError, match="pick: parameter 'mode'"):
        mx.nd.pick(x, mx.nd.array([0, 1, 2]), mode="raise")
    with pytest.raises(MXNetError, match="pick: with axis=None, index must hold one element"):
        mx.nd.pick(x, mx.nd.array([0, 1]), axis=None)
    with pytest.raises(MXNetError, match="pick: index nan"):
        mx.nd.pick(x, mx.nd.array([0, float("nan"), 1]), axis=1)
    with pytest.raises(MXNetError, match="pick: cannot index axis 1 of size 0"):
        mx.nd.pick(mx.nd.array(np.zeros((2, 0))), mx.nd.array([0, 0]), axis=1)


# ---- one_hot -------------------------------------------------------------------------------
def one_hot_oracle(indices, depth, on, off, dtype):
    pos = truncated(indices)
    valid = (pos >= 0) & (pos < depth)
    if depth == 0:
        return np.zeros(pos.shape + (0,), dtype)
    hot = np.eye(depth, dtype=bool)[np.where(valid, pos, 0)] & valid[..., None]
    return np.where(hot, np.array(on).astype(dtype), np.array(off).astype(dtype))


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple), depth=st.integers(0, 6),
       idx_dtype=st.sampled_from(INDEX_DTYPES), dtype=st.sampled_from(DTYPES),
       on=st.sampled_from([1.0, 5.0, -2.0]), off=st.sampled_from([0.0, 3.0, -1.0]), seed=seeds)
def test_one_hot_matches_eye(shape, depth, idx_dtype, dtype, on, off, seed):
    idx = rand_indices(shape, idx_dtype, -3, depth + 3, seed)
    if dtype == "uint8" and min(on, off) < 0:     # not representable: an error, not a wrap
        bad = "on_value" if on < 0 else "off_value"
        with pytest.raises(MXNetError, match=f"one_hot: {bad}=.* outside the range of uint8"):
            mx.nd.one_hot(nd(idx), depth, on_value=on, off_value=off, dtype=dtype)
        return
    got = mx.nd.one_hot(nd(idx), depth, on_value=on, off_value=off, dtype=dtype)
    check(got, one_hot_oracle(idx, depth, on, off, np.dtype(dtype)))


def test_one_hot_defaults_and_large():
    got = mx.nd.one_hot(mx.nd.array([1, 0, 2, 5, -1]), 3)
    check(got, np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], np.float32))
    check(mx.nd.one_hot(mx.nd.array([float("nan"), 1.7]), 2),
          np.array([[0, 0], [0, 1]], np.float32))
    idx = rand_indices((BIG // 4,), "int64", -1, 10, 16)
    check(mx.nd.one_hot(nd(idx), 10, dtype="float16"), one_hot_oracle(idx, 10, 1, 0, np.float16))


def test_one_hot_errors_and_gradient_flag():
    with pytest.raises(MXNetError, match="one_hot: depth must be non-negative"):
        mx.nd.one_hot(mx.nd.array([0]), -1)
    with pytest.raises(MXNetError, match="one_hot: missing required parameter"):
        mx.nd.one_hot(mx.nd.array([0]))
    with pytest.raises(MXNetError, match="one_hot: .*unsupported dtype 'complex64'"):
        mx.nd.one_hot(mx.nd.array([0]), 2, dtype="complex64")
    assert get_op("one_hot").gradient is NON_DIFFERENTIABLE
    for name in ("take", "pick", "where", "clip", "_take_grad", "_pick_grad"):
        assert get_op(name).differentiable


# ---- where ---------------------------------------------------------------------------------
@SETTINGS
@given(shape=st.lists(st.integers(0, 4), max_size=4).map(tuple), dtype=st.sampled_from(DTYPES),
       cond_dtype=st.sampled_from(DTYPES), rows=st.booleans(), seed=seeds)
def test_where_matches_numpy(shape, dtype, cond_dtype, rows, seed):
    rows = rows and len(shape) >= 1
    x, y = rand(shape, dtype, seed), rand(shape, dtype, seed + 1)
    cshape = shape[:1] if rows else shape
    rng = np.random.default_rng(seed + 2)
    cond = (rng.integers(0, 3, cshape) * rng.integers(-1, 2, cshape)).astype(cond_dtype)
    got = mx.nd.where(nd(cond), nd(x), nd(y))
    bcond = cond.reshape(cshape + (1,) * (len(shape) - len(cshape))) != 0
    check(got, np.where(bcond, x, y))


def test_where_special_conditions():
    x, y = np.arange(4, dtype=np.float64), -np.arange(4, dtype=np.float64)
    for dt in ("float16", "float32", "float64"):
        cond = np.array([np.nan, -0.0, 0.0, 1e-30 if dt != "float16" else 1e-7], dt)
        check(mx.nd.where(nd(cond), nd(x), nd(y)), np.where(cond != 0, x, y))


@pytest.mark.parametrize("dtype", ["float16", "int8", "float64"])
def test_where_large_parallel(dtype):
    x, y = rand((BIG,), dtype, 17), rand((BIG,), dtype, 18)
    cond = rand((BIG,), "int32", 19)
    check(mx.nd.where(nd(cond), nd(x), nd(y)), np.where(cond != 0, x, y))
    x, y = rand((BIG // 7, 7), dtype, 20), rand((BIG // 7, 7), dtype, 21)
    cond = rand((BIG // 7,), "bool", 22)
    check(mx.nd.where(nd(cond), nd(x), nd(y)), np.where(cond[:, None], x, y))


def test_where_errors():
    a = mx.nd.array(rand((3, 4), "float32"))
    with pytest.raises(MXNetError,
                       match=r"where: x and y must have the same shape.*\(3, 4\).*\(4, 3\)"):
        mx.nd.where(a, a, mx.nd.array(rand((4, 3), "float32")))
    with pytest.raises(MXNetError, match=r"where: condition has shape \(4,\)"):
        mx.nd.where(mx.nd.array([1, 0, 1, 0]), a, a)
    with pytest.raises(MXNetError, match=r"where: condition has shape \(1, 4\)"):
        mx.nd.where(mx.nd.array([[1, 0, 1, 0]]), a, a)
    with pytest.raises(MXNetError, match="where: x and y must have the same dtype"):
        mx.nd.where(a, a, mx.nd.array(rand((3, 4), "float64"), dtype="float64"))


# ---- clip ----------------------------------------------------------------------------------
BOUNDS = [(-0.5, 0.5), (0.0, 0.0), (-1e30, 1e30), (-float("inf"), 0.25), (1.5, 90.7),
          (-300.0, 300.0), (-5.0, 10.0), (2.0, float("inf"))]


def clip_oracle(x, a_min, a_max):
    """NumPy's clip for floats (float16 computed in float32 and rounded once); for integers the
    nearest integer of [a_min, a_max] within the dtype (the documented rule). None where the
    documented rule is an error: a bound beyond the dtype's range on the side that makes every
    result unrepresentable."""
    if x.dtype.kind == "f":
        big = float(np.finfo(x.dtype).max)
        if (math.isfinite(a_min) and a_min > big) or (math.isfinite(a_max) and a_max < -big):
            return None
        return np.clip(x.astype(np.float32 if x.dtype == np.float16 else x.dtype),
                       a_min, a_max).astype(x.dtype)
    info = (0, 1) if x.dtype == np.bool_ else (np.iinfo(x.dtype).min, np.iinfo(x.dtype).max)
    if a_min > info[1] or a_max < info[0]:
        return None
    lo = info[0] if a_min <= info[0] else math.ceil(a_min)
    hi = info[1] if a_max >= info[1] else math.floor(a_max)
    v = x.astype(object)
    return np.array([min(max(e, lo), hi) for e in v.reshape(-1)], dtype=object) \
        .reshape(x.shape).astype(x.dtype)


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), dtype=st.sampled_from(DTYPES),
       bounds=st.sampled_from(BOUNDS), seed=seeds)
def test_clip_matches_numpy(shape, dtype, bounds, seed):
    x = rand(shape, dtype, seed)
    if x.dtype.kind == "f":
        x = x * 2
    a_min, a_max = bounds
    expected = clip_oracle(x, a_min, a_max)
    if expected is None:
        with pytest.raises(MXNetError, match="clip: a_(min|max)=.* cannot hold"):
            mx.nd.clip(nd(x), a_min, a_max)
        return
    check(mx.nd.clip(nd(x), a_min, a_max), expected)


def test_clip_nan_inplace_and_large():
    x = np.array([np.nan, -np.inf, np.inf, -3, 0.2, 7], np.float32)
    check(mx.nd.clip(nd(x), -1, 1), np.array([np.nan, -1, 1, -1, 0.2, 1], np.float32))
    y = nd(x.astype(np.float16))
    mx.nd.clip(y, -1, 1, out=y)                   # in place
    check(y, np.array([np.nan, -1, 1, -1, 0.2, 1], np.float16))
    big = rand((BIG,), "float64", 23)
    check(mx.nd.clip(nd(big), -0.3, 0.8), np.clip(big, -0.3, 0.8))
    u = np.array([0, 3, 200, 255], np.uint8)       # MXNet wrapped a_min=-5 to 251
    check(mx.nd.clip(nd(u), -5, 10), np.array([0, 3, 10, 10], np.uint8))


def test_clip_errors():
    x = mx.nd.array([1, 2, 3])
    with pytest.raises(MXNetError, match="clip: a_min must not exceed a_max.*a_min=2, a_max=1"):
        mx.nd.clip(x, 2, 1)
    with pytest.raises(MXNetError, match="clip: a_min and a_max must not be NaN"):
        mx.nd.clip(x, float("nan"), 1)
    with pytest.raises(MXNetError, match=r"clip: no int32 value lies in \[a_min=0.2, a_max=0.8\]"):
        mx.nd.clip(mx.nd.array([1, 2], dtype="int32"), 0.2, 0.8)
    with pytest.raises(MXNetError, match="clip: missing required parameter"):
        mx.nd.clip(x, a_min=0)


# ---- gradient scatters ---------------------------------------------------------------------
def take_grad_oracle(grad, indices, shape, axis, mode):
    n = shape[axis]
    pos = truncated(indices)
    pos = np.clip(pos, 0, n - 1) if mode in ("clip", "raise") else np.mod(pos, n)
    acc = np.float32 if grad.dtype == np.float16 else grad.dtype
    out = np.zeros(shape, acc)
    # move the axis to the front so np.add.at accumulates duplicates along it
    g = np.moveaxis(grad.astype(acc).reshape(shape[:axis] + (pos.size,) + shape[axis + 1:]),
                    axis, 0)
    np.add.at(np.moveaxis(out, axis, 0), pos.reshape(-1), g)
    return out.astype(grad.dtype)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       idx_shape=st.lists(st.integers(0, 6), max_size=2).map(tuple),
       dtype=st.sampled_from(["float16", "float32", "float64", "int32", "int8", "int64"]),
       idx_dtype=st.sampled_from(INDEX_DTYPES), mode=st.sampled_from(["clip", "wrap", "raise"]),
       axis_pick=st.integers(0, 100), seed=seeds)
def test_take_grad_matches_add_at(shape, idx_shape, dtype, idx_dtype, mode, axis_pick, seed):
    axis = axis_pick % (2 * len(shape)) - len(shape)
    ax = axis % len(shape)
    n = shape[ax]
    lo, hi = (0, n - 1) if mode == "raise" else (-n - 2, n + 2)
    idx = rand_indices(idx_shape, idx_dtype, lo, hi, seed)      # few values: many duplicates
    data = rand(shape, "float32", seed + 1)
    gshape = shape[:ax] + idx_shape + shape[ax + 1:]
    grad = rand(gshape, dtype, seed + 2)
    if np.dtype(dtype).kind == "i":
        grad = (grad % 5).astype(dtype)                         # no overflow in the oracle
    got = mx.nd._internal._take_grad(nd(grad), nd(idx), nd(data), axis=axis, mode=mode)
    expected = take_grad_oracle(grad, idx, shape, ax, mode)
    if dtype == "float16":
        np.testing.assert_allclose(got.asnumpy().astype(np.float32),
                                   expected.astype(np.float32), rtol=1e-3, atol=1e-3)
        assert got.dtype == np.float16
    else:
        check(got, expected)


@pytest.mark.parametrize("shape,axis,nidx", [
    ((40, 64), 0, BIG // 64 + 5),       # few outer slices, long rows: target-row ranges
    ((16, 30, 3), 1, 2000),             # many outer slices: one per work item
    ((BIG + 10,), 0, BIG),              # short rows, one slice: serial
    ((3, 1, 50), 1, 1000),              # an axis of size 1: every index lands on it
])
def test_take_grad_duplicates_parallel(shape, axis, nidx):
    n = shape[axis]
    idx = rand_indices((nidx,), "int64", 0, min(n - 1, 9), 24)   # heavy duplication
    gshape = shape[:axis] + (nidx,) + shape[axis + 1:]
    grad = (rand(gshape, "int64", 25) % 7).astype(np.float64)    # exact sums in float64
    got = mx.nd._internal._take_grad(nd(grad), nd(idx), nd(np.zeros(shape, np.float32)),
                                     axis=axis)
    check(got, take_grad_oracle(grad, idx, shape, axis, "clip"))


def test_take_grad_is_adjoint_of_take():
    rng = np.random.default_rng(26)
    data, idx = rng.standard_normal((5, 6, 3)), rng.integers(-8, 8, (4, 2)).astype(np.float32)
    v = rng.standard_normal((5, 4, 2, 3))
    for mode in ("clip", "wrap"):
        t = mx.nd.take(nd(data), nd(idx), axis=1, mode=mode).asnumpy()
        g = mx.nd._internal._take_grad(nd(v), nd(idx), nd(data), axis=1, mode=mode).asnumpy()
        assert np.isclose(np.sum(t * v), np.sum(data * g))


def test_take_grad_errors():
    data = mx.nd.array(rand((3, 4), "float32"))
    with pytest.raises(MXNetError, match=r"_take_grad: grad has shape \(2, 4\); .* \(3, 2\)"):
        mx.nd._internal._take_grad(mx.nd.ones((2, 4)), mx.nd.array([0, 1]), data, axis=1)
    with pytest.raises(MXNetError, match="_take_grad: gradients are not defined for bool"):
        mx.nd._internal._take_grad(mx.nd.ones((2, 4), dtype="bool"), mx.nd.array([0, 1]), data)
    with pytest.raises(MXNetError, match=r"_take_grad: index 3\.0 .* size 3"):
        mx.nd._internal._take_grad(mx.nd.ones((2, 4)), mx.nd.array([0, 3]), data, mode="raise")
    empty = mx.nd._internal._take_grad(mx.nd.ones((0, 4)), mx.nd.array(np.zeros(0)), data)
    check(empty, np.zeros((3, 4), np.float32))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
       dtype=st.sampled_from(["float16", "float32", "float64", "int8", "uint8", "int64"]),
       mode=st.sampled_from(["clip", "wrap"]), keepdims=st.booleans(),
       axis_pick=st.integers(0, 100), seed=seeds)
def test_pick_grad_matches_put_along_axis(shape, dtype, mode, keepdims, axis_pick, seed):
    axis = axis_pick % (2 * len(shape)) - len(shape)
    ax = axis % len(shape)
    n = shape[ax]
    kept = shape[:ax] + (1,) + shape[ax + 1:]
    idx = rand_indices(kept, "float32", -n - 2, n + 2, seed)
    grad = rand(kept, dtype, seed + 1)
    pos = truncated(idx)
    pos = np.clip(pos, 0, n - 1) if mode == "clip" else np.mod(pos, n)
    expected = np.zeros(shape, dtype)
    np.put_along_axis(expected, pos, grad, axis=ax)
    if not keepdims:    # pick's output shape: (1,) along the only axis (MXNet 1.x)
        idx = idx.reshape(shape[:ax] + shape[ax + 1:])
        grad = grad.reshape(idx.shape or (1,))
    got = mx.nd._internal._pick_grad(nd(grad), nd(idx), nd(rand(shape, "float32")), axis=axis,
                                     keepdims=keepdims, mode=mode)
    check(got, expected)


def test_pick_grad_large_and_errors():
    shape = (BIG // 5, 5)
    idx = rand_indices((shape[0],), "int32", 0, 4, 27)
    grad = rand((shape[0],), "float32", 28)
    expected = np.zeros(shape, np.float32)
    expected[np.arange(shape[0]), idx] = grad
    check(mx.nd._internal._pick_grad(nd(grad), nd(idx), nd(expected)), expected)
    with pytest.raises(MXNetError, match=r"_pick_grad: grad has shape \(3,\)"):
        mx.nd._internal._pick_grad(mx.nd.ones((3,)), mx.nd.array([0, 1]),
                                   mx.nd.ones((2, 4)), axis=1)
    with pytest.raises(MXNetError, match=r"_pick_grad: index has shape"):
        mx.nd._internal._pick_grad(mx.nd.ones((3,)), mx.nd.array([0, 1, 2]),
                                   mx.nd.ones((2, 4)), axis=1)
