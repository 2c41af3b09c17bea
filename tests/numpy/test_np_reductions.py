"""mx.np's reductions against NumPy: axis None/int/negative/tuple/(), keepdims, dtype,
initial, where, out, zero-size and 0-d inputs, result dtypes, gradients."""
import numpy as onp
import pytest
from np_checks import finite_difference
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import autograd
from mxlite import np

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


def elements(dt):
    kind = onp.dtype(dt).kind
    if kind == "b":
        return st.booleans()
    if kind == "u":
        return st.integers(0, 5)
    if kind == "i":
        return st.integers(-5, 5)
    return st.floats(-3, 3, width=16)


@st.composite
def array_and_axis(draw, min_side=0, dtypes=DTYPES):
    dt = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=3))
    a = draw(hnp.arrays(dt, shape, elements=elements(dt)))
    nd = a.ndim
    choices = [st.none()]
    if nd:
        choices.append(st.integers(-nd, nd - 1))
    choices.append(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)
                   if nd else st.just(()))
    axis = draw(st.one_of(*choices))
    if isinstance(axis, tuple) and axis and draw(st.booleans()):
        axis = tuple(i - nd for i in axis)        # negative axes in a tuple
    return a, axis


def tol(dt):
    return {"float16": 1e-2, "float32": 1e-5}.get(onp.dtype(dt).name, 1e-12)


def check(got, want, dt=None):
    assert isinstance(got, np.ndarray)
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (want.dtype if dt is None else dt), (got.dtype, want.dtype)
    g = got.asnumpy()
    if want.dtype.kind == "f":
        r = tol(want.dtype if dt is None else dt)
        onp.testing.assert_allclose(g.astype("float64"), want.astype("float64"), rtol=r,
                                    atol=r, equal_nan=True)
    else:
        onp.testing.assert_array_equal(g, want)


def sum_dtype(dt):
    """NumPy's accumulator for sum/prod (uint64 is not stored: int64)."""
    dt = onp.dtype(dt)
    if dt.kind in "bi" and dt.itemsize < 8 or dt.kind == "u":
        return onp.dtype("int64")
    return dt


@settings(max_examples=80)
@given(array_and_axis(), st.booleans(), st.sampled_from(["sum", "prod"]))
def test_sum_prod(aa, keepdims, name):
    a, axis = aa
    y = getattr(np, name)(np.array(a, dtype=a.dtype), axis=axis, keepdims=keepdims)
    dt = sum_dtype(a.dtype)
    want = getattr(onp, name)(a.astype("float64" if dt.kind == "f" else dt), axis=axis,
                              keepdims=keepdims)
    if a.dtype == onp.float16:
        want = getattr(onp, name)(a.astype("float32"), axis=axis, keepdims=keepdims)
    check(y, onp.asarray(want).astype(dt), dt)


@settings(max_examples=60)
@given(array_and_axis(min_side=1), st.booleans(), st.sampled_from(["max", "min"]))
def test_max_min(aa, keepdims, name):
    a, axis = aa
    y = getattr(np, name)(np.array(a, dtype=a.dtype), axis=axis, keepdims=keepdims)
    check(y, getattr(onp, name)(a, axis=axis, keepdims=keepdims))


@settings(max_examples=40)
@given(array_and_axis(), st.booleans(), st.sampled_from(["all", "any"]))
def test_all_any(aa, keepdims, name):
    a, axis = aa
    y = getattr(np, name)(np.array(a, dtype=a.dtype), axis=axis, keepdims=keepdims)
    check(y, getattr(onp, name)(a, axis=axis, keepdims=keepdims))


@settings(max_examples=60)
@given(array_and_axis(min_side=1), st.booleans(), st.sampled_from(["mean", "var", "std"]))
def test_mean_var_std(aa, keepdims, name):
    a, axis = aa
    y = getattr(np, name)(np.array(a, dtype=a.dtype), axis=axis, keepdims=keepdims)
    dt = a.dtype if a.dtype.kind == "f" else onp.dtype("float32")
    want = getattr(onp, name)(a.astype("float64"), axis=axis, keepdims=keepdims)
    check(y, onp.asarray(want).astype(dt), dt)


