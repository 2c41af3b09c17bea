"""NDArray (mxlite/ndarray/ndarray.py): creation, properties, conversion, reshape views,
indexing (first-axis views write through, as in MXNet), assignment, and the arithmetic dunders
with NDArray, scalar and NumPy operands. NumPy is the oracle throughout.
"""
import operator
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError

ALL_DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool")


def _eq(nd_array, expected, dtype=None):
    got = nd_array.asnumpy()
    expected = np.asarray(expected)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


# ---- array() ----------------------------------------------------------------------------------
def test_array_from_lists_defaults_to_float32():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    assert isinstance(x, mx.nd.NDArray)
    _eq(x, [[1, 2, 3], [4, 5, 6]], np.float32)
    _eq(mx.nd.array(((1.5,), (2.5,))), [[1.5], [2.5]], np.float32)
    _eq(mx.nd.array([True, False]), [1, 0], np.float32)
    _eq(mx.nd.array([]), np.zeros(0), np.float32)


def test_array_from_scalars_is_zero_dim():
    _eq(mx.nd.array(5), np.array(5.0), np.float32)
    _eq(mx.nd.array(2.5, dtype="float64"), np.array(2.5), np.float64)
    _eq(mx.nd.array(np.float32(3.0)), np.array(3.0), np.float32)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_array_from_numpy_defaults_to_float32_and_dtype_keeps_it(dtype):
    src = np.arange(6).reshape(2, 3).astype(dtype)
    want = src.copy()
    x = mx.nd.array(src)                      # MXNet's rule: float32 unless dtype= is given
    _eq(x, want.astype(np.float32), np.float32)
    y = mx.nd.array(src, dtype=src.dtype)     # dtype= keeps the NumPy dtype
    _eq(y, want, dtype)
    src[...] = 0
    _eq(x, want.astype(np.float32), np.float32)   # copies, not views
    _eq(y, want, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_array_with_dtype_and_from_ndarray(dtype):
    x = mx.nd.array([[0, 1.7], [2, 3]], dtype=dtype)
    _eq(x, np.array([[0, 1.7], [2, 3]]).astype(dtype), dtype)
    assert x.dtype is np.dtype(dtype).type
    y = mx.nd.array(x)                       # keeps the NDArray's dtype
    _eq(y, x.asnumpy(), dtype)
    y[:] = 1
    assert not np.all(x.asnumpy() == np.array(1).astype(dtype))   # a copy
    _eq(mx.nd.array(x, dtype="float64"), x.asnumpy().astype(np.float64), np.float64)
    _eq(mx.nd.array([1, 2], dtype=np.dtype(dtype)), np.array([1, 2]).astype(dtype), dtype)


def test_array_from_non_contiguous_numpy():
    src = np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)[::-1, :, ::2]
    x = mx.nd.array(src, dtype=src.dtype)
    _eq(x, src, np.float64)
    assert x.asnumpy().flags.c_contiguous
    _eq(mx.nd.array(src), src.astype(np.float32), np.float32)


def test_array_unsupported_numpy_dtype_falls_back_to_float32():
    _eq(mx.nd.array(np.array([1, 2], dtype=np.int16)), [1, 2], np.float32)


def test_array_ctx():
    assert mx.nd.array([1], ctx=mx.cpu()).context == mx.cpu(0)
    assert mx.nd.array([1], ctx=mx.cpu(1)).context == mx.cpu(1)
    assert mx.nd.array([1]).context == mx.current_context()


def test_array_errors():
    with pytest.raises(MXNetError, match="array"):
        mx.nd.array([[1, 2], [3]])                  # ragged
    with pytest.raises(MXNetError, match="array"):
        mx.nd.array([[1, 2], [3, [4]]])
    with pytest.raises(MXNetError, match="array.*dtype"):
        mx.nd.array([1, 2], dtype="int16")
    with pytest.raises(MXNetError, match="array.*dtype"):
        mx.nd.array([1, 2], dtype="not_a_dtype")
    with pytest.raises(MXNetError, match="array.*dtype"):
        mx.nd.array([1, 2], dtype=np.complex64)
    with pytest.raises(MXNetError, match="array"):
        mx.nd.array("abc")
    with pytest.raises(MXNetError, match="array"):
        mx.nd.array([object()])
    # values the dtype cannot hold, None and complex numbers: errors, never wrapped or cast
    for source, dtype in [([300], "int8"), (np.array([300]), "int8"), ([-1], "uint8"),
                          ([2 ** 63], "int64"), ([1.0, np.nan], "int32"),
                          (np.array([np.inf]), "int64"), ([1e39], "float32")]:
        with pytest.raises(MXNetError, match="array"):
            mx.nd.array(source, dtype=dtype)
    for source in [None, [1, None], 1 + 2j, [1j, 2], np.array([1 + 1j], np.complex64)]:
        with pytest.raises(MXNetError, match="array"):
            mx.nd.array(source)
    _eq(mx.nd.array([127, -128], dtype="int8"), [127, -128], np.int8)    # the limits fit
    _eq(mx.nd.array([255.0, 0.0], dtype="uint8"), [255, 0], np.uint8)


def test_ndarray_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        mx.nd.NDArray([1, 2])


