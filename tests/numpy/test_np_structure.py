"""mx.np's structural, set and host-fallback functions against NumPy itself: values,
dtypes and shapes (0-d and zero-size edges), gradients by finite differences (float64),
and the MXNetError of bad input."""
import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import mxlite as mx
from mxlite import autograd, np
from mxlite.base import MXNetError
from mxlite.test_utils import check_grads

RNG = onp.random.default_rng(7)


def f64(shape, low=-2.0, high=2.0):
    """A float64 mx.np array and its host copy (distinct values: ties change orders)."""
    h = RNG.uniform(low, high, size=shape)
    return np.array(h, dtype="float64"), h


def same(mx_out, onp_out):
    """mx_out equals onp_out: values, shape and dtype."""
    got = mx_out.asnumpy() if hasattr(mx_out, "asnumpy") else onp.asarray(mx_out)
    want = onp.asarray(onp_out)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_array_equal(got, want)


# ---- values against NumPy, one row per call -----------------------------------------------------
A = onp.arange(12.0).reshape(3, 4)
I = onp.array([[0, 1, 2, 0], [2, 1, 0, 1], [1, 1, 2, 2]])
COND = onp.array([True, False, True])
VALUE_CASES = [
    ("insert scalar", lambda m: np.insert(m(A), 2, 9.0), lambda: onp.insert(A, 2, 9.0)),
    ("insert row", lambda m: np.insert(m(A), 1, m(onp.ones(4)), axis=0),
     lambda: onp.insert(A, 1, onp.ones(4), axis=0)),
    ("insert list obj", lambda m: np.insert(m(A), [0, 2, 2], m(onp.array([7.0, 8, 9])), axis=1),
     lambda: onp.insert(A, [0, 2, 2], onp.array([7.0, 8, 9]), axis=1)),
    ("insert negative", lambda m: np.insert(m(A), -1, 5.0, axis=1),
     lambda: onp.insert(A, -1, 5.0, axis=1)),
    ("insert slice", lambda m: np.insert(m(A), slice(0, 3), m(onp.array([1.0, 2, 3])), axis=1),
     lambda: onp.insert(A, slice(0, 3), [1.0, 2, 3], axis=1)),
    ("insert into empty", lambda m: np.insert(m(onp.zeros((0, 3))), 0, 1.0, axis=0),
     lambda: onp.insert(onp.zeros((0, 3)), 0, 1.0, axis=0)),
    ("delete int", lambda m: np.delete(m(A), 1, axis=0), lambda: onp.delete(A, 1, axis=0)),
    ("delete list", lambda m: np.delete(m(A), [0, 3, -1]), lambda: onp.delete(A, [0, 3, -1])),
    ("delete slice", lambda m: np.delete(m(A), slice(None, None, 2), axis=1),
     lambda: onp.delete(A, slice(None, None, 2), axis=1)),
    ("delete mask", lambda m: np.delete(m(A), COND, axis=0), lambda: onp.delete(A, COND, axis=0)),
    ("resize up", lambda m: np.resize(m(A), (5, 5)), lambda: onp.resize(A, (5, 5))),
    ("resize down", lambda m: np.resize(m(A), 5), lambda: onp.resize(A, 5)),
    ("resize empty", lambda m: np.resize(m(onp.zeros(0)), (2, 2)),
     lambda: onp.resize(onp.zeros(0), (2, 2))),
    ("resize to empty", lambda m: np.resize(m(A), (0, 3)), lambda: onp.resize(A, (0, 3))),
    ("choose", lambda m: np.choose(I, [m(A), m(-A), m(A * 10)]),
     lambda: onp.choose(I, [A, -A, A * 10])),
    ("choose broadcast", lambda m: np.choose(I[0], [m(A), m(onp.ones(4)), m(A * 2)]),
     lambda: onp.choose(I[0], [A, onp.ones(4), A * 2])),
    ("choose wrap", lambda m: np.choose(I + 3, [m(A), m(-A)], mode="wrap"),
     lambda: onp.choose(I + 3, [A, -A], mode="wrap")),
    ("choose clip", lambda m: np.choose(I - 1, [m(A), m(-A)], mode="clip"),
     lambda: onp.choose(I - 1, [A, -A], mode="clip")),
    ("compress", lambda m: np.compress(COND, m(A), axis=0), lambda: onp.compress(COND, A, axis=0)),
    ("compress flat", lambda m: np.compress([0, 1, 1], m(A)), lambda: onp.compress([0, 1, 1], A)),
    ("extract", lambda m: np.extract(A % 3 == 0, m(A)), lambda: onp.extract(A % 3 == 0, A)),
    ("select", lambda m: np.select([m(A) < 3, m(A) > 8], [m(A), m(-A)], default=1.5),
     lambda: onp.select([A < 3, A > 8], [A, -A], default=1.5)),
    ("piecewise", lambda m: np.piecewise(m(A), [A < 4, A > 6], [lambda x: x * 2, 7.0]),
     lambda: onp.piecewise(A, [A < 4, A > 6], [lambda x: x * 2, 7.0])),
    ("piecewise otherwise", lambda m: np.piecewise(m(A), [A < 4], [lambda x: -x, lambda x: x ** 2]),
     lambda: onp.piecewise(A, [A < 4], [lambda x: -x, lambda x: x ** 2])),
    ("msort", lambda m: np.msort(m(A[::-1])), lambda: onp.sort(A[::-1], axis=0)),
    ("trim_zeros", lambda m: np.trim_zeros(m(onp.array([0.0, 0, 1, 2, 0, 3, 0]))),
     lambda: onp.trim_zeros(onp.array([0.0, 0, 1, 2, 0, 3, 0]))),
    ("trim_zeros f", lambda m: np.trim_zeros(m(onp.array([0.0, 1, 0])), "f"),
     lambda: onp.trim_zeros(onp.array([0.0, 1, 0]), "f")),
    ("trim_zeros all zero", lambda m: np.trim_zeros(m(onp.zeros(3)), "b"),
     lambda: onp.trim_zeros(onp.zeros(3), "b")),
    ("trim_zeros 2-d", lambda m: np.trim_zeros(m(onp.pad(A, 1))),
     lambda: onp.trim_zeros(onp.pad(A, 1))),
    ("apply_along_axis", lambda m: np.apply_along_axis(lambda r: r[::-1] * r[0], 1, m(A)),
     lambda: onp.apply_along_axis(lambda r: r[::-1] * r[0], 1, A)),
    ("apply_along_axis scalar", lambda m: np.apply_along_axis(lambda r: r.sum(), 0, m(A)),
     lambda: onp.apply_along_axis(lambda r: r.sum(), 0, A)),
    ("apply_along_axis 2-d result", lambda m: np.apply_along_axis(
        lambda r: np.stack([r, r * 2]), 0, m(A.reshape(3, 2, 2))),
     lambda: onp.apply_along_axis(lambda r: onp.stack([r, r * 2]), 0, A.reshape(3, 2, 2))),
    ("apply_over_axes", lambda m: np.apply_over_axes(np.sum, m(A.reshape(2, 3, 2)), [0, 2]),
     lambda: onp.apply_over_axes(onp.sum, A.reshape(2, 3, 2), [0, 2])),
    ("union1d", lambda m: np.union1d(m(onp.array([3.0, 1, 3])), m(onp.array([2.0, 1]))),
     lambda: onp.union1d([3.0, 1, 3], [2.0, 1])),
    ("intersect1d", lambda m: np.intersect1d(m(A), m(onp.array([11.0, 3, 3, 40]))),
     lambda: onp.intersect1d(A, [11.0, 3, 3, 40])),
    ("setdiff1d", lambda m: np.setdiff1d(m(onp.array([5.0, 1, 5, 2, 3])), m(onp.array([2.0]))),
     lambda: onp.setdiff1d([5.0, 1, 5, 2, 3], [2.0])),
    ("setdiff1d unique", lambda m: np.setdiff1d(m(onp.array([5.0, 1, 2])), m(onp.array([2.0])),
                                                assume_unique=True),
     lambda: onp.setdiff1d([5.0, 1, 2], [2.0], assume_unique=True)),
    ("setxor1d", lambda m: np.setxor1d(m(onp.array([4.0, 1, 1, 2])), m(onp.array([2.0, 7, 7]))),
     lambda: onp.setxor1d([4.0, 1, 1, 2], [2.0, 7, 7])),
    ("setxor1d unique", lambda m: np.setxor1d(m(onp.array([4.0, 1])), m(onp.array([1.0, 7])),
                                              assume_unique=True),
     lambda: onp.setxor1d([4.0, 1], [1.0, 7], assume_unique=True)),
    ("union1d empty", lambda m: np.union1d(m(onp.zeros(0)), m(onp.zeros(0))),
     lambda: onp.union1d(onp.zeros(0), onp.zeros(0))),
    ("isin", lambda m: np.isin(m(A), m(onp.array([1.0, 5, 11]))),
     lambda: onp.isin(A, [1.0, 5, 11])),
    ("isin invert", lambda m: np.isin(m(A), [1.0, 5], invert=True),
     lambda: onp.isin(A, [1.0, 5], invert=True)),
    ("in1d", lambda m: np.in1d(m(A), m(onp.array([1.0, 5]))),
     lambda: onp.isin(A.ravel(), [1.0, 5])),
    ("lexsort", lambda m: np.lexsort([m(I[0] * 1.0), m(onp.array([1.0, 1, 0, 0]))]),
     lambda: onp.lexsort([I[0] * 1.0, [1.0, 1, 0, 0]])),
    ("lexsort 2-d", lambda m: np.lexsort(m(I * 1.0)), lambda: onp.lexsort(I * 1.0)),
    ("tril_indices", lambda m: np.tril_indices(4, 1, 3)[1], lambda: onp.tril_indices(4, 1, 3)[1]),
    ("triu_indices", lambda m: np.triu_indices(3, -1)[0], lambda: onp.triu_indices(3, -1)[0]),
    ("tril_indices_from", lambda m: np.tril_indices_from(m(A), -1)[1],
     lambda: onp.tril_indices_from(A, -1)[1]),
    ("triu_indices_from", lambda m: np.triu_indices_from(m(A))[1],
     lambda: onp.triu_indices_from(A)[1]),
    ("diag_indices_from", lambda m: np.diag_indices_from(m(onp.zeros((3, 3, 3))))[2],
     lambda: onp.diag_indices_from(onp.zeros((3, 3, 3)))[2]),
    ("ix_", lambda m: np.ix_([0, 2], [True, False, True, True])[1],
     lambda: onp.ix_([0, 2], [True, False, True, True])[1]),
    ("ix_ index", lambda m: m(A)[np.ix_([0, 2], [3, 1])], lambda: A[onp.ix_([0, 2], [3, 1])]),
    ("packbits", lambda m: np.packbits(m(I > 0), axis=1), lambda: onp.packbits(I > 0, axis=1)),
    ("packbits little", lambda m: np.packbits(m(I.astype("int32")), bitorder="little"),
     lambda: onp.packbits(I.astype("int32"), bitorder="little")),
    ("unpackbits", lambda m: np.unpackbits(m(onp.array([[7, 200]], "uint8")), axis=0, count=5),
     lambda: onp.unpackbits(onp.array([[7, 200]], "uint8"), axis=0, count=5)),
]


