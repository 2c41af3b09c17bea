"""Gradient specs: extracttrian and maketrian (mxlite/ops/la_factor.py), each linear and the
other's adjoint, composed with a square or cube so every order depends on the input; each
row covers a lower, an upper and an offset triangle."""
from . import Spec

SPECS = {
    "_linalg_extracttrian": Spec([(2, 4, 4)], lambda nd, a: [
        nd.linalg.extracttrian(a * a, offset=-1), nd.linalg.extracttrian(a * a * a, lower=False),
        nd.linalg.extracttrian(a * a, offset=2)]),
    "_linalg_maketrian": Spec([(2, 6)], lambda nd, a: [
        nd.linalg.maketrian(a * a, offset=2), nd.linalg.maketrian(a * a * a, lower=False),
        nd.linalg.maketrian(a * a, offset=-1)]),
}
