"""``mx.np.random``'s discrete samplers: ``randint``, ``choice``, ``multinomial`` and
``shuffle``, over the registered samplers (``_random_randint``, ``_sample_multinomial``,
``_random_exponential``, ``_shuffle``) and index operators (``topk``, ``take``,
``one_hot``). Their results are indices or counts: nothing here is differentiable except
``choice``'s values with respect to an array ``a`` (a ``take``). Probability vectors are
checked on a host copy (a check, not part of the result)."""
import math

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import as_dtype
from ._random_draw import as_size, is_number, is_symbol
from .multiarray import array, to_ctx

__all__ = ["randint", "choice", "multinomial", "shuffle"]

_I64 = _onp.dtype(_onp.int64)
_F64 = _onp.dtype(_onp.float64)
_NATIVE_INT = (_onp.dtype(_onp.int32), _I64)      # the dtypes _random_randint writes
_COUNT_PIECE = 1 << 22      # one-hot elements counted at once by multinomial


def _creation_call(op, inputs, **attrs):
    """``_front.call``, building a graph node inside ``mx.sym.np``'s creation functions."""
    if _front.is_symbolic([]):
        attrs.pop("ctx", None)
    return _front.call(op, inputs, **attrs)


def _ctx(ctx):
    return None if _front.is_symbolic([]) and ctx is None else to_ctx(ctx)


def _write(y, out):
    return y if out is None else _front.call("_copy", [y], out=out)