def _to_mx(h):
    h = onp.asarray(h)
    return np.array(h, dtype=h.dtype)


@pytest.mark.parametrize("name,mx_call,onp_call", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy(name, mx_call, onp_call):
    got = mx_call(_to_mx)
    same(got, onp_call())
    if got.dtype.kind in "iub" and name not in ("packbits", "packbits little", "unpackbits"):
        assert got.dtype in (onp.int64, onp.bool_, onp.dtype(A.dtype))


@pytest.mark.parametrize("shape,axis", [((), None), ((1,), -1), ((7,), 0), ((5, 4), None),
                                         ((5, 3, 4), 1), ((4, 0, 2), None), ((0, 0, 0), None),
                                         ((6, 2), 0)])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int64", "uint8"])
def test_unique_all_outputs(shape, axis, dtype):
    h = RNG.integers(-3, 3, size=shape).astype(dtype)
    if axis is not None and len(shape) > 1:
        h = onp.concatenate([h, h], axis=axis)     # repeated slices
    got = np.unique(np.array(h, dtype=dtype), True, True, True, axis)
    want = onp.unique(h, True, True, True, axis)
    for g, w in zip(got, want):
        same(g, w.astype(onp.int64) if w.dtype.kind == "i" and w is not want[0] else w)
    assert got[1].dtype == got[2].dtype == got[3].dtype == onp.int64
    same(np.unique(np.array(h, dtype=dtype)), onp.unique(h))


@pytest.mark.parametrize("flags", [(i, v, c) for i in (0, 1) for v in (0, 1) for c in (0, 1)])
def test_unique_output_selection(flags):
    h = onp.array([[3.0, 1.0], [3.0, 2.0]])
    got = np.unique(np.array(h, dtype="float64"), *map(bool, flags))
    want = onp.unique(h, *map(bool, flags))
    if not any(flags):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def test_unique_nan():
    h = onp.array([onp.nan, 1.0, onp.nan, 1.0])
    same(np.unique(np.array(h, dtype="float64")), onp.unique(h))
    same(np.unique(np.array(h, dtype="float64"), equal_nan=False), onp.unique(h, equal_nan=False))


def test_set_functions_promote_like_operators():
    a = np.array([1, 2, 3], dtype="int32")
    b = np.array([2.0, 3.0, 9.0], dtype="float32")
    for fn in (np.union1d, np.intersect1d, np.setxor1d):
        r = fn(a, b)
        assert r.dtype == onp.float32 == (a + b).dtype
    assert np.setdiff1d(a, b).dtype == onp.int32
    r, i1, i2 = np.intersect1d(a, b, return_indices=True)
    same(i1, onp.array([1, 2])), same(i2, onp.array([0, 1]))


# ---- pad ----------------------------------------------------------------------------------------
PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1.5, 2), (3, 4))}),
             ("edge", {}), ("reflect", {}), ("symmetric", {}), ("wrap", {}),
             ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
             ("maximum", {}), ("minimum", {}), ("median", {}), ("mean", {}),
             ("maximum", {"stat_length": 2}), ("median", {"stat_length": ((1, 2), (3, 2))}),
             ("mean", {"stat_length": ((2, 1),)}), ("linear_ramp", {}),
             ("linear_ramp", {"end_values": ((1, 6), (2, 0.5))})]