# ---- creation functions ------------------------------------------------------------------
# (zeros/ones/full/arange are registered by the creation-op family; these tests go green
# when it lands.)
@pytest.mark.parametrize("dtype", [None, "float16", "float64", "int32", "uint8", "bool"])
def test_zeros_ones_full_empty(dtype):
    want = np.dtype(dtype or "float32")
    _eq(mx.nd.zeros((2, 3), dtype=dtype), np.zeros((2, 3), want), want)
    _eq(mx.nd.ones((2, 3), dtype=dtype), np.ones((2, 3), want), want)
    _eq(mx.nd.zeros(4, dtype=dtype), np.zeros(4, want), want)
    _eq(mx.nd.ones((0, 3), dtype=dtype), np.ones((0, 3), want), want)
    _eq(mx.nd.zeros((), dtype=dtype), np.zeros((), want), want)
    full = mx.nd.full((3, 2), 7, dtype=dtype) if dtype else mx.nd.full((3, 2), 7.5)
    _eq(full, np.full((3, 2), 7 if dtype else 7.5).astype(want), want)
    e = mx.nd.empty((2, 5), dtype=dtype)
    assert e.shape == (2, 5) and e.dtype is want.type


def test_creation_ctx_and_errors():
    assert mx.nd.zeros((2,), ctx=mx.cpu(1)).context == mx.cpu(1)
    assert mx.nd.ones((2,), ctx=mx.cpu(0)).context == mx.cpu(0)
    assert mx.nd.empty((2,), ctx=mx.cpu(1)).context == mx.cpu(1)
    for fn in (mx.nd.zeros, mx.nd.ones, mx.nd.empty):
        with pytest.raises(MXNetError, match="shape"):
            fn((2, -1))
        with pytest.raises(MXNetError, match="dtype"):
            fn((2,), dtype="int16")


@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((2, 10), {}), ((0, 3, 0.5), {}), ((10, 0, -3), {}), ((1, 1), {}),
    ((0, 6), {"dtype": "int32"}), ((-1.5, 2.5, 0.75), {"dtype": "float64"}),
])
def test_arange(args, kwargs):
    got = mx.nd.arange(*args, **kwargs)
    want = np.arange(*args).astype(kwargs.get("dtype", "float32"))
    _eq(got, want, want.dtype)


def test_arange_repeat():
    _eq(mx.nd.arange(0, 3, repeat=2), np.repeat(np.arange(3.0), 2).astype(np.float32), np.float32)


# ---- properties ---------------------------------------------------------------------------
def test_properties():
    x = mx.nd.array(np.zeros((2, 3, 4), np.int32), dtype="int32")
    assert x.shape == (2, 3, 4) and isinstance(x.shape, tuple)
    assert x.dtype is np.int32
    assert x.size == 24 and x.ndim == 3
    assert x.context == mx.cpu() and x.ctx == mx.cpu()
    assert len(x) == 2
    s = mx.nd.array(3.0)
    assert s.shape == () and s.size == 1 and s.ndim == 0
    with pytest.raises(TypeError):
        len(s)
    assert "NDArray" in repr(x) and "2x3x4" in repr(x)


def test_repr_is_mxnets_format():
    # "\n" + the values as NumPy prints them + "\n<NDArray 2x3 @cpu(0)>"; 0-d: no shape
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    assert repr(x) == "\n[[1. 2. 3.]\n [4. 5. 6.]]\n<NDArray 2x3 @cpu(0)>"
    assert str(x) == repr(x)
    assert repr(mx.nd.array([7, -1], dtype="int32", ctx=mx.cpu(1))) == (
        "\n[ 7 -1]\n<NDArray 2 @cpu(1)>")
    assert repr(mx.nd.array(2.5)) == "\n2.5\n<NDArray  @cpu(0)>"
    assert repr(mx.nd.array(np.zeros((0, 3)))) == "\n[]\n<NDArray 0x3 @cpu(0)>"
    n = np.arange(24.0).reshape(2, 3, 4)
    assert repr(mx.nd.array(n, dtype="float64")) == f"\n{n}\n<NDArray 2x3x4 @cpu(0)>"


def test_transpose_property():
    n = np.arange(24.0).reshape(2, 3, 4)
    _eq(mx.nd.array(n).T, n.T)
    _eq(mx.nd.array(np.arange(3.0)).T, np.arange(3.0))


def test_scalar_conversions():
    x = mx.nd.array([2.5])
    assert float(x) == 2.5 and int(x) == 2 and bool(x) is True
    assert bool(mx.nd.array([0.0])) is False
    assert operator.index(mx.nd.array([3], dtype="int64")) == 3
    with pytest.raises(TypeError):
        operator.index(mx.nd.array([3.0]))
    with pytest.raises(MXNetError):
        bool(mx.nd.array([1.0, 2.0]))
    assert [float(r) for r in mx.nd.array([1.0, 2.0, 3.0])] == [1.0, 2.0, 3.0]


# ---- conversion ---------------------------------------------------------------------------
def test_asnumpy_is_a_copy():
    x = mx.nd.array([1.0, 2.0])
    n = x.asnumpy()
    assert isinstance(n, np.ndarray)
    n[0] = 100
    _eq(x, [1.0, 2.0])


def test_numpy_protocol():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    n = np.array(x)
    _eq(x, n, np.int32)
    n[0, 0] = 100                       # np.array copies
    assert x.asnumpy()[0, 0] == 1
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(x), [[1, 2], [3, 4]])


