"""mx.np statistics, histograms, polynomials, searching and windows, against NumPy;
gradients of the differentiable ones against finite differences (float64)."""
import warnings

import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import mxlite as mx
from mxlite import np
from mxlite.base import MXNetError
from mxlite.test_utils import check_grads

RNG = onp.random.default_rng(7)
METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def close(mx_out, expected, rtol=1e-5, atol=1e-6):
    got = mx_out.asnumpy()
    expected = onp.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    onp.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def grad(f, *host_args, order=1):
    check_grads(f, [np.array(onp.asarray(a, dtype=onp.float64)) for a in host_args],
                order=order, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------- quantiles

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape,axis", [((7,), None), ((3, 4, 5), 1), ((3, 4, 5), (0, 2)),
                                        ((2, 3, 4), -1), ((4, 5), None)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile_matches_numpy(method, shape, axis, keepdims):
    a = RNG.uniform(-10, 10, shape)
    for q in (0.3, [0.0, 0.25, 0.5, 1.0], onp.array([[0.1, 0.9], [0.5, 0.625]])):
        want = onp.quantile(a, q, axis=axis, method=method, keepdims=keepdims)
        close(np.quantile(np.array(a), q, axis=axis, interpolation=method,
                          keepdims=keepdims), want)
        close(np.percentile(np.array(a), onp.asarray(q) * 100, axis=axis, method=method,
                            keepdims=keepdims), want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "bool"])
def test_quantile_dtypes(dtype):
    a = RNG.integers(0, 50, (4, 6)).astype(dtype)
    for method in METHODS:
        got = np.quantile(np.array(a, dtype=dtype), 0.4, axis=0, interpolation=method)
        want = onp.quantile(a.astype(onp.float64), 0.4, axis=0, method=method)
        close(got, want, rtol=1e-3)
        if method in ("linear", "midpoint"):
            expect = dtype if dtype.startswith("float") else "float32"
        else:
            expect = dtype if dtype != "bool" else "int64"
        assert got.dtype == onp.dtype(expect)


def test_median_and_nan_propagation():
    a = RNG.normal(size=(5, 6))
    close(np.median(np.array(a), axis=1), onp.median(a, axis=1))
    close(np.median(np.array(a)), onp.median(a))
    a[2, 3] = onp.nan
    close(np.median(np.array(a), axis=1), onp.median(a, axis=1))
    close(np.percentile(np.array(a), [10, 90], axis=1), onp.percentile(a, [10, 90], axis=1))


def test_infinite_values_as_numpy():
    rows = onp.array([[1, onp.inf, onp.inf], [-onp.inf, 1, 2], [-onp.inf, -onp.inf, 2],
                      [1, 2, onp.inf]])
    q = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for method in METHODS:
            close(np.quantile(np.array(rows), q, axis=1, interpolation=method),
                  onp.quantile(rows, q, axis=1, method=method))
            close(np.nanquantile(np.array(rows), q, axis=1, interpolation=method),
                  onp.nanquantile(rows, q, axis=1, method=method))


def test_nan_quantiles():
    a = RNG.normal(size=(4, 7))
    a[0, [1, 4]] = onp.nan
    a[2, :] = onp.nan
    a[3, 0] = onp.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for method in METHODS:
            close(np.nanquantile(np.array(a), [0.2, 0.7], axis=1, interpolation=method),
                  onp.nanquantile(a, [0.2, 0.7], axis=1, method=method))
        close(np.nanpercentile(np.array(a), 35, axis=1), onp.nanpercentile(a, 35, axis=1))
        close(np.nanmedian(np.array(a), axis=1, keepdims=True),
              onp.nanmedian(a, axis=1, keepdims=True))
        close(np.nanmedian(np.array(a)), onp.nanmedian(a))


def test_quantile_out():
    a = RNG.normal(size=(3, 4))
    out = np.zeros((3,), dtype="float32")
    res = np.quantile(np.array(a, dtype="float32"), 0.5, axis=1, out=out)
    assert res is out
    close(out, onp.quantile(a.astype("float32"), 0.5, axis=1), rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda a: np.quantile(a, 1.5), lambda a: np.quantile(a, -0.1),
    lambda a: np.percentile(a, 101), lambda a: np.percentile(a, [50, onp.nan]),
    lambda a: np.quantile(a, 0.5, interpolation="cubic"),
    lambda a: np.quantile(a, 0.5, axis=2), lambda a: np.quantile(a[:, :0], 0.5, axis=1),
    lambda a: np.quantile(a, 0.5, out=np.zeros((5,)))])