MODE_IDS = [m + ("+" + "-".join(k) if k else "") for m, k in PAD_MODES]


@pytest.mark.parametrize("mode,kw", PAD_MODES, ids=MODE_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_pad_matches_numpy(mode, kw, dtype):
    h = RNG.integers(0, 9, size=(3, 4)).astype(dtype)
    width = ((5, 2), (0, 7))     # wider than the axes: numpy's repeated reflections
    got = np.pad(np.array(h, dtype=dtype), width, mode=mode, **kw)
    want = onp.pad(h, width, mode=mode, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap", "maximum",
                             "mean", "linear_ramp"]),
       data=st.data())
def test_pad_random_widths(shape, mode, data):
    widths = [tuple(data.draw(st.integers(0, 5)) for _ in range(2)) for _ in shape]
    h = RNG.uniform(-1, 1, size=shape)
    got = np.pad(np.array(h, dtype="float64"), widths, mode=mode)
    onp.testing.assert_allclose(got.asnumpy(), onp.pad(h, widths, mode=mode), atol=1e-12)


def test_pad_edges():
    same(np.pad(np.array(onp.float32(2.5)), 3), onp.pad(onp.float32(2.5), 3))
    z = onp.zeros((0, 2), "float32")
    same(np.pad(np.array(z), ((1, 1), (0, 1))), onp.pad(z, ((1, 1), (0, 1))))
    same(np.pad(np.array(z), ((0, 0), (1, 1)), mode="edge"), onp.pad(z, ((0, 0), (1, 1)), "edge"))
    h = onp.arange(4.0)
    same(np.pad(np.array(h, dtype="float64"), 2, mode=lambda v, w, i, k: None),
         onp.pad(h, 2, mode=lambda v, w, i, k: None))


