"""Probability densities of the samplers (random_pdf_*), differentiable in the sample and
the parameters.

``_random_pdf_<dist>`` (public ``random_pdf_<dist>``; ``mx.nd.random.pdf_<dist>`` through the
``_random_`` namespace routing) evaluates the density, or with ``is_log=True`` the
log-density, of ``sample`` under distributions whose parameters are arrays of one shape
``P``: ``sample`` has shape ``P + S`` (``S`` samples of each distribution; S may be empty)
and so has the output. Dirichlet's concentration ``alpha`` has shape ``P + (K,)``, its
sample ``P + S + (K,)`` and its output ``P + S`` (a 1-d sample of one vector gives shape
``(1,)``, as MXNet).

Compute: the log-density in float64 over tiles of about ``_BLOCK`` elements of the
``(distributions, samples)`` grid (bounded scratch memory whatever the sample size), cast
into the output; uniform's density, one value per distribution, is computed once per
distribution and written where each sample lies in its support. Elementary functions run
through the compute function the device has for ``log``, ``log1p``, ``exp`` and
``gammaln``, arithmetic through array methods NumPy and CuPy share, so one compute function
serves every device.

Gradients: d out / d theta = out * d log p / d theta (``is_log``: the head gradient times
d log p / d theta), each partial a graph of registered operators (``_polygamma`` gives the
digamma of gamma's, the negative binomials' and Dirichlet's partials and, through its own
gradient, every higher order), summed over the samples of a distribution with ``sum_to``.
Outside the support the density is constant (zero): the partials are evaluated at a point
inside it (``where``) and masked, so no NaN of, e.g., ``log`` of a negative sample reaches a
gradient of any order.

Differences from MXNet 1.9.1 (each also in the op's docstring): a sample outside the support
has density 0 (log-density -inf) — MXNet returned 1 / (high - low) for uniform and
``lam exp(-lam x)`` for exponential anywhere, NaN for gamma below 0, and for the count
distributions values at negative non-integers; the boundary cases where MXNet computed
``0 * log 0`` (gamma at 0 with alpha = 1, negative binomial at 0 with p = 1) give the
limit; generalized_negative_binomial with alpha = 0 is Poisson(mu) (MXNet: NaN); parameters
out of range are an MXNetError naming the first bad element (MXNet computed NaN or garbage).
"""
import math

import numpy as np

from ..base import FLOAT_DTYPES, op_error
from .registry import OpDef, Param, get_op, register

_BLOCK = 1 << 20          # float64 elements of one tile (8 MiB per temporary)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


# ---- elementary functions on the device --------------------------------------------------------
def _apply(rctx, name, x, out=None):
    """The compute function this device has for unary op ``name``, into ``out`` (``x``
    itself: in place; default a new array)."""
    op = get_op(name)
    out = rctx.xp.empty(x.shape, x.dtype) if out is None else out
    op.compute[rctx.kernels](rctx, [x], [out], op.default_attrs)
    return out


def _log(rctx, x):
    return _apply(rctx, "log", x)


def _lgamma(rctx, x):
    return _apply(rctx, "gammaln", x)


def _times_log(rctx, x, log_y):
    """x * log_y, 0 where x == 0 (the limit 0 * log 0 = 0 the densities take at the edge of
    their support), without forming 0 * -inf. The product alone where no x is 0 or no log_y
    is -inf (one of them is a parameter: the common case costs one pass over the small one,
    and at most one over the other)."""
    if not (bool((x == 0).any()) and bool((log_y == -np.inf).any())):
        return x * log_y
    shape = tuple(max(a, b) for a, b in zip(x.shape, log_y.shape))
    if log_y.shape != shape:
        log_y = rctx.xp.broadcast_to(log_y, shape).copy()
    log_y[(x == 0) & (log_y == -np.inf)] = 0.0
    return x * log_y


def _xlogy(rctx, x, y):
    return _times_log(rctx, x, _log(rctx, y))


