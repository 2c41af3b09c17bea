"""Sorting and scans against NumPy (mxlite/ops/sorting.py): topk, sort, argsort, cumsum,
argmax_channel, smooth_l1 and the _take_along_axis gather/scatter pair."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError
from mxlite.test_utils import check_grads

SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64"]


def rand(shape, dtype, seed=0, ties=False):
    """Random values of ``dtype``; with ``ties`` drawn from a few values so that ties occur."""
    rng = np.random.default_rng(seed)
    if ties:
        return rng.integers(0, 3, shape).astype(dtype)
    dt = np.dtype(dtype)
    if dt.kind == "u":
        return rng.integers(0, 250, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-120, 120, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def ref_argsort(x, axis, ascend):
    """Stable order with ties by increasing position in both directions (MXNet), by loops."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty(x.shape, np.int64)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx].tolist()
        key = (lambda j: (row[j], j)) if ascend else (lambda j: (-row[j], j))
        out[idx] = sorted(range(len(row)), key=key)
    return np.moveaxis(out, -1, axis)


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


@SETTINGS
@given(shapes, st.sampled_from(DTYPES), st.booleans(), st.integers(0, 2 ** 31), st.data())
def test_argsort_sort_topk_match_a_stable_reference(shape, dtype, ascend, seed, data):
    x = rand(shape, dtype, seed, ties=data.draw(st.booleans()))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    order = ref_argsort(x.astype(np.float64), axis, ascend)
    a = mx.nd.array(x, dtype=dtype)
    got = mx.nd.argsort(a, axis=axis, is_ascend=ascend, dtype="int64").asnumpy()
    np.testing.assert_array_equal(got, order)
    np.testing.assert_array_equal(mx.nd.sort(a, axis=axis, is_ascend=ascend).asnumpy(),
                                  np.take_along_axis(x, order, axis))
    k = data.draw(st.integers(0, shape[axis]))
    kk = k if k >= 1 else shape[axis]
    top = np.take(order, np.arange(kk), axis=axis) if ascend else \
        np.take(ref_argsort(x.astype(np.float64), axis, False), np.arange(kk), axis=axis)
    val, ind = mx.nd.topk(a, axis=axis, k=k, ret_typ="both", is_ascend=ascend)
    np.testing.assert_array_equal(ind.asnumpy(), top.astype(np.float32))
    np.testing.assert_array_equal(val.asnumpy(), np.take_along_axis(x, top, axis))
    assert val.dtype == np.dtype(dtype) and ind.dtype == np.float32
    mask = np.zeros(shape, dtype)
    np.put_along_axis(mask, top, 1, axis)
    got_mask = mx.nd.topk(a, axis=axis, k=k, ret_typ="mask", is_ascend=ascend)
    np.testing.assert_array_equal(got_mask.asnumpy(), mask)
    assert got_mask.dtype == np.dtype(dtype)


def test_mxnet_examples_and_tie_order():
    x = mx.nd.array([[3, 1, 2, 1], [0, 5, 5, 2]])
    assert mx.nd.topk(x, k=2).asnumpy().tolist() == [[0, 2], [1, 2]]
    assert mx.nd.argsort(x).asnumpy().tolist() == [[1, 3, 2, 0], [0, 3, 1, 2]]
    assert mx.nd.argsort(x, is_ascend=False).asnumpy().tolist() == [[0, 2, 1, 3], [1, 2, 3, 0]]
    assert mx.nd.topk(x, k=2, is_ascend=True, axis=None).asnumpy().tolist() == [4, 1]
    assert mx.nd.sort(x, axis=None).asnumpy().tolist() == [0, 1, 1, 2, 2, 3, 5, 5]
    assert mx.nd.topk(x, axis=0, ret_typ="value").asnumpy().tolist() == [[3, 5, 5, 2]]


def test_nan_sorts_above_every_number():
    x = mx.nd.array([1.0, np.nan, -2.0, 3.0])
    assert mx.nd.argsort(x, dtype="int64").asnumpy().tolist() == [2, 0, 3, 1]
    assert mx.nd.argsort(x, is_ascend=False, dtype="int64").asnumpy().tolist() == [1, 3, 0, 2]
    assert mx.nd.topk(x, k=1, dtype="int64").asnumpy().tolist() == [1]


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "float16", "float32", "float64"])
def test_index_dtypes(dtype):
    x = mx.nd.array(rand((3, 7), "float32", 3))
    ref = np.argsort(-x.asnumpy(), axis=1, kind="stable")[:, :3]
    got = mx.nd.topk(x, k=3, dtype=dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), ref)


def test_bool_and_empty_inputs():
    b = mx.nd.array([True, False, True, False], dtype="bool")
    assert mx.nd.argsort(b, dtype="int64").asnumpy().tolist() == [1, 3, 0, 2]
    assert mx.nd.sort(b, is_ascend=False).asnumpy().tolist() == [True, True, False, False]
    e = mx.nd.zeros((0, 3))
    assert mx.nd.sort(e).shape == (0, 3)
    assert mx.nd.topk(e, k=2).shape == (0, 2)
    assert mx.nd.argsort(e, axis=0).shape == (0, 3)