# ---- gradients ----------------------------------------------------------------------------------
def _grad_cases():
    x, _ = f64((3, 4))
    v, _ = f64((2, 4))
    c = [f64((3, 4))[0] for _ in range(3)]
    idx = onp.array([[0, 2, 1, 2], [1, 1, 0, 0], [2, 0, 2, 1]])
    yield "insert", lambda a, b: np.insert(a, [1, 3], b, axis=0), [x, v]
    yield "insert broadcast", lambda a, b: np.insert(a, 2, b[0, :3], axis=1), [x, v]
    yield "delete", lambda a: np.delete(a, [0, 2], axis=1), [x]
    yield "resize", lambda a: np.resize(a, (5, 7)), [x]
    yield "choose", lambda a, b, d: np.choose(idx, [a, b, d]), c
    yield "compress", lambda a: np.compress([True, False, True], a, axis=0), [x]
    yield "extract", lambda a: np.extract(idx > 0, a), [x]
    yield "select", lambda a, b, d: np.select([idx == 0, idx == 1], [a, b ** 2], d), c
    yield "piecewise", lambda a: np.piecewise(a, [idx == 0, idx == 2],
                                              [lambda t: t * t, lambda t: np.sin(t), 0.5]), [x]
    yield "partition", lambda a: np.partition(a, 1, axis=1), [x]
    yield "msort", lambda a: np.msort(a), [x]
    yield "trim_zeros", lambda a: np.trim_zeros(np.pad(a, 1)), [x]
    yield "apply_along_axis", lambda a: np.apply_along_axis(lambda r: r * r.sum(), 1, a), [x]
    yield "apply_over_axes", lambda a: np.apply_over_axes(np.sum, a * a, [1]), [x]
    yield "unique values", lambda a: np.unique(np.concatenate([a, a[:1]])), [x]
    yield "unique axis", lambda a: np.unique(a, axis=0), [x]
    yield "union1d", lambda a, b: np.union1d(a, b), [x, v]
    yield "setxor1d", lambda a, b: np.setxor1d(a, b), [x, v]
    yield "intersect1d", lambda a: np.intersect1d(a, a[1:]), [x]
    yield "setdiff1d", lambda a: np.setdiff1d(a, a[1]), [x]
    for mode, kw in PAD_MODES:
        yield f"pad {mode} {kw}", (lambda m, k: lambda a: np.pad(a, ((2, 4), (3, 1)), m, **k))(
            mode, kw), [x]