def test_quantile_errors(call):
    with pytest.raises(MXNetError):
        call(np.array(RNG.normal(size=(3, 4))))


def test_quantile_gradients():
    a = RNG.normal(size=(3, 5))
    grad(lambda x: np.percentile(x, [20, 55, 90], axis=1), a, order=2)
    grad(lambda x: np.quantile(x, 0.3, axis=(0, 1), interpolation="midpoint"), a)
    grad(lambda x: np.median(x, axis=0, keepdims=True), a)
    b = a.copy()
    b[1, 2] = onp.nan
    check_grads(lambda x: np.nanquantile(x, [0.1, 0.6], axis=1),
                [np.array(onp.nan_to_num(b, nan=0.0))], order=1)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.floats(0, 1), st.sampled_from(METHODS))
def test_quantile_property(rows, cols, q, method):
    a = onp.random.default_rng(rows * 10 + cols).normal(size=(rows, cols))
    close(np.quantile(np.array(a), q, axis=1, interpolation=method),
          onp.quantile(a, q, axis=1, method=method))


# ---------------------------------------------------------------------------- histograms

def test_histogram():
    a = RNG.uniform(0, 10, (3, 4)).astype("float32")
    for bins, rng in [(5, None), (20, (0.0, 10.0)), (onp.arange(11.0), None), ("auto", None)]:
        c, e = np.histogram(np.array(a), range=rng, bins=np.array(bins, dtype="float32")
                            if isinstance(bins, onp.ndarray) else bins)
        wc, we = onp.histogram(a, bins=bins, range=rng)
        close(c, wc)
        close(e, we.astype("float32"), rtol=1e-6)
        assert c.dtype == onp.int64 and e.dtype == onp.float32
    w = RNG.uniform(size=(3, 4))
    c, e = np.histogram(np.array(a), bins=4, weights=np.array(w))
    close(c, onp.histogram(a, bins=4, weights=w)[0])
    assert c.dtype == onp.float64
    c, e = np.histogram(np.array(a), bins=4, density=True)
    close(c, onp.histogram(a, bins=4, density=True)[0], rtol=1e-5)
    c, e = np.histogram(np.zeros((0,)), bins=3)
    close(c, [0, 0, 0])
    c, e = np.histogram(np.array(onp.arange(6), dtype="int32"), bins=3)
    assert e.dtype == onp.float32


@pytest.mark.parametrize("call", [
    lambda a: np.histogram(a, bins=0), lambda a: np.histogram(a, bins=-2),
    lambda a: np.histogram(a, bins=np.array([0.0, 2.0, 1.0])),
    lambda a: np.histogram(a, bins=3, range=(5.0, 1.0)),
    lambda a: np.histogram(a, bins=3, weights=np.ones((2,))),
    lambda a: np.histogram_bin_edges(a, bins="nonsense")])
def test_histogram_errors(call):
    with pytest.raises(MXNetError):
        call(np.array([1.0, 2.0, 3.0]))


def test_histogram_relatives():
    x, y = RNG.normal(size=20), RNG.normal(size=20)
    close(np.histogram_bin_edges(np.array(x), bins=6), onp.histogram_bin_edges(x, bins=6))
    h, xe, ye = np.histogram2d(np.array(x), np.array(y), bins=3)
    wh, wxe, wye = onp.histogram2d(x, y, bins=3)
    close(h, wh), close(xe, wxe), close(ye, wye)
    s = onp.stack([x, y], axis=1)
    h, edges = np.histogramdd(np.array(s), bins=(2, 3))
    wh, wedges = onp.histogramdd(s, bins=(2, 3))
    close(h, wh)
    for e, we in zip(edges, wedges):
        close(e, we)
    bins = [[-2, 0, 2], [-1, 0, 1, 3]]
    h, edges = np.histogramdd(np.array(s), bins=bins, density=True)
    close(h, onp.histogramdd(s, bins=bins, density=True)[0])
    h, edges = np.histogramdd([np.array(x), np.array(y)], bins=2)
    close(h, onp.histogramdd([x, y], bins=2)[0])
    close(np.polyint(np.array([1.0, 2.0]), k=np.array([3.0])), onp.polyint([1.0, 2.0], k=[3.0]))


