"""NumPy's own functions and ufuncs called on mx.np arrays (``mxlite/numpy/_interop.py``).

Every value is checked against NumPy run on the same data as NumPy arrays; gradients
against central differences. Which route a call takes (an ``mx.np`` function, or NumPy on
host data) is forced with ``monkeypatch`` where a test is about one route, so the tests
hold as ``mx.np`` grows.
"""
import numpy as onp
import pytest

import mxlite as mx
import mxlite.numpy as mxnp
from mxlite import autograd
from mxlite.base import MXNetError
from mxlite.numpy_dispatch_protocol import (_NUMPY_ARRAY_FUNCTION_LIST, _NUMPY_ARRAY_UFUNC_LIST,
                                            dispatched, with_array_function_protocol,
                                            with_array_ufunc_protocol)

_R = onp.random.RandomState(0)
A = _R.uniform(0.5, 2.0, (3, 4)).astype(onp.float32)
B = _R.uniform(0.5, 2.0, (3, 4)).astype(onp.float32)
V = _R.uniform(-1.0, 1.0, (5,)).astype(onp.float32)
I = _R.randint(0, 4, (3, 4)).astype(onp.int64)
_M = _R.uniform(-1.0, 1.0, (3, 3))
S = _M @ _M.T + 3 * onp.eye(3)              # symmetric positive definite, float64


def _mx(x):
    """NumPy data (also inside lists and tuples) as mx.np arrays."""
    if isinstance(x, onp.ndarray):
        return mxnp.array(x, dtype=x.dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_mx(v) for v in x)
    return x


def _numpy_function(path):
    target = onp
    for part in path.split("."):
        target = getattr(target, part)
    return target


def _assert_same(got, want, mx_arrays=True):
    """``got`` (from mx.np arrays) holds NumPy's ``want``: arrays as mx.np arrays of the same
    shape and values, sequences item by item, anything else equal."""
    if isinstance(want, onp.ndarray):
        if mx_arrays:
            assert isinstance(got, mxnp.ndarray), type(got)
            got = got.asnumpy()
        assert got.shape == want.shape
        onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, mx_arrays)
    else:
        onp.testing.assert_allclose(onp.asarray(got.asnumpy() if isinstance(got, mxnp.ndarray)
                                                else got), want, rtol=1e-4, atol=1e-5)


def _eigenvalues(r):
    return r[0]


def _singular_values(r):
    return r[1]


def _abs_r(r):
    return onp.abs(r[1])


# (numpy function, positional args, keywords, key applied to both results or None)
FUNCTIONS = [
    ("sum", (A,), {}, None), ("sum", (A,), {"axis": 1, "keepdims": True}, None),
    ("mean", (A,), {"axis": 0}, None), ("max", (A,), {}, None), ("min", (A,), {"axis": 1}, None),
    ("argmax", (A,), {"axis": 1}, None), ("argmin", (V,), {}, None), ("prod", (A,), {}, None),
    ("std", (A,), {"axis": 1}, None), ("var", (A,), {}, None), ("cumsum", (A,), {"axis": 1}, None),
    ("all", (I,), {"axis": 0}, None), ("any", (I,), {}, None),
    ("concatenate", ([A, B],), {"axis": 0}, None), ("stack", ([A, B],), {"axis": 1}, None),
    ("vstack", ([A, B],), {}, None), ("hstack", ([A, B],), {}, None),
    ("split", (A, 2), {"axis": 1}, None), ("reshape", (A, (4, 3)), {}, None),
    ("transpose", (A,), {}, None), ("swapaxes", (A, 0, 1), {}, None),
    ("squeeze", (A[None],), {}, None), ("expand_dims", (A, 1), {}, None),
    ("clip", (A, 0.8, 1.5), {}, None), ("where", (A > 1, A, B), {}, None),
    ("dot", (A, B.T), {}, None), ("tensordot", (A, B, ([1], [1])), {}, None),
    ("inner", (A, B), {}, None), ("outer", (V, V), {}, None),
    ("einsum", ("ij,kj->ik", A, B), {}, None), ("tile", (V, 2), {}, None),
    ("repeat", (V, 2), {}, None), ("flip", (A, 1), {}, None), ("roll", (V, 2), {}, None),
    ("sort", (A,), {"axis": 1}, None), ("argsort", (V,), {}, None), ("unique", (I,), {}, None),
    ("trace", (A,), {}, None), ("diag", (S,), {}, None), ("tril", (S,), {}, None),
    ("diff", (V,), {}, None), ("pad", (V, 1), {}, None), ("take", (V, [0, 2]), {}, None),
    ("nonzero", (I,), {}, None), ("median", (A,), {"axis": 1}, None),
    ("percentile", (A, 30), {"axis": 0}, None), ("histogram", (V,), {}, None),
    ("isclose", (A, B), {}, None), ("maximum", (A, B), {}, None),
    ("cross", (A[:, :3], B[:, :3]), {}, None),
    ("linalg.norm", (A,), {}, None), ("linalg.norm", (A,), {"axis": 1}, None),
    ("linalg.inv", (S,), {}, None), ("linalg.det", (S,), {}, None),
    ("linalg.slogdet", (S,), {}, None), ("linalg.solve", (S, S[:, :2]), {}, None),
    ("linalg.cholesky", (S,), {}, None), ("linalg.pinv", (A,), {}, None),
    ("linalg.eigh", (S,), {}, _eigenvalues), ("linalg.eigvalsh", (S,), {}, None),
    ("linalg.svd", (A,), {}, _singular_values), ("linalg.qr", (S,), {}, _abs_r),
    ("linalg.matrix_rank", (S,), {}, None), ("linalg.matrix_power", (S, 3), {}, None),
]