@pytest.mark.parametrize("name,fn,args", list(_grad_cases()),
                         ids=[c[0] for c in _grad_cases()])
def test_gradients_by_finite_differences(name, fn, args):
    check_grads(fn, args, order=2, name=name)


def test_pad_constant_gradient_is_the_centre():
    x, _ = f64((2, 3))
    x.attach_grad()
    g = RNG.normal(size=(5, 7))
    with autograd.record():
        y = np.pad(x, ((1, 2), (3, 1)))
    y.backward(np.array(g, dtype="float64"))
    onp.testing.assert_allclose(x.grad.asnumpy(), g[1:3, 3:6])


# ---- dtype, memory and host functions ----------------------------------------------------------
def test_result_type_and_promote_types_are_mxlite_promotion():
    i32 = np.zeros(2, dtype="int32")
    f16 = np.zeros(2, dtype="float16")
    assert np.result_type(i32, f16) == (i32 + f16).dtype == onp.float16
    assert np.promote_types("int32", "float32") == onp.float32
    assert np.promote_types("int8", "uint8") == onp.int32     # int16 is not stored
    assert np.result_type(i32, 2) == onp.int32
    assert np.result_type(i32, 2.5) == (i32 * 2.5).dtype
    assert np.result_type("float64", i32, True) == onp.float64
    assert np.min_scalar_type(300) == onp.min_scalar_type(300)
    assert np.min_scalar_type(np.array([1.5], dtype="float16")) == onp.float16
    assert np.min_scalar_type(-1.5) == onp.min_scalar_type(-1.5)


def test_memory_queries():
    a = np.arange(10.0)
    v = a[2:5]
    assert np.may_share_memory(a, v) and np.shares_memory(a, v)
    assert not np.may_share_memory(a, a.copy())
    assert not np.shares_memory(a[:3], a[5:])
    with pytest.raises(MXNetError, match="may_share_memory"):
        np.may_share_memory(a, onp.zeros(2))


def test_printoptions_and_genfromtxt(tmp_path):
    old = onp.get_printoptions()
    try:
        np.set_printoptions(precision=2, threshold=5)
        assert str(np.array([1.23456])) == "[1.23]"
        assert "..." in str(np.arange(20.0))
    finally:
        onp.set_printoptions(**old)
    p = tmp_path / "t.csv"
    p.write_text("1,2.5\n3,4\n")
    got = np.genfromtxt(str(p), delimiter=",")
    same(got, onp.genfromtxt(str(p), delimiter=","))
    with pytest.raises(MXNetError, match="genfromtxt"):
        np.genfromtxt(str(p), delimiter=",", dtype=None, names=True)


@pytest.mark.parametrize("name", ["npv", "pv", "ppmt", "mirr", "rate"])
def test_financial_names_need_numpy_financial(name):
    import importlib.util
    if importlib.util.find_spec("numpy_financial") is None:
        with pytest.raises(MXNetError, match="numpy_financial"):
            getattr(np, name)(0.1, [1.0, 2.0])
    assert getattr(np, name).__doc__