def test_bincount():
    x = onp.array([0, 4, 1, 1, 4, 4])
    close(np.bincount(np.array(x, dtype="int32")), onp.bincount(x))
    assert np.bincount(np.array(x, dtype="int32")).dtype == onp.int64
    close(np.bincount(x, minlength=9), onp.bincount(x, minlength=9))
    close(np.bincount(np.array([], dtype="int64")), onp.bincount(onp.array([], "int64")))
    w = RNG.uniform(size=6)
    got = np.bincount(np.array(x, dtype="int64"), weights=np.array(w, dtype="float32"))
    close(got, onp.bincount(x, weights=w), rtol=1e-6)
    assert got.dtype == onp.float32
    assert np.bincount(x, weights=np.array(w)).dtype == onp.float64
    check_grads(lambda v: np.bincount(np.array(x, dtype="int64"), weights=v, minlength=7),
                [np.array(w)], order=2)


@pytest.mark.parametrize("call", [
    lambda: np.bincount(np.array([0, -1, 2], dtype="int64")),
    lambda: np.bincount(np.array([0.0, 1.0])),
    lambda: np.bincount(np.array([[0, 1]], dtype="int64")),
    lambda: np.bincount(np.array([0, 1], dtype="int64"), minlength=-1),
    lambda: np.bincount(np.array([0, 1], dtype="int64"), weights=np.ones((3,)))])
def test_bincount_errors(call):
    with pytest.raises(MXNetError):
        call()


def test_digitize_searchsorted():
    x = RNG.uniform(-1, 4, 15)
    for bins in (onp.array([0.0, 1.0, 2.5, 3.0]), onp.array([3.0, 2.0, 0.5])):
        for right in (False, True):
            got = np.digitize(np.array(x), np.array(bins), right=right)
            close(got, onp.digitize(x, bins, right=right))
            assert got.dtype == onp.int64
    a = onp.array([0.0, 1.0, 1.0, 2.0, 5.0])
    for side in ("left", "right"):
        close(np.searchsorted(np.array(a), np.array(x), side=side),
              onp.searchsorted(a, x, side=side))
    close(np.searchsorted(np.array(a), 1.0), onp.searchsorted(a, 1.0))
    perm = onp.array([3, 0, 4, 1, 2])
    close(np.searchsorted(a[perm], x, sorter=onp.argsort(a[perm], kind="stable")),
          onp.searchsorted(a[perm], x, sorter=onp.argsort(a[perm], kind="stable")))
    for call in (lambda: np.digitize(np.array(x), np.array([0.0, 2.0, 1.0])),
                 lambda: np.searchsorted(np.array(a), 1.0, side="middle"),
                 lambda: np.searchsorted(np.array([[1.0]]), 1.0)):
        with pytest.raises(MXNetError):
            call()


# ---------------------------------------------------------------------------- interp

def test_interp():
    xp = onp.array([0.0, 1.0, 2.5, 4.0])
    fp = onp.array([1.0, -1.0, 3.0, 0.5])
    x = onp.array([-1.0, 0.0, 0.3, 1.0, 2.0, 4.0, 5.0, onp.nan])
    close(np.interp(np.array(x), np.array(xp), np.array(fp)), onp.interp(x, xp, fp))
    close(np.interp(np.array(x), xp, fp, left=-9.0, right=9.0),
          onp.interp(x, xp, fp, left=-9.0, right=9.0))
    close(np.interp(2.0, xp, fp), onp.interp(2.0, xp, fp))
    close(np.interp(np.array(x[:-1]), xp[:1], fp[:1]), onp.interp(x[:-1], xp[:1], fp[:1]))
    xq = onp.array([-180.0, -170, -185, 185, -10, -5, 0, 365])
    xpp, fpp = onp.array([190.0, -190, 350, -350]), onp.array([5.0, 10, 3, 4])
    close(np.interp(np.array(xq), np.array(xpp), np.array(fpp), period=360),
          onp.interp(xq, xpp, fpp, period=360), rtol=1e-5)
    xi, xpi = onp.array([1, 2, 2.5, 3, 4, 1.5]), onp.array([1.0, 2, 3, 4])
    for fpi in (onp.array([1, 2, onp.inf, 4]), onp.array([1, -onp.inf, -onp.inf, 4]),
                onp.array([onp.nan, 2, 3, 4])):
        close(np.interp(np.array(xi), np.array(xpi), np.array(fpi)), onp.interp(xi, xpi, fpi))
    assert np.interp(np.array(x, dtype="float32"), list(xp), list(fp)).dtype == onp.float32
    assert np.interp(np.array(x, dtype="float32"), xp, fp).dtype == onp.float64
    assert np.interp([1, 2], [0, 3], [0, 3]).dtype == onp.float32


