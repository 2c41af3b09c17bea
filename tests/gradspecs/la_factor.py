"""Gradient specs: extracttrian and maketrian (mxlite/ops/la_factor.py), each linear and the
other's adjoint, composed with a square or cube so every order depends on the input; each
row covers a lower, an upper and an offset triangle. gelqf on full-rank matrices, syevd
on matrices with well-separated eigenvalues, both outputs of each."""
import numpy as np

from . import Spec


def _full_rank(rng):
    """(2, 2, 3) matrices well away from rank deficiency and from a pivot crossing zero
    (where LAPACK's sign convention flips a row of Q and L)."""
    return [rng.uniform(-0.5, 0.5, (2, 2, 3)) + 2 * np.eye(2, 3)]


def _separated(rng):
    """Symmetric lower triangles near diag(1, 3, 6) (eigenvalues well apart, each row of U
    led by one clear largest entry), noise in the upper triangle that syevd must ignore."""
    noise = rng.uniform(-0.3, 0.3, (2, 3, 3))
    return [np.diag([1.0, 3.0, 6.0]) + np.tril(noise) + np.triu(rng.uniform(-1, 1, (2, 3, 3)), 1)]


SPECS = {
    "_linalg_extracttrian": Spec([(2, 4, 4)], lambda nd, a: [
        nd.linalg.extracttrian(a * a, offset=-1), nd.linalg.extracttrian(a * a * a, lower=False),
        nd.linalg.extracttrian(a * a, offset=2)]),
    "_linalg_maketrian": Spec([(2, 6)], lambda nd, a: [
        nd.linalg.maketrian(a * a, offset=2), nd.linalg.maketrian(a * a * a, lower=False),
        nd.linalg.maketrian(a * a, offset=-1)]),
    "_linalg_syevd": Spec([(2, 3, 3)], lambda nd, a: list(nd.linalg.syevd(a)),
                          sample=_separated),
    "_linalg_gelqf": Spec([(2, 2, 3)], lambda nd, a: list(nd.linalg.gelqf(a)),
                          sample=_full_rank),
}