def test_fallback_module_names_mx_np_functions():
    assert np.fallback.choose is np.choose
    assert np.fallback.lexsort is np.lexsort
    assert "piecewise" in dir(np.fallback)
    with pytest.raises(AttributeError):
        np.fallback.not_a_name
    assert np.fallback_linalg.__all__ == ["cond", "lstsq", "matrix_power", "matrix_rank",
                                          "multi_dot", "qr"]


def test_symbols_are_refused_clearly():
    s = mx.sym.var("x")
    for call in (lambda: np.unique(s), lambda: np.pad(s, 1), lambda: np.insert(s, 0, 1.0),
                 lambda: np.delete(s, 0), lambda: np.resize(s, 3)):
        with pytest.raises(MXNetError, match="Symbol"):
            call()


# ---- errors ------------------------------------------------------------------------------------
ERROR_CASES = [
    ("insert", lambda: np.insert(np.zeros((2, 3)), 5, 1.0, axis=0)),
    ("insert", lambda: np.insert(np.zeros((2, 3)), 0, 1.0, axis=2)),
    ("delete", lambda: np.delete(np.zeros(3), 7)),
    ("resize", lambda: np.resize(np.zeros(3), (-1, 2))),
    ("choose", lambda: np.choose([0, 3], [np.zeros(2), np.ones(2)])),
    ("choose", lambda: np.choose([0, 1], [])),
    ("compress", lambda: np.compress([1, 1, 1, 1], np.zeros(2))),
    ("select", lambda: np.select([np.zeros(2) > 0], [np.zeros(2), np.ones(2)])),
    ("select", lambda: np.select([np.zeros(2)], [np.zeros(2)])),
    ("piecewise", lambda: np.piecewise(np.zeros(3), [[True, False, True]], [1, 2, 3])),
    ("partition", lambda: np.partition(np.zeros(3), 5)),
    ("trim_zeros", lambda: np.trim_zeros(np.zeros(3), "x")),
    ("apply_along_axis", lambda: np.apply_along_axis(lambda r: r, 2, np.zeros((2, 2)))),
    ("apply_over_axes", lambda: np.apply_over_axes(lambda a, ax: a.sum(), np.zeros((2, 2, 2)), 0)),
    ("diag_indices_from", lambda: np.diag_indices_from(np.zeros((2, 3)))),
    ("tril_indices_from", lambda: np.tril_indices_from(np.zeros(3))),
    ("ix_", lambda: np.ix_([[0, 1]])),
    ("ix_", lambda: np.ix_([0.5])),
    ("pad", lambda: np.pad(np.zeros((2, 2)), -1)),
    ("pad", lambda: np.pad(np.zeros((2, 2)), 1.5)),
    ("pad", lambda: np.pad(np.zeros((2, 2)), ((1, 1), (1, 1), (1, 1)))),
    ("pad", lambda: np.pad(np.zeros((2, 2)), 1, mode="bogus")),
    ("pad", lambda: np.pad(np.zeros((2, 2)), 1, mode="edge", constant_values=3)),
    ("pad", lambda: np.pad(np.zeros((0, 2)), 1, mode="reflect")),
    ("pad", lambda: np.pad(np.zeros((2, 2)), 1, mode="maximum", stat_length=0)),
    ("pad", lambda: np.pad(np.zeros((2, 2)), 1, mode="reflect", reflect_type="sideways")),
    ("unique", lambda: np.unique(np.zeros((2, 2)), axis=3)),
    ("lexsort", lambda: np.lexsort([np.zeros(2), np.zeros(3)])),
    ("argpartition", lambda: np.argpartition(np.zeros(3), 3)),
    ("packbits", lambda: np.packbits(np.zeros(3))),
    ("unpackbits", lambda: np.unpackbits(np.zeros(3, dtype="int32"))),
    ("promote_types", lambda: np.promote_types("int32", "no_such_type")),
    ("msort", lambda: np.msort(np.array(1.0))),
]


@pytest.mark.parametrize("fn,call", ERROR_CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                     enumerate(ERROR_CASES)])
def test_bad_input_is_an_mxnet_error_naming_the_function(fn, call):
    with pytest.raises(MXNetError, match=fn):
        call()


