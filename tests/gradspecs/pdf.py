"""Gradient specs: the densities of mxlite/ops/pdf.py, each row checking the density and the
log-density (is_log=True) together. Samples and parameters stay inside the support and away
from its edges (the gradient is 0 outside it by definition, a kink finite differences cannot
cross); the count distributions take fixed integer counts (their sample gets no gradient)."""

from . import Spec

S, P = (2, 3), (2,)


def _both(fn, *args):
    return [fn(*args), fn(*args, is_log=True)]


def _counts(nd):
    return nd.array([[0, 1, 3], [2, 0, 5]], dtype="float64")


SPECS = {
    "_random_pdf_uniform": Spec(
        [S, P, P], lambda nd, x, lo, hi: _both(nd.random_pdf_uniform, x, lo, hi),
        [(0.2, 0.8), (-0.8, 0.0), (1.0, 1.6)]),
    "_random_pdf_normal": Spec(
        [S, P, P], lambda nd, x, mu, sigma: _both(nd.random_pdf_normal, x, mu, sigma),
        [(-1.0, 1.0), (-0.5, 0.5), (0.6, 1.5)]),
    "_random_pdf_gamma": Spec(
        [S, P, P], lambda nd, x, a, b: _both(nd.random_pdf_gamma, x, a, b),
        [(0.5, 2.0), (0.6, 3.0), (0.5, 2.0)]),
    "_random_pdf_exponential": Spec(
        [S, P], lambda nd, x, lam: _both(nd.random_pdf_exponential, x, lam),
        [(0.1, 2.0), (0.5, 2.0)]),
    "_random_pdf_poisson": Spec(
        [P], lambda nd, lam: _both(nd.random_pdf_poisson, _counts(nd), lam), [(0.5, 3.0)]),
    "_random_pdf_negative_binomial": Spec(
        [P, P], lambda nd, k, p: _both(nd.random_pdf_negative_binomial, _counts(nd), k, p),
        [(0.5, 3.0), (0.2, 0.8)]),
    "_random_pdf_generalized_negative_binomial": Spec(
        [P, P], lambda nd, mu, alpha: _both(nd.random_pdf_generalized_negative_binomial,
                                            _counts(nd), mu, alpha),
        [(0.5, 2.0), (0.3, 1.5)]),
    "_random_pdf_dirichlet": Spec(
        [(2, 2, 3), (2, 3)], lambda nd, x, alpha: _both(nd.random_pdf_dirichlet, x, alpha),
        [(0.2, 0.9), (0.5, 2.0)]),
}