def test_interp_gradients_and_errors():
    x = onp.array([0.2, 0.7, 1.6, 2.9])
    xp, fp = onp.array([0.0, 1.0, 2.0, 3.0]), onp.array([1.0, -2.0, 0.5, 4.0])
    grad(lambda a, b, c: np.interp(a, b, c), x, xp, fp, order=2)
    for call in (lambda: np.interp(np.array(x), np.array(xp), np.array(fp[:2])),
                 lambda: np.interp(np.array(x), np.array([[0.0]]), np.array([[0.0]])),
                 lambda: np.interp(np.array(x), np.array(xp), np.array(fp), period=0)):
        with pytest.raises(MXNetError):
            call()


# ---------------------------------------------------------------------------- differences

@pytest.mark.parametrize("shape,axis", [((6,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)])
def test_diff(shape, axis):
    a = RNG.normal(size=shape)
    for n in range(shape[axis] + 2):
        close(np.diff(np.array(a), n=n, axis=axis), onp.diff(a, n=n, axis=axis))
    close(np.diff(np.array(a), axis=axis, prepend=1.5, append=np.array(a)),
          onp.diff(a, axis=axis, prepend=1.5, append=a))
    ai = RNG.integers(-5, 5, shape)
    got = np.diff(np.array(ai, dtype="int32"), axis=axis)
    close(got, onp.diff(ai, axis=axis))
    assert got.dtype == onp.int32
    b = ai > 0
    close(np.diff(np.array(b), axis=axis), onp.diff(b, axis=axis))
    grad(lambda x: np.diff(x, n=2, axis=axis, prepend=0.5), a, order=2)


def test_diff_errors():
    for call in (lambda: np.diff(np.array(1.0)), lambda: np.diff(np.array([1.0]), n=-1),
                 lambda: np.diff(np.array([1.0, 2.0]), axis=1)):
        with pytest.raises(MXNetError):
            call()


def test_ediff1d():
    a = RNG.normal(size=(3, 4))
    close(np.ediff1d(np.array(a)), onp.ediff1d(a))
    close(np.ediff1d(np.array(a), to_end=[7.0, 8.0], to_begin=-1.0),
          onp.ediff1d(a, to_end=[7.0, 8.0], to_begin=-1.0))
    close(np.ediff1d(np.array([2.0])), onp.ediff1d([2.0]))
    close(np.ediff1d(np.array([2.0]), to_begin=np.array([1.0])), [1.0])
    ai = onp.array([1, 5, 2], dtype="int32")
    assert np.ediff1d(np.array(ai, dtype="int32")).dtype == onp.int32
    grad(lambda x, e: np.ediff1d(x, to_end=e, to_begin=2.0), a, onp.array([1.0, 2.0]))


def test_trapz():
    y = RNG.normal(size=(3, 5))
    close(np.trapz(np.array(y)), onp.trapezoid(y))
    close(np.trapz(np.array(y), dx=0.5, axis=0), onp.trapezoid(y, dx=0.5, axis=0))
    x1 = onp.sort(RNG.uniform(size=5))
    close(np.trapz(np.array(y), x=np.array(x1)), onp.trapezoid(y, x=x1))
    x2 = onp.sort(RNG.uniform(size=(3, 5)), axis=0)
    close(np.trapz(np.array(y), x=x2, axis=0), onp.trapezoid(y, x=x2, axis=0))
    close(np.trapz(np.array(y[:, :1])), onp.trapezoid(y[:, :1]))
    yi = onp.array([1, 4, 2])
    got = np.trapz(np.array(yi, dtype="int64"))
    close(got, onp.trapezoid(yi))
    assert got.dtype == onp.float32
    grad(lambda a, b: np.trapz(a, x=b), y, x1, order=2)
    for call in (lambda: np.trapz(np.array(y), x=np.array(x1[:3])),
                 lambda: np.trapz(np.array(2.0))):
        with pytest.raises(MXNetError):
            call()


def test_unwrap():
    p = onp.cumsum(RNG.uniform(-2.5, 2.5, (3, 12)), axis=1)
    wrapped = onp.mod(p + onp.pi, 2 * onp.pi) - onp.pi
    close(np.unwrap(np.array(wrapped)), onp.unwrap(wrapped))
    close(np.unwrap(np.array(wrapped), axis=0), onp.unwrap(wrapped, axis=0))
    close(np.unwrap(np.array(wrapped), discont=4.0), onp.unwrap(wrapped, discont=4.0))
    q = onp.array([0, 1, 2, 3, 4, 5, 1, 2, 3], dtype=onp.float64)
    close(np.unwrap(np.array(q), period=6), onp.unwrap(q, period=6))
    grad(lambda x: np.unwrap(x), wrapped[0])


# ---------------------------------------------------------------------------- polynomials

def test_polyval():
    p, x = RNG.normal(size=4), RNG.normal(size=(2, 3))
    close(np.polyval(np.array(p), np.array(x)), onp.polyval(p, x))
    close(np.polyval(np.array(p), 1.5), onp.polyval(p, 1.5))
    got = np.polyval(np.array([1, 2, 3], dtype="int32"), np.array([1, 2], dtype="int32"))
    close(got, [6.0, 11.0])
    assert got.dtype == onp.float32
    close(np.polyval(np.zeros((0,)), np.array(x)), onp.polyval(onp.zeros(0), x))
    grad(lambda a, b: np.polyval(a, b), p, x, order=2)
    with pytest.raises(MXNetError):
        np.polyval(np.ones((2, 2)), np.array(x))


def test_polynomial_fallbacks():
    a, b = onp.array([1.0, -2.0, 3.0]), onp.array([2.0, 0.5])
    for name in ("polyadd", "polysub", "polymul"):
        close(getattr(np, name)(np.array(a), np.array(b)), getattr(onp, name)(a, b))
    close(np.polyadd(2.0, [1.0, 2.0]), onp.polyadd(2.0, [1.0, 2.0]))
    close(np.polysub(np.array([], dtype="float32"), a), onp.polysub([], a))
    got = np.polymul(np.array([1, 2], dtype="int32"), np.array([3, 4], dtype="int32"))
    close(got, onp.polymul([1, 2], [3, 4]))
    assert got.dtype == onp.int32
    grad(lambda x, y: np.polymul(np.polysub(x, y), np.polyadd(y, x)), a, b, order=2)
    q, r = np.polydiv(np.array(a), np.array(b))
    wq, wr = onp.polydiv(a, b)
    close(q, wq), close(r, wr)
    close(np.polyint(np.array(a), m=2, k=[1.0, 2.0]), onp.polyint(a, m=2, k=[1.0, 2.0]))
    close(np.poly(np.array([1.0, 2.0, 3.0])), onp.poly([1.0, 2.0, 3.0]))
    close(np.sort(np.roots(np.array([1.0, -3.0, 2.0]))), [1.0, 2.0])
    x = onp.arange(6.0)
    y = 0.5 * x ** 2 - x + RNG.normal(scale=0.01, size=6)
    close(np.polyfit(np.array(x), np.array(y), 2), onp.polyfit(x, y, 2))
    got = np.polyfit(x, y, 1, full=True)
    want = onp.polyfit(x, y, 1, full=True)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w)
    c, v = np.polyfit(x, y, 1, cov=True)
    close(v, onp.polyfit(x, y, 1, cov=True)[1])
    assert np.polyadd(np.array(a, dtype="float32"), np.array(b, dtype="float32")).dtype == \
        onp.float32
    close(np.i0(np.array([0.0, 1.0, -2.5])), onp.i0([0.0, 1.0, -2.5]))
    with pytest.raises(MXNetError):
        np.roots(np.array([1.0, 0.0, 1.0]))        # complex roots
    with pytest.raises(MXNetError):
        np.polyfit(np.array(x), np.array(y[:4]), 1)
    for call in (lambda: np.polyadd(np.ones((2, 2)), a), lambda: np.polymul([], a)):
        with pytest.raises(MXNetError):
            call()