def test_argpartition_and_partition_agree_with_sorting():
    x, h = f64((4, 9))
    for kth in (0, 4, (2, 6), -1):
        p = np.partition(x, kth, axis=1).asnumpy()
        i = np.argpartition(x, kth, axis=1)
        assert i.dtype == onp.int64
        onp.testing.assert_array_equal(onp.take_along_axis(h, i.asnumpy(), 1), p)
        srt = onp.sort(h, axis=1)
        for k in onp.atleast_1d(kth) % 9:
            onp.testing.assert_array_equal(p[:, k], srt[:, k])
            assert (p[:, :k] <= p[:, k:k + 1]).all() and (p[:, k:] >= p[:, k:k + 1]).all()
    flat = np.partition(x, 3, axis=None).asnumpy()
    assert flat.shape == (36,) and flat[3] == onp.sort(h, axis=None)[3]


# ---- inside hybridized Gluon blocks --------------------------------------------------------------
MASK = onp.array([[True, False, True], [False, False, True]])
HYBRID_CASES = {
    "pad reflect": lambda F, x, v: F.np.pad(x, ((1, 2), (2, 1)), mode="reflect") * 2,
    "pad constant": lambda F, x, v: F.np.pad(x, ((1, 0), (0, 2)), constant_values=3),
    "pad median": lambda F, x, v: F.np.pad(x, 2, mode="median"),
    "insert": lambda F, x, v: F.np.insert(x, 1, v[0], axis=0),
    "insert list": lambda F, x, v: F.np.insert(x, [1, 2], [5.0, 6.0]),
    "delete": lambda F, x, v: F.np.delete(x, [0, 2], axis=1),
    "resize": lambda F, x, v: F.np.resize(x, (5, 2)),
    "select": lambda F, x, v: F.np.select([x > 0.5, x < 0.2], [x, v * 2], 1.5),
    "tril_indices_from": lambda F, x, v: F.np.tril_indices_from(x)[1],
    "diag_indices_from": lambda F, x, v: F.np.diag_indices_from(x[:2, :2])[0],
    "msort": lambda F, x, v: F.np.msort(x),
}


class _Apply(mx.gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def hybrid_forward(self, F, x, v):
        return self.fn(F, x, v)


@pytest.mark.parametrize("name", list(HYBRID_CASES))
def test_hybridized_block_matches_imperative(name):
    fn = HYBRID_CASES[name]
    mx.npx.set_np()
    try:
        block = _Apply(fn)
        block.hybridize()
        for shape in ((2, 3), (4, 3), (3, 5)):       # a new shape traces again
            x, hx = f64(shape, 0, 1)
            v, _ = f64(shape, 0, 1)
            x.attach_grad()
            with autograd.record():
                got = block(x, v)
            want = fn(mx.nd, np.array(hx, dtype="float64"), v)
            same(got, want.asnumpy())
            if got.dtype.kind == "f":
                got.backward()
                xi = np.array(hx, dtype="float64")
                xi.attach_grad()
                with autograd.record():
                    ref = fn(mx.nd, xi, v)
                ref.backward()
                onp.testing.assert_allclose(x.grad.asnumpy(), xi.grad.asnumpy())
    finally:
        mx.npx.reset_np()


def test_hybridized_data_dependent_function_runs_imperatively():
    mx.npx.set_np()
    try:
        block = _Apply(lambda F, x, v: F.np.unique(x))
        block.hybridize()
        with pytest.warns(UserWarning, match="unique.*runs imperatively"):
            out = block(np.zeros(3), np.zeros(3))
        assert out.asnumpy().tolist() == [0.0]
    finally:
        mx.npx.reset_np()


def test_basic_index_with_an_ellipsis():
    """A basic key that holds an ellipsis works as NumPy's (a view where the block is
    contiguous)."""
    h = onp.arange(42.0).reshape(2, 3, 7)
    x = np.array(h, dtype="float64")
    for key in [(Ellipsis, slice(None, 4)), (0, Ellipsis, slice(1, 3)), (Ellipsis, 1),
                (Ellipsis,)]:
        same(x[key], h[key])
    assert np.shares_memory(x, x[1, ...]) and not np.shares_memory(x[0, ...], x[1, ...])


# ---- on every device (the CPU, and the GPU or its emulator) -------------------------------------
def test_structure_functions_on_the_device(device):
    xh = RNG.uniform(-1, 1, (3, 4))
    x = np.array(xh, dtype="float64")
    assert x.ctx == device
    cases = [
        (np.insert(x, 1, 5.0, axis=1), onp.insert(xh, 1, 5.0, axis=1)),
        (np.delete(x, [0, 2], axis=1), onp.delete(xh, [0, 2], axis=1)),
        (np.resize(x, (2, 7)), onp.resize(xh, (2, 7))),
        (np.pad(x, ((1, 2), (0, 3)), mode="reflect"), onp.pad(xh, ((1, 2), (0, 3)), "reflect")),
        (np.pad(x, 2, mode="maximum"), onp.pad(xh, 2, mode="maximum")),
        (np.pad(x, 1, constant_values=7), onp.pad(xh, 1, constant_values=7)),
        (np.unique(np.array(onp.round(xh * 2))), onp.unique(onp.round(xh * 2))),
        (np.choose(I, [x, -x, 2 * x]), onp.choose(I, [xh, -xh, 2 * xh])),
        (np.select([x > 0], [x], -1.0), onp.select([xh > 0], [xh], -1.0)),
        (np.union1d(x[0], x[1]), onp.union1d(xh[0], xh[1])),
        (np.tril_indices_from(x)[1], onp.tril_indices_from(xh)[1]),
        (np.compress([True, False, True], x, axis=0), onp.compress([True, False, True], xh, 0)),
    ]
    for got, want in cases:
        assert got.ctx == device
        same(got, want)
    x.attach_grad()
    with autograd.record():
        y = np.pad(np.insert(x, 0, 1.0, axis=0), 1, mode="edge")
    y.backward()
    assert x.grad.ctx == device
    # d sum(y) / dx: how often each element of x appears in y (NumPy on position tags)
    where = onp.pad(onp.insert(onp.arange(12).reshape(3, 4), 0, -1, axis=0), 1, mode="edge")
    want = onp.bincount(where[where >= 0], minlength=12).reshape(3, 4)
    onp.testing.assert_allclose(x.grad.asnumpy(), want)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data())
