"""``mx.npx.random``: MXNet's extensions of ``mx.np.random``: ``seed``, ``bernoulli`` and the
batch samplers ``uniform_n`` / ``normal_n`` (``batch_shape`` in front of the parameters'
broadcast shape). Same generator and machinery as ``mx.np.random``
(``mxlite.numpy._random_draw``).

>>> mx.npx.random.normal_n(mx.np.zeros((3,)), 1.0, batch_shape=(2,)).shape
(2, 3)
"""
import math

from ..base import op_error
from ..numpy import _random_draw as _draw
from ..numpy import _front
from ..numpy._ufuncs import add, less, multiply, subtract
from ..random import seed as _seed

__all__ = ["seed", "bernoulli", "uniform_n", "normal_n"]


def seed(seed, ctx="all"):  # noqa: A002  (MXNet's argument name)
    """Seed the generator of every device (``ctx='all'``) or of one Context
    (``mx.random.seed``).

    >>> mx.npx.random.seed(3); a = mx.np.random.normal(size=2)
    >>> mx.npx.random.seed(3); bool((mx.np.random.normal(size=2) == a).all())
    True
    """
    _seed(seed, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Samples that are 1 with probability ``prob`` (in [0, 1]) or sigmoid(``logit``), else
    0; give exactly one of the two. ``dtype`` (default: the default float) may be any
    dtype, bool included. Not differentiable.

    >>> x = mx.npx.random.bernoulli(prob=0.3, size=(1000,), dtype='bool')
    >>> x.dtype.name, 200 < int(x.sum()) < 400
    ('bool', True)
    """
    fn = "npx.random.bernoulli"
    if (prob is None) == (logit is None):
        raise op_error(fn, f"give exactly one of prob and logit, got prob={prob!r}, "
                       f"logit={logit!r}")
    value, rule = (prob, "prob") if logit is None else (logit, "real")
    name = "prob" if logit is None else "logit"
    d = _draw.prepare(fn, ((name, value, rule),), size, dtype, ctx, out, float_out=False)
    p = d.values[0]
    if logit is not None:
        p = _front.call("sigmoid", [p]) if not _draw.is_number(p) else _sigmoid(p)
    hit = less(d.noise("uniform"), p)
    return d.finish(hit)


def _sigmoid(x):
    """The logistic function of a number, without overflow."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples uniform on [low, high) of shape ``batch_shape + broadcast(low, high)``.

    >>> mx.npx.random.uniform_n(0.0, mx.np.ones((2,)), batch_shape=3).shape
    (3, 2)
    """
    d = _draw.prepare("npx.random.uniform_n", (("low", low, "real"), ("high", high, "real")),
                      None, dtype, ctx, None, batch=batch_shape or ())
    low, high = d.values
    if d.numbers and low <= high:
        return d.finish(d.noise("uniform", d.dtype, low=low, high=high))
    return d.finish(add(low, multiply(subtract(high, low), d.noise("uniform"))))


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Samples from N(loc, scale**2) of shape ``batch_shape + broadcast(loc, scale)``,
    differentiable in array loc and scale.

    >>> mx.npx.random.normal_n(0.0, 1.0, batch_shape=(4,)).shape
    (4,)
    """
    d = _draw.prepare("npx.random.normal_n", (("loc", loc, "real"), ("scale", scale, "nonneg")),
                      None, dtype, ctx, None, batch=batch_shape or ())
    loc, scale = d.values
    if d.numbers:
        return d.finish(d.noise("normal", d.dtype, loc=loc, scale=scale))
    return d.finish(add(loc, multiply(scale, d.noise("normal"))))