@settings(max_examples=40)
@given(array_and_axis(min_side=1, dtypes=["int32", "float32", "float64"]))
def test_argmax_argmin(aa):
    a, axis = aa
    if isinstance(axis, tuple):
        axis = None
    for name in ("argmax", "argmin"):
        y = getattr(np, name)(np.array(a, dtype=a.dtype), axis=axis)
        check(y, getattr(onp, name)(a, axis=axis))


@settings(max_examples=40)
@given(array_and_axis(min_side=1, dtypes=["int32", "float32", "float64", "bool"]))
def test_cumsum(aa):
    a, axis = aa
    if isinstance(axis, tuple):
        axis = None
    y = np.cumsum(np.array(a, dtype=a.dtype), axis=axis)
    check(y, onp.cumsum(a, axis=axis).astype(sum_dtype(a.dtype)), sum_dtype(a.dtype))
    y = np.cumprod(np.array(a, dtype=a.dtype), axis=axis)
    check(y, onp.cumprod(a, axis=axis).astype(sum_dtype(a.dtype)), sum_dtype(a.dtype))


@pytest.mark.parametrize("dtype", ["int32", "float16", "float64", "bool"])
def test_sum_dtype_argument(dtype):
    a = onp.arange(12).reshape(3, 4).astype(dtype)
    x = np.array(a, dtype=dtype)
    check(np.sum(x, axis=1, dtype="float32"), onp.sum(a, axis=1, dtype="float32"))
    check(np.sum(x, dtype="int64"), onp.sum(a, dtype="int64"))
    check(np.mean(x, axis=0, dtype="float64"), onp.mean(a, axis=0, dtype="float64"))


def test_narrower_float_dtype_rounds_once():
    a = onp.random.default_rng(1).uniform(-1, 1, (4, 300)).astype("float64")
    got = np.sum(np.array(a, dtype="float64"), axis=1, dtype="float16")
    assert got.dtype == onp.float16
    onp.testing.assert_array_equal(got.asnumpy(), a.sum(axis=1).astype("float16"))


def test_initial_and_where():
    a = onp.arange(1, 13, dtype="float32").reshape(3, 4)
    w = onp.array([True, False, True, True])
    x = np.array(a)
    check(np.sum(x, axis=0, initial=10.0), onp.sum(a, axis=0, initial=10.0))
    check(np.sum(x, axis=1, where=w), onp.sum(a, axis=1, where=w))
    check(np.sum(x, where=np.array(w), initial=1.0), onp.sum(a, where=w, initial=1.0))
    check(np.prod(x, axis=1, where=w, keepdims=True), onp.prod(a, axis=1, where=w,
                                                                keepdims=True))
    check(np.max(x, axis=1, initial=7.0), onp.max(a, axis=1, initial=7.0))
    check(np.min(x, axis=0, where=w[None, :].repeat(3, 0), initial=100.0),
          onp.min(a, axis=0, where=w[None, :].repeat(3, 0), initial=100.0))
    check(np.mean(x, axis=1, where=w), onp.mean(a, axis=1, where=w))
    check(np.max(np.zeros((0, 3)), axis=0, initial=-1.0),
          onp.max(onp.zeros((0, 3), "float32"), axis=0, initial=-1.0))
    with pytest.raises(mx.base.MXNetError):
        np.max(x, where=np.array(w))           # no identity and no initial


def test_argmax_of_zero_size_and_0d_arrays():
    z = onp.zeros((5, 0, 3), "float32")
    check(np.argmax(np.array(z), axis=0), onp.argmax(z, axis=0))
    check(np.argmin(np.array(3.0), axis=-1), onp.argmin(onp.array(3.0), axis=-1))
    with pytest.raises(mx.base.MXNetError):
        np.argmax(np.array(z), axis=1)
    with pytest.raises(mx.base.MXNetError):
        np.argmax(np.array(3.0), axis=1)


def test_empty_reductions_stay_on_the_tape():
    from mxlite import autograd
    x = np.zeros((0, 3))
    x.attach_grad()
    with autograd.record():
        t = np.sum(x, axis=0) + np.prod(x, axis=0) + np.max(x, axis=0, initial=-1.0)
    t.backward()
    check(t, onp.zeros(3, "float32"))
    assert x.grad.shape == (0, 3)