@pytest.mark.parametrize("path,args,kwargs,key", FUNCTIONS,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(FUNCTIONS)])
def test_numpy_function_on_mx_arrays(path, args, kwargs, key):
    fn = _numpy_function(path)
    want = fn(*args, **kwargs)
    got = fn(*_mx(args), **kwargs)
    if key is not None:
        got, want = key(got), key(want)
    _assert_same(got, want)


def test_nested_calls_stay_mx_arrays():
    a, b, v = _mx((A, B, V))
    got = onp.sum(onp.exp(onp.concatenate([onp.sin(a), onp.cos(b)])), axis=0)
    _assert_same(got, onp.sum(onp.exp(onp.concatenate([onp.sin(A), onp.cos(B)])), axis=0))
    got = onp.linalg.norm(onp.dot(a, onp.transpose(b)) - onp.outer(v[:3], v[:3]))
    _assert_same(got, onp.linalg.norm(onp.dot(A, B.T) - onp.outer(V[:3], V[:3])))
    got = onp.mean(onp.linalg.inv(_mx(S)) @ _mx(S), axis=1)
    _assert_same(got, onp.full(3, 1 / 3))


UNARY = ["negative", "absolute", "fabs", "sqrt", "exp", "expm1", "log", "log1p", "log2",
         "sin", "cos", "tanh", "arcsinh", "floor", "ceil", "rint", "sign", "square",
         "reciprocal", "logical_not", "isnan", "isfinite", "degrees", "cbrt", "sinc"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "hypot",
          "arctan2", "equal", "less", "greater_equal", "not_equal", "logical_and",
          "logical_xor", "copysign", "logaddexp", "fmod", "remainder", "floor_divide"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ufunc(name):
    uf = getattr(onp, name)
    if isinstance(uf, onp.ufunc):
        _assert_same(uf(_mx(A)), uf(A))
    else:                                   # sinc: a function, not a ufunc
        _assert_same(uf(_mx(V)), uf(V))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("form", ["arrays", "array-scalar", "scalar-array", "numpy-mx"])
def test_binary_ufunc(name, form):
    uf = getattr(onp, name)
    x, y = {"arrays": (A, B), "array-scalar": (A, 1.5), "scalar-array": (1.5, B),
            "numpy-mx": (A, B)}[form]
    want = uf(x, y)
    mx_x = x if form == "numpy-mx" else _mx(x)
    _assert_same(uf(mx_x, _mx(y)), want)


def test_operators_with_a_numpy_array_on_the_left():
    a, b = _mx((A, B))
    _assert_same(A + b, A + B)
    _assert_same(A.T @ b, A.T @ B)
    _assert_same(A < b, A < B)
    _assert_same(onp.float32(2) * b, 2 * B)


def test_ufunc_out_is_written_and_returned():
    a, b = _mx((A, B))
    out = mxnp.zeros(A.shape)
    assert onp.add(a, b, out=out) is out
    _assert_same(out, A + B)
    out2 = mxnp.zeros(A.shape)
    assert onp.logaddexp(a, b, out=out2) is out2
    _assert_same(out2, onp.logaddexp(A, B))
    host_out = onp.zeros(A.shape, dtype=onp.float32)
    assert onp.multiply(a, b, out=host_out) is host_out
    onp.testing.assert_allclose(host_out, A * B, rtol=1e-6)


def test_ufunc_keywords_beyond_out_run_numpy():
    a, b = _mx((A, B))
    mask = onp.array([True, False, True, False])
    out = mxnp.array(onp.full(A.shape, -7.0, dtype=onp.float32))
    assert onp.add(a, b, out=out, where=mask) is out
    want = onp.full(A.shape, -7.0, dtype=onp.float32)
    onp.add(A, B, out=want, where=mask)
    _assert_same(out, want)
    got = onp.multiply(a, b, dtype=onp.float64)
    assert isinstance(got, mxnp.ndarray) and got.dtype == onp.float64
    _assert_same(got, onp.multiply(A, B, dtype=onp.float64))


def test_multiple_output_ufuncs():
    x = _mx(A * 3)
    _assert_same(onp.modf(x), onp.modf(A * 3))
    _assert_same(onp.divmod(x, 2.0), onp.divmod(A * 3, 2.0))
    _assert_same(onp.frexp(x), onp.frexp(A * 3))


@pytest.mark.parametrize("method", ["reduce", "accumulate", "outer"])
def test_ufunc_methods_are_not_handled(method):
    x = _mx(A)
    args = (x, x) if method == "outer" else (x,)
    with pytest.raises(TypeError):
        getattr(onp.add, method)(*args)


def test_autograd_records_numpy_calls():
    x = _mx(A)
    x.attach_grad()
    with autograd.record():
        y = onp.sum(x * 2)
    assert isinstance(y, mxnp.ndarray)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.full(A.shape, 2.0))