def test_vander():
    x = RNG.normal(size=4)
    for n in (None, 0, 1, 3, 6):
        for inc in (False, True):
            close(np.vander(np.array(x), n, increasing=inc), onp.vander(x, n, increasing=inc))
    xi = onp.array([1, 2, 3])
    got = np.vander(np.array(xi, dtype="int64"))
    close(got, onp.vander(xi))
    assert got.dtype == onp.int64
    grad(lambda a: np.vander(a, 4), onp.array([0.0, 1.5, -2.0]), order=2)
    for call in (lambda: np.vander(np.ones((2, 2))), lambda: np.vander(np.ones(3), -1)):
        with pytest.raises(MXNetError):
            call()


# ---------------------------------------------------------------------------- covariance

def test_cov():
    m, y = RNG.normal(size=(3, 6)), RNG.normal(size=(2, 6))
    close(np.cov(np.array(m)), onp.cov(m))
    close(np.cov(np.array(m.T), rowvar=False), onp.cov(m.T, rowvar=False))
    close(np.cov(np.array(m), np.array(y), bias=True), onp.cov(m, y, bias=True))
    close(np.cov(np.array(m), ddof=3), onp.cov(m, ddof=3))
    close(np.cov(np.array(m[0])), onp.cov(m[0]))
    fw, aw = onp.array([1, 2, 1, 3, 1, 1]), RNG.uniform(0.5, 2, 6)
    close(np.cov(np.array(m), fweights=fw, aweights=aw), onp.cov(m, fweights=fw, aweights=aw))
    close(np.cov(np.array(m), fweights=fw), onp.cov(m, fweights=fw))
    assert np.cov(np.array(m, dtype="float32")).dtype == onp.float32
    assert np.cov(np.array(m, dtype="float32"), dtype="float64").dtype == onp.float64
    close(np.corrcoef(np.array(m)), onp.corrcoef(m))
    close(np.corrcoef(np.array(m), np.array(y), rowvar=True), onp.corrcoef(m, y))
    close(np.corrcoef(np.array(m[0])), onp.corrcoef(m[0]))
    grad(lambda a: np.cov(a, aweights=aw), m, order=2)
    grad(lambda a: np.corrcoef(a), m)
    for call in (lambda: np.cov(np.ones((2, 2, 2))),
                 lambda: np.cov(np.array(m), np.ones((2, 5))),
                 lambda: np.cov(np.array(m), fweights=onp.array([1.5] * 6)),
                 lambda: np.cov(np.array(m), aweights=-onp.ones(6)),
                 lambda: np.cov(np.array(m), fweights=onp.ones(4, dtype=int))):
        with pytest.raises(MXNetError):
            call()


