"""mx.np indexing against NumPy: basic, advanced, boolean masks, mixed keys, assignment
(broadcast values, masks, index arrays), views writing through, gradients; and the
selection functions (where, take, take_along_axis, clip, sort, argsort, nonzero)."""
import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import autograd
from mxlite import np
from mxlite.base import MXNetError

SHAPE = (4, 3, 5)
BASE = onp.arange(60, dtype="float32").reshape(SHAPE)

KEYS = [
    0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(None), slice(1, 3), slice(None, None, -1),
    (slice(None), 1), (Ellipsis, 2), (1, Ellipsis), (None,), (None, 1, None),
    (slice(1, None, 2), slice(None), slice(0, 5, 2)), (), Ellipsis, (Ellipsis, None),
    [0, 2], [[0, 1], [2, 3]], (slice(None), [0, 2]), ([0, 1], [1, 2]),
    ([0, 1], slice(None), [1, 4]),
    (0, [0, 1], slice(1, 3)), (Ellipsis, [1, -1]), (None, [1, 3], 0), ([[0], [3]], [0, 2]),
    onp.array([0, 3]), (slice(None), onp.array([[0, 1]]), 0), (slice(3, 1),), slice(10, 20),
    (slice(None), slice(None), 4), onp.array([True, False, True, False]),
    BASE > 30, (1, BASE[0] > 7), (slice(None), onp.array([True, False, True])),
    (1, onp.array([False, True, True]), slice(None)), onp.array(2),
    ([1, 2], (0, 2), slice(1, 4)), range(3), (range(1, 3), [0, 1]), (slice(0, 0), 1),
    (slice(0, 0), slice(0, 0), 2), True, False, onp.array(True), (True, 1),
    (0, onp.False_), (Ellipsis, True),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_getitem(key):
    x = np.array(BASE)
    want = BASE[key]
    got = x[key]
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_getitem_gradient(key):
    x = np.array(BASE)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    w = onp.arange(1, y.size + 1, dtype="float32").reshape(y.shape)
    y.backward(np.array(w))
    want = onp.zeros(SHAPE, "float32")
    onp.add.at(want, key, w)
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)


VALUES = [0, 7.5, onp.float32(2), "shape", "broadcast"]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
@pytest.mark.parametrize("value", VALUES, ids=[str(v) for v in VALUES])
def test_setitem(key, value):
    a = BASE.copy()
    x = np.array(a)
    region = a[key].shape
    if value == "shape":
        value = onp.arange(int(onp.prod(region)), dtype="float32").reshape(region) - 9
    elif value == "broadcast":
        if not region:
            return
        value = onp.arange(region[-1], dtype="float32") + 100
    a[key] = value
    x[key] = np.array(value) if isinstance(value, onp.ndarray) else value
    onp.testing.assert_array_equal(x.asnumpy(), a)


def test_setitem_drops_leading_ones_of_zero_size_values():
    a = onp.zeros((3, 0, 4), "float32")
    x = np.array(a)
    x[0:0, :, 1] = np.zeros((1, 1, 0, 0))[0]
    x[:, :, 2] = np.zeros((1, 3, 0))
    assert x.shape == (3, 0, 4)
    y = np.array(onp.arange(6, dtype="float32").reshape(2, 3))
    y[1, 2] = np.array([[9.0]])
    y[0] = np.array([[[1.0, 2.0, 3.0]]])
    onp.testing.assert_array_equal(y.asnumpy(), [[1, 2, 3], [3, 4, 9]])


def test_setitem_casts_and_takes_lists():
    x = np.zeros((2, 3), dtype="int32")
    x[0] = [1, 2, 3]
    x[1, 1:] = np.array([4.7, -5.2])
    onp.testing.assert_array_equal(x.asnumpy(), [[1, 2, 3], [0, 4, -5]])
    assert x.dtype == onp.int32
    b = np.zeros(3, dtype="bool")
    b[1] = 1
    onp.testing.assert_array_equal(b.asnumpy(), [False, True, False])
    with pytest.raises((ValueError, mx.base.MXNetError)):
        x[0] = np.ones(4)


