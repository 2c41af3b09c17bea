"""Gradient specs: mx.nd.linalg.* and khatri_rao (mxlite/ops/la.py).

Inputs are sampled well-conditioned: SPD matrices for potrf, triangular factors with a
diagonal near 2 for potri/trsm/trmm, matrices near 3 I for inverse/det/slogdet. The triangle
these ops ignore is filled with noise, so the checks also prove that its gradient is zero.
Linear ops are composed with a square so that every order depends on the input.
"""
import numpy as np

from . import Spec


def _spd(rng, batch=(2,), n=3):
    m = rng.uniform(-1, 1, batch + (n, n))
    a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    return a + np.triu(rng.uniform(-1, 1, batch + (n, n)), 1)     # upper noise: never read


def _factor(rng, batch=(2,), n=3, lower=True):
    t = rng.uniform(-0.5, 0.5, batch + (n, n)) + 2 * np.eye(n)
    noise = rng.uniform(-1, 1, batch + (n, n))
    return (np.tril(t) + np.triu(noise, 1)) if lower else (np.triu(t) + np.tril(noise, -1))


def _near_identity(rng, batch=(2,), n=3):
    return rng.uniform(-1, 1, batch + (n, n)) + 3 * np.eye(n)


SPECS = {
    "_linalg_gemm": Spec([(2, 4, 3), (2, 4, 5), (2, 3, 5)], lambda nd, a, b, c: nd.linalg.gemm(
        a * a, b, c * c, transpose_a=True, alpha=0.7, beta=1.3)),
    "_linalg_gemm2": Spec([(3, 2, 4), (5, 2, 4)], lambda nd, a, b: nd.linalg.gemm2(
        a, b * b, transpose_b=True, alpha=-0.5, axis=0)),
    "_linalg_potrf": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.potrf(a),
                          sample=lambda rng: [_spd(rng)]),
    "_linalg_potri": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.potri(a),
                          sample=lambda rng: [_factor(rng)]),
    "_linalg_trsm": Spec([(2, 3, 3), (2, 4, 3)], lambda nd, a, b: nd.linalg.trsm(
        a, b * b, rightside=True, transpose=True, alpha=1.5),
        sample=lambda rng: [_factor(rng), rng.uniform(-1, 1, (2, 4, 3))]),
    "_linalg_trmm": Spec([(2, 3, 3), (2, 3, 4)], lambda nd, a, b: nd.linalg.trmm(
        a * a, b, lower=False, alpha=0.5),
        sample=lambda rng: [_factor(rng, lower=False), rng.uniform(-1, 1, (2, 3, 4))]),
    "_linalg_syrk": Spec([(2, 3, 4)], lambda nd, a: nd.linalg.syrk(a, alpha=0.5) *
                         nd.linalg.syrk(a, transpose=True).sum()),
    "_linalg_sumlogdiag": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.sumlogdiag(a),
                               [(0.5, 1.5)]),
    "_linalg_extractdiag": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.extractdiag(
        a * a, offset=1)),
    "_linalg_makediag": Spec([(2, 3)], lambda nd, a: nd.linalg.makediag(a * a, offset=-1)),
    "_linalg_inverse": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.inverse(a),
                            sample=lambda rng: [_near_identity(rng)]),
    "_linalg_det": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.det(a),
                        sample=lambda rng: [_near_identity(rng)]),
    "_linalg_slogdet": Spec([(2, 3, 3)], lambda nd, a: nd.linalg.slogdet(a)[1],
                            sample=lambda rng: [-_near_identity(rng)]),
    "_la_trian_mask": Spec([(2, 3, 3)], lambda nd, a: nd._internal._la_trian_mask(
        a * a, lower=False, diag=0.5)),
    "khatri_rao": Spec([(2, 3), (3, 3), (2, 3)], lambda nd, a, b, c: nd.khatri_rao(a, b * b, c)),
}