def _off_half_line(x, value):
    """The mask of samples outside [0, inf), set to ``value`` in x (a float64 tile the caller
    owns) so that the logs and lgammas of the density stay finite; the caller gives them
    log-density -inf. NaN samples stay NaN."""
    off = (x < 0) | (x == np.inf)
    x[off] = value
    return off


# ---- uniform: one value per distribution, written straight into the output -------------------
_F32, _F64 = np.dtype("float32"), np.dtype("float64")


def _uniform_into(rctx, x, y, low, high, is_log):
    """The uniform densities of the sample tile ``x`` (r, c) written into ``y`` (its tile of
    the output, which may be ``x``); ``low``, ``high`` (r, 1) in the sample's dtype. The
    (log-)density is constant on the support: computed once per distribution in float64
    (0 - log(high - low), then exp) and cast, written where low <= x <= high, 0 (-inf)
    outside, NaN for a NaN sample. The comparisons read a float32 copy of a narrower sample
    (exact, and several times faster than NumPy's float16 comparisons)."""
    xp = rctx.xp
    lp = 0.0 - _log(rctx, high.astype(np.float64) - low.astype(np.float64))
    value = xp.empty(lp.shape, y.dtype)
    xp.cast_into(value, lp if is_log else _apply(rctx, "exp", lp, out=lp))
    xw = x if x.dtype in (_F32, _F64) else xp.converted(x, _F32)
    outside = (xw < low.astype(xw.dtype)) | (xw > high.astype(xw.dtype))
    nan = xw != xw
    y[...] = value                                     # x is read: y may be x from here
    y[outside] = -np.inf if is_log else 0.0
    y[nan] = np.nan


# ---- log-densities of float64 tiles: x (r, c), each parameter (r, 1) -------------------------
# x is a copy the density may overwrite: the arithmetic runs in place where it can (the same
# operations in the same order as the formulas, so the results are those of the formulas).


def _lp_normal(rctx, x, mu, sigma):
    z = x
    z -= mu
    z /= sigma
    z *= z
    z *= -0.5
    z -= _log(rctx, sigma)
    z -= _HALF_LOG_2PI
    return z


def _lp_gamma(rctx, x, alpha, beta):
    off = _off_half_line(x, 1.0)
    lp = _xlogy(rctx, alpha - 1.0, x)
    x *= beta
    lp -= x
    lp += alpha * _log(rctx, beta) - _lgamma(rctx, alpha)
    lp[off] = -np.inf
    return lp


def _lp_exponential(rctx, x, lam):
    off = x < 0
    x *= lam
    lp = _log(rctx, lam) - x
    lp[off] = -np.inf
    return lp


def _lp_poisson(rctx, x, lam):
    off = _off_half_line(x, 0.0)
    lp = _xlogy(rctx, x, lam)
    lp -= lam
    x += 1.0
    lp -= _apply(rctx, "gammaln", x, out=x)
    lp[off] = -np.inf
    return lp


def _nb(rctx, x, k, log_p, log_q):
    """lgamma(x + k) - lgamma(x + 1) - lgamma(k) + k log p + x log q for x >= 0 (x log q is 0
    at x = 0, also where q = 0)."""
    lp = x + k
    _apply(rctx, "gammaln", lp, out=lp)
    lp -= _lgamma(rctx, x + 1.0)
    lp -= _lgamma(rctx, k)
    lp += k * log_p
    lp += _times_log(rctx, x, log_q)
    return lp


def _lp_negative_binomial(rctx, x, k, p):
    off = _off_half_line(x, 0.0)
    lp = _nb(rctx, x, k, _log(rctx, p), _apply(rctx, "log1p", -p))
    lp[off] = -np.inf
    return lp