def test_boolean_mask_assignment():
    a = onp.arange(12, dtype="float32").reshape(3, 4)
    x = np.array(a)
    x[x > 5] = 0
    a[a > 5] = 0
    onp.testing.assert_array_equal(x.asnumpy(), a)
    x[np.array([True, False, True])] = np.array([1.0, 2.0, 3.0, 4.0])
    a[onp.array([True, False, True])] = [1.0, 2.0, 3.0, 4.0]
    onp.testing.assert_array_equal(x.asnumpy(), a)
    m = a < 3
    vals = onp.arange(int(m.sum()), dtype="float32") * 10
    x[np.array(m)] = np.array(vals)
    a[m] = vals
    onp.testing.assert_array_equal(x.asnumpy(), a)


def test_views_write_through():
    x = np.array(onp.arange(12, dtype="float32").reshape(3, 4))
    row = x[1]
    row[:] = -1
    block = x[0:2]
    block[0, 0] = 99
    full = x[...]
    full[2, 3] = 7
    x[2] += 1
    want = onp.arange(12, dtype="float32").reshape(3, 4)
    want[1] = -1
    want[0, 0] = 99
    want[2, 3] = 7
    want[2] += 1
    onp.testing.assert_array_equal(x.asnumpy(), want)
    onp.testing.assert_array_equal(row.asnumpy(), want[1])
    r = x.reshape(4, 3)
    r[0, 0] = 5
    assert x[0, 0].item() == 5
    # an advanced key is a copy
    c = x[[0, 1]]
    c[:] = 0
    assert x[0, 0].item() == 5


def test_zero_d_and_integer_results():
    x = np.array([1.5, 2.5])
    y = x[0]
    assert y.shape == () and isinstance(y, np.ndarray)
    y2 = np.array(3.0)
    assert y2[()].shape == () and y2[...].shape == ()
    y2[()] = 4
    assert y2.item() == 4


def test_bad_keys():
    x = np.ones((2, 3))
    for key in [(0, 0, 0), 5, (slice(None), 3), 1.5, [0, 5], onp.array([True, False, True])]:
        with pytest.raises((IndexError, mx.base.MXNetError)):
            x[key]


@settings(max_examples=60)
@given(st.data())
def test_random_basic_and_advanced_keys(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = onp.arange(int(onp.prod(shape)), dtype="float64").reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True) |
                    hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
                        min_dims=1, max_dims=2, max_side=3)))
    x = np.array(a, dtype="float64")
    got = x[key]
    onp.testing.assert_array_equal(got.asnumpy(), a[key])
    b = a.copy()
    b[key] = -1
    x[key] = -1
    onp.testing.assert_array_equal(x.asnumpy(), b)


@settings(max_examples=40)
@given(st.data())
def test_random_boolean_masks(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(bool, shape[:k]))
    a = onp.arange(int(onp.prod(shape)), dtype="float32").reshape(shape)
    x = np.array(a)
    onp.testing.assert_array_equal(x[np.array(mask)].asnumpy(), a[mask])
    onp.testing.assert_array_equal(x[mask].asnumpy(), a[mask])
    a[mask] = 3
    x[np.array(mask)] = 3
    onp.testing.assert_array_equal(x.asnumpy(), a)


# ---- selection functions -----------------------------------------------------------------
def test_where():
    c = onp.array([[True, False, True]])
    a = onp.arange(6, dtype="float32").reshape(2, 3)
    b = onp.array([10.0], dtype="float32")
    got = np.where(np.array(c), np.array(a), np.array(b))
    onp.testing.assert_array_equal(got.asnumpy(), onp.where(c, a, b))
    got = np.where(np.array(a) > 2, np.array(a), 0)
    onp.testing.assert_array_equal(got.asnumpy(), onp.where(a > 2, a, 0))
    assert got.dtype == onp.float32
    ints = onp.array([1, 2, 3], dtype="int32")
    got = np.where(np.array(ints) > 1, np.array(ints), np.array([0.5, 0.5, 0.5]))
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(got.asnumpy(), onp.where(ints > 1, ints, 0.5))
    for g, w in zip(np.where(np.array(a) > 2), onp.where(a > 2)):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    x = np.array(a)
    x.attach_grad()
    with autograd.record():
        y = np.where(x > 2, x * 2, x * 3)
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.where(a > 2, 2, 3))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take(axis, mode):
    a = onp.arange(12, dtype="float32").reshape(3, 4)
    idx = onp.array([[0, 2], [-1, 1]]) if mode == "raise" else onp.array([[0, 5], [-7, 1]])
    got = np.take(np.array(a), np.array(idx, dtype="int64"), axis=axis, mode=mode)
    onp.testing.assert_array_equal(got.asnumpy(), onp.take(a, idx, axis=axis, mode=mode))
    got = np.take(np.array(a), 1, axis=axis, mode=mode)
    onp.testing.assert_array_equal(got.asnumpy(), onp.take(a, 1, axis=axis, mode=mode))
    if mode == "raise":
        with pytest.raises(mx.base.MXNetError):
            np.take(np.array(a), np.array([20]), axis=axis)


