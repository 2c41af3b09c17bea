"""``mx.np.random``: NumPy's random sampling on mxlite devices.

Each distribution is a transform, with ``mx.np`` functions, of standard draws of the
registered samplers (``mxlite.numpy._random_draw``): the samples come from the device's
counter-based stream, so ``mx.np.random.seed`` (``mx.random.seed``) replays them, and they
are differentiable with respect to array parameters wherever the transform is (the
reparameterisation gradient): loc and scale of normal, lognormal, logistic, gumbel and
laplace, low and high of uniform, the scale of exponential, rayleigh and gamma, the shape
``a`` of weibull, pareto and power. Gamma draws are not differentiable in their shape
parameter, nor beta and chisquare in theirs (the samplers have no gradient).

Signatures are MXNet 1.9.1's (NumPy's, plus ``dtype``, ``ctx`` and ``out``); ``size=None``
gives the parameters' broadcast shape (a 0-d array for numbers). Without ``dtype`` the
samples have the default float (float32; float64 after ``npx.set_np(dtype=True)``), or
``out``'s dtype, whatever the parameters' dtype. The discrete samplers (``randint``,
``choice``, ``multinomial``, ``shuffle``) are in ``_random_discrete`` and
``multivariate_normal`` in ``_random_mvn``.

>>> mx.np.random.seed(7)
>>> x = mx.np.random.normal(0.0, 1.0, size=(2, 3))
>>> x.shape, x.dtype.name
((2, 3), 'float32')
>>> mx.np.random.seed(7)
>>> bool((mx.np.random.normal(0.0, 1.0, size=(2, 3)) == x).all())
True
"""
from ..random import seed as _seed
from . import _random_draw as _draw
from ._random_discrete import choice, multinomial, randint, shuffle
from ._random_mvn import multivariate_normal
from ._ufuncs import add, divide, exp, expm1, log, multiply, negative, sqrt, subtract

__all__ = ["seed", "rand", "randn", "uniform", "normal", "lognormal", "exponential", "gamma",
           "beta", "chisquare", "logistic", "gumbel", "laplace", "rayleigh", "weibull",
           "pareto", "power", "randint", "choice", "multinomial", "shuffle",
           "multivariate_normal"]


def seed(seed_state, ctx="all"):
    """Seed the generator of every device (``ctx='all'``) or of one Context: the same seed
    replays the same samples (``mx.random.seed``).

    >>> mx.np.random.seed(1); a = mx.np.random.uniform(size=3)
    >>> mx.np.random.seed(1); bool((mx.np.random.uniform(size=3) == a).all())
    True
    """
    _seed(seed_state, ctx)


def _affine(loc, scale, z):
    """loc + scale * z (numbers or arrays)."""
    return add(loc, multiply(scale, z))


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples uniform on [low, high) (on (high, low] when high < low, as NumPy).

    With number bounds (low <= high) the samples are ``mx.nd.random.uniform``'s: every one
    below high after rounding. With array bounds they are low + (high - low) * u, which
    may round up to high, as NumPy's, and differentiate in low and high (MXNet's gradient
    was zero).

    >>> x = mx.np.random.uniform(-1, 1, size=(1000,))
    >>> bool(((x >= -1) & (x < 1)).all())
    True
    """
    d = _draw.prepare("uniform", (("low", low, "real"), ("high", high, "real")), size, dtype,
                      ctx, out)
    low, high = d.values
    if d.numbers and low <= high:
        return d.finish(d.noise("uniform", d.dtype, low=low, high=high))
    return d.finish(_affine(low, subtract(high, low), d.noise("uniform")))


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2): loc + scale * z, differentiable in array loc and
    scale.

    >>> mx.np.random.normal(size=(2, 2), dtype='float64').dtype.name
    'float64'
    """
    d = _draw.prepare("normal", (("loc", loc, "real"), ("scale", scale, "nonneg")), size,
                      dtype, ctx, out)
    loc, scale = d.values
    if d.numbers:
        return d.finish(d.noise("normal", d.dtype, loc=loc, scale=scale))
    return d.finish(_affine(loc, scale, d.noise("normal")))


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    """exp of N(mean, sigma**2) samples (mean and sigma are the underlying normal's).

    >>> bool((mx.np.random.lognormal(0.0, 0.5, size=(100,)) > 0).all())
    True
    """
    d = _draw.prepare("lognormal", (("mean", mean, "real"), ("sigma", sigma, "nonneg")), size,
                      dtype, ctx, out)
    mean, sigma = d.values
    z = d.noise("normal", loc=mean, scale=sigma) if d.numbers else \
        _affine(mean, sigma, d.noise("normal"))
    return d.finish(exp(z))


def exponential(scale=1.0, size=None, ctx=None, out=None):
    """Samples from the exponential distribution of mean ``scale`` (NumPy's parameter;
    ``mx.nd.random.exponential`` takes the rate 1 / scale): scale * e, e ~ Exp(1).

    >>> bool((mx.np.random.exponential(2.0, size=(100,)) > 0).all())
    True
    """
    d = _draw.prepare("exponential", (("scale", scale, "nonneg"),), size, None, ctx, out)
    return d.finish(multiply(d.values[0], d.noise("exponential")))


