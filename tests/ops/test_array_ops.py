"""Array operators of mxlite/ops/array_ops.py against MXNet 1.9.1
(tests/fixtures/array_ops_mxnet.npz, made by make_array_ops_fixture.py) and NumPy: values,
gradients, the index rules (negative from the end, out of range and NaN an MXNetError),
symbols and errors."""
import importlib.util
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_array_ops_fixture", os.path.join(HERE, "..", "fixtures", "make_array_ops_fixture.py"))
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(os.path.join(HERE, "..", "fixtures", "array_ops_mxnet.npz"))


def _fn(path):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("case", sorted(FIX.CASES))
def test_matches_mxnet(case):
    path, inputs, kwargs, diff = FIX.CASES[case]
    xs = [FIX.make_input(s) if s[1] == "args" else mx.nd.array(FIX.make_input(s), dtype=s[2])
          for s in inputs]
    for i in diff:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = _fn(path)(*xs, **kwargs)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    for j, y in enumerate(ys):
        want = DATA[f"{case}/out{j}"]
        assert y.dtype == want.dtype and y.shape == want.shape, (case, j)
        if path == "moments" and want.dtype.kind == "f":    # summation order differs
            np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, err_msg=f"{case} out{j}")
        else:
            np.testing.assert_array_equal(y.asnumpy(), want, err_msg=f"{case} out{j}")
    if diff:
        heads = [mx.nd.array(FIX.make_input((100 + j, y.shape, y.dtype)), dtype=y.dtype)
                 for j, y in enumerate(ys)]
        mx.autograd.backward(ys, heads)
        for i in diff:
            np.testing.assert_allclose(xs[i].grad.asnumpy(), DATA[f"{case}/grad{i}"],
                                       rtol=1e-5, atol=1e-6, err_msg=f"{case} grad{i}")


def _np_positions(idx, dims):
    idx = np.asarray(idx, dtype=np.float64)
    return tuple((np.where(idx[m] < 0, idx[m] + n, idx[m])).astype(np.int64)
                 for m, n in enumerate(dims))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "uint8", "int64", "bool"])
