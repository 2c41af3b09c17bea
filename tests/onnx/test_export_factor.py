"""The matrix factorisations and solves (potrf, potri, trsm, inverse, gelqf, syevd) exported
as ONNX Loops: one-op graphs in float32 and float64 at several shapes and attribute sets,
run in onnxruntime and compared with ``mx.nd``; what a singular or indefinite input gives;
a dynamic batch; and gradient graphs through them against ``mx.autograd``."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.symbol.graph import topo_order
from onnx_harness import export_and_run, run_onnx

rng = np.random.default_rng(5)
DTYPES = [np.float32, np.float64]
RTOL = {np.float32: 2e-4, np.float64: 1e-10}
CASES = []


def normal(*shape):
    return rng.standard_normal(shape)


def spd(*shape):
    """Symmetric positive-definite matrices (well conditioned)."""
    x = normal(*shape)
    n = shape[-1]
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def one_sided(*shape, lower=True):
    """Symmetric positive definite on the ``lower`` triangle (the other one is noise)."""
    a = spd(*shape)
    noise = normal(*shape)
    return np.where(np.tri(shape[-1], k=-1, dtype=bool).T if lower
                    else np.tri(shape[-1], k=-1, dtype=bool), noise, a)


def triangle(*shape):
    """Square matrices with a diagonal well away from zero (the other triangle is noise,
    which the op must ignore)."""
    a = normal(*shape)
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] = np.sign(a[..., np.arange(n), np.arange(n)]) * (
        1.5 + np.abs(a[..., np.arange(n), np.arange(n)]))
    return a


def with_eigenvalues(values):
    """A symmetric matrix with these eigenvalues (a random orthonormal basis)."""
    q = np.linalg.qr(normal(len(values), len(values)))[0]
    return q @ np.diag(values) @ q.T


def case(label, fn, *inputs):
    for dt in DTYPES:
        CASES.append(pytest.param(fn, [np.asarray(a, dt) for a in inputs], RTOL[dt],
                                  id=f"{label}-{np.dtype(dt).name}"))


def check(fn, inputs, rtol, tmp_path):
    """``fn`` built with mx.sym, exported and run, against ``fn`` with mx.nd."""
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = export_and_run(out, {}, dict(zip(names, inputs)), tmp_path)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)
    return got


L = lambda F: F.linalg  # noqa: E731

for lower in (True, False):
    case(f"potrf_l{int(lower)}", lambda F, a, lo=lower: L(F).potrf(a, lower=lo),
         one_sided(4, 4, lower=lower))
    case(f"potrf_batched_l{int(lower)}", lambda F, a, lo=lower: L(F).potrf(a, lower=lo),
         one_sided(2, 3, 5, 5, lower=lower))
    case(f"potri_l{int(lower)}", lambda F, a, lo=lower: L(F).potri(a, lower=lo),
         triangle(4, 4))
    case(f"potri_batched_l{int(lower)}", lambda F, a, lo=lower: L(F).potri(a, lower=lo),
         triangle(3, 2, 2))
    for transpose in (True, False):
        for right in (True, False):
            case(f"trsm_l{int(lower)}_t{int(transpose)}_r{int(right)}",
                 lambda F, a, b, lo=lower, t=transpose, r=right: L(F).trsm(
                     a, b, lower=lo, transpose=t, rightside=r, alpha=-1.5),
                 triangle(2, 4, 4), normal(2, 3, 4) if right else normal(2, 4, 3))
case("trsm_one_matrix", lambda F, a, b: L(F).trsm(a, b), triangle(5, 5), normal(5, 2))
case("trsm_batched_right", lambda F, a, b: L(F).trsm(a, b, rightside=True, lower=False),
     triangle(2, 2, 3, 3), normal(2, 2, 6, 3))
case("inverse", lambda F, a: L(F).inverse(a), normal(5, 5))
case("inverse_batched", lambda F, a: L(F).inverse(a), normal(2, 3, 4, 4))
case("inverse_one", lambda F, a: L(F).inverse(a), normal(1, 1) + 3.0)
# pivoting is needed: a zero in the first pivot position
case("inverse_pivoting", lambda F, a: L(F).inverse(a),
     np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]]))
case("gelqf_wide", lambda F, a: L(F).gelqf(a), normal(3, 5))
case("gelqf_square_batched", lambda F, a: L(F).gelqf(a), normal(2, 4, 4))
case("gelqf_row", lambda F, a: L(F).gelqf(a), normal(2, 1, 3))
# rank deficient: a zero row and a row with a zero tail (the reflections that are I)
case("gelqf_rank_deficient", lambda F, a: L(F).gelqf(a),
     np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-2.0, 0.0, 0.0]]))
case("syevd", lambda F, a: L(F).syevd(a), normal(4, 4))
case("syevd_batched", lambda F, a: L(F).syevd(a), normal(2, 3, 3, 3))
case("syevd_one", lambda F, a: L(F).syevd(a), normal(1, 1))
case("syevd_six", lambda F, a: L(F).syevd(a), normal(6, 6))
# diagonal already (no sweep at all), and repeated eigenvalues (ties in the order)
case("syevd_diagonal", lambda F, a: L(F).syevd(a), np.diag([3.0, -1.0, 2.0, -1.0]))
case("syevd_repeated", lambda F, a: L(F).syevd(a), with_eigenvalues([1.0, 1.0, 2.0, 2.0]))
case("potri_of_potrf", lambda F, a: L(F).potri(L(F).potrf(a)), spd(3, 3))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_factorisation_matches_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol, tmp_path)


def test_potri_of_potrf_is_the_inverse(tmp_path):
    a = spd(2, 4, 4)
    got = check(lambda F, x: L(F).potri(L(F).potrf(x)), [a], 1e-10, tmp_path)[0]
    np.testing.assert_allclose(got, np.linalg.inv(a), rtol=1e-9, atol=1e-12)


def test_gelqf_factors_reconstruct_the_input(tmp_path):
    a = normal(2, 3, 5)
    q, low = check(lambda F, x: L(F).gelqf(x), [a], 1e-10, tmp_path)
    np.testing.assert_allclose(low @ q, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    assert np.all(np.triu(low, 1) == 0)


@pytest.mark.parametrize("fn,inputs", [
    (lambda F, a: L(F).potrf(a), [np.zeros((2, 0, 0))]),
    (lambda F, a: L(F).inverse(a), [np.zeros((0, 3, 3))]),
    (lambda F, a, b: L(F).trsm(a, b), [np.eye(3), np.zeros((3, 0))]),
    (lambda F, a: L(F).gelqf(a), [np.zeros((0, 2, 3))]),
    (lambda F, a: L(F).syevd(a), [np.zeros((2, 0, 0))])],
    ids=["potrf", "inverse", "trsm", "gelqf", "syevd"])
def test_empty_inputs_give_empty_outputs(fn, inputs, tmp_path):
    got = check(fn, inputs, 1e-12, tmp_path)
    assert all(g.size == 0 for g in got)


def test_syevd_reads_the_lower_triangle_and_decomposes(tmp_path):
    a = one_sided(2, 5, 5, lower=True)
    u, lam = check(lambda F, x: L(F).syevd(x), [a], 1e-10, tmp_path)
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    rebuilt = np.swapaxes(u, -1, -2) @ (lam[..., :, None] * u)
    np.testing.assert_allclose(rebuilt, sym, rtol=1e-10, atol=1e-10)
    assert (np.diff(lam, axis=-1) >= 0).all()
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(sym), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrf_of_an_indefinite_matrix_gives_nan_from_the_failing_column(dtype, tmp_path):
    a = np.diag([4.0, -1.0, 2.0]).astype(dtype)
    with pytest.raises(mx.MXNetError, match="positive definite"):
        mx.nd.linalg.potrf(mx.nd.array(a, dtype=dtype)).asnumpy()
    got = export_and_run(mx.sym.linalg.potrf(mx.sym.var("a")), {}, {"a": a}, tmp_path)[0]
    np.testing.assert_array_equal(got[:, 0], [2.0, 0.0, 0.0])
    below = np.tri(3, k=0, dtype=bool)
    below[:, 0] = False                     # the columns from the failing pivot (1) on
    assert np.isnan(got[below]).all()
    assert (got[np.triu(np.ones((3, 3), bool), 1)] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_of_a_zero_matrix_is_nan(dtype, tmp_path):
    a = np.zeros((2, 3, 3), dtype)
    with pytest.raises(mx.MXNetError, match="singular"):
        mx.nd.linalg.inverse(mx.nd.array(a, dtype=dtype)).asnumpy()
    got = export_and_run(mx.sym.linalg.inverse(mx.sym.var("a")), {}, {"a": a}, tmp_path)[0]
    assert np.isnan(got).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_trsm_with_a_zero_on_the_diagonal_is_not_finite(dtype, tmp_path):
    a = np.array([[1.0, 0.0], [5.0, 0.0]], dtype)
    b = np.ones((2, 2), dtype)
    with pytest.raises(mx.MXNetError, match="singular"):
        mx.nd.linalg.trsm(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)).asnumpy()
    got = export_and_run(mx.sym.linalg.trsm(mx.sym.var("a"), mx.sym.var("b")), {},
                         {"a": a, "b": b}, tmp_path)[0]
    np.testing.assert_array_equal(got[0], [1.0, 1.0])      # the rows before the zero pivot
    assert not np.isfinite(got[1]).any()


@pytest.mark.parametrize("fn,make", [
    (lambda F, a: L(F).potrf(a), lambda b: spd(b, 3, 3)),
    (lambda F, a: L(F).potri(a, lower=False), lambda b: triangle(b, 3, 3)),
    (lambda F, a: L(F).inverse(a), lambda b: normal(b, 3, 3)),
    (lambda F, a: L(F).gelqf(a)[1], lambda b: normal(b, 2, 3)),
    (lambda F, a: L(F).syevd(a)[0], lambda b: normal(b, 3, 3))],
    ids=["potrf", "potri", "inverse", "gelqf", "syevd"])
def test_a_dynamic_batch_runs_at_other_batch_sizes(fn, make, tmp_path):
    """The Loops depend on the matrix size only: one export runs any batch."""
    path = str(tmp_path / "model.onnx")
    mx.onnx.export_model(fn(mx.sym, mx.sym.var("a")), {}, in_shapes=[make(2).shape],
                         in_types=[np.float64], onnx_file_path=path, dynamic=True)
    for batch in (1, 4):
        a = make(batch)
        got = run_onnx(path, {"a": a})[0]
        np.testing.assert_allclose(got, fn(mx.nd, mx.nd.array(a, dtype=a.dtype)).asnumpy(),
                                   rtol=1e-10, atol=1e-10)


# ---- gradient graphs -------------------------------------------------------------------------
def _autograd(fn, values):
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in values.items()}
    for x in arrays.values():
        x.attach_grad()
    with mx.autograd.record():
        loss = fn(mx.nd, arrays)
    loss.backward()
    return [arrays[k].grad.asnumpy() for k in values]


def _grad_graph(fn, values):
    vars_ = {k: mx.sym.var(k, shape=v.shape, dtype=v.dtype) for k, v in values.items()}
    return mx.sym.Group(mx.sym.grad(fn(mx.sym, vars_), list(vars_.values())))


def _potrf_loss(F, v):
    chol = F.linalg.potrf(v["a"])
    return F.sum(chol * v["w"])


def _potrf_upper_loss(F, v):
    return F.sum(F.linalg.potrf(v["a"], lower=False) * v["w"])


def _gelqf_loss(F, v):
    q, low = F.linalg.gelqf(v["a"])
    return F.sum(q * v["w"]) + F.sum(F.square(low))


def _syevd_loss(F, v):
    u, lam = F.linalg.syevd(v["a"])
    return F.sum(u * v["w"]) + F.sum(F.square(lam))


def _inverse_loss(F, v):
    return F.sum(F.square(F.linalg.inverse(v["a"])) * v["w"])


@pytest.mark.parametrize("loss,make", [
    (_potrf_loss, lambda: spd(2, 4, 4)), (_potrf_upper_loss, lambda: spd(3, 3)),
    (_inverse_loss, lambda: normal(2, 3, 3) + 3 * np.eye(3)),
    (_gelqf_loss, lambda: normal(2, 2, 4)),
    (_syevd_loss, lambda: with_eigenvalues([-1.0, 0.5, 2.0]))],
    ids=["potrf", "potrf_upper", "inverse", "gelqf", "syevd"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_graph_exports_and_matches_autograd(loss, make, dtype, tmp_path):
    a = make().astype(dtype)
    values = {"a": a, "w": normal(*a.shape).astype(dtype)}
    graph = _grad_graph(loss, values)
    ops = {n.op.name for n in topo_order(graph._outputs) if n.op is not None}
    if loss in (_potrf_loss, _potrf_upper_loss, _gelqf_loss):
        assert "_linalg_trsm" in ops, ops             # these gradients solve with trsm
    got = export_and_run(graph, {}, {k: values[k] for k in graph.list_arguments()}, tmp_path)
    for g, e in zip(got, _autograd(loss, values)):
        np.testing.assert_allclose(g, e, rtol=RTOL[dtype], atol=RTOL[dtype])