def test_asscalar():
    v = mx.nd.array([[7]], dtype="int32").asscalar()
    assert v == 7 and isinstance(v, np.int32)
    assert mx.nd.array(2.5).asscalar() == 2.5
    with pytest.raises(MXNetError, match="asscalar"):
        mx.nd.array([1, 2]).asscalar()


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_astype(src, dst):
    n = np.array([0, 1, 2, 5]).astype(src)
    got = mx.nd.array(n).astype(dst)
    _eq(got, n.astype(dst), dst)


def test_astype_copy_flag_and_errors():
    x = mx.nd.array([1.5, -2.5])
    assert x.astype("float32", copy=False) is x
    y = x.astype("float32")
    assert y is not x
    y[:] = 0
    _eq(x, [1.5, -2.5])
    _eq(x.astype(np.int32), [1, -2], np.int32)       # truncates toward zero
    with pytest.raises(MXNetError, match="dtype"):
        x.astype("complex64")


def test_copy_copyto_as_in_context():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    c = x.copy()
    c[:] = 0
    _eq(x, [[1, 2], [3, 4]])
    target = mx.nd.array(np.zeros((2, 2), np.float32))
    assert x.copyto(target) is target
    _eq(target, [[1, 2], [3, 4]])
    t64 = mx.nd.array(np.zeros((2, 2)), dtype="float64")
    x.copyto(t64)                                       # converts the dtype
    _eq(t64, [[1, 2], [3, 4]], np.float64)
    with pytest.raises(MXNetError, match="copyto"):
        x.copyto(mx.nd.array(np.zeros((3, 2), np.float32)))
    other = x.copyto(mx.cpu(1))
    assert other.context == mx.cpu(1)
    _eq(other, x.asnumpy())
    other[:] = 5
    _eq(x, [[1, 2], [3, 4]])
    assert x.as_in_context(mx.cpu(0)) is x
    moved = x.as_in_context(mx.cpu(1))
    assert moved.context == mx.cpu(1) and moved is not x
    _eq(moved, x.asnumpy())
    with pytest.raises(TypeError):
        x.copyto("cpu")


def test_pickle_roundtrip():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="int8", ctx=mx.cpu(1))
    y = pickle.loads(pickle.dumps(x))
    _eq(y, x.asnumpy(), np.int8)
    assert y.context == mx.cpu(1)


# ---- reshape --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, code, want", [
    # MXNet's documented examples of the special codes
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ((0, 3), (-1, 3), (0, 3)),
    ((), (1, 1), (1, 1)),
])
def test_reshape_codes(shape, code, want):
    n = np.arange(int(np.prod(shape))).astype(np.float32).reshape(shape)
    got = mx.nd.array(n).reshape(code)
    _eq(got, n.reshape(want))


def test_reshape_reverse():
    x = mx.nd.array(np.zeros((10, 5, 4)))
    assert x.reshape((-1, 0)).shape == (40, 5)
    assert x.reshape((-1, 0), reverse=True).shape == (50, 4)


def test_reshape_call_forms_and_view_writes_through():
    x = mx.nd.array(np.arange(12.0))
    assert x.reshape(3, 4).shape == (3, 4)
    assert x.reshape((3, 4)).shape == (3, 4)
    assert x.reshape(shape=(2, -1)).shape == (2, 6)
    y = x.reshape((3, -1))
    y[1] = -1.0
    _eq(x, np.r_[0:4, [-1] * 4, 8:12].astype(np.float32))
    z = x.reshape((2, 0, -1)[::2])   # (2, -1)
    z[:] = 3
    _eq(x, np.full(12, 3, np.float32))


def test_reshape_errors():
    x = mx.nd.array(np.zeros((2, 3, 4)))
    with pytest.raises(MXNetError, match="reshape"):
        x.reshape((5, -1))
    with pytest.raises(MXNetError, match="reshape"):
        x.reshape((-1, -1))
    with pytest.raises(MXNetError, match="reshape"):
        x.reshape((7,))
    for bad in [(-5,), (-4, 5, -1, 4), (-4, -1, -1, 12), (0, 0, 0, 0), (-3, -3, -3), (24, 0)]:
        with pytest.raises(MXNetError, match="reshape"):
            x.reshape(bad)
    _eq(x.reshape((-4, 1, 2, 0, 4)), np.zeros((1, 2, 3, 4)))
    with pytest.raises(TypeError):
        x.reshape((24,), bogus=1)


# ---- indexing -------------------------------------------------------------------------------
N = np.arange(60.0).reshape(3, 4, 5)


def _mx_expected(np_result):
    """MXNet 1.x: indexing every axis of an array (ndim >= 1) with an integer gives shape
    (1,), where NumPy gives a 0-d result."""
    np_result = np.asarray(np_result)
    return np_result.reshape(1) if np_result.ndim == 0 else np_result


@pytest.mark.parametrize("key", [
    0, 2, -1, -3, np.int64(1), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
    slice(-1, 0, -2), slice(5, 10), slice(2, 1), Ellipsis, None, (1, 2), (1, 2, 3), (-1, -2, -3),
    (slice(None), 1), (Ellipsis, 2), (1, Ellipsis), (None, 1, None), (slice(None), None, 2),
    (slice(0, 2), slice(None, None, -1), slice(1, 4, 2)), (0, slice(1, 3), Ellipsis, None),
    (), [0, 2], ([0, 2], [1, 3]), (Ellipsis, 1, 2, 3), (1, Ellipsis, 2, 3), (0, 1, 2, Ellipsis),
    (1, 2, 3, None), (None, -1, 0, 4),
])
def test_getitem_matches_numpy(key):
    got = mx.nd.array(N, dtype=N.dtype)[key]
    assert isinstance(got, mx.nd.NDArray)
    _eq(got, _mx_expected(N[key]), N.dtype)


