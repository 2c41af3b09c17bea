"""The mx.np ndarray class against NumPy: text forms (MXNet's np repr format), pickling,
conversions, scalar protocol, creation functions and products (dot/matmul/tensordot/
inner/outer/kron/vdot) with their gradients."""
import pickle

import numpy as onp
import pytest
from np_checks import finite_difference, same
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import autograd
from mxlite import np, npx

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]




def close(got, want, rtol=1e-5):
    assert isinstance(got, np.ndarray)
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    onp.testing.assert_allclose(got.asnumpy().astype("float64"), want.astype("float64"),
                                rtol=rtol, atol=rtol)


# ---- text ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0), (2, 3)])
def test_repr_and_str(dtype, shape):
    a = onp.asarray(onp.arange(int(onp.prod(shape))).reshape(shape) % 3).astype(dtype)
    text = repr(np.array(a, dtype=dtype))
    want = repr(a)
    # the dtype is shown unless float32 or bool
    if dtype == "float32":
        want = want.replace(", dtype=float32", "")
    elif "dtype=" not in want and dtype != "bool":
        want = want[:-1] + f", dtype={dtype})"
    assert text == want
    assert str(np.array(a, dtype=dtype)) == str(a)


def test_repr_examples():
    assert repr(np.array([1, 2])) == "array([1., 2.])"
    assert repr(np.array([1, 2], dtype="int64")) == "array([1, 2], dtype=int64)"
    assert repr(np.array(3, dtype="int32")) == "array(3, dtype=int32)"
    assert repr(np.array(2.5)) == "array(2.5)"
    assert repr(np.zeros((0, 3))) == "array([], shape=(0, 3))"


def test_device_suffix(device):
    x = np.array([1.0, 2.0], ctx=device)
    if device.device_type == "cpu":
        assert repr(x) == "array([1., 2.])" and str(x) == "[1. 2.]"
    else:
        assert repr(x) == f"array([1., 2.], ctx={device})"
        assert str(x) == f"[1. 2.] @{device}"
        assert str(np.array(1.0, ctx=device)) == "1.0"


def test_format():
    a = np.array(onp.pi)
    assert f"{a:0.3g}" == f"{onp.float32(onp.pi):0.3g}"
    assert "{}".format(np.array([1.5, 2.0])) == str(onp.array([1.5, 2.0], "float32"))
    with pytest.raises(TypeError):
        f"{np.array([1.0]):10}"


# ---- scalar protocol and conversions -----------------------------------------------------
def test_scalar_protocol():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    assert len(x) == 2
    assert x.item(4) == 5 and isinstance(x.item(4), int)
    assert x[1, 2].item() == 6
    assert x.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert np.array(2.5).tolist() == 2.5
    assert [r.tolist() for r in x] == [[1, 2, 3], [4, 5, 6]]
    assert all(isinstance(r, np.ndarray) and r.shape == (3,) for r in x)
    assert bool(np.array([3])) and not bool(np.array(0.0))
    assert float(np.array(2.5)) == 2.5 and int(np.array([7])) == 7
    assert [10, 20, 30][np.array(1, dtype="int64")] == 20
    with pytest.raises(ValueError):
        bool(np.array([1, 2]))
    with pytest.raises(ValueError):
        bool(np.zeros((0,)))
    with pytest.raises(TypeError):
        len(np.array(1.0))
    with pytest.raises(TypeError):
        iter(np.array(1.0)).__next__()
    with pytest.raises(TypeError):
        [1, 2][np.array(1.0)]


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_astype(src, dst):
    a = (onp.array([[0, 1], [2, 3]]) * (1 if src != "bool" else 1)).astype(src)
    x = np.array(a, dtype=src)
    y = x.astype(dst)
    same(y, a.astype(dst))
    assert y is not x
    z = x.astype(dst, copy=False)
    assert (z is x) == (onp.dtype(src) == onp.dtype(dst))


def test_copy_is_deep():
    x = np.array([1, 2, 3], dtype="int32")
    y = x.copy()
    y[0] = 9
    same(x, onp.array([1, 2, 3], "int32"))
    assert x.copy(order="K").shape == (3,)
    with pytest.raises(NotImplementedError):
        x.copy(order="F")


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trip(dtype):
    a = (onp.arange(6).reshape(2, 3) % 2).astype(dtype)
    x = np.array(a, dtype=dtype)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is np.ndarray
    same(y, a)