@pytest.mark.parametrize("n,m", [(5, 3), (5, 2), (3, 5), (2, 5), (4, 4), (6, 1), (1, 1)])
def test_correlate(n, m):
    a, v = RNG.normal(size=n), RNG.normal(size=m)
    for mode in ("valid", "same", "full"):
        close(np.correlate(np.array(a), np.array(v), mode), onp.correlate(a, v, mode))
    grad(lambda x, w: np.correlate(x, w, "full"), a, v)


def test_correlate_dtypes_and_errors():
    ai = onp.array([1, 2, 3], dtype="int32")
    got = np.correlate(np.array(ai, dtype="int32"), np.array(ai, dtype="int32"), "full")
    close(got, onp.correlate(ai, ai, "full"))
    assert got.dtype == onp.int32
    for call in (lambda: np.correlate(np.array([1.0]), np.zeros((0,))),
                 lambda: np.correlate(np.ones((2, 2)), np.ones(2)),
                 lambda: np.correlate(np.ones(3), np.ones(2), "middle")):
        with pytest.raises(MXNetError):
            call()


# ---------------------------------------------------------------------------- windows

@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman"])
def test_windows(name):
    for M in (-3, 0, 1, 2, 5, 16):
        for dtype in ("float32", "float64"):
            got = getattr(np, name)(M, dtype=dtype)
            close(got, getattr(onp, name)(M).astype(dtype), atol=1e-7)
            assert got.dtype == onp.dtype(dtype)
    assert getattr(np, name)(4).dtype == onp.float32


# ---------------------------------------------------------------------------- hybridized

def _hybrid(f, *args):
    """``f(F, *args)`` run by a hybridized Gluon block (traced on Symbols)."""
    from mxlite import npx
    from mxlite.gluon import HybridBlock

    class Block(HybridBlock):
        def hybrid_forward(self, F, *xs):
            return f(F, *xs)

    prev = npx.is_np_array()
    npx.set_np()
    try:
        block = Block()
        block.hybridize()
        return block(*[np.array(a) for a in args])
    finally:
        if not prev:
            npx.reset_np()


