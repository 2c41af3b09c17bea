"""``mx.random``: seeding, and shortcuts to the ``mx.nd.random`` sampling operators.

``mx.random.seed(n)`` seeds every device (or one, with ``ctx=``); a seed replays the same
sequence of random operator calls, on any number of threads (the generator is
counter-based, so a future GPU backend can give the same numbers). The sampling functions here forward to ``mx.nd.random``; as in MXNet, ``shape``
and ``dtype`` default to ``out``'s when ``out`` is given (else to ``(1,)`` and the
operator's default dtype).

>>> mx.random.seed(42)
>>> a = mx.random.uniform(shape=(3,)).asnumpy()
>>> mx.random.seed(42)
>>> bool((mx.random.uniform(shape=(3,)).asnumpy() == a).all())
True
"""
import numbers

from .base import MXNetError
from .ops.random import DEFAULT_SEED, get_state
from .ops.random import seed as _seed

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle",
           "DEFAULT_SEED", "get_state"]


def seed(seed_state, ctx="all"):
    """Seed the random number generators of all devices (``ctx='all'``) or of one Context.

    ``seed_state`` is an integer (taken modulo 2^64). Every later random operator call
    draws from the stream (seed, number of calls since the seed) of its device.
    """
    _seed(seed_state, ctx)


def _ops():
    from . import ndarray       # late: mxlite.ndarray imports the operator families
    return ndarray.random


def _shape(shape, out):
    if shape is not None:
        return shape
    return out.shape if out is not None else (1,)


def _arrays(fn_name, **params):
    """True when the parameters are NDArrays (one distribution per element: nd.random
    dispatches to ``_sample_<fn_name>``), False when they are numbers."""
    from .ndarray import NDArray
    arrays = [isinstance(v, NDArray) for v in params.values()]
    if any(arrays):
        return True
    for name, value in params.items():
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise MXNetError(f"random.{fn_name}: {name} must be a number or an NDArray, got "
                             f"{type(value).__name__}")
    return False


def _call(fn_name, params, shape, dtype, ctx, out):
    if _arrays(fn_name, **params):
        shape = () if shape is None else shape      # samples per element's distribution
    kwargs = dict(params, shape=_shape(shape, out), out=out)
    if dtype is None and out is not None:
        dtype = out.dtype           # as MXNet, the output array decides the dtype
    if dtype is not None:
        kwargs["dtype"] = dtype
    if ctx is not None:
        kwargs["ctx"] = ctx
    return getattr(_ops(), fn_name)(**kwargs)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None):
    """Samples uniform on [low, high) (``mx.nd.random.uniform``)."""
    return _call("uniform", dict(low=low, high=high), shape, dtype, ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2) (``mx.nd.random.normal``)."""
    return _call("normal", dict(loc=loc, scale=scale), shape, dtype, ctx, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None):
    """Normal samples of the shape given as positional arguments: ``randn(2, 3)``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape if shape else None, dtype, ctx, out)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None):
    """Integers uniform on [low, high), int32 by default (``mx.nd.random.randint``)."""
    return _call("randint", dict(low=low, high=high), shape, dtype, ctx, out)


def exponential(lam=1, shape=None, dtype=None, ctx=None, out=None):
    """Exponential samples with rate ``lam`` (mean 1 / lam), as ``mx.nd.random.exponential``.

    MXNet's Python ``exponential`` took ``scale`` = 1 / lam; pass ``lam=1 / scale``.
    """
    return _call("exponential", dict(lam=lam), shape, dtype, ctx, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None):
    """Gamma samples with shape ``alpha`` and scale ``beta`` (``mx.nd.random.gamma``)."""
    return _call("gamma", dict(alpha=alpha, beta=beta), shape, dtype, ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None):
    """Poisson samples with mean ``lam``, as floats (``mx.nd.random.poisson``)."""
    return _call("poisson", dict(lam=lam), shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None):
    """Failures before the k-th success, success probability p (``mx.nd.random``)."""
    return _call("negative_binomial", dict(k=k, p=p), shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None):
    """Negative binomial with mean ``mu`` and dispersion ``alpha`` (``mx.nd.random``)."""
    return _call("generalized_negative_binomial", dict(mu=mu, alpha=alpha), shape, dtype, ctx,
                 out)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32"):
    """Category indices drawn from the rows of ``data`` (``mx.nd.random.multinomial``)."""
    return _ops().multinomial(data, shape=() if shape is None else shape, get_prob=get_prob,
                              dtype=dtype, out=out)


def shuffle(data, out=None):
    """A copy of ``data`` with its first axis randomly permuted (``mx.nd.random.shuffle``)."""
    return _ops().shuffle(data, out=out)


def _install_nd_randn():
    """MXNet also offered ``mx.nd.random.randn``, a Python function rather than an operator,
    so the registry cannot generate it: attach this one to the generated namespace, if it
    exists already (it does once ``mxlite`` is imported; nothing is imported from here)."""
    import sys
    nd_random = sys.modules.get("mxlite.ndarray.random")
    if nd_random is not None and not hasattr(nd_random, "randn"):
        nd_random.randn = randn


_install_nd_randn()