def test_as_nd_and_as_np_share_the_buffer():
    x = np.array([1.0, 2.0, 3.0])
    n = x.as_nd_ndarray()
    assert type(n) is mx.nd.NDArray
    n[0] = 5
    assert x[0].item() == 5
    back = n.as_np_ndarray()
    assert type(back) is np.ndarray
    back[1] = 7
    assert n.asnumpy()[1] == 7 and x[1].item() == 7
    assert x.as_np_ndarray() is x
    # gradients flow through the re-wraps
    x.attach_grad()
    with autograd.record():
        y = (x.as_nd_ndarray() * 2).as_np_ndarray().sum()
    y.backward()
    same(x.grad, onp.full(3, 2, "float32"))


def test_grad_and_detach_types():
    x = np.array(2.0)
    x.attach_grad()
    assert type(x.grad) is np.ndarray
    assert type(x.detach()) is np.ndarray


def test_numpy_protocol():
    x = np.array([[1, 2]], dtype="int32")
    assert onp.asarray(x).dtype == onp.int32
    same(np.array(onp.asarray(x) + 1, dtype="int32"), onp.array([[2, 3]], "int32"))


# ---- creation ----------------------------------------------------------------------------
@pytest.mark.parametrize("fn,fill", [("zeros", 0), ("ones", 1), ("empty", None)])
@pytest.mark.parametrize("shape", [(), 0, (0,), 2, (3, 0), (1, 2, 3)])
@pytest.mark.parametrize("dtype", [None, "int8", "bool", "float16", "float64"])
def test_filled_creation(fn, fill, shape, dtype):
    y = getattr(np, fn)(shape, dtype=dtype)
    want_shape = shape if isinstance(shape, tuple) else (shape,)
    assert y.shape == want_shape
    assert y.dtype == (onp.float32 if dtype is None else onp.dtype(dtype))
    assert y.ctx == mx.current_context()
    if fill is not None:
        same(y, onp.full(want_shape, fill, y.dtype))


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("order", ["F", "A"])
def test_creation_order(fn, order):
    with pytest.raises(NotImplementedError):
        getattr(np, fn)((2, 3), None, order)


def test_array_dtypes():
    assert np.array([1, 2]).dtype == onp.float32          # lists: the default float
    assert np.array([[1.5]]).dtype == onp.float32
    assert np.array(onp.array([1, 2], "int32")).dtype == onp.int32
    assert np.array(onp.ones(2)).dtype == onp.float64     # NumPy arrays keep their dtype
    assert np.array([1, 2], dtype="int8").dtype == onp.int8
    assert np.array([], dtype=None).shape == (0,)
    same(np.array(np.array([1, 2], dtype="int64")), onp.array([1, 2]))


@settings(max_examples=30)
@given(st.integers(-5, 5), st.integers(-5, 12), st.sampled_from([1, 2, -1, 3]))
def test_arange(start, stop, step):
    # integer bounds: the default float (MXNet's mx.np), NumPy's int64 under dtype=True
    same(np.arange(start, stop, step), onp.arange(start, stop, step).astype("float32"))
    npx.set_np(dtype=True)
    try:
        same(np.arange(start, stop, step), onp.arange(start, stop, step))
    finally:
        npx.reset_np()
    close(np.arange(start, stop, step, dtype="float32"),
          onp.arange(start, stop, step, dtype="float32"))
    close(np.arange(float(start), stop + 0.5, step / 2),
          onp.arange(float(start), stop + 0.5, step / 2).astype("float32"))


def test_other_creation():
    close(np.linspace(0, 1, 5), onp.linspace(0, 1, 5))
    close(np.linspace(2, 3, 4, endpoint=False), onp.linspace(2, 3, 4, endpoint=False))
    y, step = np.linspace(0, 10, 6, retstep=True)
    assert step == 2.0
    close(np.logspace(0, 2, 3), onp.logspace(0, 2, 3), rtol=1e-4)
    same(np.eye(3, 4, 1, dtype="int32"), onp.eye(3, 4, 1, dtype="int32"))
    same(np.identity(2), onp.identity(2, "float32"))
    a = onp.arange(12, dtype="float32").reshape(3, 4)
    same(np.tril(np.array(a), -1), onp.tril(a, -1))
    same(np.triu(np.array(a), 1), onp.triu(a, 1))
    same(np.tri(3, 2, dtype="int64"), onp.tri(3, 2, dtype="int64"))
    same(np.full((2, 2), 7), onp.full((2, 2), 7))
    same(np.full((2,), 2.5), onp.full((2,), 2.5, "float32"))
    same(np.full((2,), True), onp.full((2,), True))
    same(np.full_like(np.array(a), 3), onp.full_like(a, 3))
    same(np.zeros_like(np.array(a), dtype="int8"), onp.zeros_like(a, "int8"))
    same(np.ones_like(np.array([1, 2], dtype="int32")), onp.ones(2, "int32"))
    for indexing in ("xy", "ij"):
        for g, w in zip(np.meshgrid(np.array([1, 2, 3]), np.array([4, 5]), indexing=indexing),
                        onp.meshgrid(onp.array([1, 2, 3], "float32"),
                                     onp.array([4, 5], "float32"), indexing=indexing)):
            same(g, w)
    same(np.indices((2, 3)), onp.indices((2, 3)).astype("int64"))