@pytest.mark.parametrize("method", METHODS)
def test_hybridized_quantiles(method):
    a = RNG.normal(size=(3, 4, 5))
    q = onp.array([0.1, 0.5, 0.95])
    close(_hybrid(lambda F, x: F.np.quantile(x, 0.3, axis=1, interpolation=method), a),
          onp.quantile(a, 0.3, axis=1, method=method))
    close(_hybrid(lambda F, x, p: F.np.percentile(x, p, axis=(0, 2), interpolation=method,
                                                 keepdims=True), a, q * 100),
          onp.percentile(a, q * 100, axis=(0, 2), method=method, keepdims=True))
    a[1, 2, 3] = onp.nan
    close(_hybrid(lambda F, x: F.np.median(x, axis=-1), a), onp.median(a, axis=-1))


def test_hybridized_differences_and_polynomials():
    a, p = RNG.normal(size=(3, 5)), RNG.normal(size=4)
    close(_hybrid(lambda F, x: F.np.diff(x, n=2, axis=0, prepend=1.0), a),
          onp.diff(a, n=2, axis=0, prepend=1.0))
    close(_hybrid(lambda F, x, e: F.np.ediff1d(x, to_end=e, to_begin=-2.0), a, p),
          onp.ediff1d(a, to_end=p, to_begin=-2.0))
    close(_hybrid(lambda F, x, t: F.np.trapz(x, t), a, onp.arange(5.0) ** 2),
          onp.trapezoid(a, onp.arange(5.0) ** 2))
    close(_hybrid(lambda F, c, x: F.np.polyval(c, x), p, a), onp.polyval(p, a))
    close(_hybrid(lambda F, x: F.np.vander(x, 3, increasing=True), p),
          onp.vander(p, 3, increasing=True))
    close(_hybrid(lambda F, x: F.np.cov(x, rowvar=False), a), onp.cov(a, rowvar=False))
    close(_hybrid(lambda F, x: F.np.corrcoef(x), a), onp.corrcoef(a))
    close(_hybrid(lambda F, x: x + F.np.hamming(M=5, dtype="float64"), a),
          a + onp.hamming(5))


def test_hybridized_histogram():
    a = RNG.uniform(-1, 5, 30)
    for bins, rng in ((4, (0.0, 4.0)), (3, (-2.0, 6.0)), (1, (1.0, 1.0))):
        counts = _hybrid(lambda F, x: F.np.histogram(x, bins=bins, range=rng)[0], a)
        edges = _hybrid(lambda F, x: F.np.histogram(x, bins=bins, range=rng)[1], a)
        want_c, want_e = onp.histogram(a, bins=bins, range=rng)
        close(counts, want_c), close(edges, want_e)
        assert counts.dtype == onp.int64
    edges = onp.array([-1.0, 0.5, 2.0, 5.0])
    close(_hybrid(lambda F, x, e: F.np.histogram(x, bins=e)[0], a, edges),
          onp.histogram(a, bins=edges)[0])
    close(_hybrid(lambda F, x: F.np.histogram(x, bins=[0.0, 1.0, 3.0])[0], a),
          onp.histogram(a, bins=[0.0, 1.0, 3.0])[0])


VALUE_DEPENDENT = [
    lambda F, x: F.np.bincount(x.astype("int64")), lambda F, x: F.np.histogram(x, bins=3)[0],
    lambda F, x: F.np.histogram(x, bins=3, range=(0, 1), density=True)[0],
    lambda F, x: F.np.histogram(x, bins="auto")[0],
    lambda F, x: F.np.interp(x, [0.0, 1.0], [1.0, 2.0]),
    lambda F, x: F.np.nanmedian(x), lambda F, x: F.np.polyadd(x, x),
    lambda F, x: F.np.searchsorted(x, x)]


@pytest.mark.parametrize("f", VALUE_DEPENDENT)
def test_hybridized_value_dependent_functions_run_imperatively(f):
    """Functions that read their inputs' values cannot be in a graph: the hybridized block
    warns and computes what the imperative call computes."""
    a = onp.array([0.25, 3.0, 1.0, 0.5])
    with pytest.warns(UserWarning, match="runs imperatively"):
        got = _hybrid(f, a)
    close(got, f(mx.nd, np.array(a)))


def test_a_bad_argument_in_a_hybridized_block_is_still_an_error():
    with pytest.raises(MXNetError, match="histogram"):
        _hybrid(lambda F, x: F.np.histogram(x, bins=[0.0, 2.0, 1.0])[0], onp.arange(4.0))
