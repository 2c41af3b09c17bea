"""Debug operators against NumPy (mxlite/ops/debug.py): contrib.isfinite/isinf/isnan/
isposinf/isneginf, contrib.all_finite (+ NDArray.has_nan/has_inf/all_finite) and
contrib.hardmax."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.registry import NON_DIFFERENTIABLE, get_op

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "uint8", "int32", "int64", "bool"]
DTYPES = FLOATS + INTS
SETTINGS = settings(max_examples=40, deadline=None)
BIG = 70_000          # above PARALLEL_MIN (65536): the kernels' parallel paths

TESTS = {"isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
         "isposinf": np.isposinf, "isneginf": np.isneginf}
BITS = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def special_values(dtype):
    """Every class boundary of ``dtype``, written as bit patterns so nothing is rounded."""
    dt = np.dtype(dtype)
    info = np.finfo(dt)
    values = [0.0, -0.0, 1.0, -1.0, info.max, -info.max, info.tiny, -info.tiny,
              info.smallest_subnormal, -info.smallest_subnormal, np.inf, -np.inf, np.nan]
    a = np.array(values, dt)
    nbits = dt.itemsize * 8
    mant = info.nmant
    exp_all = ((1 << (nbits - 1 - mant)) - 1) << mant          # exponent bits all ones
    sign = 1 << (nbits - 1)
    u = BITS[dt.name]
    nans = [exp_all | 1, exp_all | (1 << (mant - 1)), exp_all | ((1 << mant) - 1),
            sign | exp_all | 1, sign | exp_all | (1 << (mant - 1))]
    if dt == np.float64:      # payload only in the low or only in the high 32-bit word
        nans += [exp_all | (1 << 31), exp_all | (1 << 32), sign | exp_all | 0xFFFFFFFF]
    near = [exp_all - 1, sign | (exp_all - 1)]                 # largest finite magnitudes
    return np.concatenate([a, np.array(nans + near, dtype=u).view(dt)])


def expected(test, x):
    """NumPy's answer as the op returns it: 1/0 in x's dtype (integers are always finite)."""
    if x.dtype.kind in "iub":
        value = 1 if test == "isfinite" else 0
        return np.full(x.shape, value, x.dtype)
    return TESTS[test](x).astype(x.dtype)


def check_test(test, x):
    y = getattr(mx.nd.contrib, test)(nd(x))
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y.asnumpy(), expected(test, x))


# ---- isfinite & co ---------------------------------------------------------------------------
@pytest.mark.parametrize("test", sorted(TESTS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values(test, dtype):
    x = special_values(dtype)
    check_test(test, x)
    # the same values deep inside a large array: the parallel, vectorized path
    big = np.zeros(BIG + 13, dtype)
    rng = np.random.default_rng(len(test))
    at = rng.choice(big.size, x.size, replace=False)
    big[at] = x
    check_test(test, big)


def bit_patterns(dtype):
    """Any bit pattern; half of them with the exponent all ones (inf or NaN, any sign and
    payload: for float64 often one that lives only in the low or the high 32 bits)."""
    dt = np.dtype(dtype)
    nbits, mant = dt.itemsize * 8, np.finfo(dt).nmant
    exp_all = ((1 << (nbits - 1 - mant)) - 1) << mant
    mantissa = st.one_of(st.just(0), st.integers(0, (1 << mant) - 1),
                         st.integers(0, 31).map(lambda k: 1 << min(k, mant - 1)),
                         st.integers(0, 20).map(lambda k: 1 << (mant - 1 - min(k, mant - 1))))
    special = st.tuples(st.booleans(), mantissa).map(
        lambda t: (t[0] << (nbits - 1)) | exp_all | t[1])
    return st.one_of(st.integers(0, (1 << nbits) - 1), special)


@pytest.mark.parametrize("dtype", FLOATS)
@SETTINGS
@given(data=st.data())
def test_random_bit_patterns(dtype, data):
    """Any bit pattern at all (NaN payloads, subnormals, both zeros) in any shape."""
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6))
    bits = data.draw(hnp.arrays(BITS[dtype], shape, elements=bit_patterns(dtype)))
    x = bits.view(dtype)
    for test in TESTS:
        check_test(test, x)


@pytest.mark.parametrize("test", sorted(TESTS))
@pytest.mark.parametrize("dtype", INTS)
def test_integer_and_bool_arrays_are_finite(test, dtype):
    x = np.arange(-3, 300).astype(dtype).reshape(-1, 1)
    check_test(test, x)


def test_uint8_zero_is_finite():
    """MXNet's ``abs(x) == inf`` cast inf to uint8 (0), so it reported 0 as infinite."""
    x = mx.nd.array([0, 1, 255], dtype="uint8")
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [0, 0, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [1, 1, 1]


@pytest.mark.parametrize("test", sorted(TESTS))
def test_shapes_empty_0d_transposed(test):
    rng = np.random.default_rng(3)
    for shape in [(), (0,), (3, 0, 2), (1,), (4, 5, 6)]:
        x = rng.choice(special_values("float32"), size=shape)
        check_test(test, np.asarray(x, np.float32))
    # an input produced by another op (transpose): the kernel sees its contiguous result
    a = rng.choice(special_values("float64"), size=(5, 7))
    y = getattr(mx.nd.contrib, test)(mx.nd.transpose(nd(a)))
    np.testing.assert_array_equal(y.asnumpy(), expected(test, a.T))


@pytest.mark.parametrize("test", sorted(TESTS))
@pytest.mark.parametrize("dtype", ["float16", "float64", "int32"])
def test_out_and_in_place(test, dtype):
    x = special_values(dtype) if dtype != "int32" else np.arange(9, dtype=dtype)
    want = expected(test, x)
    fn = getattr(mx.nd.contrib, test)
    out = mx.nd.zeros(x.shape, dtype=dtype)
    assert fn(nd(x), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), want)
    a = nd(x)
    fn(a, out=a)                                   # element-wise: in place is allowed
    np.testing.assert_array_equal(a.asnumpy(), want)