@settings(max_examples=60)
@given(st.data())
def test_getitem_and_setitem_basic_indices_random(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    n = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = mx.nd.array(n, dtype=n.dtype)
    # a 0-d source keeps 0-d results (x[()], x[...]); otherwise MXNet's (1,) for all-int keys
    _eq(x[key], n[key] if n.ndim == 0 else _mx_expected(n[key]), n.dtype)
    x[key] = -7.0
    n[key] = -7.0
    _eq(x, n)
    value = np.arange(int(np.prod(n[key].shape))).reshape(n[key].shape) * 10.0
    x[key] = mx.nd.array(value, dtype="float64")
    n[key] = value
    _eq(x, n)


def test_first_axis_slice_is_a_write_through_view():
    x = mx.nd.array(np.arange(12.0).reshape(4, 3))
    y = x[1:3]
    y[:] = 5
    want = np.arange(12.0).reshape(4, 3)
    want[1:3] = 5
    _eq(x, want)
    r = x[3]                     # an integer on the first axis: a view too
    r[:] = -1
    want[3] = -1
    _eq(x, want)
    y += 1                       # in-place arithmetic on the view writes through as well
    want[1:3] += 1
    _eq(x, want)
    x[:] = 0                     # and the view sees writes to its base
    _eq(y, np.zeros((2, 3)))


def test_integer_index_of_a_1d_array_is_a_shape_1_view():
    # MXNet 1.x: x[i] on a 1-d array is x[i:i+1], shape (1,), a view that writes through
    x = mx.nd.array([0.0, 1.0, 2.0, 3.0])
    e = x[2]
    assert isinstance(e, mx.nd.NDArray) and e.shape == (1,)
    _eq(e, [2.0])
    _eq(x[-1], [3.0])
    e[:] = 9
    _eq(x, [0, 1, 9, 3])
    e += 1
    _eq(x, [0, 1, 10, 3])
    x[:] = 5
    _eq(e, [5.0])
    _eq(x[np.int64(0)], [5.0])
    assert [r.shape for r in x] == [(1,)] * 4        # iteration yields (1,) views too


@pytest.mark.parametrize("key", [(1, slice(0, 2)), (slice(1, 3), slice(None)), (None, 1),
                                 (1, None, slice(0, 3)), (Ellipsis, slice(0, 3))])
def test_contiguous_basic_indexing_is_a_view(key):
    # MXNet 1.9.1: a basic key selecting one contiguous block is a view that writes through
    x = mx.nd.array(np.arange(12.0).reshape(4, 3))
    want = np.arange(12.0).reshape(4, 3)
    want[key] = 100
    y = x[key]
    y[:] = 100
    _eq(x, want)


@pytest.mark.parametrize("key", [(slice(None), 1), slice(None, None, 2), slice(None, None, -1),
                                 (slice(0, 2), slice(0, 2)), [0, 1], (Ellipsis, 0)])
def test_other_indexing_copies(key):
    x = mx.nd.array(np.arange(12.0).reshape(4, 3))
    y = x[key]
    y[:] = 100
    _eq(x, np.arange(12.0).reshape(4, 3))


def test_getitem_ndarray_index():
    x = mx.nd.array(N)
    _eq(x[mx.nd.array([2, 0], dtype="int64")], N[[2, 0]])
    _eq(x[mx.nd.array([1.0, 0.0])], N[[1, 0]])          # float index arrays are cast, as MXNet
    _eq(x[mx.nd.array(1, dtype="int32")], N[1])


@pytest.mark.parametrize("key", [3, -4, (0, 4), (0, 0, 5), (0, 0, -6), (1, 1, 1, 1)])
def test_index_out_of_range(key):
    x = mx.nd.array(N)
    with pytest.raises(IndexError):
        x[key]
    with pytest.raises(IndexError):
        x[key] = 1.0


@pytest.mark.parametrize("key", [1.0, np.float32(0.0), (0, 1.5), (slice(None), np.float64(2))])
def test_float_index_is_an_index_error(key):
    x = mx.nd.array(N)
    with pytest.raises(IndexError):
        x[key]
    with pytest.raises(IndexError):
        x[key] = 1.0


def test_zero_dim_indexing():
    x = mx.nd.array(4.0)
    _eq(x[()], np.array(4.0))
    _eq(x[...], np.array(4.0))
    x[()] = 6.0
    _eq(x, np.array(6.0))
    with pytest.raises(IndexError):
        x[0]


def test_setitem_values():
    n = np.zeros((3, 4), np.int32)
    x = mx.nd.array(n, dtype=n.dtype)
    x[0] = 7                                        # scalar
    n[0] = 7
    x[1] = mx.nd.array([1, 2, 3, 4], dtype="int32")  # NDArray
    n[1] = [1, 2, 3, 4]
    x[2] = np.array([5.9, 6, 7, 8])                 # NumPy array of another dtype: cast
    n[2] = np.array([5.9, 6, 7, 8]).astype(np.int32)
    _eq(x, n, np.int32)
    x[:, 1:3] = np.array([[9], [8], [7]])           # broadcast (3, 1) -> (3, 2)
    n[:, 1:3] = [[9], [8], [7]]
    x[:] = [1, 2, 3, 4]                             # list, broadcast over rows
    n[:] = [1, 2, 3, 4]
    _eq(x, n)
    x[:, [0, 3]] = 0                                # advanced index: scatter
    n[:, [0, 3]] = 0
    _eq(x, n)
    mask = n > 2
    x[mask] = -1
    n[mask] = -1
    _eq(x, n)
    x[1:, ::-2] = mx.nd.array([[10, 20]], dtype="int32")
    n[1:, ::-2] = [[10, 20]]
    _eq(x, n)


def test_setitem_from_overlapping_self():
    n = np.arange(6.0)
    x = mx.nd.array(n)
    x[1:] = x[:-1]
    n[1:] = n[:-1].copy()
    _eq(x, n)
    x[::-1] = x
    n[::-1] = n.copy()
    _eq(x, n)


def test_setitem_errors():
    x = mx.nd.array(np.zeros((3, 4)))
    with pytest.raises(MXNetError, match="__setitem__"):
        x[0] = np.ones(3)                          # (3,) into (4,)
    with pytest.raises(MXNetError, match="__setitem__"):
        x[:] = mx.nd.array(np.ones((2, 4)))
    with pytest.raises(MXNetError, match="__setitem__"):
        x[0, 0] = np.ones(2)                       # a sequence into one element
    with pytest.raises(MXNetError, match="__setitem__"):
        x[[0, 1]] = np.ones((5, 5))
    with pytest.raises(MXNetError, match="__setitem__"):
        x[0] = "abc"
    with pytest.raises(MXNetError, match="__setitem__"):
        x[0] = 1 + 2j
    _eq(x, np.zeros((3, 4)))


@pytest.mark.parametrize("key", [slice(20, 30), slice(3, 3), (slice(1, 1), slice(None))])
def test_setitem_into_an_empty_region_checks_the_value_shape(key, device):
    """An empty region takes a value that broadcasts to it (a scalar, shape (1,) or (0,)),
    and refuses one that does not, as NumPy does, on every device (the CPU once accepted
    anything there)."""
    x = mx.nd.zeros((10,)) if isinstance(key, slice) else mx.nd.zeros((3, 4))
    region = np.zeros(x.shape)[key].shape
    with pytest.raises(MXNetError, match=r"__setitem__.*selects shape"):
        x[key] = mx.nd.ones((5,))
    for ok in (7, mx.nd.ones((1,)), mx.nd.ones(region)):
        x[key] = ok
    _eq(x, np.zeros(x.shape))


def test_setitem_values_the_dtype_cannot_hold_are_errors():
    x = mx.nd.array([1, 2, 3], dtype="int8")
    for value in [1000, -129, np.int64(128), [1, 1000], np.array([1000]), np.nan, np.inf]:
        with pytest.raises(MXNetError, match="__setitem__"):
            x[0] = value                               # not wrapped to -24, never clamped
    _eq(x, [1, 2, 3], np.int8)
    u = mx.nd.array([1, 2], dtype="uint8")
    with pytest.raises(MXNetError, match="__setitem__"):
        u[:] = -1
    i = mx.nd.array([1, 2, 3], dtype="int32")
    with pytest.raises(MXNetError, match="__setitem__"):
        i[:] = np.nan
    with pytest.raises(MXNetError, match="__setitem__"):
        i[1:] = np.array([np.nan, 1.0])
    _eq(i, [1, 2, 3], np.int32)
    _eq(u, [1, 2], np.uint8)
    x[0] = 127                                         # the limits fit
    x[1] = -128
    _eq(x, [127, -128, 3], np.int8)


# ---- arithmetic dunders -----------------------------------------------------------------
ARITH = [("+", operator.add), ("-", operator.sub), ("*", operator.mul),
         ("/", operator.truediv), ("%", operator.mod), ("**", operator.pow)]
COMPARE = [operator.eq, operator.ne, operator.gt, operator.ge, operator.lt, operator.le]


def _operands(dtype):
    a = np.array([[1.5, 2.0, 3.0], [4.0, 0.5, 2.5]]).astype(dtype)
    b = np.array([2.0, 0.5, 3.0]).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym, fn", ARITH)
def test_arithmetic_dunders(sym, fn, dtype):
    a, b = _operands(dtype)
    A, B = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
    rt = {"float32": 1e-6, "float64": 1e-14}[dtype]
    for got, want in [(fn(A, B), fn(a, b)), (fn(B, A), fn(b, a)),      # NDArray, broadcasting
                      (fn(A, 2), fn(a, a.dtype.type(2))),             # scalar
                      (fn(A, 0.5), fn(a, a.dtype.type(0.5))),
                      (fn(3, A), fn(a.dtype.type(3), a)),             # reflected scalar
                      (fn(A, b), fn(a, b)),                           # NumPy operand
                      (fn(b, A), fn(b, a))]:                          # reflected NumPy operand
        assert isinstance(got, mx.nd.NDArray), sym
        assert got.dtype is np.dtype(dtype).type
        np.testing.assert_allclose(got.asnumpy(), want, rtol=rt)


@pytest.mark.parametrize("sym, fn", ARITH)
def test_arithmetic_dunders_int(sym, fn):
    a = np.array([[7, -7, 3], [0, 5, -2]], dtype=np.int32)
    b = np.array([2, 3, 2], dtype=np.int32)
    A, B = mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype)
    if sym == "/":       # integer division truncates toward zero (MXNet), the dtype stays
        want, want2 = np.trunc(a / b).astype(np.int32), np.trunc(a / 2).astype(np.int32)
    else:
        want, want2 = fn(a, b), fn(a, np.int32(2))
    _eq(fn(A, B), want, np.int32)
    _eq(fn(A, 2), want2, np.int32)