def _lp_generalized_negative_binomial(rctx, x, mu, alpha):
    """Negative binomial with k = 1 / alpha, p = 1 / (1 + mu alpha); Poisson(mu) where
    alpha = 0 (the limit). A tile of Poisson rows only is computed as Poisson alone."""
    off = _off_half_line(x, 0.0)
    poisson = alpha == 0
    rows = poisson.reshape(-1)
    if bool(rows.all()):
        lp = _lp_poisson(rctx, x, mu)
    else:
        a = alpha + poisson * 1.0                      # alpha = 0 rows: any positive value
        log1p_ma = _apply(rctx, "log1p", mu * a)
        lp = _nb(rctx, x, 1.0 / a, -log1p_ma, _log(rctx, mu * a) - log1p_ma)
        if bool(rows.any()):
            lp[rows] = _lp_poisson(rctx, x[rows], mu[rows])
    lp[off] = -np.inf
    return lp


def _sum_last(v):
    """``v.sum(axis=-1)``, bit for bit: NumPy adds fewer than 8 terms in order after a +0
    (so its sum of -0s is +0), which a few whole-array additions do several times faster
    than its reduction along a short last axis (one inner loop call per vector)."""
    if not 1 < v.shape[-1] < 8:
        return v.sum(axis=-1)
    total = v[..., 0] + v[..., 1]
    for k in range(2, v.shape[-1]):
        total += v[..., k]
    total += 0.0                # -0 to +0, every other sum unchanged
    return total


def _any_last(v):
    """``v.any(axis=-1)`` of a boolean array: ors of whole arrays along a short last axis (as
    ``_sum_last``, several times faster than NumPy's reduction there)."""
    if not 1 < v.shape[-1] < 8:
        return v.any(axis=-1)
    found = v[..., 0] | v[..., 1]
    for k in range(2, v.shape[-1]):
        found |= v[..., k]
    return found


def _lp_dirichlet(rctx, x, alpha):
    """x (r, c, K), alpha (r, 1, K) -> (r, c); a vector with a component outside [0, inf)
    has density 0."""
    off = _any_last(_off_half_line(x, 1.0))
    lp = _sum_last(_xlogy(rctx, alpha - 1.0, x))
    lp += _lgamma(rctx, alpha.sum(axis=-1)) - _lgamma(rctx, alpha).sum(axis=-1)
    lp[off] = -np.inf
    return lp


# ---- partial derivatives of log p, as graphs (F: mx.nd or mx.sym) ------------------------------
# Each takes the sample x (or its in-support stand-in) and the parameters b reshaped to
# broadcast against it, and returns [d/dx, d/db0, ...] (None: zero).
def _psi(F, x):
    return F._internal._polygamma(x, n=0)


def _d_uniform(F, x, low, high):
    inv = F.reciprocal(F.broadcast_sub(high, low))
    return [None, inv, F.negative(inv)]


def _d_normal(F, x, mu, sigma):
    diff = F.broadcast_sub(x, mu)
    var = F.square(sigma)
    d_mu = F.broadcast_div(diff, var)
    d_sigma = F.broadcast_div(F.broadcast_sub(F.square(diff), var), var * sigma)
    return [F.negative(d_mu), d_mu, d_sigma]


def _d_gamma(F, x, alpha, beta):
    d_x = F.broadcast_sub(F.broadcast_div(alpha - 1.0, x), beta)
    d_alpha = F.broadcast_add(F.log(x), F.log(beta) - _psi(F, alpha))
    d_beta = F.broadcast_sub(alpha / beta, x)
    return [d_x, d_alpha, d_beta]


def _d_exponential(F, x, lam):
    return [F.negative(lam), F.broadcast_sub(F.reciprocal(lam), x)]


def _d_poisson(F, x, lam):
    return [None, F.broadcast_div(x, lam) - 1.0]


def _d_negative_binomial(F, x, k, p):
    d_k = F.broadcast_add(_psi(F, F.broadcast_add(x, k)), F.log(p) - _psi(F, k))
    d_p = F.broadcast_sub(k / p, F.broadcast_div(x, 1.0 - p))
    return [None, d_k, d_p]