# ---- products ----------------------------------------------------------------------------
PRODUCT_SHAPES = [
    ("dot", (3,), (3,)), ("dot", (2, 3), (3,)), ("dot", (3,), (3, 4)), ("dot", (2, 3), (3, 4)),
    ("dot", (2, 2, 3), (4, 3, 5)), ("dot", (), (2, 3)), ("dot", (2, 3), ()),
    ("dot", (0, 3), (3, 2)), ("dot", (2, 0), (0, 3)),
    ("matmul", (3,), (3,)), ("matmul", (2, 3), (3,)), ("matmul", (3,), (3, 4)),
    ("matmul", (5, 2, 3), (3, 4)), ("matmul", (2, 1, 2, 3), (4, 3, 2)),
    ("matmul", (0, 2, 3), (3, 1)),
    ("inner", (3,), (3,)), ("inner", (2, 3), (4, 3)), ("inner", (), (2,)),
    ("outer", (3,), (2,)), ("outer", (2, 2), (3,)),
    ("kron", (2,), (3,)), ("kron", (2, 2), (3, 1)), ("kron", (2, 3), (2,)),
    ("vdot", (2, 3), (6,)), ("vdot", (4,), (4,)),
]


@pytest.mark.parametrize("name,s1,s2", PRODUCT_SHAPES)
def test_products(name, s1, s2, rng):
    a = rng.uniform(-1, 1, s1)
    b = rng.uniform(-1, 1, s2)
    want = getattr(onp, name)(a, b)
    got = getattr(np, name)(np.array(a, dtype="float64"), np.array(b, dtype="float64"))
    close(got, want, 1e-12)


def test_product_dtypes():
    a = np.array([[1, 2], [3, 4]], dtype="int32")
    same(np.dot(a, a), onp.array([[7, 10], [15, 22]], "int32"))
    assert np.matmul(a, np.ones((2, 2), dtype="float16")).dtype == onp.float16
    assert np.dot(a, np.ones((2,), dtype="float64")).dtype == onp.float64


@pytest.mark.parametrize("s1,s2,axes", [((2, 3), (4,), 0), ((2, 3), (3, 4), 1),
                                         ((2, 3, 4), (3, 4, 2), 2), ((2, 3), (2, 3), 2),
                                         ((2, 3, 4), (4, 3), ([1, 2], [1, 0])),
                                         ((2, 3, 4), (5, 4), ([2], [1])),
                                         ((2, 3, 4), (4, 5), (-1, 0)), ((0, 3), (3, 2), 1)])
def test_tensordot(s1, s2, axes, rng):
    a = rng.uniform(-1, 1, s1)
    b = rng.uniform(-1, 1, s2)
    want = onp.tensordot(a, b, axes)
    got = np.tensordot(np.array(a, dtype="float64"), np.array(b, dtype="float64"), axes)
    close(got, want, 1e-12)


def test_product_mismatch_is_an_error():
    for fn, s1, s2 in [(np.dot, (2, 3), (2, 3)), (np.matmul, (2, 3), (2, 3)),
                       (lambda a, b: np.tensordot(a, b, 1), (2, 3), (2, 3)),
                       (np.vdot, (2,), (3,))]:
        with pytest.raises(mx.base.MXNetError):
            fn(np.ones(s1), np.ones(s2))
    with pytest.raises(mx.base.MXNetError):
        np.matmul(np.ones(()), np.ones((2,)))


_fd = finite_difference