def test_large_axis_against_numpy():
    x = rand((3, 70_000), "float32", 11)
    got = mx.nd.sort(mx.nd.array(x), axis=1, is_ascend=False).asnumpy()
    np.testing.assert_array_equal(got, -np.sort(-x, axis=1))


def test_sorting_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match="topk.*k=4 exceeds the size 3"):
        mx.nd.topk(x, k=4)
    with pytest.raises(MXNetError, match="topk.*ret_typ"):
        mx.nd.topk(x, ret_typ="values")
    with pytest.raises(MXNetError, match="sort.*axis=2"):
        mx.nd.sort(x, axis=2)
    with pytest.raises(MXNetError, match="argsort.*uint8 cannot hold the indices 0..299"):
        mx.nd.argsort(mx.nd.ones((300,)), dtype="uint8")
    with pytest.raises(MXNetError, match="topk.*at least one dimension"):
        mx.nd.topk(mx.nd.array(np.float32(1.0).reshape(())))


def test_topk_and_sort_gradients_flow_to_the_chosen_elements():
    x = mx.nd.array([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 2.0]], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.topk(x, k=2, ret_typ="value") * mx.nd.array([[10.0, 1.0]], dtype="float64")
    y.backward()
    assert x.grad.asnumpy().tolist() == [[10, 0, 1, 0], [0, 10, 1, 0]]
    for ret in ("indices", "mask"):
        with mx.autograd.record():
            z = mx.nd.topk(x, k=2, ret_typ=ret)
        z.backward()
        assert not x.grad.asnumpy().any()
    x32 = mx.nd.array(rand((3, 4), "float64", 2))
    check_grads(lambda a: mx.nd.topk(a * a, k=3, ret_typ="both", axis=0, is_ascend=True)[0],
                [x32], order=2)
    check_grads(lambda a: mx.nd.sort(a * a, axis=None), [x32], order=2)
    check_grads(lambda a: mx.nd.topk(a * a, k=2, ret_typ="value", axis=None), [x32], order=2)


# ---- _take_along_axis ----------------------------------------------------------------------
def test_take_along_axis_pair():
    x = rand((3, 4, 2), "float64", 5)
    idx = np.array([[[0, 1]], [[3, 3]], [[2, 0]]], dtype=np.int64)        # (3, 1, 2)
    got = mx.nd._internal._take_along_axis(mx.nd.array(x, dtype="float64"),
                                           mx.nd.array(idx, dtype="int64"), axis=1)
    np.testing.assert_array_equal(got.asnumpy(), np.take_along_axis(x, idx, 1))
    g = rand((3, 1, 2), "float64", 6)
    scat = mx.nd._internal._take_along_axis_grad(mx.nd.array(g, dtype="float64"),
                                                 mx.nd.array(idx, dtype="float32"),
                                                 mx.nd.zeros((3, 4, 2)), axis=1)
    ref = np.zeros((3, 4, 2))
    for a in range(3):
        for i in range(2):
            ref[a, idx[a, 0, i], i] += g[a, 0, i]
    np.testing.assert_array_equal(scat.asnumpy(), ref)
    with pytest.raises(MXNetError, match="_take_along_axis.*outside \\[0, 4\\)"):
        mx.nd._internal._take_along_axis(mx.nd.array(x), mx.nd.array(idx + 1), axis=1)
    with pytest.raises(MXNetError, match="_take_along_axis.*must match every axis"):
        mx.nd._internal._take_along_axis(mx.nd.array(x), mx.nd.array(idx[:2]), axis=1)


# ---- cumsum --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_matches_numpy(dtype, axis):
    x = rand((3, 5), dtype if dtype != "bool" else "uint8", 4)
    if dtype == "bool":
        x = x > 100
    got = mx.nd.cumsum(mx.nd.array(x, dtype=dtype), axis=axis)
    expected_dtype = {"int8": "int64", "uint8": "int64", "int32": "int64",
                      "bool": "int64"}.get(dtype, dtype)
    assert got.dtype == np.dtype(expected_dtype)
    ref = np.cumsum(x.astype(np.float64 if dtype.startswith("float") else np.int64), axis=axis)
    tol = {"float16": 1e-2, "float32": 1e-5}.get(dtype, 0)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), ref, rtol=tol, atol=tol)


def test_cumsum_dtype_param_and_gradient():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    got = mx.nd.cumsum(x, axis=0, dtype="float64")
    assert got.dtype == np.float64 and got.asnumpy().tolist() == [[1, 2, 3], [5, 7, 9]]
    a = mx.nd.array(rand((2, 3, 4), "float64", 1))
    check_grads(lambda v: mx.nd.cumsum(v * v), [a], order=2)
    v = mx.nd.array([1.0, 2.0, 3.0], dtype="float64")
    v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(v)
    y.backward(mx.nd.array([1.0, 10.0, 100.0], dtype="float64"))
    assert v.grad.asnumpy().tolist() == [111.0, 110.0, 100.0]
    with mx.autograd.record():              # the output dtype differs: cast back to v's
        y = mx.nd.cumsum(v, dtype="float32")
    y.backward(mx.nd.array([1.0, 10.0, 100.0]))
    assert v.grad.dtype == np.float64 and v.grad.asnumpy().tolist() == [111.0, 110.0, 100.0]