def test_reflected_scalar_ops():
    a = np.array([1.0, 2.0, 4.0], np.float32)
    A = mx.nd.array(a)
    _eq(10 - A, 10 - a)
    _eq(1 / A, 1 / a)
    _eq(9 % A, 9 % a)
    _eq(2 ** A, 2 ** a)
    _eq(np.float64(2) * A, 2 * a, np.float32)       # a NumPy scalar acts as a Python scalar


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
@pytest.mark.parametrize("fn", COMPARE)
def test_comparison_dunders(fn, dtype):
    a = np.array([[1, 2, 3], [3, 2, 1]]).astype(dtype)
    b = np.array([2, 2, 2]).astype(dtype)
    A, B = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
    # MXNet comparisons return 0/1 in the input dtype
    _eq(fn(A, B), fn(a, b).astype(dtype), dtype)
    _eq(fn(A, 2), fn(a, 2).astype(dtype), dtype)
    _eq(fn(A, b), fn(a, b).astype(dtype), dtype)
    _eq(fn(b, A), fn(b, a).astype(dtype), dtype)     # reflected through NumPy's deferral


def test_unary_dunders():
    a = np.array([[-1.5, 0.0, 2.0]], np.float32)
    A = mx.nd.array(a)
    _eq(-A, -a)
    _eq(abs(A), np.abs(a))
    assert +A is A
    _eq(-mx.nd.array([1, -2], dtype="int8"), np.array([-1, 2], np.int8), np.int8)


