"""The linear algebra operators on one-op graphs: exported, checked (full check), run in
onnxruntime and compared with ``mx.nd`` (two or more shapes and attribute sets each)."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import check, export_and_run  # noqa: F401  (check: used below)

rng = np.random.default_rng(3)
CASES = []


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def spd_diag(*shape):
    """Matrices with a positive diagonal (sumlogdiag's domain)."""
    a = normal(*shape)
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] = np.abs(a[..., np.arange(n), np.arange(n)]) + 0.5
    return a


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


L = lambda F: F.linalg  # noqa: E731

case("gemm", lambda F, a, b, c: L(F).gemm(a, b, c, alpha=0.5, beta=2.0),
     normal(3, 4), normal(4, 5), normal(3, 5))
case("gemm_transposed_batched", lambda F, a, b, c: L(F).gemm(
    a, b, c, transpose_a=True, transpose_b=True), normal(2, 4, 3), normal(2, 5, 4),
    normal(2, 3, 5))
case("gemm_axis0", lambda F, a, b, c: L(F).gemm(a, b, c, axis=0, beta=0.0),
     normal(3, 2, 4), normal(4, 2, 5), normal(3, 2, 5))
case("gemm2", lambda F, a, b: L(F).gemm2(a, b), normal(3, 4), normal(4, 2))
case("gemm2_ta_alpha", lambda F, a, b: L(F).gemm2(a, b, transpose_a=True, alpha=-1.5),
     normal(2, 2, 4, 3), normal(2, 2, 4, 5))
case("gemm2_axis1_tb", lambda F, a, b: L(F).gemm2(a, b, transpose_b=True, axis=1),
     normal(2, 3, 6, 4), normal(2, 5, 6, 4))
case("syrk", lambda F, a: L(F).syrk(a), normal(3, 4))
case("syrk_transpose_alpha", lambda F, a: L(F).syrk(a, transpose=True, alpha=0.25),
     normal(2, 3, 4))
for lower in (True, False):
    for transpose in (True, False):
        for right in (True, False):
            case(f"trmm_l{int(lower)}_t{int(transpose)}_r{int(right)}",
                 lambda F, a, b, lo=lower, t=transpose, r=right: L(F).trmm(
                     a, b, lower=lo, transpose=t, rightside=r, alpha=1.5),
                 normal(2, 3, 3), normal(2, 3, 3))
case("trmm_rect", lambda F, a, b: L(F).trmm(a, b), normal(4, 4), normal(4, 2))
case("sumlogdiag", lambda F, a: L(F).sumlogdiag(a), spd_diag(4, 4))
case("sumlogdiag_batched", lambda F, a: L(F).sumlogdiag(a), spd_diag(2, 3, 5, 5))
for off in (0, 2, -1):
    case(f"extractdiag_{off}", lambda F, a, o=off: L(F).extractdiag(a, offset=o),
         normal(2, 4, 4))
    case(f"makediag_{off}", lambda F, a, o=off: L(F).makediag(a, offset=o), normal(3, 3))
case("extractdiag_one", lambda F, a: L(F).extractdiag(a), normal(5, 5))
case("makediag_vector", lambda F, a: L(F).makediag(a, offset=1), normal(4))
for off, lower in ((0, True), (0, False), (1, True), (-2, True)):
    case(f"extracttrian_{off}_{int(lower)}",
         lambda F, a, o=off, lo=lower: L(F).extracttrian(a, offset=o, lower=lo), normal(2, 4, 4))
    case(f"maketrian_{off}_{int(lower)}",
         lambda F, a, o=off, lo=lower: L(F).maketrian(a, offset=o, lower=lo), normal(3, 6))
case("extracttrian_one", lambda F, a: L(F).extracttrian(a, lower=False), normal(3, 3))
case("det", lambda F, a: L(F).det(a), normal(3, 3), rtol=1e-4)
case("det_batched", lambda F, a: L(F).det(a), normal(2, 4, 4), rtol=1e-4)
case("slogdet", lambda F, a: L(F).slogdet(a), normal(4, 4), rtol=1e-4)
case("slogdet_batched", lambda F, a: L(F).slogdet(a), normal(3, 2, 5, 5), rtol=1e-4)

case("trian_mask_lower_half", lambda F, a: F._internal._la_trian_mask(a, diag=0.5),
     normal(2, 4, 4))
case("trian_mask_upper", lambda F, a: F._internal._la_trian_mask(a, lower=False), normal(3, 3))
case("khatri_rao_one", lambda F, a: F.khatri_rao(a), normal(3, 2))
case("khatri_rao_two", lambda F, a, b: F.khatri_rao(a, b), normal(2, 3), normal(4, 3))
case("khatri_rao_three", lambda F, a, b, c: F.khatri_rao(a, b, c), normal(2, 2), normal(3, 2),
     normal(1, 2))
case("khatri_rao_f16", lambda F, a, b: F.khatri_rao(a, b), normal(2, 3).astype(np.float16),
     normal(3, 3).astype(np.float16), rtol=1e-3)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_linalg_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol, tmp_path)


def test_extractdiag_keeps_infinities_elsewhere(tmp_path):
    """A Gather, not a mask product: an inf off the diagonal does not make the diagonal
    NaN."""
    a = np.array([[1.0, np.inf], [-np.inf, 2.0]], np.float32)
    check(lambda F, x: F.linalg.extractdiag(x), [a], 1e-6, tmp_path)


def test_slogdet_of_a_singular_matrix(tmp_path):
    a = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    got = export_and_run(mx.sym.linalg.slogdet(mx.sym.var("a")), {}, {"a": a}, tmp_path)
    assert got[0].tolist() == [0.0] and got[1].tolist() == [-np.inf]
