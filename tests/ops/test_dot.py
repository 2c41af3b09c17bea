"""dot and batch_dot values against NumPy (issue 7, item 7): the four transpose combinations,
N-d dot (MXNet: the last axis of lhs against the first axis of rhs), float16/32/64 and integer
dtypes, zero-size inputs (an empty contraction gives zeros), and gradient values against the
closed-form formulas.

Oracles: ``numpy.tensordot`` / ``numpy.matmul`` in float64 (integers: NumPy's own wrapping
arithmetic in the same dtype).
"""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError, autograd

TRANSPOSES = list(itertools.product([False, True], repeat=2))
FLOATS = ("float16", "float32", "float64")


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _rand(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(-9 if dt.kind == "i" else 0, 10, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def dot_oracle(a, b, ta, tb):
    """MXNet's dot: lhs read as (rest, a[-1]) -- or (a[0], rest) transposed, so its first axis
    is contracted -- and rhs as (b[0], rest) -- or (rest, b[-1]) transposed, so its last axis
    is contracted. In tensordot terms: contract axis (0 if ta else -1) of a with axis
    (-1 if tb else 0) of b."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([np.dot(a, b)])
    return np.tensordot(a, b, axes=([0 if ta else -1], [-1 if tb else 0]))


def _check(got, want, dtype, a=None, b=None, contract=None):
    g = got.asnumpy()
    assert g.dtype == np.dtype(dtype) and g.shape == want.shape, (g.dtype, g.shape, want.shape)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(g, want)
        return
    if dtype == "float16":
        # multiplied in float32, rounded once to float16: half an ulp of float16 relative to
        # the sum of |products| (plus float32 accumulation, far smaller)
        scale = np.abs(contract(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))))
        np.testing.assert_array_less(np.abs(g.astype(np.float64) - want), scale * 2 ** -10 + 1e-7)
        return
    rtol = {"float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


# ---- dot values ---------------------------------------------------------------------------
@pytest.mark.parametrize("ta, tb", TRANSPOSES)
@pytest.mark.parametrize("dtype", FLOATS + ("int32", "int64", "int8"))
def test_dot_2d_all_transposes(ta, tb, dtype, rng):
    m, k, n = 5, 7, 3
    a = _rand(rng, (k, m) if ta else (m, k), dtype)
    b = _rand(rng, (n, k) if tb else (k, n), dtype)
    got = mx.nd.dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if np.dtype(dtype).kind in "iu":       # NumPy's integer matmul, same dtype
        want = np.matmul(a.T if ta else a, b.T if tb else b)
    else:
        want = dot_oracle(a64, b64, ta, tb)
    _check(got, want, dtype, a, b, lambda x, y: dot_oracle(x, y, ta, tb))


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
@pytest.mark.parametrize("shapes", [((2, 3, 4), (4, 5)), ((2, 3, 4), (4, 2, 5)), ((4,), (4, 3, 2)),
                                    ((3, 4), (4,)), ((2, 2, 3, 4), (4, 3))])
@pytest.mark.parametrize("dtype", FLOATS)
def test_dot_nd(shapes, ta, tb, dtype, rng):
    """N-d dot contracts the last axis of lhs with the first of rhs (MXNet's documentation);
    transpose_a contracts lhs's first axis instead, transpose_b rhs's last."""
    sa, sb = shapes
    if ta:
        sa = sa[-1:] + sa[:-1]           # put the contracted size first
    if tb:
        sb = sb[1:] + sb[:1]             # ... and last
    a, b = _rand(rng, sa, dtype), _rand(rng, sb, dtype)
    got = mx.nd.dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)
    want = dot_oracle(a.astype(np.float64), b.astype(np.float64), ta, tb)
    if want.shape == ():
        want = want.reshape(1)
    _check(got, want, dtype, a, b, lambda x, y: dot_oracle(x, y, ta, tb))


def test_dot_nd_documented_example():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(20.0).reshape(4, 5)
    got = mx.nd.dot(_nd(a), _nd(b))
    assert got.shape == (2, 3, 5)
    np.testing.assert_array_equal(got.asnumpy(), np.einsum("ijk,kl->ijl", a, b))


def test_dot_vectors():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    got = mx.nd.dot(_nd(a), _nd(b))
    assert got.shape == (1,) and got.asnumpy().tolist() == [32.0]


def test_dot_integer_overflow_wraps_as_numpy():
    a = np.full((2, 4), 100, np.int8)
    b = np.full((4, 2), 100, np.int8)
    np.testing.assert_array_equal(mx.nd.dot(_nd(a), _nd(b)).asnumpy(), np.matmul(a, b))


# ---- zero sizes ---------------------------------------------------------------------------
def test_dot_zero_inner_dimension_is_zeros():
    got = mx.nd.dot(mx.nd.ones((2, 0)), mx.nd.ones((0, 3)))
    assert got.shape == (2, 3) and got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
@pytest.mark.parametrize("m, k, n", [(2, 0, 3), (0, 3, 4), (2, 3, 0), (0, 0, 0), (0, 2, 0)])
@pytest.mark.parametrize("dtype", ("float16", "float64", "int32"))
def test_dot_zero_sizes(m, k, n, ta, tb, dtype):
    a = np.ones((k, m) if ta else (m, k), dtype)
    b = np.ones((n, k) if tb else (k, n), dtype)
    got = mx.nd.dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)
    assert got.shape == (m, n) and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), np.zeros((m, n), dtype))


@pytest.mark.parametrize("sa, sb, out", [((2, 3, 0), (0, 4), (2, 3, 4)),
                                         ((0, 3, 4), (4, 5), (0, 3, 5)),
                                         ((2, 3, 4), (4, 0, 5), (2, 3, 0, 5))])
def test_dot_nd_zero_sizes(sa, sb, out):
    got = mx.nd.dot(mx.nd.ones(sa), mx.nd.ones(sb))
    assert got.shape == out
    np.testing.assert_array_equal(got.asnumpy(), np.zeros(out, np.float32))


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
@pytest.mark.parametrize("batch, m, k, n", [(2, 3, 0, 4), (0, 3, 2, 4), (2, 0, 3, 4),
                                            (2, 3, 4, 0)])
def test_batch_dot_zero_sizes(batch, m, k, n, ta, tb):
    a = np.ones((batch, k, m) if ta else (batch, m, k), np.float32)
    b = np.ones((batch, n, k) if tb else (batch, k, n), np.float32)
    got = mx.nd.batch_dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)
    assert got.shape == (batch, m, n)
    np.testing.assert_array_equal(got.asnumpy(), np.zeros((batch, m, n), np.float32))


# ---- batch_dot values -----------------------------------------------------------------------
@pytest.mark.parametrize("ta, tb", TRANSPOSES)
@pytest.mark.parametrize("dtype", FLOATS + ("int32", "int64"))
def test_batch_dot_all_transposes(ta, tb, dtype, rng):
    batch, m, k, n = 3, 4, 5, 2
    a = _rand(rng, (batch, k, m) if ta else (batch, m, k), dtype)
    b = _rand(rng, (batch, n, k) if tb else (batch, k, n), dtype)
    got = mx.nd.batch_dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)

    def contract(x, y):
        return np.matmul(x.swapaxes(1, 2) if ta else x, y.swapaxes(1, 2) if tb else y)
    if np.dtype(dtype).kind in "iu":
        want = contract(a, b)
    else:
        want = contract(a.astype(np.float64), b.astype(np.float64))
    _check(got, want, dtype, a, b, contract)


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
def test_batch_dot_several_batch_axes(ta, tb, rng):
    """Inputs of 4 or 5 dimensions: every axis but the last two is a batch axis."""
    for batch in [(2, 3), (2, 1, 3)]:
        m, k, n = 4, 5, 2
        a = _rand(rng, batch + ((k, m) if ta else (m, k)), "float64")
        b = _rand(rng, batch + ((n, k) if tb else (k, n)), "float64")
        got = mx.nd.batch_dot(_nd(a), _nd(b), transpose_a=ta, transpose_b=tb)
        want = np.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


def test_dot_errors():
    with pytest.raises(MXNetError, match=r"dot: shapes \(2, 3\) and \(4, 5\) are not aligned"):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))
    with pytest.raises(MXNetError, match="dot: lhs and rhs must share a dtype"):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 2), dtype="float64"))
    with pytest.raises(MXNetError, match="batch_dot: batch sizes differ"):
        mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((3, 4, 5)))
    with pytest.raises(MXNetError, match="batch_dot: batch sizes differ"):
        mx.nd.batch_dot(mx.nd.ones((3, 1, 3, 2)), mx.nd.ones((1, 3, 2, 3)))
    with pytest.raises(MXNetError, match="batch_dot: inputs must have one number"):
        mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((1, 2, 4, 5)))
    with pytest.raises(MXNetError, match="dot: is not defined for bool"):
        mx.nd.dot(mx.nd.ones((2, 2), dtype="bool"), mx.nd.ones((2, 2), dtype="bool"))


# ---- gradients --------------------------------------------------------------------------------
def _grads(fn, a, b, w):
    x, y = _nd(a), _nd(b)
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = fn(x, y)
        loss = (z * _nd(w)).sum()
    loss.backward()
    return z.asnumpy(), x.grad.asnumpy(), y.grad.asnumpy()


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
def test_dot_gradient_values(ta, tb, rng):
    """C = op_a(A) op_b(B) with head gradient W: d op_a(A) = W op_b(B)^T, d op_b(B) = op_a(A)^T W."""
    m, k, n = 3, 4, 2
    a = rng.standard_normal((k, m) if ta else (m, k))
    b = rng.standard_normal((n, k) if tb else (k, n))
    w = rng.standard_normal((m, n))
    opa, opb = (a.T if ta else a), (b.T if tb else b)
    _, da, db = _grads(lambda x, y: mx.nd.dot(x, y, transpose_a=ta, transpose_b=tb), a, b, w)
    da_op, db_op = w @ opb.T, opa.T @ w
    np.testing.assert_allclose(da, da_op.T if ta else da_op, rtol=1e-12)
    np.testing.assert_allclose(db, db_op.T if tb else db_op, rtol=1e-12)


def test_dot_nd_gradient_values(rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    w = rng.standard_normal((2, 3, 5))
    z, da, db = _grads(mx.nd.dot, a, b, w)
    np.testing.assert_allclose(z, np.tensordot(a, b, 1), rtol=1e-12)
    np.testing.assert_allclose(da, np.tensordot(w, b, axes=([2], [1])), rtol=1e-12)
    np.testing.assert_allclose(db, np.tensordot(a, w, axes=([0, 1], [0, 1])), rtol=1e-12)


@pytest.mark.parametrize("ta, tb", TRANSPOSES)
def test_batch_dot_gradient_values(ta, tb, rng):
    batch, m, k, n = 2, 3, 4, 5
    a = rng.standard_normal((batch, k, m) if ta else (batch, m, k))
    b = rng.standard_normal((batch, n, k) if tb else (batch, k, n))
    w = rng.standard_normal((batch, m, n))
    opa = a.swapaxes(1, 2) if ta else a
    opb = b.swapaxes(1, 2) if tb else b
    _, da, db = _grads(lambda x, y: mx.nd.batch_dot(x, y, transpose_a=ta, transpose_b=tb),
                       a, b, w)
    da_op, db_op = w @ opb.swapaxes(1, 2), opa.swapaxes(1, 2) @ w
    np.testing.assert_allclose(da, da_op.swapaxes(1, 2) if ta else da_op, rtol=1e-12)
    np.testing.assert_allclose(db, db_op.swapaxes(1, 2) if tb else db_op, rtol=1e-12)


@pytest.mark.parametrize("sa, sb", [((2, 0), (0, 3)), ((2, 3), (3, 0)), ((0, 3), (3, 2)),
                                    ((2, 0, 3), (3, 4))])
def test_dot_gradient_with_zero_sizes(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    out_shape = sa[:-1] + sb[1:]
    z, da, db = _grads(mx.nd.dot, a, b, np.ones(out_shape))
    assert z.shape == out_shape and (z == 0).all()
    assert da.shape == sa and db.shape == sb
    assert (da == 0).all() and (db == 0).all()