def test_zero_size_without_identity_is_an_error():
    with pytest.raises(mx.base.MXNetError):
        np.max(np.zeros((0, 3)), axis=0)
    with pytest.raises(mx.base.MXNetError):
        np.argmax(np.zeros((0,)))
    check(np.max(np.zeros((0, 3)), axis=1), onp.zeros((0,), "float32"))


def test_out_argument():
    x = np.array(onp.arange(6, dtype="float32").reshape(2, 3))
    out = np.zeros((3,))
    r = np.sum(x, axis=0, out=out)
    assert r is out
    check(out, onp.array([3, 5, 7], 'float32'))
    o = np.zeros((2,), dtype="int64")
    np.argmax(x, axis=1, out=o)
    check(o, [2, 2])
    with pytest.raises(mx.base.MXNetError):
        np.sum(x, axis=0, out=np.zeros((2,)))


def test_bad_axis_is_an_error():
    x = np.ones((2, 3))
    for axis in (2, -3, (0, 0), (0, 5)):
        with pytest.raises((mx.base.MXNetError, ValueError)):
            np.sum(x, axis=axis)


def test_methods_match_functions():
    a = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    x = np.array(a)
    check(x.sum(axis=(0, 2)), a.sum(axis=(0, 2)))
    check(x.mean(1, keepdims=True), a.mean(1, keepdims=True))
    check(x.max(-1), a.max(-1))
    check(x.std(axis=0, ddof=1), a.std(axis=0, ddof=1))
    check(x.argmin(2), a.argmin(2))
    check(x.prod(), a.prod())
    check(x.any(), a.any())
    assert x.sum().ndim == 0


def test_count_nonzero_ptp_average():
    a = onp.array([[0, 1, 2], [3, 0, 0]], dtype="float32")
    x = np.array(a)
    check(np.count_nonzero(x, axis=1), onp.count_nonzero(a, axis=1).astype("int64"))
    check(np.ptp(x, axis=0), onp.ptp(a, axis=0))
    wts = onp.array([1.0, 2.0, 3.0], dtype="float32")
    check(np.average(x, axis=1, weights=np.array(wts)), onp.average(a, axis=1, weights=wts))
    check(np.average(x), onp.average(a))


_fd = finite_difference


@pytest.mark.parametrize("name,kwargs", [
    ("sum", {"axis": 1}), ("sum", {"axis": (0, 2), "keepdims": True}), ("prod", {"axis": 0}),
    ("mean", {}), ("var", {"axis": 2}), ("std", {"axis": (0, 1), "ddof": 1}),
    ("max", {"axis": 1}), ("min", {}), ("sum", {"axis": 1, "where": [True, False, True, True]}),
    ("cumprod", {"axis": 1}), ("cumprod", {}), ("cumsum", {"axis": -1}),
])
def test_gradients(name, kwargs, rng):
    a = rng.uniform(0.5, 2, (2, 3, 4))
    a[0, 1, 2] = 0.0 if name == "cumprod" else a[0, 1, 2]      # a zero: no log tricks
    a[1, 0, 1] *= -1
    x = np.array(a, dtype="float64")
    x.attach_grad()
    w = onp.asarray(rng.uniform(0.5, 1.5, onp.asarray(getattr(onp, name)(a, **kwargs)).shape))
    kw = dict(kwargs)
    if "where" in kw:
        kw["where"] = onp.array(kw["where"])
    with autograd.record():
        y = getattr(np, name)(x, **kw)
        z = (y * np.array(w, dtype="float64")).sum()
    z.backward()
    want = _fd(lambda v: (getattr(onp, name)(v, **kw) * w).sum(), a)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-8)


def test_mean_of_nothing_is_nan():
    check(np.mean(np.zeros((0,))), onp.float32(onp.nan))
    check(np.mean(np.zeros((0, 3)), axis=0), onp.full((3,), onp.nan, "float32"))
    check(np.mean(np.zeros((3, 0)), axis=0), onp.zeros((0,), "float32"))