def test_insert_delete_resize_random(shape, data):
    h = RNG.uniform(-1, 1, size=shape)
    x = np.array(h, dtype="float64")
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    n = h.size if axis is None else shape[axis]
    obj = data.draw(st.one_of(st.integers(-n, n), st.lists(st.integers(-n, n), max_size=3),
                              st.builds(slice, st.integers(-5, 5) | st.none(),
                                        st.integers(-5, 5) | st.none(),
                                        st.sampled_from([None, 1, 2, -1, -3]))))
    same(np.insert(x, obj, 7.5, axis=axis), onp.insert(h, obj, 7.5, axis=axis))
    if not (isinstance(obj, int) and obj == n) and not (isinstance(obj, list) and n in obj):
        same(np.delete(x, obj, axis=axis), onp.delete(h, obj, axis=axis))
    new = tuple(data.draw(st.lists(st.integers(0, 5), max_size=3)))
    same(np.resize(x, new), onp.resize(h, new))


@settings(max_examples=30, deadline=None)
@given(a=st.lists(st.integers(-4, 4), max_size=8), b=st.lists(st.integers(-4, 4), max_size=8),
       invert=st.booleans())
def test_set_functions_random(a, b, invert):
    ha, hb = onp.array(a, dtype="float64"), onp.array(b, dtype="float64")
    x, y = np.array(ha, dtype="float64"), np.array(hb, dtype="float64")
    same(np.union1d(x, y), onp.union1d(ha, hb))
    same(np.setxor1d(x, y), onp.setxor1d(ha, hb))
    same(np.setdiff1d(x, y), onp.setdiff1d(ha, hb))
    for g, w in zip(np.intersect1d(x, y, return_indices=True),
                    onp.intersect1d(ha, hb, return_indices=True)):
        same(g, w)
    same(np.isin(x, y, invert=invert), onp.isin(ha, hb, invert=invert))
    ua, ub = onp.unique(ha), onp.unique(hb)
    for fn in ("setxor1d", "setdiff1d", "intersect1d"):
        same(getattr(np, fn)(np.array(ua, dtype="float64"), np.array(ub, dtype="float64"),
                             assume_unique=True),
             getattr(onp, fn)(ua, ub, assume_unique=True))
    if ha.size:
        k = len(a) // 2
        p = np.partition(x, k).asnumpy()
        assert p[k] == onp.sort(ha)[k]
        same(np.lexsort([x, -x]), onp.lexsort([ha, -ha]))
