"""f', f'' and f''' of every differentiable unary op against SymPy's symbolic derivatives.

Nested ``autograd.grad(create_graph=True)`` calls with random head gradients (a fifth of
them exact zeros) must equal v * f^(k)(x) computed from the closed form.
"""
import zlib

import numpy as np
import pytest
import sympy as sp

import mxlite as mx
from mxlite import autograd
from gradspecs.elemwise import _UNARY, _UNARY_DOMAINS

t = sp.Symbol("t", real=True)
CLOSED_FORMS = {
    "abs": sp.Abs(t), "negative": -t, "reciprocal": 1 / t, "square": t ** 2, "sqrt": sp.sqrt(t),
    "rsqrt": 1 / sp.sqrt(t), "cbrt": sp.cbrt(t), "rcbrt": 1 / sp.cbrt(t), "exp": sp.exp(t),
    "expm1": sp.exp(t) - 1, "log": sp.log(t), "log2": sp.log(t, 2), "log10": sp.log(t, 10),
    "log1p": sp.log(1 + t), "sin": sp.sin(t), "cos": sp.cos(t), "tan": sp.tan(t),
    "arcsin": sp.asin(t), "arccos": sp.acos(t), "arctan": sp.atan(t), "sinh": sp.sinh(t),
    "cosh": sp.cosh(t), "tanh": sp.tanh(t), "arcsinh": sp.asinh(t), "arccosh": sp.acosh(t),
    "arctanh": sp.atanh(t), "degrees": t * 180 / sp.pi, "radians": t * sp.pi / 180,
    "sigmoid": 1 / (1 + sp.exp(-t)), "relu": sp.Max(t, 0), "softsign": t / (1 + sp.Abs(t)),
    "erf": sp.erf(t), "erfinv": sp.erfinv(t), "gamma": sp.gamma(t), "gammaln": sp.loggamma(t),
}


def test_every_differentiable_unary_op_has_a_closed_form():
    assert sorted(CLOSED_FORMS) == sorted(_UNARY)


def _symbolic(name, order, xs):
    expr = sp.diff(CLOSED_FORMS[name], t, order)
    return np.array([float(sp.N(expr.subs(t, sp.Float(float(x), 30)), 20)) for x in xs])


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_first_three_derivatives(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across runs
    low, high = _UNARY_DOMAINS.get(name, (-1.0, 1.0))
    xs = rng.uniform(low, high, size=6)
    if name in ("abs", "relu", "softsign"):
        xs = np.where(np.abs(xs) < 0.05, 0.3, xs)      # stay off the kink at 0
    heads = [rng.standard_normal(6) * (rng.random(6) > 0.2) for _ in range(3)]
    x = mx.nd.array(xs, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = getattr(mx.nd, name)(x)
        derivs = []
        for k in range(3):
            # d/dx of (previous result * v_k), element-wise: v_k * f^(k+1)(x) times earlier v's
            v = mx.nd.array(heads[k], dtype="float64")
            (y,) = autograd.grad(y, x, head_grads=v, create_graph=True)
            derivs.append(y)
    scale = np.ones(6)
    for k in range(3):
        scale = scale * heads[k]
        expected = scale * _symbolic(name, k + 1, xs)
        np.testing.assert_allclose(derivs[k].asnumpy(), expected, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name}: derivative of order {k + 1}")