def _d_generalized_negative_binomial(F, x, mu, alpha):
    """With k = 1 / alpha, p = 1 / (1 + mu alpha):
    d/dmu = (x - mu) / (mu (1 + mu alpha)),
    d/dalpha = (log(1 + mu alpha) - psi(x + k) + psi(k)) / alpha^2
               + (x - mu) / (alpha (1 + mu alpha))."""
    den = mu * alpha + 1.0
    diff = F.broadcast_sub(x, mu)
    k = F.reciprocal(alpha)
    d_mu = F.broadcast_div(diff, mu * den)
    digammas = F.broadcast_sub(_psi(F, F.broadcast_add(x, k)), _psi(F, k))
    d_alpha = F.broadcast_add(
        F.broadcast_div(F.broadcast_sub(F.log1p(mu * alpha), digammas), F.square(alpha)),
        F.broadcast_div(diff, alpha * den))
    return [None, d_mu, d_alpha]


def _d_dirichlet(F, x, alpha):
    total = F.sum(alpha, axis=-1, keepdims=True)
    d_x = F.broadcast_div(alpha - 1.0, x)
    d_alpha = F.broadcast_add(F.log(x), F.broadcast_sub(_psi(F, total), _psi(F, alpha)))
    return [d_x, d_alpha]


# ---- the support, for the gradients ------------------------------------------------------------
# A support rule takes (F, x, b) and returns (x', mask): the sample with elements outside the
# support replaced by a point inside it, where a partial would not be finite there (log of a
# negative sample), and the 0/1 mask of the support (comparisons have no gradient).
def _uniform_support(F, x, b):
    low, high = b
    return x, F.broadcast_greater_equal(x, low) * F.broadcast_lesser_equal(x, high)


def _half_line(strict, anchor=None, vector=False):
    """The support x > 0 (``strict``) or x >= 0; ``anchor`` replaces samples outside it;
    ``vector``: every component of the last axis inside."""
    def support(F, x, b):
        inside = (F._internal._greater_scalar(x, scalar=0.0) if strict
                  else F._internal._greater_equal_scalar(x, scalar=0.0))
        if anchor is not None:
            x = F.where(inside, x, F.ones_like(x) * anchor)
        if vector:
            inside = F.min(inside, axis=-1, keepdims=True)
        return x, inside
    return support


# ---- the records ------------------------------------------------------------------------------
class Density:
    """One density: ``name``, its parameters (MXNet's input names), the log-density of a tile
    (``logpdf``; or ``into``, which writes a tile's density into the output itself), the
    partials of log p as graphs (``partials``), the parameter check
    (``check(*params) -> [(name, ok, want)]``), the support rule of the gradients (None: the
    whole line), whether the sample is ``discrete`` (no sample gradient)
    and whether the parameters are ``vector``s (Dirichlet)."""

    def __init__(self, name, params, logpdf, partials, check, support, doc, example,
                 discrete=False, vector=False, into=None):
        self.name, self.params, self.logpdf, self.partials = name, params, logpdf, partials
        self.into = into
        self.check, self.support, self.doc, self.example = check, support, doc, example
        self.discrete, self.vector = discrete, vector
        self.op = f"_random_pdf_{name}"


def _finite(v):
    return abs(v) < np.inf               # False for infinities and NaN


def _positive(v):
    return (v > 0) & (v < np.inf)


def _pos(name):
    return lambda v: [(name, _positive(v), "positive and finite")]