def _int_bound(fn, name, value):
    if not is_number(value):
        raise op_error(fn, f"{name} must be an integer (array bounds are not supported), "
                       f"got {type(value).__name__}")
    if isinstance(value, (bool, _onp.bool_)) or not float(value).is_integer():
        raise op_error(fn, f"{name} must be an integer, got {value!r}")
    return int(value)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers uniform on [low, high) ([0, low) when ``high`` is None), unbiased over any
    range the dtype holds. ``dtype`` (default int64, or ``out``'s) may be any integer dtype
    or bool; the range must fit it. The bounds are integers (not arrays).

    >>> x = mx.np.random.randint(5, size=(1000,))
    >>> x.dtype.name, int(x.min()) >= 0, int(x.max()) < 5
    ('int64', True, True)
    """
    fn = "np.random.randint"
    low = _int_bound(fn, "low", low)
    if high is None:
        low, high = 0, low
    else:
        high = _int_bound(fn, "high", high)
    size = as_size(fn, size)
    if out is not None:
        size = tuple(out.shape) if size is None else size
        dtype = out.dtype if dtype is None else dtype
    dt = _I64 if dtype is None else as_dtype(dtype, fn)
    if dt.kind not in "biu":
        raise op_error(fn, f"dtype must be an integer dtype or bool, got {dt}")
    if low >= high:
        raise op_error(fn, f"low must be < high, got low={low}, high={high}")
    lo, hi = (0, 1) if dt.kind == "b" else (int(_onp.iinfo(dt).min), int(_onp.iinfo(dt).max))
    if low < lo or high - 1 > hi:
        raise op_error(fn, f"the range [{low}, {high}) does not fit dtype {dt}")
    draw = dt if dt in _NATIVE_INT else _I64
    y = _creation_call("_random_randint", [], low=low, high=high, shape=size or (),
                       dtype=draw, ctx=_ctx(ctx))
    if draw != dt:
        y = _front.call("cast", [y], dtype=dt)
    return _write(y, out)


# ---- choice ----------------------------------------------------------------------------------
def _host_probs(fn, p, n):
    """``p`` as a checked host float64 vector of length ``n`` summing to 1 (NumPy's
    tolerance: the square root of the dtype's epsilon)."""
    dt = p.dtype if isinstance(p, (NDArray, _onp.ndarray)) else _F64
    host = _onp.asarray(p.asnumpy() if isinstance(p, NDArray) else p, _F64)
    if host.ndim != 1:
        raise op_error(fn, f"p must be 1-dimensional, got shape {host.shape}")
    if host.shape[0] != n:
        raise op_error(fn, f"p has {host.shape[0]} probabilities, a has {n} entries")
    if not (_onp.isfinite(host).all() and (host >= 0).all()):
        raise op_error(fn, "p must hold non-negative finite probabilities")
    tol = math.sqrt(_onp.finfo(dt if _onp.dtype(dt).kind == "f" else _F64).eps)
    if abs(host.sum() - 1.0) > tol:
        raise op_error(fn, f"the probabilities p must sum to 1, they sum to {host.sum()!r}")
    return host


def _distinct(weights, k, exponential):
    """``k`` distinct indices, drawn one after another with probability proportional to
    ``weights`` among those left (NumPy's sampling without replacement): the ``k`` largest
    keys weight / e, e ~ Exp(1) (the Gumbel top-k trick; log(weight) - log(e) ordered the
    same)."""
    keys = _front.call("broadcast_div", [weights, exponential])
    return _front.call("topk", [keys], k=k, ret_typ="indices", dtype=_I64)


def _choice_symbolic(a, size, replace, p):
    """choice inside a graph: the size of ``a`` is unknown, so the weights are ``p`` or a
    vector of ones of a's first-axis length."""
    k = int(_onp.prod(size))
    for name, v in (("a", a), ("p", p)):
        if v is not None and not is_number(v) and not is_symbol(v):
            raise op_error("np.random.choice", f"{name} must be a number or a Symbol inside "
                           f"a graph, got {type(v).__name__}")
    if p is not None:
        weights = _front.call("cast", [p], dtype=_F64)
    elif is_number(a):
        with _front.symbolic_creation():
            weights = _front.call("_ones", [], shape=(int(a),), dtype=_F64)
    else:
        rows = _front.call("reshape", [_front.call("cast", [a], dtype=_F64)], shape=(0, -1))
        weights = _front.call("ones_like", [_front.call("sum", [rows], axis=1)])
    if replace:
        idx = _front.call("_sample_multinomial", [weights], shape=size, dtype=_I64)
    else:
        e = _front.call("_random_exponential_like", [weights])
        idx = _front.call("reshape", [_distinct(weights, k, e)], shape=size)
    return _front.call("take", [a, idx], axis=0) if not is_number(a) else idx


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Samples of ``a``'s entries (along its first axis), or of ``arange(a)`` for an int.

    ``replace=False`` draws distinct entries, one after another in proportion to ``p``
    among those left, as NumPy; ``size=None`` draws one (a 0-d result). An array ``a`` may
    have more than one axis (its rows are sampled; NumPy wants 1-d). Entries of zero
    probability are never drawn (MXNet's ``replace=False`` could draw them).

    >>> x = mx.np.random.choice(10, size=(4,), replace=False)
    >>> len(set(x.asnumpy().tolist()))
    4
    """
    fn = "np.random.choice"
    size = as_size(fn, size)
    size = () if size is None else size
    k = int(_onp.prod(size))
    if _front.is_symbolic([v for v in (a, p) if v is not None and not is_number(v)]):
        return _choice_symbolic(a, size, replace, p)
    if is_number(a):
        if isinstance(a, (bool, _onp.bool_)) or not float(a).is_integer():
            raise op_error(fn, f"a must be an integer or an array, got {a!r}")
        n, values, ctx = int(a), None, to_ctx(ctx)
    else:
        values = a if isinstance(a, NDArray) else array(a, ctx=ctx)
        if values.ndim == 0:
            raise op_error(fn, "a must be an integer or an array of at least 1 dimension, "
                           "got a 0-d array")
        n, ctx = values.shape[0], values._ctx
    if n <= 0 and k > 0:
        raise op_error(fn, f"a must be greater than 0 unless no samples are taken, got {n}")
    if not replace and k > n:
        raise op_error(fn, f"cannot take {k} samples (size={size}) from {n} entries without "
                       "replacement")
    probs = None if p is None else _host_probs(fn, p, n)
    if probs is not None and not replace and _onp.count_nonzero(probs) < k:
        raise op_error(fn, f"fewer non-zero entries in p ({_onp.count_nonzero(probs)}) than "
                       f"samples ({k}) without replacement")
    if k == 0:
        idx = _front.call("_zeros", [], shape=size, dtype=_I64, ctx=ctx)
    elif replace and probs is None:
        idx = _front.call("_random_randint", [], low=0, high=n, shape=size, dtype=_I64,
                          ctx=ctx)
    elif replace:
        idx = _front.call("_sample_multinomial", [array(probs, ctx=ctx)], shape=size,
                          dtype=_I64)
    else:
        weights = array(_onp.ones(n) if probs is None else probs, dtype=_F64, ctx=ctx)
        e = _front.call("_random_exponential", [], shape=(n,), dtype=_F64, ctx=ctx)
        idx = _front.call("reshape", [_distinct(weights, k, e)], shape=size)
    y = idx if values is None else _front.call("take", [values, idx], axis=0)
    return _write(y, out)


# ---- multinomial -----------------------------------------------------------------------------
def _pvals(fn, pvals):
    if _front.is_symbolic([pvals]):
        raise op_error(fn, "pvals must be numbers or an array with values, not a Symbol")
    given = pvals.asnumpy() if isinstance(pvals, NDArray) else _onp.asarray(pvals)
    host = _onp.asarray(given, _F64)
    if host.ndim != 1:
        raise op_error(fn, f"pvals must be a 1-d sequence, got shape {host.shape}")
    if host.shape[0] == 0:      # no outcome: empty counts, as NumPy's
        return host
    if not (_onp.isfinite(host).all() and (host >= 0).all() and (host <= 1).all()):
        raise op_error(fn, "pvals must hold probabilities in [0, 1]")
    head = float(host[:-1].sum())
    # probabilities normalised in a narrower float sum to 1 within its rounding (float32:
    # 1.00000002 is 1); NumPy's float64 tolerance would refuse them
    eps = _onp.finfo(given.dtype).eps if given.dtype.kind == "f" else 0.0
    if head > 1.0 + max(1e-12, host.shape[0] * float(eps)):
        raise op_error(fn, f"sum(pvals[:-1]) = {head!r} exceeds 1")
    full = host.copy()
    full[-1] = max(0.0, 1.0 - head)       # NumPy's rule: the last one is what is left
    return full


def multinomial(n, pvals, size=None, ctx=None, out=None):
    """Counts of ``n`` experiments with outcome probabilities ``pvals`` (1-d; the last one
    is taken as 1 - sum(pvals[:-1]), as NumPy): int64 of shape ``size + (len(pvals),)``.

    >>> c = mx.np.random.multinomial(20, [0.2, 0.3, 0.5], size=2)
    >>> c.shape, c.sum(axis=1).tolist()
    ((2, 3), [20, 20])
    """
    fn = "np.random.multinomial"
    if isinstance(n, (bool, _onp.bool_)) or not is_number(n) or not float(n).is_integer() \
            or n < 0:
        raise op_error(fn, f"n must be a non-negative integer, got {n!r}")
    n = int(n)
    probs = _pvals(fn, pvals)
    size = as_size(fn, size) or ()
    k = probs.shape[0]
    ctx = to_ctx(ctx if ctx is not None else
                 (pvals._ctx if isinstance(pvals, NDArray) else None))
    shape = size + (k,)
    counts = _front.call("_zeros", [], shape=shape, dtype=_I64, ctx=ctx)
    rows = int(_onp.prod(size))
    if n and rows and k:
        weights = array(probs, dtype=_F64, ctx=ctx)
        piece = max(1, min(n, _COUNT_PIECE // (rows * k)))
        for start in range(0, n, piece):
            draws = min(piece, n - start)
            idx = _front.call("_sample_multinomial", [weights], shape=size + (draws,),
                              dtype=_I64)
            hot = _front.call("one_hot", [idx], depth=k, dtype=_I64)
            counts = _front.call("broadcast_add",
                                 [counts, _front.call("sum", [hot], axis=len(size))])
    return _write(counts, out)


# ---- shuffle ---------------------------------------------------------------------------------
def shuffle(x):
    """Permute the first axis of the array ``x`` in place (rows move as wholes; every
    permutation equally likely). Returns None.

    >>> x = mx.np.arange(10)
    >>> mx.np.random.shuffle(x)
    >>> sorted(x.asnumpy().tolist()) == list(range(10))
    True
    """
    if not isinstance(x, NDArray):
        raise op_error("np.random.shuffle", f"x must be an mx.np.ndarray (it is shuffled in "
                       f"place), got {type(x).__name__}")
    _front.call("_copy", [_front.call("_shuffle", [x])], out=x)
