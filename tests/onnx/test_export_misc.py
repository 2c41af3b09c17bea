"""ONNX export of the densities with log-gamma terms (``_random_pdf_gamma``, ``poisson``, the
negative binomials, ``dirichlet``) and of the operators of ``translations/misc.py``, on
one-op graphs: exported, checked (full check), run in onnxruntime and compared with
``mx.nd``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run

rng = np.random.default_rng(11)


def check(fn, inputs, rtol, tmp_path, atol=None, **export):
    """``fn`` built with mx.sym, exported and run, against ``fn`` with mx.nd (infinities
    where mxlite has them)."""
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = export_and_run(out, {}, dict(zip(names, inputs)), tmp_path, **export)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 1e-3 if atol is None else atol)
    return got


# ---- densities -------------------------------------------------------------------------------
# samples with points outside the support (negative, +inf) and at its edge (0)
COUNTS = np.array([[-1.0, 0.0, 1.0, 2.0, 7.0, np.inf], [0.0, 0.5, 3.0, 10.0, 40.0, -0.5]])
POSITIVE = np.array([[-1.0, 0.0, 0.3, 1.0, 4.0, np.inf], [0.0, 0.01, 0.7, 2.5, 9.0, -2.0]])
DENSITY_CASES = [
    # name, parameters, sample: 1-d parameters with 2-d samples, 2-d with 3-d
    ("gamma", [[1.0, 0.3], [2.0, 0.5]], POSITIVE),
    ("gamma", [[[4.0], [0.8]], [[1.5], [3.0]]], POSITIVE[:, None, :]),
    ("poisson", [[1e-3, 7.5]], COUNTS),
    ("poisson", [[[2.0, 30.0]]], COUNTS[None]),
    ("negative_binomial", [[2.0, 0.7], [0.5, 1.0]], COUNTS),
    ("negative_binomial", [[[3.0], [1.5]], [[1e-6], [0.25]]], COUNTS[:, None, :]),
    ("generalized_negative_binomial", [[2.0, 3.0], [0.0, 0.4]], COUNTS),
    ("generalized_negative_binomial", [[[0.5], [12.0]], [[2.0], [1e-3]]], COUNTS[:, None, :]),
]


def _tolerance(dtype):
    return {"float16": 2e-3, "float32": 2e-6, "float64": 1e-11}[dtype]


@pytest.mark.parametrize("name,params,sample", DENSITY_CASES,
                         ids=[f"{c[0]}_{i}" for i, c in enumerate(DENSITY_CASES)])
@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_pdf(name, params, sample, is_log, dtype, tmp_path):
    inputs = [np.asarray(sample, dtype)] + [np.asarray(p, dtype) for p in params]
    got = check(lambda F, s, *p: getattr(F._internal, f"_random_pdf_{name}")(
        s, *p, is_log=is_log), inputs, _tolerance(dtype), tmp_path)
    # outside the support: density 0, log-density -inf
    outside = (inputs[0] < 0) | np.isinf(inputs[0])
    outside = np.broadcast_to(outside, got[0].shape)
    assert (got[0][outside] == (-np.inf if is_log else 0)).all()


def test_pdf_poisson_against_the_closed_form(tmp_path):
    """lam^x exp(-lam) / x! at integer counts, independently of mxlite."""
    import math
    lam = np.array([0.5, 12.0])
    x = np.array([[0.0, 1.0, 3.0, 9.0], [0.0, 5.0, 12.0, 30.0]])
    (got,) = check(lambda F, s, p: F._internal._random_pdf_poisson(s, p), [x, lam], 1e-11,
                   tmp_path)
    want = [[lam[i] ** k * math.exp(-lam[i]) / math.factorial(int(k)) for k in row]
            for i, row in enumerate(x)]
    np.testing.assert_allclose(got, want, rtol=1e-11)


def test_pdf_generalized_negative_binomial_keeps_log1p_precision(tmp_path):
    """At x = 0 the log-density is -k log(1 + mu alpha), k = 1 / alpha: for mu = 1e-3,
    alpha = 1e-6, -1e6 log1p(1e-9), where log(1 + 1e-9)'s rounding (1e-16) times k would
    be a 1e-7 relative error."""
    import math
    mu, alpha = np.array([1e-3, 2.0]), np.array([1e-6, 1.0])
    x = np.array([[0.0], [0.0]])
    (got,) = check(lambda F, s, m, a: F._internal._random_pdf_generalized_negative_binomial(
        s, m, a, is_log=True), [x, mu, alpha], 1e-11, tmp_path)
    np.testing.assert_allclose(got[:, 0], [-1e6 * math.log1p(1e-9), -math.log(3.0)],
                               rtol=1e-11)


@pytest.mark.parametrize("alpha_shape,sample_shape", [((3,), (3,)), ((3,), (5, 3)),
                                                      ((2, 4), (2, 3, 4)),
                                                      ((2, 2), (2, 2, 3, 2))])
@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdf_dirichlet(alpha_shape, sample_shape, is_log, dtype, tmp_path):
    alpha = rng.uniform(0.3, 4.0, size=alpha_shape)
    k = alpha_shape[-1]
    sample = rng.dirichlet(np.ones(k), size=sample_shape[:-1]).reshape(sample_shape)
    if len(sample_shape) > 1:
        sample.reshape(-1, k)[0, 0] = -0.1          # outside: density 0
        sample.reshape(-1, k)[-1, -1] = 0.0         # a zero component
    check(lambda F, s, a: F._internal._random_pdf_dirichlet(s, a, is_log=is_log),
          [sample.astype(dtype), alpha.astype(dtype)], _tolerance(dtype), tmp_path)