@pytest.mark.parametrize("sym, fn", [("+=", operator.iadd), ("-=", operator.isub),
                                     ("*=", operator.imul), ("/=", operator.itruediv),
                                     ("%=", operator.imod), ("**=", operator.ipow)])
def test_inplace_dunders_write_into_the_array(sym, fn):
    a, b = _operands("float64")
    A = mx.nd.array(a, dtype=a.dtype)
    view = A[0:2]                    # shares A's buffer: proves the write lands in place
    before = id(A)
    for other, other_np in [(mx.nd.array(b, dtype=b.dtype), b), (2.0, 2.0), (b, b)]:
        A = fn(A, other)
        a = fn(a, other_np)
        assert id(A) == before, sym
        np.testing.assert_allclose(A.asnumpy(), a, rtol=1e-14)
        np.testing.assert_allclose(view.asnumpy(), a, rtol=1e-14)


def test_inplace_that_would_grow_is_an_error():
    a = mx.nd.array(np.ones(3))
    with pytest.raises(MXNetError, match=r"broadcast_add.*\(2, 3\)"):
        a += mx.nd.array(np.ones((2, 3)))
    with pytest.raises(MXNetError, match="broadcast_mul"):
        a *= np.ones((4, 1))
    _eq(a, np.ones(3))


def test_inplace_with_overlapping_operand():
    n = np.arange(6.0).reshape(3, 2)
    x = mx.nd.array(n)
    x += x[0]                      # the row being read is also written
    n += n[0].copy()
    _eq(x, n)
    m = np.arange(6.0)
    y = mx.nd.array(m)
    tail = y[1:]
    tail += y[:5]                  # shifted overlap
    m[1:] += m[:5].copy()
    _eq(y, m)
    z = mx.nd.array(np.arange(5.0))
    mx.nd.broadcast_add(z[:4], z[:4], out=z[1:])
    _eq(z, [0, 0, 2, 4, 6])


def test_inplace_same_array():
    x = mx.nd.array([1.0, 2.0])
    x *= x
    _eq(x, [1.0, 4.0])
    x -= x
    _eq(x, [0.0, 0.0])


def test_binary_with_unsupported_operand():
    x = mx.nd.array([1.0])
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" * x
    assert (x == None) is False   # noqa: E711  (falls back to identity)


def test_ops_on_inputs_from_different_devices():
    a = mx.nd.array([1.0], ctx=mx.cpu(0))
    b = mx.nd.array([1.0], ctx=mx.cpu(1))
    with pytest.raises(MXNetError, match="broadcast_add.*device"):
        a + b
    assert (b + b).context == mx.cpu(1)
    assert mx.nd.sin(b).context == mx.cpu(1)


def test_out_argument():
    a = mx.nd.array([1.0, 4.0])
    out = mx.nd.array([0.0, 0.0])
    assert mx.nd.sqrt(a, out=out) is out
    _eq(out, [1.0, 2.0])
    with pytest.raises(MXNetError, match=r"sqrt.*shape"):
        mx.nd.sqrt(a, out=mx.nd.array([0.0, 0.0, 0.0]))
    with pytest.raises(MXNetError, match=r"sqrt.*dtype"):
        mx.nd.sqrt(a, out=mx.nd.array([0.0, 0.0], dtype="float64"))
    with pytest.raises(TypeError, match="sqrt"):
        mx.nd.sqrt(a, out=np.zeros(2, np.float32))


# ---- nd.add, nd.maximum, ...: NDArray-or-scalar operands ------------------------------------
_NUMPY_OF = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "modulo": np.mod, "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "hypot": np.hypot, "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}