DENSITIES = [
    Density("uniform", ("low", "high"), None, _d_uniform,
            lambda low, high: [("low", _finite(low), "finite"), ("high", _finite(high), "finite"),
                               ("high", high > low, "greater than low")],
            _uniform_support,
            "uniform distributions on [low, high]: 1 / (high - low) inside the interval, 0 "
            "outside (MXNet 1.9.1 returned 1 / (high - low) for any sample). The sample "
            "gets no gradient (the density is flat in it)",
            (("[[1.0, 3.0, 5.0]]", "[0.0]", "[4.0]"), "[0.25, 0.25, 0.0]"),
            into=_uniform_into),
    Density("normal", ("mu", "sigma"), _lp_normal, _d_normal,
            lambda mu, sigma: [("mu", _finite(mu), "finite"),
                               ("sigma", _positive(sigma), "positive and finite")],
            None,
            "normal distributions with mean mu and standard deviation sigma",
            (("[[0.0, 1.0]]", "[0.0]", "[1.0]"), "[0.3989, 0.242]")),
    Density("gamma", ("alpha", "beta"), _lp_gamma, _d_gamma,
            lambda alpha, beta: _pos("alpha")(alpha) + _pos("beta")(beta),
            _half_line(True, 1.0),
            "gamma distributions with shape alpha and rate beta (density beta^alpha x^(alpha "
            "- 1) exp(-beta x) / Gamma(alpha); note the samplers' beta is a scale), 0 below x "
            "= 0 (MXNet 1.9.1: NaN), at x = 0 the limit (beta for alpha = 1; MXNet: NaN). "
            "The gradient at x = 0 is taken as 0",
            (("[[1.0, 2.0]]", "[2.0]", "[1.0]"), "[0.3679, 0.2707]")),
    Density("exponential", ("lam",), _lp_exponential, _d_exponential, _pos("lam"),
            _half_line(False),
            "exponential distributions with rate lam: lam exp(-lam x) for x >= 0, 0 below "
            "(MXNet 1.9.1 returned lam exp(-lam x) for negative samples too)",
            (("[[0.0, 1.0]]", "[2.0]"), "[2.0, 0.2707]")),
    Density("poisson", ("lam",), _lp_poisson, _d_poisson, _pos("lam"),
            _half_line(False),
            "Poisson distributions with mean lam: lam^x exp(-lam) / x! for counts x >= 0 "
            "(lgamma(x + 1) for x!, so a non-integer x >= 0 gets the smooth extension, as in "
            "MXNet), 0 for x < 0 (MXNet 1.9.1: the extension there too, positive at "
            "negative non-integers). Counts get no gradient",
            (("[[0.0, 2.0]]", "[1.0]"), "[0.3679, 0.1839]"), discrete=True),
    Density("negative_binomial", ("k", "p"), _lp_negative_binomial, _d_negative_binomial,
            lambda k, p: _pos("k")(k) + [("p", (p > 0) & (p <= 1), "in (0, 1]")],
            _half_line(False, 0.0),
            "negative binomial distributions: the number of failures x before the k-th "
            "success, success probability p (Gamma(x + k) / (x! Gamma(k)) p^k (1 - p)^x, the "
            "samplers' parameterisation; MXNet's documentation called p the failure "
            "probability), 0 for x < 0; non-integer x >= 0 as for poisson. Counts get no "
            "gradient",
            (("[[0.0, 1.0]]", "[2.0]", "[0.5]"), "[0.25, 0.25]"),
            discrete=True),
    Density("generalized_negative_binomial", ("mu", "alpha"),
            _lp_generalized_negative_binomial, _d_generalized_negative_binomial,
            lambda mu, alpha: _pos("mu")(mu) + [
                ("alpha", _finite(alpha) & (alpha >= 0), "non-negative and finite")],
            _half_line(False, 0.0),
            "negative binomial distributions with mean mu and dispersion alpha (variance mu "
            "+ alpha mu^2: k = 1 / alpha, p = 1 / (1 + mu alpha)); alpha = 0 is Poisson(mu), "
            "the limit (MXNet 1.9.1: NaN), whose alpha-gradient is not finite. 0 for x < 0. "
            "Counts get no gradient",
            (("[[0.0, 1.0]]", "[2.0]", "[0.5]"), "[0.25, 0.25]"),
            discrete=True),
    Density("dirichlet", ("alpha",), _lp_dirichlet, _d_dirichlet, _pos("alpha"),
            _half_line(True, 1.0, vector=True),
            "Dirichlet distributions with concentration alpha (P + (K,)) of sample vectors "
            "(P + S + (K,)): Gamma(sum alpha) / prod Gamma(alpha_j) prod x_j^(alpha_j - 1), "
            "evaluated for any vector with non-negative components (as MXNet, the sum of a "
            "sample is not checked to be 1), 0 when a component is negative (MXNet 1.9.1: "
            "NaN). The gradient at a zero component is taken as 0",
            (("[[0.25, 0.75]]", "[2.0, 3.0]"), "[1.6875]"), vector=True),
]


