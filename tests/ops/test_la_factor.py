"""extracttrian and maketrian (mxlite/ops/la_factor.py) against NumPy's triangle indices
(a lower triangle row by row, an upper one column by column, as MXNet 1.9.1 stores them:
its documented examples and the fixture cases of test_contrib_math.py), their adjointness, and
errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _np_positions(n, offset, lower):
    """(rows, cols) of the triangle in MXNet's order: numpy's tril_indices (row by row) for
    a lower triangle, those of the transpose (column by column) for an upper one."""
    if offset > 0 or (offset == 0 and not lower):
        cols, rows = np.tril_indices(n, -offset)
        return rows, cols
    return np.tril_indices(n, offset)


@pytest.mark.parametrize("offset, lower", [(0, True), (0, False), (1, True), (2, False),
                                           (-1, True), (-3, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_extracttrian_and_maketrian_match_numpy(offset, lower, dtype):
    a = np.random.RandomState(0).uniform(-1, 1, (2, 3, 5, 5)).astype(dtype)
    r, c = _np_positions(5, offset, lower)
    got = mx.nd.linalg.extracttrian(mx.nd.array(a, dtype=dtype), offset=offset, lower=lower)
    np.testing.assert_array_equal(got.asnumpy(), a[..., r, c])
    back = mx.nd.linalg.maketrian(got, offset=offset, lower=lower).asnumpy()
    want = np.zeros_like(a)
    want[..., r, c] = a[..., r, c]
    np.testing.assert_array_equal(back, want)
    assert back.dtype == np.dtype(dtype)


def test_mxnet_documented_examples():
    A = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    L = mx.nd.linalg
    assert L.extracttrian(A).asnumpy().tolist() == [1.0, 3.0, 4.0]
    assert L.extracttrian(A, lower=False).asnumpy().tolist() == [1.0, 2.0, 4.0]
    assert L.extracttrian(A, offset=1).asnumpy().tolist() == [2.0]
    assert L.extracttrian(A, offset=-1).asnumpy().tolist() == [3.0]
    v = mx.nd.array([1.0, 2.0, 3.0])
    assert L.maketrian(v, offset=-1).asnumpy().tolist() == [[0, 0, 0], [1, 0, 0], [2, 3, 0]]
    assert L.maketrian(v, lower=False).asnumpy().tolist() == [[1, 2], [0, 3]]
    assert mx.nd.linalg_extracttrian(A).asnumpy().tolist() == [1.0, 3.0, 4.0]


def test_gradients_are_each_others_adjoint():
    a = mx.nd.array(np.arange(9.0).reshape(3, 3), dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.extracttrian(a, offset=-1)
    y.backward(mx.nd.array([5.0, 6.0, 7.0], dtype="float64"))
    assert a.grad.asnumpy().tolist() == [[0, 0, 0], [5, 0, 0], [6, 7, 0]]


@pytest.mark.parametrize("call, words", [
    (lambda L: L.extracttrian(mx.nd.ones((2, 3))), ["extracttrian", "square", "(2, 3)"]),
    (lambda L: L.extracttrian(mx.nd.ones((3, 3)), offset=3), ["extracttrian", "offset=3"]),
    (lambda L: L.extracttrian(mx.nd.ones((3, 3), dtype="int32")), ["extracttrian", "int32"]),
    (lambda L: L.maketrian(mx.nd.ones((2, 4))), ["maketrian", "(4)", "triangle"]),
    (lambda L: L.maketrian(mx.nd.ones((0,)), offset=1), ["maketrian", "(0)"]),
])
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises(MXNetError) as e:
        call(mx.nd.linalg)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---- syevd and gelqf against NumPy ----------------------------------------------------------
def test_syevd_matches_numpy_eigh_with_mxnets_signs():
    rng = np.random.RandomState(4)
    a = rng.randn(3, 5, 5)
    a = a + a.transpose(0, 2, 1)
    u, lam = mx.nd.linalg.syevd(mx.nd.array(a, dtype="float64"))
    w, v = np.linalg.eigh(a)
    want_u = v.transpose(0, 2, 1)
    lead = np.take_along_axis(want_u, abs(want_u).argmax(-1)[..., None], -1)
    want_u = want_u * np.sign(lead)
    np.testing.assert_allclose(lam.asnumpy(), w, atol=1e-12)
    np.testing.assert_allclose(u.asnumpy(), want_u, atol=1e-10)


def test_syevd_reads_the_lower_triangle_only():
    a = np.array([[2.0, 99.0], [1.0, 3.0]])               # the upper 99 is never read
    u, lam = mx.nd.linalg.syevd(mx.nd.array(a, dtype="float64"))
    np.testing.assert_allclose(lam.asnumpy(), np.linalg.eigvalsh(np.tril(a) + np.tril(a, -1).T),
                               atol=1e-12)
    x = mx.nd.array(a, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.syevd(x)[1].sum()
    y.backward()
    assert x.grad.asnumpy()[0, 1] == 0.0                   # trace: d/dA = I on the lower part
    np.testing.assert_allclose(x.grad.asnumpy(), np.eye(2), atol=1e-12)


def test_gelqf_matches_numpy_qr_of_the_transpose():
    a = np.random.RandomState(5).randn(2, 3, 5)
    q, l = mx.nd.linalg.gelqf(mx.nd.array(a, dtype="float64"))
    q, l = q.asnumpy(), l.asnumpy()
    qt, r = np.linalg.qr(a.transpose(0, 2, 1))             # A^T = Qt R  ->  A = R^T Qt^T
    sign = np.sign(np.diagonal(l, axis1=1, axis2=2) / np.diagonal(r, axis1=1, axis2=2))
    np.testing.assert_allclose(l, r.transpose(0, 2, 1) * sign[:, None, :], atol=1e-12)
    np.testing.assert_allclose(q, qt.transpose(0, 2, 1) * sign[:, :, None], atol=1e-12)
    np.testing.assert_allclose(q @ q.transpose(0, 2, 1), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda L: L.gelqf(mx.nd.ones((3, 2))), ["gelqf", "x <= y", "(3, 2)"]),
    (lambda L: L.syevd(mx.nd.ones((2, 3))), ["syevd", "square", "(2, 3)"]),
    (lambda L: L.syevd(mx.nd.ones((2, 2), dtype="int32")), ["syevd", "int32"]),
])
def test_factorisation_bad_input(call, words):
    with pytest.raises(MXNetError) as e:
        call(mx.nd.linalg)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("name, shape", [("syevd", (0, 3, 3)), ("syevd", (2, 0, 0)),
                                         ("gelqf", (0, 2, 3)), ("gelqf", (2, 0, 3))])
def test_empty_stacks_give_empty_results_and_gradients(name, shape):
    x = mx.nd.ones(shape)
    x.attach_grad()
    with mx.autograd.record():
        outs = getattr(mx.nd.linalg, name)(x)
    mx.autograd.backward(list(outs))
    assert outs[0].shape == shape and x.grad.shape == shape