@pytest.mark.parametrize("name,s1,s2", [("dot", (2, 3), (3,)), ("matmul", (2, 2, 3), (3, 2)),
                                        ("tensordot", (2, 3), (2, 3)), ("inner", (2, 3), (3,)),
                                        ("outer", (2,), (3,)), ("kron", (2, 2), (2,)),
                                        ("vdot", (2, 2), (4,))])
def test_product_gradients(name, s1, s2, rng):
    a = rng.uniform(-1, 1, s1)
    b = rng.uniform(-1, 1, s2)
    ref = getattr(onp, name)
    w = rng.uniform(0.5, 1.5, onp.shape(ref(a, b)))
    x, y = np.array(a, dtype="float64"), np.array(b, dtype="float64")
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = (getattr(np, name)(x, y) * np.array(w, dtype="float64")).sum()
    z.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), _fd(lambda v: (ref(v, b) * w).sum(), a),
                                rtol=1e-5, atol=1e-8)
    onp.testing.assert_allclose(y.grad.asnumpy(), _fd(lambda v: (ref(a, v) * w).sum(), b),
                                rtol=1e-5, atol=1e-8)


@settings(max_examples=25)
@given(hnp.mutually_broadcastable_shapes(signature="(m,n),(n,p)->(m,p)", max_dims=2,
                                         max_side=3))
def test_matmul_batched_shapes(shapes):
    s1, s2 = shapes.input_shapes
    a = onp.arange(int(onp.prod(s1)), dtype="float64").reshape(s1) % 5
    b = onp.arange(int(onp.prod(s2)), dtype="float64").reshape(s2) % 3
    close(np.matmul(np.array(a, dtype="float64"), np.array(b, dtype="float64")),
          onp.matmul(a, b), 1e-12)


def test_legacy_methods_are_not_np_methods():
    x = np.array([1.0, 4.0])
    for name in ("sin", "sqrt", "exp", "softmax", "slice_axis", "one_hot", "split"):
        assert not hasattr(x, name)
        with pytest.raises(AttributeError):
            getattr(x, name)
    same(x.broadcast_to((2, 2)), onp.array([[1, 4], [1, 4]], "float32"))
    same(x.broadcast_like(np.zeros((3, 2))), onp.broadcast_to(onp.array([1, 4], "float32"),
                                                               (3, 2)))
    assert hasattr(mx.nd.ones(2), "sqrt")        # the legacy class keeps them


def test_legacy_arrays_into_np_functions_give_np_arrays():
    legacy = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    for y in (np.sum(legacy, axis=0), np.transpose(legacy), np.clip(legacy, 1.5, 3.5),
              np.dot(legacy, legacy), np.concatenate([legacy, legacy])):
        assert type(y) is np.ndarray
    close(np.clip(legacy, 1.5, 3.5), [[1.5, 2], [3, 3.5]])


def test_full_converts_the_value_as_numpy():
    same(np.full(3, 2.7, dtype="int32"), onp.full(3, 2.7, dtype="int32"))
    same(np.full((2,), True, dtype="float16"), onp.ones(2, "float16"))
    with pytest.raises(mx.base.MXNetError):
        np.full(2, 300, dtype="int8")