# ---- parameter checks, shapes, dtypes ---------------------------------------------------------
def _first_bad(xp, ok, values):
    """(position, value) of the first False of ``ok`` (host copies, for the message)."""
    j = int(np.flatnonzero(~np.asarray(xp.to_host(ok)))[0])
    return j, float(np.asarray(xp.to_host(values))[j])


def _check_params(d, xp, params):
    """MXNetError naming the first parameter element out of range (checked in blocks on the
    device: no float64 copy of a whole parameter array)."""
    flat = [p.reshape(-1) for p in params]
    n = flat[0].size
    for lo in range(0, n, _BLOCK):
        vs = [f[lo:lo + _BLOCK].astype(np.float64) for f in flat]
        for name, ok, want in d.check(*vs):
            if not bool(ok.all()):
                j, v = _first_bad(xp, ok, vs[d.params.index(name)])
                raise op_error(d.op, f"{name} must be {want}; element {lo + j} of {name} is "
                               f"{v!r}")


def _shape_text(d, shapes):
    return ", ".join(f"{n} {tuple(s)}" for n, s in zip(("sample",) + d.params, shapes))


def _infer_shape(d):
    def infer_shape(shapes, attrs):
        sample, *params = (tuple(s) for s in shapes)
        if any(p != params[0] for p in params):
            raise op_error(d.op, f"the parameters must have one shape, got "
                           f"{_shape_text(d, shapes)}")
        p = params[0]
        if not p:
            raise op_error(d.op, f"the parameters must have at least 1 dimension, got "
                           f"{_shape_text(d, shapes)}")
        if d.vector:
            if len(sample) < len(p) or sample[:len(p) - 1] != p[:-1] or sample[-1] != p[-1]:
                raise op_error(d.op, f"sample must have shape alpha.shape[:-1] + S + "
                               f"(alpha.shape[-1],) (S any samples per distribution), got "
                               f"{_shape_text(d, shapes)}")
            if p[-1] < 1:
                raise op_error(d.op, f"alpha's last axis (the dimension K of the sample "
                               f"vectors) must be at least 1, got {_shape_text(d, shapes)}")
            return [sample[:-1] if len(sample) > 1 else (1,)]
        if sample[:len(p)] != p:
            raise op_error(d.op, f"sample must have the parameters' shape as its leading "
                           f"dimensions (parameters P, sample P + S), got "
                           f"{_shape_text(d, shapes)}")
        return [sample]
    return infer_shape


def _infer_type(d):
    def infer_type(dtypes, attrs):
        dts = [np.dtype(t) for t in dtypes]
        if any(dt not in FLOAT_DTYPES for dt in dts) or len(set(dts)) > 1:
            raise op_error(d.op, "sample and the parameters must share one float dtype, got "
                           + ", ".join(f"{n} {dt}" for n, dt in zip(("sample",) + d.params,
                                                                     dts)))
        return [dts[0]]
    return infer_type