@pytest.mark.parametrize("test", sorted(TESTS))
def test_errors_name_the_operator(test):
    fn = getattr(mx.nd.contrib, test)
    x = mx.nd.array([1.0, 2.0])
    # (a call's parsed keywords are memoised, so the warning comes once per value: the value
    # names the device, as each device's run is a new call)
    with pytest.warns(UserWarning, match=f"_contrib_{test} takes no parameters: keyword "
                                         "'bogus' is ignored"):
        fn(x, bogus=str(x.context))
    with pytest.raises(MXNetError, match=f"_contrib_{test}.*dtype"):
        fn(x, out=mx.nd.zeros((2,), dtype="float64"))
    with pytest.raises(MXNetError, match=f"_contrib_{test}.*shape"):
        fn(x, out=mx.nd.zeros((3,)))
    with pytest.raises(TypeError, match=f"_contrib_{test}"):
        fn([1.0, 2.0])


def test_ndarray_methods():
    x = mx.nd.array([1.0, np.inf, np.nan, -np.inf])
    np.testing.assert_array_equal(x.isfinite().asnumpy(), [1, 0, 0, 0])
    np.testing.assert_array_equal(x.isinf().asnumpy(), [0, 1, 0, 1])
    np.testing.assert_array_equal(x.isnan().asnumpy(), [0, 0, 1, 0])
    assert x.has_nan() is True and x.has_inf() is True and x.all_finite() is False
    y = mx.nd.array([[1.0, 2.0]], dtype="float16")
    assert y.has_nan() is False and y.has_inf() is False and y.all_finite() is True
    z = mx.nd.array([np.nan], dtype="float64")
    assert z.has_nan() is True and z.has_inf() is False
    i = mx.nd.array([0, 255], dtype="uint8")
    assert i.all_finite() is True and i.has_inf() is False and i.has_nan() is False