def test_gather_scatter_nd_match_numpy(dtype):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 5, (4, 5, 3)).astype(dtype)
    idx = np.stack([rng.integers(-4, 4, (2, 6)), rng.integers(-5, 5, (2, 6))])
    pos = _np_positions(idx, (4, 5))
    for idt in ["int32", "int64", "float32", "float64"]:
        got = mx.nd.gather_nd(mx.nd.array(data, dtype=dtype), mx.nd.array(idx, dtype=idt))
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.asnumpy(), data[pos])
    vals = data[pos]
    acc = mx.nd._internal._backward_gather_nd(mx.nd.array(vals.astype("float64")),
                                               mx.nd.array(idx, dtype="int64"), shape=(4, 5, 3))
    want = np.zeros((4, 5, 3))
    np.add.at(want, pos, vals.astype("float64"))
    np.testing.assert_array_equal(acc.asnumpy(), want)
    flat = np.ravel_multi_index(pos, (4, 5))
    _, first = np.unique(flat, return_index=True)        # unique positions for scatter_nd
    uidx = idx[:, first // 6, first % 6]
    uvals = vals[first // 6, first % 6]
    got = mx.nd.scatter_nd(mx.nd.array(uvals, dtype=dtype), mx.nd.array(uidx, dtype="int64"),
                           shape=(4, 5, 3))
    want = np.zeros((4, 5, 3), dtype=dtype)
    want[_np_positions(uidx, (4, 5))] = uvals
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_index_rules_and_errors():
    d = mx.nd.arange(12).reshape((3, 4))
    # MXNet's order: the bound check on the value, then add n to a negative, then truncate
    np.testing.assert_array_equal(
        mx.nd.gather_nd(d, mx.nd.array([[-1.7, -3.0, 1.9]])).asnumpy(),
        np.arange(12).reshape(3, 4)[[1, 0, 1]])
    for bad, what in [([[3]], "index 3"), ([[-4]], "index -4"), ([[2.2]], "index 2.2"),
                      ([[-3.5]], "index -3.5"), ([[float("nan")]], "not a number")]:
        with pytest.raises(MXNetError, match="gather_nd") as err:
            mx.nd.gather_nd(d, mx.nd.array(bad))
        assert what in str(err.value) and "axis 0 of size 3" in str(err.value)
    with pytest.raises(MXNetError, match="axis 1 of size 4"):
        mx.nd.scatter_nd(mx.nd.array([1.0]), mx.nd.array([[0], [4]]), shape=(3, 4))
    with pytest.raises(MXNetError, match="at least 2 dimensions"):
        mx.nd.gather_nd(d, mx.nd.array([1, 2]))
    with pytest.raises(MXNetError, match="index 3 axes"):
        mx.nd.gather_nd(d, mx.nd.array([[1], [2], [0]]))
    with pytest.raises(MXNetError, match="must be"):
        mx.nd.scatter_nd(mx.nd.array([1.0, 2.0]), mx.nd.array([[0], [1]]), shape=(3, 4))
    with pytest.raises(MXNetError, match="lhs has shape"):
        mx.nd._internal._scatter_set_nd(d, mx.nd.array([1.0]), mx.nd.array([[0], [1]]),
                                        shape=(4, 4))
    with pytest.raises(MXNetError, match="int32"):
        mx.nd.batch_take(d, mx.nd.array([0, 1, 2]))
    with pytest.raises(MXNetError, match="one index each"):
        mx.nd.batch_take(d, mx.nd.array([0, 1], dtype="int32"))
    with pytest.raises(MXNetError, match="at least 2 dimensions"):
        mx.nd.batch_take(mx.nd.arange(3), mx.nd.array([0, 1, 2], dtype="int32"))
    # empty index part: an empty result, nothing checked
    assert mx.nd.gather_nd(d, mx.nd.zeros((2, 0))).shape == (0,)


def test_scatter_set_nd_out_is_lhs_and_not_differentiable():
    lhs = mx.nd.zeros((2, 3))
    mx.nd._internal._scatter_set_nd(lhs, mx.nd.array([4.0, 5.0]), mx.nd.array([[1, 0], [2, 0]]),
                                    shape=(2, 3), out=lhs)
    np.testing.assert_array_equal(lhs.asnumpy(), [[5, 0, 0], [0, 0, 4]])
    x = mx.nd.zeros((2, 3))
    x.attach_grad()
    with pytest.raises(MXNetError):
        with mx.autograd.record():
            y = mx.nd._internal._scatter_set_nd(x, mx.nd.array([1.0]), mx.nd.array([[0], [0]]),
                                                shape=(2, 3))
        y.backward()


def test_gather_nd_gradient_differentiates_again():
    x = mx.nd.array(np.arange(12.0).reshape(3, 4), dtype="float64")
    idx = mx.nd.array([[0, 0, 2], [1, 1, -1]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(x * x, idx)
        (g,) = mx.autograd.grad(y, x, head_grads=mx.nd.array([1.0, 2.0, 3.0], dtype="float64"),
                                create_graph=True)
    g.backward()
    want = np.zeros((3, 4))
    want[0, 1], want[2, 3] = 2 * 3, 2 * 3
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_symbols_infer_and_round_trip():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.gather_nd(a, b)
    assert s.infer_shape(a=(3, 4, 5), b=(2, 6, 7))[1] == [(6, 7, 5)]
    s = mx.sym.scatter_nd(a, b, shape=(3, 4))
    assert s.infer_shape_partial(b=(2, 2))[0] == [(2,), (2, 2)]
    s = mx.sym.load_json(mx.sym.slice_like(a, b, axes=(0, -1)).tojson())
    assert s.infer_shape(a=(3, 4, 5), b=(2, 9, 1, 7))[1] == [(2, 4, 1)]
    assert mx.sym.shape_array(a).infer_type(a="float16")[1] == [np.int64]
    assert mx.sym.size_array(a).infer_shape(a=(3, 2))[1] == [(1,)]


def test_slice_like_errors_and_shape_array_of_0d():
    d = mx.nd.zeros((2, 3, 4))
    for like, kw, msg in [((1, 2), {}, "one rank"), ((1, 5, 3), {}, "more than"),
                          ((1, 2), {"axes": (0, -1)}, "shape_like"),
                          ((1, 2, 3), {"axes": (3,)}, "out of range for data")]:
        with pytest.raises(MXNetError, match="slice_like") as err:
            mx.nd.slice_like(d, mx.nd.zeros(like), **kw)
        assert msg in str(err.value)
    assert mx.nd.shape_array(mx.nd.array(1.0).reshape(())).shape == (0,)
    assert mx.nd.size_array(mx.nd.zeros((0, 3))).asnumpy().tolist() == [0]


def test_eye_linspace_moments_errors_and_numpy():
    np.testing.assert_array_equal(mx.nd.eye(4, 6, -2, dtype="int8").asnumpy(),
                                  np.eye(4, 6, -2, dtype="int8"))
    np.testing.assert_array_equal(mx.nd.linspace(-3, 9, 13, dtype="float64").asnumpy(),
                                  np.linspace(-3, 9, 13))
    assert mx.nd.linspace(0, 1, 0).shape == (0,)
    assert mx.nd.eye(3).dtype == np.float32 and mx.nd.eye.op is mx.nd._internal._eye.op
    for call, msg in [
            (lambda: mx.nd.eye(-1), "non-negative"),
            (lambda: mx.nd.linspace(0, 1, -2), "num must be non-negative"),
            (lambda: mx.nd.linspace(0, -10, 4, dtype="uint8"), "does not fit in uint8"),
            (lambda: mx.nd.linspace(0, 1e6, 3, dtype="float16"), "overflows float16"),
            (lambda: mx.nd.linspace(0, float("nan"), 3), "finite"),
            (lambda: mx.nd.moments(mx.nd.zeros((2, 3))), "at least one axis"),
            (lambda: mx.nd.moments(mx.nd.zeros((2, 3)), axes=(1, -1)), "twice"),
            (lambda: mx.nd.moments(mx.nd.zeros((2, 3)), axes=(2,)), "out of range"),
            (lambda: mx.nd.moments(mx.nd.zeros((0, 3)), axes=(0,)), "empty axis")]:
        with pytest.raises(MXNetError) as err:
            call()
        assert msg in str(err.value)
    x = np.random.default_rng(3).normal(size=(5, 4, 3))
    mean, var = mx.nd.moments(mx.nd.array(x, dtype="float64"), axes=(0, 2))
    np.testing.assert_allclose(mean.asnumpy(), x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.asnumpy(), x.var(axis=(0, 2)), rtol=1e-12)
    m, v = mx.sym.moments(mx.sym.var("a"), axes=(1,))
    assert mx.sym.Group([m, v]).infer_shape(a=(2, 3, 4))[1] == [(2, 4), (2, 4)]


def _trunc_div(a, n):
    """Integer division truncated toward zero, in Python ints."""
    q = abs(a) // n
    return q if a >= 0 else -q


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_moments_truncate_toward_zero(dtype):
    """MXNet's integer moments: the mean is the int64 sum divided with truncation toward
    zero (negative sums included), the variance the truncated mean of the squares about it;
    both axes, against Python ints, stored in data's dtype."""
    x = np.random.default_rng(9).integers(-100, 60, (37, 6)).astype(dtype)
    x[3] = [-7, -7, -7, -7, -7, -8]                 # sums that are not multiples of n
    for axis in (0, 1):
        mean, var = mx.nd.moments(mx.nd.array(x, dtype=dtype), axes=(axis,))
        cols = x.T if axis == 0 else x
        want_m = [_trunc_div(sum(int(v) for v in c), len(c)) for c in cols]
        want_v = [_trunc_div(sum((int(v) - m) ** 2 for v in c), len(c))
                  for c, m in zip(cols, want_m)]
        # stored in data's dtype (int8's variances wrap, as a cast does)
        np.testing.assert_array_equal(mean.asnumpy(), np.array(want_m).astype(dtype))
        np.testing.assert_array_equal(var.asnumpy(), np.array(want_v).astype(dtype))


def test_histogram_front_ends_and_numpy():
    r = np.random.default_rng(5).normal(size=(40, 25))
    counts, edges = mx.nd.histogram(mx.nd.array(r, dtype="float64"), bins=7)
    want_c, want_e = np.histogram(r, bins=7)
    np.testing.assert_array_equal(counts.asnumpy(), want_c)
    np.testing.assert_allclose(edges.asnumpy(), want_e, rtol=1e-12)
    e = np.array([-1.0, -0.2, 0.0, 0.7, 2.0])
    counts, _ = mx.nd.histogram(mx.nd.array(r, dtype="float64"), mx.nd.array(e, dtype="float64"))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(r, bins=e)[0])
    s = mx.sym.histogram(mx.sym.var("a"), 4, range=(0, 1))
    assert s.infer_shape(a=(3, 5))[1] == [(4,), (5,)]
    assert mx.sym.load_json(s.tojson()).list_arguments() == ["a"]
    x = mx.nd.array([1.0, float("nan"), 2.0])
    assert mx.nd.histogram(x, bins=2, range=(0, 2))[0].asnumpy().tolist() == [0, 2]
    for call, msg in [
            (lambda: mx.nd.histogram(x, bins=2, range=(2, 0)), "low <= high"),
            (lambda: mx.nd._internal._histogram(x, bin_cnt=2), "needs range"),
            (lambda: mx.nd.histogram(x, mx.nd.array([2.0, 1.0])), "increasing"),
            (lambda: mx.nd.histogram(x, mx.nd.array([2.0])), "at least 2 edges"),
            (lambda: mx.nd.histogram(x, mx.nd.array([1, 2], dtype="float64")), "dtype"),
            (lambda: mx.nd.histogram(x, bins=2.5), "int or an NDArray"),
            (lambda: mx.sym.histogram(mx.sym.var("a"), 3), "needs range")]:
        with pytest.raises(MXNetError) as err:
            call()
        assert msg in str(err.value)


def test_ravel_unravel_round_trip_and_errors():
    rng = np.random.default_rng(6)
    shape = (5, 7, 3)
    flat = rng.integers(0, 105, 50)
    multi = np.stack(np.unravel_index(flat, shape))
    got = mx.nd.unravel_index(mx.nd.array(flat, dtype="int64"), shape=shape)
    np.testing.assert_array_equal(got.asnumpy(), multi)
    back = mx.nd.ravel_multi_index(got, shape=shape)
    np.testing.assert_array_equal(back.asnumpy(), flat)
    assert mx.nd.ravel_multi_index.op is mx.nd._internal._ravel_multi_index.op
    for call, msg in [
            (lambda: mx.nd.ravel_multi_index(mx.nd.array([[5], [0], [0]]), shape=shape),
             "index 5.0 at position 0 is out of range [0, 4]"),
            (lambda: mx.nd.ravel_multi_index(mx.nd.array([[0], [0]]), shape=shape), "(3, n)"),
            (lambda: mx.nd.ravel_multi_index(mx.nd.array([[0]])), "required"),
            (lambda: mx.nd.unravel_index(mx.nd.array([105]), shape=shape), "[0, 104]"),
            (lambda: mx.nd.unravel_index(mx.nd.array([-1]), shape=shape), "out of range"),
            (lambda: mx.nd.unravel_index(mx.nd.array([float("nan")]), shape=shape),
             "not a number")]:
        with pytest.raises(MXNetError) as err:
            call()
        assert msg in str(err.value)


def test_split_v2_front_ends_and_errors():
    x = mx.nd.arange(24).reshape((4, 6))
    parts = mx.nd.split_v2(x, (2, 2, 5), axis=-1)
    assert [p.shape for p in parts] == [(4, 2), (4, 0), (4, 3), (4, 1)]
    np.testing.assert_array_equal(mx.nd.concat(*parts, dim=1).asnumpy(), x.asnumpy())
    assert isinstance(mx.nd.split_v2(x, 1), mx.nd.NDArray)
    s = mx.sym.split_v2(mx.sym.var("a"), (1, 3), axis=0)
    assert s.infer_shape(a=(4, 6))[1] == [(1, 6), (2, 6), (1, 6)]
    for call, msg in [
            (lambda: mx.nd.split_v2(x, 4, axis=1), "equal sections"),
            (lambda: mx.nd.split_v2(x, (3, 1), axis=1), "increasing"),
            (lambda: mx.nd.split_v2(x, (2, 9), axis=1), "at most 6"),
            (lambda: mx.nd.split_v2(x, 2, axis=0, squeeze_axis=True), "size 1"),
            (lambda: mx.nd.split_v2(x, 2, axis=2), "out of range"),
            (lambda: mx.nd._internal._split_v2(x, indices=(2,)), "begin with 0"),
            (lambda: mx.nd._internal._split_v2(x, indices=()), "sections > 0"),
            (lambda: mx.nd.split_v2(x, 2.5), "int or a tuple")]:
        with pytest.raises(MXNetError) as err:
            call()
        assert msg in str(err.value)


def test_fill_element_onehot_encode_true_divide():
    x = mx.nd.arange(12).reshape((3, 4))
    assert mx.nd.choose_element_0index.op is mx.nd.pick.op
    with pytest.raises(MXNetError, match="out of range"):
        mx.nd.fill_element_0index(x, mx.nd.array([1.0, 2, 3]), mx.nd.array([0, -1, 1]))
    with pytest.raises(MXNetError, match="dtype"):
        mx.nd.fill_element_0index(x, mx.nd.array([1, 2, 3], dtype="int32"), mx.nd.array([0, 1, 1]))
    with pytest.raises(MXNetError, match="2-d"):
        mx.nd.fill_element_0index(x, mx.nd.array([1.0, 2]), mx.nd.array([0, 1]))
    y = x.copy()
    mx.nd.fill_element_0index(y, mx.nd.array([7.0, 8, 9]), mx.nd.array([1, 1, 0]), out=y)
    assert y.asnumpy()[:, :2].tolist() == [[0, 7], [4, 8], [9, 9]]
    out = mx.nd.zeros((2, 3), dtype="int8")
    assert mx.nd.onehot_encode(mx.nd.array([2, 0]), out) is out
    assert out.asnumpy().tolist() == [[0, 0, 1], [1, 0, 0]]
    np.testing.assert_array_equal(mx.nd.true_divide(x, mx.nd.array([[1, 2, 4, 8]])).asnumpy(),
                                  x.asnumpy() / np.array([1, 2, 4, 8]))


@pytest.mark.parametrize("dtypes, narrow, want", [   # MXNet 1.9.1's type inference
    (["float32", "float16"], False, ["float32", "float32"]),
    (["float32", "float16", "float64"], False, ["float32", "float32", "float64"]),
    (["float32", "float16", "float64"], True, ["float16", "float16", "float64"]),
    (["float32", "int32"], False, ["float32", "int32"]),
    (["int32", "int64"], False, ["int32", "int64"]),
    (["float16", "float16"], False, ["float16", "float16"])])
def test_amp_multicast_types_and_casts(dtypes, narrow, want):
    xs = [mx.nd.array([1.5, -2.25], dtype=d) for d in dtypes]
    outs = mx.nd.amp_multicast(*xs, num_outputs=len(xs), cast_narrow=narrow)
    assert [o.dtype for o in outs] == [np.dtype(w) for w in want]
    for x, o in zip(xs, outs):
        np.testing.assert_array_equal(o.asnumpy(), x.asnumpy().astype(o.dtype))
    s = mx.sym.amp_multicast(*[mx.sym.var(f"x{i}") for i in range(len(xs))],
                             num_outputs=len(xs), cast_narrow=narrow)
    assert s.infer_type(**{f"x{i}": d for i, d in enumerate(dtypes)})[1] == [
        np.dtype(w) for w in want]


def test_amp_cast_cast_storage_gradients_and_errors():
    x = mx.nd.array([1.5, 2.5])
    h = mx.nd.array([1, 2], dtype="float16")
    x.attach_grad()
    h.attach_grad()
    with mx.autograd.record():
        y = mx.nd.amp_cast(x, dtype="float16")
        a, b = mx.nd.amp_multicast(x, h, num_outputs=2)
        z = mx.nd.cast_storage(x, stype="default")
        loss = y.astype("float32").sum() * 2 + (a * 3 + b.astype("float32") * 5).sum() + z.sum()
    loss.backward()
    assert x.grad.asnumpy().tolist() == [6.0, 6.0] and h.grad.dtype == np.float16
    assert h.grad.asnumpy().tolist() == [5.0, 5.0]
    for call, msg in [
            (lambda: mx.nd.cast_storage(x, stype="csr"), "csr storage is 2-D"),
            (lambda: mx.nd.cast_storage(x, stype="dense"), "stype"),
            (lambda: mx.nd.amp_multicast(x, x, num_outputs=3), "num_outputs=3"),
            (lambda: mx.nd.amp_cast(x), "dtype")]:
        with pytest.raises(MXNetError) as err:
            call()
        assert msg in str(err.value)


def test_reset_arrays_zeroes_in_place_and_bumps_versions():
    a = mx.nd.ones((2, 3))
    b = mx.nd.ones((4,), dtype="int32")
    view = a[1]
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0 and view.asnumpy().sum() == 0
    assert mx.nd.reset_arrays(mx.nd.ones((1,))) == []
    with pytest.raises(MXNetError, match="num_arrays=3"):
        mx.nd.reset_arrays(a, b, num_arrays=3)
    x = mx.nd.ones((3,))
    x.attach_grad()
    w = mx.nd.array([1.0, 2.0, 3.0])
    with mx.autograd.record():
        y = x * w                   # saves w for x's gradient
    mx.nd.reset_arrays(w)
    with pytest.raises(MXNetError):
        y.backward()


def test_split_v2_is_a_fluent_method_on_the_tape():
    """x.split_v2(...) is nd.split_v2(x, ...), recorded (MXNet's fluent method)."""
    x = mx.nd.array(np.arange(12.0).reshape(3, 4))
    x.attach_grad()
    with mx.autograd.record():
        a, b = x.split_v2(2, axis=1)
        loss = (a * 2 + b * 3).sum()
    loss.backward()
    np.testing.assert_array_equal(a.asnumpy(), np.arange(12.0).reshape(3, 4)[:, :2])
    np.testing.assert_array_equal(x.grad.asnumpy(), np.tile([2.0, 2.0, 3.0, 3.0], (3, 1)))