# ---- compute ----------------------------------------------------------------------------------
def _tiles(rows, cols, width):
    """(row slice, column slice) tiles of a (rows, cols) grid of cells of ``width`` elements,
    each about ``_BLOCK`` elements: several whole rows, or a run of one row."""
    per = max(1, _BLOCK // width)
    if cols >= per:
        for r in range(rows):
            for c in range(0, cols, per):
                yield slice(r, r + 1), slice(c, min(cols, c + per))
    else:
        step = per // cols
        for r in range(0, rows, step):
            yield slice(r, min(rows, r + step)), slice(0, cols)


def _owned_f64(rctx, tile):
    """A float64 copy of ``tile`` that the densities may write into."""
    return tile.astype(np.float64)


def _compute(d):
    def compute(rctx, ins, outs, attrs):
        sample, params, out = ins[0], ins[1:], outs[0]
        _check_params(d, rctx.xp, params)
        if out.size == 0:
            return
        k = params[0].shape[-1] if d.vector else 1
        rows = params[0].size // k
        cols = out.size // rows
        x = sample.reshape((rows, cols) + ((k,) if d.vector else ()))
        p = [q.reshape((rows, 1) + ((k,) if d.vector else ())) for q in params]
        y = out.reshape(rows, cols)
        for rs, cs in _tiles(rows, cols, k):
            if d.into is not None:
                d.into(rctx, x[rs, cs], y[rs, cs], *(q[rs] for q in p), attrs.is_log)
                continue
            lp = d.logpdf(rctx, _owned_f64(rctx, x[rs, cs]),
                          *(q[rs].astype(np.float64) for q in p))
            if not attrs.is_log:
                _apply(rctx, "exp", lp, out=lp)
            rctx.xp.cast_into(y[rs, cs], lp)
    return compute


# ---- gradient ---------------------------------------------------------------------------------
def _gradient(d):
    def gradient(F, node, ograds):
        sample, params = node.inputs[0], node.inputs[1:]
        x_shape, p_shape = tuple(node.input_shapes[0]), tuple(node.input_shapes[1])
        if d.vector:       # alpha (P, K) against sample (P, S, K); the head (P, S) -> (P, S, 1)
            view = p_shape[:-1] + (1,) * (len(x_shape) - len(p_shape)) + p_shape[-1:]
        else:
            view = p_shape + (1,) * (len(x_shape) - len(p_shape))
        b = [F.reshape(q, shape=view) for q in params]
        scale = ograds[0] if node.attrs.is_log else ograds[0] * node.outputs[0]
        if d.vector:
            scale = F.reshape(scale, shape=x_shape[:-1] + (1,))
        x, inside = d.support(F, sample, b) if d.support else (sample, None)
        if inside is not None:
            scale = F.broadcast_mul(scale, inside)
        partials = d.partials(F, x, *b)
        grads = []
        for i, (want, part) in enumerate(zip(node.wants, partials)):
            if not want:
                grads.append(None)
            elif part is None or (i == 0 and d.discrete):
                grads.append(F.zeros_like(node.inputs[i]))
            elif i == 0:
                grads.append(F.broadcast_mul(scale, part))
            else:
                full = F.broadcast_mul(scale, part)
                grads.append(F.reshape(F.sum_to(full, shape=view), shape=p_shape))
        return grads
    gradient.__doc__ = (f"d {d.op} / d theta = out * d log p / d theta (is_log: the head "
                        f"gradient times d log p / d theta), the partials of "
                        f"_d_{d.name}, 0 outside the support, summed over each "
                        f"distribution's samples")
    return gradient


def _doc(d):
    args, values = d.example
    arrays = ", ".join(f"mx.nd.array({v})" for v in args)
    return f"""The density (``is_log``: log-density) of ``sample`` under {d.doc}.

Inputs: ``sample`` and {', '.join(f'``{n}``' for n in d.params)} (one float dtype; the
parameters of one shape P, the sample {'P[:-1] + S + (K,), the output P[:-1] + S' if d.vector
else 'P + S, the output as the sample'}: S samples of each distribution). A parameter out of
range is an MXNetError naming its first bad element. The gradient reaches the
{'parameters' if d.discrete else 'sample and the parameters'}, at any order.

>>> y = mx.nd.random_pdf_{d.name}({arrays})
>>> [round(float(v), 4) for v in y.asnumpy().ravel()]
{values}
"""


def _register(d):
    register(OpDef(
        d.op, inputs=("sample",) + d.params, aliases=(f"random_pdf_{d.name}",),
        params=(Param("is_log", "bool", False, "compute the log-density instead of the "
                      "density"),),
        infer_shape=_infer_shape(d), infer_type=_infer_type(d),
        compute={"cpu": _compute(d)}, gradient=_gradient(d),
        grad_needs=("inputs", "outputs"), elementwise=not d.vector, doc=_doc(d)))


for _d in DENSITIES:
    _register(_d)


HOST_CODE = {
    "_first_bad": "the position and value of a bad parameter element, for the error message",
}