# ---- all_finite ----------------------------------------------------------------------------
def test_all_finite_names_and_result_format():
    assert mx.nd.contrib.all_finite.op is get_op("all_finite") is get_op("multi_all_finite")
    r = mx.nd.contrib.all_finite(mx.nd.array([1.0]))
    assert r.shape == (1,) and r.dtype == np.float32 and r.asnumpy().tolist() == [1.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
def test_all_finite_finds_one_bad_element_anywhere(dtype, special):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(3, 4), (BIG * 3,), (0,), (5,)]]
    arrays.append(np.arange(10, dtype=np.int32))
    handles = [nd(a) for a in arrays]
    assert mx.nd.contrib.all_finite(*handles).asnumpy()[0] == 1.0
    for k in (0, 1, 3):
        size = arrays[k].size
        for pos in sorted({0, size // 2, size - 1}):
            bad = [a.copy() for a in arrays]
            bad[k].reshape(-1)[pos] = special
            got = mx.nd.contrib.all_finite(*[nd(a) for a in bad]).asnumpy()[0]
            want = float(all(np.isfinite(a).all() for a in bad))
            assert got == want == 0.0, (k, pos)


@SETTINGS
@given(data=st.data())
def test_all_finite_random_bits(data):
    dtypes = data.draw(st.lists(st.sampled_from(FLOATS), min_size=1, max_size=4))
    shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5)
    arrays = [data.draw(hnp.arrays(BITS[dt], shapes, elements=bit_patterns(dt))).view(dt)
              for dt in dtypes]
    got = mx.nd.contrib.all_finite(*[nd(a) for a in arrays]).asnumpy()[0]
    assert got == float(all(np.isfinite(a).all() for a in arrays))
    for a in arrays:
        h = nd(a)
        assert h.has_nan() == bool(np.isnan(a).any())
        assert h.has_inf() == bool(np.isinf(a).any())


def test_all_finite_integer_bool_and_empty_arrays_are_finite():
    arrays = [mx.nd.array([0, 255], dtype="uint8"), mx.nd.array([True, False], dtype="bool"),
              mx.nd.zeros((0, 3)), mx.nd.array(np.iinfo(np.int64).min, dtype="int64")]
    assert mx.nd.contrib.all_finite(*arrays).asnumpy()[0] == 1.0


def test_multi_all_finite_num_arrays_and_init_output():
    good, bad = mx.nd.ones((4,)), mx.nd.array([1.0, np.nan])
    assert mx.nd.multi_all_finite(good, good, num_arrays=2).asnumpy()[0] == 1.0
    # init_output=False only clears the flag: several calls AND into one output (MXNet's amp)
    flag = mx.nd.ones((1,))
    mx.nd.multi_all_finite(good, num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy()[0] == 1.0
    mx.nd.multi_all_finite(bad, good, num_arrays=2, init_output=False, out=flag)
    assert flag.asnumpy()[0] == 0.0
    mx.nd.multi_all_finite(good, num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy()[0] == 0.0              # stays cleared
    mx.nd.multi_all_finite(good, num_arrays=1, init_output=True, out=flag)
    assert flag.asnumpy()[0] == 1.0              # init_output=True starts again from 1


def test_all_finite_errors():
    x = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="_contrib_all_finite.*num_arrays=3.*2 array"):
        mx.nd.contrib.all_finite(x, x, num_arrays=3)
    with pytest.raises(MXNetError, match="_contrib_all_finite.*at least one"):
        mx.nd.contrib.all_finite()
    with pytest.raises(MXNetError, match="_contrib_all_finite.*shape"):
        mx.nd.contrib.all_finite(x, out=mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match="_contrib_all_finite.*init_output"):
        mx.nd.contrib.all_finite(x, init_output="maybe")


# ---- hardmax -------------------------------------------------------------------------------
def hardmax_ref(x, axis):
    """NumPy: argmax (first maximum, first NaN) + put_along_axis."""
    out = np.zeros_like(x)
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    np.put_along_axis(out, idx, np.ones((), x.dtype), axis=axis)
    return out


def rand(shape, dtype, rng, levels=None):
    """Random values; ``levels`` draws from few distinct values so ties are common."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if levels is not None:
        return rng.integers(0, levels, shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 256, shape).astype(dt)
    if dt.kind == "i":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def check_hardmax(x, axis):
    y = mx.nd.contrib.hardmax(nd(x), axis=axis)
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y.asnumpy(), hardmax_ref(x, axis))


@pytest.mark.parametrize("dtype", DTYPES)
def test_hardmax_every_axis(dtype):
    rng = np.random.default_rng(11)
    for shape in [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 5)]:
        for levels in (None, 3):               # distinct values, then many ties
            x = rand(shape, dtype, rng, levels)
            for axis in range(-len(shape), len(shape)):
                check_hardmax(x, axis)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hardmax_default_axis_is_last(dtype):
    x = rand((4, 6), dtype, np.random.default_rng(1))
    np.testing.assert_array_equal(mx.nd.contrib.hardmax(nd(x)).asnumpy(), hardmax_ref(x, -1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, axis", [((300, 400), -1), ((300, 400), 0), ((3, 50, 700), 1),
                                         ((2, 600, 70), 1), ((BIG + 5,), 0), ((1, 5, 300), 1)])
def test_hardmax_large_tiled_and_parallel(dtype, shape, axis):
    """Rows longer than a work item, column tiles (256) with a remainder, one long vector."""
    rng = np.random.default_rng(5)
    check_hardmax(rand(shape, dtype, rng), axis)
    check_hardmax(rand(shape, dtype, rng, levels=2), axis)


@pytest.mark.parametrize("dtype", FLOATS)
def test_hardmax_nan_inf_and_signed_zero(dtype):
    nan, inf = np.nan, np.inf
    rows = [[1.0, nan, 3.0, nan], [nan, 2.0, 5.0, 1.0], [-inf, -inf, -inf, -inf],
            [inf, 1.0, inf, nan], [-0.0, 0.0, -0.0, -1.0], [0.0, -0.0, -1.0, -2.0],
            [-5.0, -inf, -2.0, -2.0]]
    x = np.array(rows, dtype)
    for axis in (0, 1):
        check_hardmax(x, axis)
    # many random NaNs/infs in the column (tiled) path too
    rng = np.random.default_rng(2)
    y = rng.choice(special_values(dtype), size=(40, 30, 9))
    for axis in range(3):
        check_hardmax(y, axis)


@SETTINGS
@given(data=st.data())
def test_hardmax_random_shapes(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
    dtype = data.draw(st.sampled_from(DTYPES))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    seed = data.draw(st.integers(0, 2 ** 32 - 1))
    levels = data.draw(st.sampled_from([None, 2]))
    x = rand(shape, dtype, np.random.default_rng(seed), levels=levels)
    if 0 in shape:
        y = mx.nd.contrib.hardmax(nd(x), axis=axis)
        assert y.shape == x.shape and y.dtype == x.dtype
    else:
        check_hardmax(x, axis)


def test_hardmax_emulates_onnx_opset_11_by_reshaping():
    """Opsets < 13 took one maximum over all dimensions from ``axis`` on."""
    x = rand((2, 3, 4), "float32", np.random.default_rng(4))
    got = mx.nd.contrib.hardmax(nd(x).reshape((2, -1)), axis=-1).reshape(x.shape).asnumpy()
    flat = x.reshape(2, -1)
    want = (np.arange(12) == np.argmax(flat, axis=1)[:, None]).astype(np.float32)
    np.testing.assert_array_equal(got, want.reshape(x.shape))


def test_hardmax_errors():
    with pytest.raises(MXNetError, match="_contrib_hardmax.*at least one dimension"):
        mx.nd.contrib.hardmax(mx.nd.array(1.0))
    x = mx.nd.ones((2, 3))
    for axis in (2, -3, 10):
        with pytest.raises(MXNetError, match=rf"_contrib_hardmax.*axis={axis}.*\(2, 3\)"):
            mx.nd.contrib.hardmax(x, axis=axis)
    with pytest.raises(MXNetError, match="_contrib_hardmax.*'axis'"):
        mx.nd.contrib.hardmax(x, axis=1.5)
    with pytest.raises(MXNetError, match="_contrib_hardmax.*overlaps"):
        mx.nd.contrib.hardmax(x, out=x)


# ---- gradients: declared absent, and the tape treats the outputs as constants --------------
@pytest.mark.parametrize("name", [f"_contrib_{t}" for t in TESTS] +
                         ["_contrib_all_finite", "_contrib_hardmax", "_has_nan", "_has_inf"])
def test_declared_non_differentiable(name):
    assert get_op(name).gradient == NON_DIFFERENTIABLE


@pytest.mark.parametrize("name", ["isfinite", "hardmax"])
def test_backward_through_a_non_differentiable_factor(name):
    """d/dx [c(x) * x] = c(x) when c is piecewise constant (isfinite, hardmax)."""
    a = np.array([[0.5, -2.0, 3.0], [4.0, 1.0, -1.0]])
    x = mx.nd.array(a, dtype="float64")
    x.attach_grad()
    fn = getattr(mx.nd.contrib, name)
    with mx.autograd.record():
        c = fn(x)
        y = c * x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), c.asnumpy())
    assert c.asnumpy().sum() == (6 if name == "isfinite" else 2)