def gamma(shape, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from the gamma distribution of shape ``shape`` and scale ``scale`` (mean
    shape * scale), both positive; differentiable in an array scale, not in shape.

    >>> mx.np.random.gamma(2.0, 0.5, size=(3,)).shape
    (3,)
    """
    d = _draw.prepare("gamma", (("shape", shape, "pos"), ("scale", scale, "pos")), size,
                      dtype, ctx, out)
    shape, scale = d.values
    if d.numbers:
        return d.finish(d.noise("gamma", d.dtype, alpha=shape, beta=scale))
    return d.finish(multiply(scale, d.gamma(shape)))


def beta(a, b, size=None, dtype=None, ctx=None, out=None):
    """Samples from the beta distribution on (0, 1): x / (x + y) for x ~ Gamma(a, 1),
    y ~ Gamma(b, 1) drawn in float64 (a, b > 0; not differentiable in a, b).

    >>> x = mx.np.random.beta(2.0, 3.0, size=(100,))
    >>> bool(((x > 0) & (x < 1)).all())
    True
    """
    d = _draw.prepare("beta", (("a", a, "pos"), ("b", b, "pos")), size, dtype, ctx, out,
                      work="float64")
    x, y = d.gamma(d.values[0]), d.gamma(d.values[1])
    return d.finish(divide(x, add(x, y)))


def chisquare(df, size=None, dtype=None, ctx=None, out=None):
    """Samples from the chi-square distribution with ``df`` > 0 degrees of freedom:
    Gamma(df / 2, scale 2). (MXNet 1.9.1 drew Gamma(df / 2, scale 1/2), a quarter of the
    right values.)

    >>> mx.np.random.chisquare(3.0, size=(2, 2)).shape
    (2, 2)
    """
    d = _draw.prepare("chisquare", (("df", df, "pos"),), size, dtype, ctx, out)
    return d.finish(multiply(2.0, d.gamma(multiply(0.5, d.values[0]))))


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the logistic distribution: loc + scale * log(e1 / e2) for independent
    e1, e2 ~ Exp(1) (never infinite).

    >>> mx.np.random.logistic(1.0, 2.0, size=(4,)).shape
    (4,)
    """
    d = _draw.prepare("logistic", (("loc", loc, "real"), ("scale", scale, "nonneg")), size,
                      None, ctx, out)
    ratio = divide(d.noise("exponential"), d.noise("exponential"))
    return d.finish(_affine(d.values[0], d.values[1], log(ratio)))


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Gumbel (maximum) distribution: loc - scale * log(e), e ~ Exp(1).

    >>> mx.np.random.gumbel(size=(4,)).shape
    (4,)
    """
    d = _draw.prepare("gumbel", (("loc", loc, "real"), ("scale", scale, "nonneg")), size,
                      None, ctx, out)
    return d.finish(subtract(d.values[0], multiply(d.values[1], log(d.noise("exponential")))))


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from the Laplace (double exponential) distribution: loc + scale * (e1 - e2)
    for independent e1, e2 ~ Exp(1). (Not in MXNet 1.9.1's ``mx.np.random``; NumPy's.)

    >>> mx.np.random.laplace(0.0, 1.0, size=(4,)).shape
    (4,)
    """
    d = _draw.prepare("laplace", (("loc", loc, "real"), ("scale", scale, "nonneg")), size,
                      dtype, ctx, out)
    diff = subtract(d.noise("exponential"), d.noise("exponential"))
    return d.finish(_affine(d.values[0], d.values[1], diff))


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Rayleigh distribution of mode ``scale``: scale * sqrt(2 e).

    >>> bool((mx.np.random.rayleigh(2.0, size=(10,)) >= 0).all())
    True
    """
    d = _draw.prepare("rayleigh", (("scale", scale, "nonneg"),), size, None, ctx, out)
    return d.finish(multiply(d.values[0], sqrt(multiply(2.0, d.noise("exponential")))))


def weibull(a, size=None, ctx=None, out=None):
    """Samples from the Weibull distribution of shape ``a`` > 0 (scale 1): e ** (1 / a).

    >>> mx.np.random.weibull(2.0, size=(3,)).shape
    (3,)
    """
    d = _draw.prepare("weibull", (("a", a, "pos"),), size, None, ctx, out)
    return d.finish(exp(divide(log(d.noise("exponential")), d.values[0])))


def pareto(a, size=None, ctx=None, out=None):
    """Samples from NumPy's Pareto II (Lomax) distribution of shape ``a`` > 0:
    exp(e / a) - 1, on [0, inf).

    >>> bool((mx.np.random.pareto(3.0, size=(10,)) >= 0).all())
    True
    """
    d = _draw.prepare("pareto", (("a", a, "pos"),), size, None, ctx, out)
    return d.finish(expm1(divide(d.noise("exponential"), d.values[0])))


def power(a, size=None, ctx=None, out=None):
    """Samples on [0, 1] with density a x**(a - 1), a > 0: exp(-e / a). (MXNet's
    gradient in ``a`` was zero; this one is the reparameterisation gradient.)

    >>> x = mx.np.random.power(3.0, size=(100,))
    >>> bool(((x >= 0) & (x <= 1)).all())
    True
    """
    d = _draw.prepare("power", (("a", a, "pos"),), size, None, ctx, out)
    return d.finish(exp(negative(divide(d.noise("exponential"), d.values[0]))))


def _dims(size):
    """``rand``'s positional dimensions as a size (one tuple or None passes through)."""
    if len(size) == 1 and (size[0] is None or isinstance(size[0], (tuple, list))):
        return size[0]
    return size


def rand(*size, **kwargs):
    """Uniform [0, 1) samples of shape ``size`` (``rand(2, 3)``; ``dtype``, ``ctx``,
    ``out`` as keywords).

    >>> mx.np.random.rand(2, 3).shape
    (2, 3)
    """
    return uniform(0.0, 1.0, size=_dims(size), **kwargs)


def randn(*size, **kwargs):
    """Standard normal samples of shape ``size`` (``randn(2, 3)``; ``dtype``, ``ctx``,
    ``out`` as keywords).

    >>> mx.np.random.randn(4).shape
    (4,)
    """
    return normal(0.0, 1.0, size=_dims(size), **kwargs)