def test_take_along_axis_sort_argsort():
    rng = onp.random.default_rng(0)
    a = rng.integers(0, 5, (3, 4)).astype("float32")     # ties: argsort must be stable
    for axis in (0, 1, -1, None):
        onp.testing.assert_array_equal(np.sort(np.array(a), axis=axis).asnumpy(),
                                       onp.sort(a, axis=axis))
        got = np.argsort(np.array(a), axis=axis)
        assert got.dtype == onp.int64
        onp.testing.assert_array_equal(got.asnumpy(), onp.argsort(a, axis=axis,
                                                                  kind="stable"))
    idx = onp.argsort(a, axis=1)
    onp.testing.assert_array_equal(
        np.take_along_axis(np.array(a), np.array(idx), axis=1).asnumpy(),
        onp.take_along_axis(a, idx, axis=1))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float64"])
def test_clip(dtype):
    a = (onp.arange(-6, 6).reshape(3, 4)).astype(dtype) if dtype != "uint8" else \
        onp.arange(12, dtype="uint8").reshape(3, 4)
    for lo, hi in [(0, 5), (None, 3), (-2, None), (2.5, 7.5)]:
        got = np.clip(np.array(a, dtype=dtype), lo, hi)
        want = onp.clip(a, lo, hi)
        if onp.dtype(dtype).kind in "iu":
            want = want.astype(dtype) if not isinstance(lo, float) else \
                onp.clip(a, onp.ceil(lo), onp.floor(hi)).astype(dtype)
        assert got.dtype == onp.dtype(dtype)
        onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(mx.base.MXNetError):
        np.clip(np.array(a, dtype=dtype), None, None)


def test_nonzero_argwhere_flatnonzero():
    a = onp.array([[0, 1, 0], [2, 0, 3]], dtype="float32")
    for g, w in zip(np.nonzero(np.array(a)), onp.nonzero(a)):
        assert g.dtype == onp.int64
        onp.testing.assert_array_equal(g.asnumpy(), w)
    onp.testing.assert_array_equal(np.argwhere(np.array(a)).asnumpy(), onp.argwhere(a))
    onp.testing.assert_array_equal(np.flatnonzero(np.array(a)).asnumpy(), onp.flatnonzero(a))


@pytest.mark.parametrize("dshape, mshape, start", [((3, 4), (3, 4), 0), ((2, 3, 4), (3, 4), 1),
                                                   ((2, 3, 4, 5), (3,), 1), ((3, 0), (3, 0), 0)])
def test_internal_boolean_mask_assignment_matches_numpy(dshape, mshape, start):
    rng = onp.random.default_rng(3)
    data = rng.standard_normal(dshape).astype("float32")
    mask = rng.random(mshape) < 0.5
    key = (slice(None),) * start + (mask,)
    row = rng.standard_normal(data[key].shape[:start] + (1,) + data[key].shape[start + 1:])
    for value, fn in ((7.5, mx.np._internal.boolean_mask_assign_scalar),
                      (row.astype("float32"), mx.np._internal.boolean_mask_assign_tensor)):
        want = data.copy()
        want[key] = value
        x = mx.np.array(data)
        got = fn(x, mx.np.array(mask), value if isinstance(value, float) else
                 mx.np.array(value), start_axis=start, out=x)
        assert got is x
        onp.testing.assert_array_equal(x.asnumpy(), want)
    with pytest.raises(MXNetError, match="start_axis"):
        mx.np._internal.boolean_mask_assign_scalar(mx.np.array(data), mx.np.array(mask), 1.0,
                                                   start_axis=len(dshape))