def test_gradient_through_numpy_calls_matches_finite_differences():
    x0 = _R.uniform(-1, 1, (3, 4))
    w0 = _R.uniform(-1, 1, (4, 2))

    def f(x, w):      # the same NumPy code on host data and on mx.np arrays
        return onp.sum(onp.tanh(onp.dot(x, w)) * onp.exp(-onp.square(x[:, :2])))

    x = mxnp.array(x0, dtype=onp.float64)
    x.attach_grad()
    with autograd.record():
        y = f(x, mxnp.array(w0, dtype=onp.float64))
    y.backward()
    eps = 1e-6
    fd = onp.zeros_like(x0)
    for idx in onp.ndindex(*x0.shape):
        d = onp.zeros_like(x0)
        d[idx] = eps
        fd[idx] = (f(x0 + d, w0) - f(x0 - d, w0)) / (2 * eps)
    onp.testing.assert_allclose(x.grad.asnumpy(), fd, rtol=1e-6, atol=1e-8)


# ---- the host route (forced by taking the mx.np function away) ----------------------------
def test_host_route_values_device_and_dtype(monkeypatch):
    monkeypatch.delattr(mxnp, "cumsum", raising=False)
    monkeypatch.delattr(mxnp, "median", raising=False)
    x = mxnp.array(I, dtype=onp.int64, ctx=mx.cpu(1))
    got = onp.cumsum(x, axis=1)
    assert isinstance(got, mxnp.ndarray) and got.ctx == mx.cpu(1) and got.dtype == onp.int64
    _assert_same(got, onp.cumsum(I, axis=1))
    m = onp.median(_mx(A))                       # NumPy gives a NumPy scalar: kept as is
    assert not isinstance(m, mxnp.ndarray) and m == onp.median(A)


def test_host_route_inside_record_raises(monkeypatch):
    monkeypatch.delattr(mxnp, "median", raising=False)
    x = _mx(A)
    x.attach_grad()
    with autograd.record():
        with pytest.raises(MXNetError, match="numpy.median"):
            onp.median(x)
        with autograd.pause():
            assert onp.median(x) == onp.median(A)


def test_host_route_out_and_in_place_functions(monkeypatch):
    monkeypatch.delattr(mxnp, "cumsum", raising=False)
    monkeypatch.delattr(mxnp, "copyto", raising=False)
    out = mxnp.zeros(A.shape)
    assert onp.cumsum(_mx(A), axis=0, out=out) is out
    _assert_same(out, onp.cumsum(A, axis=0))
    x = _mx(A)
    onp.copyto(x, 5.0)
    _assert_same(x, onp.full(A.shape, 5.0, dtype=onp.float32))


def test_host_route_sees_the_real_memory(monkeypatch):
    monkeypatch.delattr(mxnp, "shares_memory", raising=False)
    monkeypatch.delattr(mxnp, "may_share_memory", raising=False)
    d = mxnp.zeros((4, 3, 5))
    h = onp.zeros((4, 3, 5))
    for fn in (onp.shares_memory, onp.may_share_memory):
        assert fn(d[0], d[1]) == fn(h[0], h[1])
        assert fn(d[0, 0, 1:4], d[0, 0, 2:5]) == fn(h[0, 0, 1:4], h[0, 0, 2:5]) is True
        assert fn(d, mxnp.ones((5, 0))) == fn(h, onp.ones((5, 0)))