# ---- argmax_channel ------------------------------------------------------------------------
def test_argmax_channel():
    x = rand((2, 5, 3), "float32", 9)
    got = mx.nd.argmax_channel(mx.nd.array(x))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), np.argmax(x, axis=1))
    assert mx.nd.argmax_channel(mx.nd.array([[1, 3, 3], [5, 1, 5]])).asnumpy().tolist() == [1, 0]
    with pytest.raises(MXNetError, match="argmax_channel.*at least 2 dimensions"):
        mx.nd.argmax_channel(mx.nd.array([1, 2]))


def test_argmax_channel_refuses_indices_float32_cannot_hold():
    """Channel 2**24 + 1 has no float32 of its own: an error, not a rounded index."""
    top = mx.nd.zeros((1, 2 ** 24 + 1), dtype="int8")
    top[0, -1] = 1
    assert mx.nd.argmax_channel(top).asnumpy().tolist() == [2.0 ** 24]    # the last exact one
    with pytest.raises(MXNetError, match=r"argmax_channel.*16777218 channels.*argmax"):
        mx.nd.argmax_channel(mx.nd.zeros((1, 2 ** 24 + 2), dtype="int8"))


# ---- smooth_l1 -----------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
def test_smooth_l1_matches_reference(sigma, dtype):
    x = (rand((4, 6), "float64", 3) * 2).astype(dtype)
    got = mx.nd.smooth_l1(mx.nd.array(x, dtype=dtype), scalar=sigma)
    xd = x.astype(np.float64)
    ref = np.where(np.abs(xd) < 1 / sigma ** 2, 0.5 * (sigma * xd) ** 2,
                   np.abs(xd) - 0.5 / sigma ** 2)
    assert got.dtype == (np.dtype(dtype) if dtype != "int32" else np.float32)
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), ref, rtol=tol, atol=tol)


def test_smooth_l1_gradient_values():
    x = mx.nd.array([-2.0, -0.1, 0.2, 3.0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.smooth_l1(x, scalar=2.0)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [-1.0, -0.4, 0.8, 1.0])


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "float16"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_topk_partition_path_keeps_the_stable_order(ties, dtype, axis):
    """Long axes with small k take the partition path: same set and order as a stable sort."""
    shape = (3, 700, 4) if axis == 1 else ((700, 3) if axis == 0 else (3, 700))
    x = rand(shape, dtype, 13, ties=ties)
    a = mx.nd.array(x, dtype=dtype)
    for ascend in (False, True):
        for k in (1, 7, 80):
            ref = np.take(ref_argsort(x.astype(np.float64), axis, ascend), np.arange(k), axis)
            got = mx.nd.topk(a, axis=axis, k=k, is_ascend=ascend, dtype="int64").asnumpy()
            np.testing.assert_array_equal(got, ref)
    xn = rand(shape, "float32", 14)
    xn.reshape(-1)[::97] = np.nan          # NaN counts as the largest value
    ref = np.take(ref_argsort(np.where(np.isnan(xn), np.inf, xn), axis, False), np.arange(5),
                  axis)
    got = mx.nd.topk(mx.nd.array(xn), axis=axis, k=5, dtype="int64").asnumpy()
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_topk_value_gradient_of_integer_data(dtype):
    # an integer head gradient reaches the k largest elements (MXNet's topk takes int data)
    x = np.array([5, 1, 7, 3, 9, 0], dtype)
    a = mx.nd.array(x, dtype=dtype)
    a.attach_grad()
    with mx.autograd.record():
        b = mx.nd.topk(a, k=3, ret_typ="value")
    b.backward(mx.nd.array([1, 2, 3], dtype=dtype))
    want = np.zeros(6, dtype)
    want[[4, 2, 0]] = [1, 2, 3]                 # 9, 7, 5 in descending order
    assert a.grad.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a.grad.asnumpy(), want)


def test_take_along_axis_grad_integer_sums_wrap():
    g = mx.nd._internal._take_along_axis_grad(
        mx.nd.array([[100, 100, 1]], dtype="int8"), mx.nd.array([[2, 2, 0]], dtype="int64"),
        mx.nd.zeros((1, 3), dtype="int8"), axis=1)
    want = np.zeros((1, 3), np.int8)
    np.add.at(want, (0, [2, 2, 0]), np.array([100, 100, 1], np.int8))   # NumPy wraps too
    np.testing.assert_array_equal(g.asnumpy(), want)
    with pytest.raises(MXNetError, match="_take_along_axis_grad: grad must be a numeric"):
        mx.nd._internal._take_along_axis_grad(mx.nd.ones((1, 2), dtype="bool"),
                                              mx.nd.zeros((1, 2), dtype="int64"),
                                              mx.nd.zeros((1, 3)), axis=1)