@pytest.mark.parametrize("name", sorted(_NUMPY_OF))
def test_binary_functions_take_arrays_and_scalars(name):
    from mxlite.ndarray.ndarray import BINARY_FUNCTIONS
    assert sorted(BINARY_FUNCTIONS) == sorted(_NUMPY_OF)
    fn, ref = getattr(mx.nd, name), _NUMPY_OF[name]
    a = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]], dtype=np.float32)
    b = np.array([2.0, 0.5, 1.0], dtype=np.float32)
    cases = [(mx.nd.array(a), mx.nd.array(b), a, b), (mx.nd.array(a), 1.5, a, np.float32(1.5)),
             (1.5, mx.nd.array(a), np.float32(1.5), a)]
    for lhs, rhs, nl, nr in cases:
        got = fn(lhs, rhs)
        assert isinstance(got, mx.nd.NDArray)
        np.testing.assert_allclose(got.asnumpy(), ref(nl, nr).astype(np.float32), rtol=1e-6,
                                   err_msg=f"{name}({type(lhs).__name__}, {type(rhs).__name__})")
    # two numbers give a number, as MXNet's (comparisons a 0/1 int); hypot, which MXNet's
    # nd lacks, needs an array (tests/test_routing.py)
    if name == "hypot":
        with pytest.raises(TypeError, match=name):
            fn(3.0, 2.0)
    else:
        assert fn(3.0, 2.0) == ref(np.float64(3.0), np.float64(2.0))


def test_all_integer_keys_with_an_ellipsis_give_shape_1():
    x = mx.nd.array(np.arange(60.0).reshape(3, 4, 5))
    np.testing.assert_array_equal(x[1, ..., 2, 3].asnumpy(), [np.arange(60.0).reshape(3, 4, 5)[1, 2, 3]])
    assert mx.nd.array([1.0, 2.0, 3.0])[..., 1].shape == (1,)
    assert x[..., 1].shape == (3, 4)


def test_setitem_checks_ndarray_values_and_truncates_fractions():
    x = mx.nd.array([1, 2, 3], dtype="int8")
    with pytest.raises(MXNetError, match="do not fit in int8"):
        x[0] = mx.nd.array([1000.0])
    with pytest.raises(MXNetError, match="NaN or infinity"):
        x[0] = mx.nd.array([np.nan])
    x[0] = 127.5                 # truncation toward zero (NumPy's conversion) fits
    x[1] = mx.nd.array([-128.9])
    _eq(x, [127, -128, 3], "int8")
    _eq(mx.nd.array([255.9, -0.5], dtype="uint8"), [255, 0], "uint8")
    with pytest.raises(MXNetError, match="overflows float16"):
        mx.nd.array([1e5], dtype="float16")


def test_basic_indexing_slice_is_contiguous_agrees_with_numpy():
    shape = (3, 4, 5)
    cases = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
             slice(None, None, -1), slice(3, None, -2), slice(4, 4)]
    source = np.arange(60).reshape(shape)
    helper = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    for a in cases:
        for b in cases:
            for c in cases:
                key = (a, b, c)
                assert helper(key, shape) == source[key].flags.c_contiguous, key
    with pytest.raises(MXNetError, match=r"2 slices for shape \(3, 4, 5\)"):
        helper((slice(None),) * 2, shape)


def test_truth_value():
    # MXNet 1.x: an empty array is False; one element is its value; more are ambiguous
    assert not bool(mx.nd.array([]))
    assert not mx.nd.zeros((1,)) and mx.nd.ones((1, 1))
    with pytest.raises(MXNetError, match="2 elements is ambiguous"):
        bool(mx.nd.ones((2,)))


@pytest.mark.parametrize("method,args,shape", [("flatten", (), (2, 12)),
                                                ("expand_dims", (1,), (2, 1, 3, 4)),
                                                ("squeeze", (), (2, 3, 4))])
def test_shape_methods_inplace_give_views(method, args, shape):
    x = mx.nd.array(np.arange(24.0).reshape(2, 3, 4))
    copy = getattr(x, method)(*args)
    view = getattr(x, method)(*args, inplace=True)
    assert copy.shape == view.shape == shape
    view[:] = -1
    _eq(x, np.full((2, 3, 4), -1.0))
    _eq(copy, np.arange(24.0).reshape(shape))


def test_squeeze_inplace_checks_the_axis():
    with pytest.raises(MXNetError, match="squeeze"):
        mx.nd.zeros((2, 3)).squeeze(axis=0, inplace=True)


def test_setitem_value_with_extra_leading_ones():
    # as NumPy: a (1, 1, 1, 4) value fills a (3, 4) region; its gradient comes back shaped
    x = mx.nd.zeros((2, 3, 4))
    v = mx.nd.array(np.arange(4.0).reshape(1, 1, 1, 4))
    want = np.zeros((2, 3, 4))
    want[0] = np.arange(4.0).reshape(1, 1, 1, 4)
    x[0] = v
    _eq(x, want)
    v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.zeros((2, 3, 4))
        y[1] = v
        loss = (y * 2).sum()
    loss.backward()
    _eq(v.grad, np.full((1, 1, 1, 4), 6.0, np.float32))
    with pytest.raises(MXNetError, match="__setitem__"):
        x[0] = mx.nd.ones((2, 1, 4))


def _mxnet_record(values, dev_type, flag):
    """One array in MXNet's binary record format (what its pickles hold under 'handle'):
    V2 magic, dense storage, ndim and int64 shape, context, type flag, little-endian data."""
    import struct
    head = struct.pack("<Iii", 0xF993FAC9, 0, values.ndim)
    head += struct.pack(f"<{values.ndim}q", *values.shape)
    return bytearray(head + struct.pack("<iii", dev_type, 0, flag) + values.tobytes())


