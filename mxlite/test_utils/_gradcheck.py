"""mxlite's own gradient checker (not in MXNet's ``mx.test_utils``).

``check_grads`` is the gradient checker every differentiable operator must pass: finite
differences in float64 along random directions, recursively to any order.
"""
import numpy as np

from .. import autograd
from ..base import MXNetError
from ..ndarray import NDArray, array


class GradientCheckError(AssertionError):
    """An analytic gradient disagreed with finite differences; the message names the order."""


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _vdot(xs, ys):
    return sum(float(np.vdot(x.asnumpy(), y.asnumpy())) for x, y in zip(xs, ys))


def _leaf(x):
    """A fresh float64 variable holding ``x``'s values, on ``x``'s device."""
    ctx = x.context if isinstance(x, NDArray) else None
    v = array(x.asnumpy() if isinstance(x, NDArray) else x, ctx=ctx, dtype="float64")
    v.attach_grad()
    return v


def _differentiable(xs):
    return [x if x._node is not None else _leaf(x) for x in xs]


def _random_like(rng, x, zero_fraction):
    """A random head gradient for ``x``: a fraction ``zero_fraction`` of its elements exact
    zeros, but never all of them (an all-zero head gradient would make the check vacuous:
    any gradient would pass), and none for a single element."""
    values = rng.standard_normal(x.shape)
    if zero_fraction and values.size > 1:
        zeros = rng.random(x.shape) < zero_fraction
        if zeros.all():
            zeros.flat[rng.integers(values.size)] = False
        values[zeros] = 0.0
    return array(values, ctx=x.context, dtype="float64")


def _check_level(f, args, order, level, eps, rtol, atol, rng, name, zero_fraction):
    xs = [_leaf(a) for a in args]
    with autograd.record():
        outs = _as_list(f(*xs))
    vs = [_random_like(rng, o, zero_fraction) for o in outs]
    us = [array(rng.standard_normal(x.shape), ctx=x.context, dtype="float64") for x in xs]
    recorded = [(o, v) for o, v in zip(outs, vs) if o._node is not None]
    if recorded:
        grads = autograd.grad([o for o, _ in recorded], xs, head_grads=[v for _, v in recorded],
                              create_graph=level < order, retain_graph=True)
    else:
        grads = [array(np.zeros(x.shape), ctx=x.context, dtype="float64") for x in xs]
    analytic = _vdot(us, grads)
    with autograd.pause():
        plus = _as_list(f(*[x.detach() + eps * u for x, u in zip(xs, us)]))
        minus = _as_list(f(*[x.detach() - eps * u for x, u in zip(xs, us)]))
    numeric = _vdot(vs, [(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    if not abs(analytic - numeric) <= atol + rtol * max(abs(analytic), abs(numeric)):
        raise GradientCheckError(
            f"{name}: order {level} gradient is wrong: <u, VJP(v)> = {analytic!r} but finite "
            f"differences give {numeric!r} (eps={eps}, rtol={rtol}, atol={atol})")
    if level >= order:
        return
    n_args = len(args)

    def vjp(*args_and_heads):
        """The order-``level`` VJP as a function of the inputs and the head gradients."""
        inner = _differentiable(list(args_and_heads[:n_args]))
        heads = list(args_and_heads[n_args:])
        with autograd.record():
            outs = _as_list(f(*inner))
            pairs = [(o, v) for o, v in zip(outs, heads) if o._node is not None]
            if not pairs:
                return [x * 0 for x in inner]
            return _as_list(autograd.grad([o for o, _ in pairs], inner,
                                          head_grads=[v for _, v in pairs], create_graph=True))

    _check_level(vjp, [x.detach() for x in xs] + [v.detach() for v in vs], order, level + 1,
                 eps, rtol, atol, rng, name, zero_fraction)


def check_grads(f, args, order=2, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0, name=None,
                zero_fraction=0.2):
    """Check the gradients of ``f`` at ``args`` up to ``order`` against finite differences.

    At each order k, with random head gradient v (a fraction ``zero_fraction`` of it exact
    zeros) and random direction u, compare ``<u, VJP_k(v)>`` with
    ``<v, (f_k(x + eps u) - f_k(x - eps u)) / 2 eps>`` in float64. Order k+1 checks the
    order-k VJP as a function of the inputs *and* the head gradient. Raises
    ``GradientCheckError`` naming ``name`` and the failing order.

    >>> import mxlite as mx
    >>> check_grads(lambda x: mx.nd.sin(x) * x, [mx.nd.array([0.5, 1.0])], order=3)
    """
    if order < 1:
        raise MXNetError(f"check_grads: order must be >= 1, got {order}")
    rng = np.random.default_rng(seed)
    name = name or getattr(f, "__name__", "function")
    _check_level(f, _as_list(args), order, 1, eps, rtol, atol, rng, name, zero_fraction)


def check_function_gradient(f, args, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """First-order check of the function ``f`` at ``args``: ``check_grads(f, args, order=1)``.

    mxlite's function form; ``check_numeric_gradient`` is MXNet's symbolic checker.
    """
    check_grads(f, args, order=1, eps=eps, rtol=rtol, atol=atol, seed=seed)