def test_host_route_results_of_other_kinds(monkeypatch):
    monkeypatch.delattr(mxnp.linalg, "qr", raising=False)
    got = onp.linalg.qr(_mx(S))
    want = onp.linalg.qr(S)
    assert type(got) is type(want)               # NumPy's named tuple
    _assert_same(tuple(got), tuple(want))
    assert onp.result_type(_mx(A)) == onp.float32
    spectrum = onp.fft.fft(_mx(V))               # complex: mx arrays cannot hold it
    assert isinstance(spectrum, onp.ndarray)
    onp.testing.assert_allclose(spectrum, onp.fft.fft(V), rtol=1e-5)


def test_host_route_refuses_arrays_on_two_devices(monkeypatch):
    monkeypatch.delattr(mxnp, "isclose", raising=False)
    with pytest.raises(MXNetError, match="different devices"):
        onp.isclose(mxnp.array(A, ctx=mx.cpu(0)), mxnp.array(A, ctx=mx.cpu(1)))


def test_mixing_numpy_arrays_runs_numpy():
    x = _mx(A)
    got = onp.concatenate([x, B])
    _assert_same(got, onp.concatenate([A, B]))
    x.attach_grad()
    with autograd.record():
        with pytest.raises(MXNetError, match="mix"):
            onp.concatenate([x, B])


def test_other_libraries_arrays_are_left_to_them():
    class Foreign:
        def __array_function__(self, func, types, args, kwargs):
            return "foreign function"

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return "foreign ufunc"

    x = _mx(A)
    assert onp.concatenate([x, Foreign()]) == "foreign function"
    assert onp.add(x, Foreign()) == "foreign ufunc"


def test_creation_like_an_mx_array():
    x = mxnp.array(A, ctx=mx.cpu(1))
    z = onp.zeros((2, 3), like=x)
    assert isinstance(z, mxnp.ndarray) and z.ctx == mx.cpu(1)
    _assert_same(z, onp.zeros((2, 3)))
    _assert_same(onp.full((2,), 7.0, like=x), onp.full((2,), 7.0))


# ---- the mx.np route: looked up per call ---------------------------------------------------
def test_functions_added_later_are_dispatched(monkeypatch):
    seen = []

    def sinc(x):
        seen.append(x)
        return x * 0 + 1

    def matrix_rank(a):
        seen.append(a)
        return 42

    monkeypatch.setattr(mxnp, "sinc", sinc, raising=False)
    monkeypatch.setattr(mxnp.linalg, "matrix_rank", matrix_rank, raising=False)
    x = _mx(V)
    _assert_same(onp.sinc(x), onp.ones(V.shape))
    assert onp.linalg.matrix_rank(x) == 42
    assert seen[0] is x and seen[1] is x
    assert dispatched("sinc") is sinc and dispatched("linalg.matrix_rank") is matrix_rank


def test_an_implementation_calling_numpy_does_not_recurse(monkeypatch):
    monkeypatch.setattr(mxnp, "sinc", lambda x: onp.sinc(x), raising=False)
    _assert_same(onp.sinc(_mx(V)), onp.sinc(V))


def test_arguments_mx_np_does_not_take_run_numpy(monkeypatch):
    def median(a, axis=None):
        return "mx.np"

    monkeypatch.setattr(mxnp, "median", median, raising=False)
    x = _mx(A)
    assert onp.median(x, axis=1) == "mx.np"
    _assert_same(onp.median(x, axis=1, keepdims=True), onp.median(A, axis=1, keepdims=True))
    x.attach_grad()
    with autograd.record():
        with pytest.raises(MXNetError, match="keepdims"):
            onp.median(x, axis=1, keepdims=True)


def test_dispatch_protocol_module():
    for names in (_NUMPY_ARRAY_FUNCTION_LIST, _NUMPY_ARRAY_UFUNC_LIST):
        assert len(names) == len(set(names))
    assert dispatched("sum") is mxnp.sum
    assert dispatched("add") is mxnp.add
    assert dispatched("no_such_function") is None
    assert dispatched("linalg.no_such_function") is None

    def f():
        return 3
    assert with_array_function_protocol(f) is f and with_array_ufunc_protocol(f) is f


def test_both_routes_keep_the_device(device, monkeypatch):
    x = mxnp.array(A, ctx=device)
    y = mxnp.array(B, ctx=device)
    got = onp.add(onp.sum(x, axis=0), y[0])
    assert got.ctx == device
    _assert_same(got, onp.sum(A, axis=0) + B[0])
    monkeypatch.delattr(mxnp, "cumsum", raising=False)
    out = mxnp.zeros(A.shape, ctx=device)
    assert onp.cumsum(x, axis=1, out=out) is out and out.ctx == device
    _assert_same(out, onp.cumsum(A, axis=1))
    got = onp.logaddexp(x, y)
    assert got.ctx == device
    _assert_same(got, onp.logaddexp(A, B))