def test_setstate_takes_mxnet_pickles():
    x = mx.nd.zeros((1,))
    gpu_state = {"handle": _mxnet_record(np.array([1.5, -2.0], np.float32), 2, 0)}
    x.__setstate__(gpu_state)            # a gpu(0) array: back on the CPU without a GPU
    _eq(x, np.array([1.5, -2.0], np.float32), "float32")
    assert x.context == mx.cpu(0) or x.context.device_type == "gpu"
    y = mx.nd.zeros((1,))
    y.__setstate__({"handle": _mxnet_record(np.arange(6, dtype=np.int64).reshape(2, 3), 1, 6)})
    _eq(y, np.arange(6).reshape(2, 3), "int64")
    with pytest.raises(MXNetError, match="pickled NDArray.*truncated"):
        y.__setstate__({"handle": _mxnet_record(np.zeros(2, np.float32), 1, 0)[:-3]})


def test_concatenate():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    _eq(mx.nd.concatenate([mx.nd.array(a), mx.nd.array(b)], axis=1), np.concatenate([a, b], 1))
    _eq(mx.nd.concatenate([mx.nd.array(a)] * 3), np.concatenate([a] * 3))
    x = mx.nd.array(a)
    assert mx.nd.concatenate([x], always_copy=False) is x
    assert mx.nd.concatenate([x]) is not x
    with pytest.raises(MXNetError, match="concatenate"):
        mx.nd.concatenate([])
    with pytest.raises(MXNetError, match="concat"):
        mx.nd.concatenate([x, mx.nd.array(b)], axis=0)


@pytest.mark.parametrize("source,destination", [(0, -1), (-1, 0), ([0, 1], [2, 3]),
                                                ([3, 0], [1, 0]), ([0, 1, 2], [2, 3, 0]),
                                                (range(4), range(4))])
def test_moveaxis_matches_numpy(source, destination):
    a = np.arange(24.0).reshape(4, 1, 2, 3)
    _eq(mx.nd.moveaxis(mx.nd.array(a), source, destination),
        np.moveaxis(a, source, destination))


def test_moveaxis_errors_are_value_errors():
    x = mx.nd.zeros((1, 2, 3))
    for args, match in [((3, 0), "source=3"), ((-4, 0), "source=-4"),
                        ((0, 5), "destination=5"), (([0, 1], [0]), "as many axes"),
                        (([0, 0], [1, 2]), "source")]:
        with pytest.raises(ValueError, match=match):
            mx.nd.moveaxis(x, *args)


def test_from_numpy_shares_and_freezes_the_source():
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    x = mx.nd.from_numpy(a)
    with pytest.raises(ValueError):
        a[2, 1] = 0                    # the consumed array is read-only, as in MXNet
    x[2, 1] = 100
    assert a[2, 1] == 100              # one buffer
    for src in (np.array(7).reshape(()), np.zeros((1, 0, 2)), np.arange(3, dtype="int8")):
        for zero_copy in (True, False):
            got = mx.nd.from_numpy(src.copy(), zero_copy=zero_copy)
            np.testing.assert_array_equal(got.asnumpy(), src)
            assert got.dtype == src.dtype
    copy_src = np.arange(3.0)
    mx.nd.from_numpy(copy_src, zero_copy=False)[0] = 9
    assert copy_src[0] == 0 and copy_src.flags.writeable
    with pytest.raises(ValueError, match="C-contiguous"):
        mx.nd.from_numpy(np.ones((2, 3)).T)
    _eq(mx.nd.from_numpy(np.ones((2, 3)).T, zero_copy=False), np.ones((3, 2)))
    with pytest.raises(MXNetError, match="complex"):
        mx.nd.from_numpy(np.ones(2, np.complex64))


def test_crop_is_slice():
    x = np.arange(24.0).reshape(2, 3, 4)
    _eq(mx.nd.crop(mx.nd.array(x), begin=(0, 1, 0), end=(2, 3, 3)), x[0:2, 1:3, 0:3])
    assert mx.sym.crop(mx.sym.var("x"), begin=(0,), end=(1,)).infer_shape(x=(3, 2))[1] == \
        [(1, 2)]


def test_tostype():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    y = x.tostype("default")
    assert y is not x and y.stype == "default" and y.dtype == np.int32
    y[0, 0] = 9                        # a copy, as MXNet's cast_storage
    _eq(x, [[1, 2], [3, 4]])
    assert x.tostype("csr").stype == "csr"          # (tests/sparse: the sparse types)
    with pytest.raises(MXNetError, match="unknown storage type 'dense'"):
        x.tostype("dense")
    assert x.writable


def test_zeros_and_empty_take_mxnets_stype_for_dense_storage():
    """nd.zeros/nd.empty accept MXNet's stype='default' (scripts pass weight.stype through)
    and the sparse types (tests/sparse); an unknown storage type is refused."""
    z = mx.nd.zeros((2, 3), mx.cpu(), dtype="float16", stype="default")
    assert z.shape == (2, 3) and z.dtype == np.float16 and z.stype == "default"
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 3), np.float16))
    assert mx.nd.empty((4,), stype=None).shape == (4,)
    for fn in (mx.nd.zeros, mx.nd.empty):
        assert fn((2,), stype="row_sparse").stype == "row_sparse"
        with pytest.raises(MXNetError, match="dense"):
            fn((2,), stype="dense")