HYBRID = {
    "dot-2d": (lambda F, a, b: F.np.dot(a, b.T), onp.dot, lambda a, b: (a, b.T)),
    "dot-nd-1d": (lambda F, a, b: F.np.dot(a, b[0]), onp.dot, lambda a, b: (a, b[0])),
    "dot-1d-1d": (lambda F, a, b: F.np.dot(a[0], b[1]), onp.dot, lambda a, b: (a[0], b[1])),
    "matmul": (lambda F, a, b: F.np.matmul(a, b.T), onp.matmul, lambda a, b: (a, b.T)),
    "matmul-vec": (lambda F, a, b: F.np.matmul(a[0], b.T), onp.matmul,
                   lambda a, b: (a[0], b.T)),
    "tensordot": (lambda F, a, b: F.np.tensordot(a, b, ([1], [1])),
                  lambda a, b: onp.tensordot(a, b, ([1], [1])), lambda a, b: (a, b)),
    "inner": (lambda F, a, b: F.np.inner(a, b), onp.inner, lambda a, b: (a, b)),
    "outer": (lambda F, a, b: F.np.outer(a, b), onp.outer, lambda a, b: (a, b)),
    "kron": (lambda F, a, b: F.np.kron(a, b), onp.kron, lambda a, b: (a, b)),
    "vdot": (lambda F, a, b: F.np.vdot(a, b), lambda a, b: onp.asarray(onp.vdot(a, b)),
             lambda a, b: (a, b)),
    "where-scalar": (lambda F, a, b: F.np.where(a > b, a, 0.5),
                     lambda a, b: onp.where(a > b, a, 0.5), lambda a, b: (a, b)),
    "where-broadcast": (lambda F, a, b: F.np.where(a[0] > 0.5, b, a),
                        lambda a, b: onp.where(a[0] > 0.5, b, a), lambda a, b: (a, b)),
    "fmax": (lambda F, a, b: F.np.fmax(a, 0.4), lambda a, b: onp.fmax(a, 0.4),
             lambda a, b: (a, b)),
    "floor_divide": (lambda F, a, b: F.np.floor_divide(a, 0.3),
                     lambda a, b: onp.floor_divide(a, 0.3), lambda a, b: (a, b)),
    "rint": (lambda F, a, b: F.np.rint(a * 4), lambda a, b: onp.rint(a * 4),
             lambda a, b: (a, b)),
    "tril-triu": (lambda F, a, b: F.np.tril(a, 1) - F.np.triu(b, -1),
                  lambda a, b: onp.tril(a, 1) - onp.triu(b, -1), lambda a, b: (a, b)),
    "any-all": (lambda F, a, b: F.np.any(a > 0.5, axis=1, keepdims=True)
                & F.np.all(b > 0.1, axis=()),
                lambda a, b: onp.any(a > 0.5, axis=1, keepdims=True) & onp.all(b > 0.1, axis=()),
                lambda a, b: (a, b)),
    "like": (lambda F, a, b: F.np.full_like(a, 2.5) + F.np.zeros_like(b, dtype="int32")
             + F.np.ones_like(a),
             lambda a, b: onp.full_like(a, 2.5) + onp.zeros_like(b, dtype="int32")
             + onp.ones_like(a), lambda a, b: (a, b)),
    "sum-dtype": (lambda F, a, b: F.np.sum(a, axis=1, dtype="float16"),
                  lambda a, b: a.sum(axis=1).astype("float16"), lambda a, b: (a, b)),
    "average": (lambda F, a, b: F.np.average(a, axis=1, weights=b[0]),
                lambda a, b: onp.average(a, axis=1, weights=b[0]), lambda a, b: (a, b)),
    "split": (lambda F, a, b: F.np.concatenate(F.np.split(a, [1, 2], axis=1)[::-1], axis=1),
              lambda a, b: onp.concatenate(onp.split(a, [1, 2], axis=1)[::-1], axis=1),
              lambda a, b: (a, b)),
    "squeeze-full": (lambda F, a, b: F.np.squeeze(a[:1]) + F.np.full((3,), b[0, 0]),
                     lambda a, b: onp.squeeze(a[:1]) + onp.full((3,), b[0, 0]),
                     lambda a, b: (a, b)),
    "indices": (lambda F, a, b: a + F.np.indices((2, 3))[1],
                lambda a, b: a + onp.indices((2, 3))[1], lambda a, b: (a, b)),
    "sum-int": (lambda F, a, b: F.np.sum((a * 100).astype("int8"), axis=0),
                lambda a, b: onp.sum((a * 100).astype("int8"), axis=0),
                lambda a, b: (a, b)),
}


@pytest.mark.parametrize("name", sorted(HYBRID))
def test_hybridized_matches_numpy(name, rng):
    from mxlite import gluon, npx
    f, ref, prep = HYBRID[name]

    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return f(F, a, b)

    a = rng.uniform(0, 1, (2, 3))
    b = rng.uniform(0, 1, (2, 3))
    want = onp.asarray(ref(*prep(a, b)))
    npx.set_np()
    try:
        net = Net()
        net.hybridize()
        got = net(np.array(a, dtype="float64"), np.array(b, dtype="float64"))
    finally:
        npx.reset_np()
    assert type(got) is np.ndarray
    close(got, want, 1e-12)


def test_tril_triu_select_not_multiply():
    a = onp.array([[1.0, onp.nan, onp.inf], [4.0, 5.0, -onp.inf]], dtype="float32")
    same(np.tril(np.array(a)), onp.tril(a))
    same(np.triu(np.array(a), 1), onp.triu(a, 1))
    same(np.tril(np.array([True, True, True]), -1), onp.tril([True, True, True], -1))
    same(np.triu(np.array(onp.ones((2, 3, 4), "int32")), -1),
         onp.triu(onp.ones((2, 3, 4), "int32"), -1))
