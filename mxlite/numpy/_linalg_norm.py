"""``mx.np.linalg.norm`` and ``cond``: vector and matrix norms composed of reductions and
the Gram-matrix SVD (``_linalg_core.gram_svd``), differentiable and shape-free.

A matrix norm over axes (r, c) needs no transpose: two new trailing axes are appended,
swapped with r and c (so the matrices are last and size-1 axes stand in their place), the
per-matrix value is reduced with ``keepdims``, and the same swaps put it back where NumPy
wants it. Nothing reads the rank, so the functions trace into hybridized blocks.
"""
import numbers

import numpy as onp

from ..base import op_error
from ._front import call
from ._manipulation import expand_dims as _expand_dims, squeeze as _squeeze
from ._linalg_core import (as_input, dtype_of, gram_svd, safe_sqrt, shape_of,
                           squeeze_axes, upcast)
from . import _reductions as R
from . import _ufuncs as U

__all__ = ["norm", "cond"]

_INF_NAMES = {"inf": onp.inf, "-inf": -onp.inf}     # MXNet's string spellings of +-inf


def _ord_value(ord):
    if isinstance(ord, str):
        return _INF_NAMES.get(ord, ord)
    return ord


def _axis_tuple(fn, axis):
    if isinstance(axis, (numbers.Integral, onp.integer)):
        return (int(axis),)
    if isinstance(axis, (tuple, list)) and all(
            isinstance(i, (numbers.Integral, onp.integer)) for i in axis):
        return tuple(int(i) for i in axis)
    raise op_error(fn, f"axis must be None, an int or a tuple of ints, got {axis!r}")


def _vector_norm(x, ord, axis, keepdims):
    ax = axis[0]
    if ord is None or ord == 2 or ord in ("fro", "f"):     # 'fro' of a vector: MXNet's 2-norm
        return safe_sqrt(R.sum(U.multiply(x, x), axis=ax, keepdims=keepdims))
    if ord == onp.inf:
        return R.max(U.absolute(x), axis=ax, keepdims=keepdims)
    if ord == -onp.inf:
        return R.min(U.absolute(x), axis=ax, keepdims=keepdims)
    if isinstance(ord, str):
        raise op_error("norm", f"invalid norm order {ord!r} for vectors")
    if ord == 0:
        count = R.sum(U.not_equal(x, 0), axis=ax, keepdims=keepdims)
        dt = dtype_of(x)
        return count if dt is None else count.astype(dt)
    if ord == 1:
        return R.sum(U.absolute(x), axis=ax, keepdims=keepdims)
    p = float(ord)
    return U.power(R.sum(U.power(U.absolute(x), p), axis=ax, keepdims=keepdims), 1.0 / p)


def _to_end(x, r, c):
    """x with two new trailing axes swapped into r and c: its matrices (r, c) last."""
    y = _expand_dims(_expand_dims(x, -1), -1)
    r2, c2 = (r - 2 if r < 0 else r), (c - 2 if c < 0 else c)
    y = call("swapaxes", [y], dim1=r2, dim2=-2)
    return call("swapaxes", [y], dim1=c2, dim2=-1), (r2, c2)


def _back(y, r2, c2):
    """Per-matrix values (..., 1, 1) of ``_to_end``'s layout back in x's layout (keepdims)."""
    y = call("swapaxes", [call("swapaxes", [y], dim1=c2, dim2=-1)], dim1=r2, dim2=-2)
    return _squeeze(y, (-2, -1))


def _singular_reduce(x, r, c, reduce):
    """``reduce`` (a function of the singular values (..., K) keeping the last axis) of the
    matrices (r, c) of x, in x's layout with keepdims."""
    work, back = upcast(x)
    y, (r2, c2) = _to_end(work, r, c)
    val = reduce(y)
    return back(_back(_expand_dims(val, -1), r2, c2))


def _sv(y):
    return gram_svd(y)[1]


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if shape_of(x) is not None:
        nd = len(shape_of(x))
        if not (-nd <= r < nd and -nd <= c < nd):
            raise op_error("norm", f"axis {axes} is out of range for an array of {nd} dims")
        if r % nd == c % nd:
            raise op_error("norm", f"duplicate axes given: {axes}")
    if ord is None or ord in ("fro", "f"):
        out = safe_sqrt(R.sum(U.multiply(x, x), axis=(r, c), keepdims=True))
    elif ord in (1, -1, onp.inf, -onp.inf):
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        pick = R.max if ord > 0 else R.min
        out = pick(R.sum(U.absolute(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
    elif ord == 2:
        out = _singular_reduce(x, r, c, lambda y: R.max(_sv(y), axis=-1, keepdims=True))
    elif ord == "nuc":
        out = _singular_reduce(x, r, c, lambda y: R.sum(_sv(y), axis=-1, keepdims=True))
    elif ord == -2:
        # the smallest of min(M, N) singular values: the Gram matrix of the wider side has
        # only zeros beyond them, so the larger of the two orientations' minima is the one
        def smallest(y):
            return U.maximum(R.min(_sv(y), axis=-1, keepdims=True),
                             R.min(_sv(call("swapaxes", [y], dim1=-2, dim2=-1)), axis=-1,
                                   keepdims=True))
        out = _singular_reduce(x, r, c, smallest)
    else:
        raise op_error("norm", f"invalid norm order {ord!r} for matrices")
    return out if keepdims else squeeze_axes(out, (r, c))


def norm(x, ord=None, axis=None, keepdims=False):
    """A vector or matrix norm (NumPy's ``numpy.linalg.norm``), differentiable.

    ``axis`` an int: vector norms along it (``ord`` None/2, 1, 0, inf, -inf, any p; 'fro'
    is the 2-norm, as MXNet, where NumPy raises);
    a pair: matrix norms of those axes (None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf);
    None: the 2-norm of the flattened array when ``ord`` is None, else the vector norm of a
    1-d array or the matrix norm of the last two axes (for any rank, as MXNet; NumPy takes
    only 2-d). ``'inf'``/``'-inf'`` strings are accepted as in MXNet. Integer input gives
    float64 (NumPy). The singular values of 2/-2/'nuc' come from the Gram-matrix SVD
    (``svd``); at a zero vector or singular value the gradient is the subgradient 0.

    >>> from mxlite import np
    >>> float(np.linalg.norm(np.array([3.0, 4.0])))
    5.0
    >>> np.linalg.norm(np.array([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
    6.0
    """
    x = as_input("norm", x, "x")
    ord = _ord_value(ord)
    shape = shape_of(x)
    nd = None if shape is None else len(shape)
    if axis is None:
        if ord is None:
            return safe_sqrt(R.sum(U.multiply(x, x), axis=None, keepdims=keepdims))
        if nd == 1:
            return _vector_norm(x, ord, (0,), keepdims)
        if nd == 0:
            raise op_error("norm", "ord needs an array of at least 1 dimension, got a 0-d one")
        return _matrix_norm(x, ord, (-2, -1), keepdims)
    axes = _axis_tuple("norm", axis)
    if len(axes) == 1:
        if nd is not None and not -nd <= axes[0] < max(nd, 1):
            raise op_error("norm", f"axis {axes[0]} is out of range for shape {shape}")
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise op_error("norm", f"axis must name 1 or 2 axes, got {axes}")


def cond(x, p=None):
    """The condition number of every matrix of x (NumPy's ``numpy.linalg.cond``),
    differentiable: ``p`` None/2 (s_max / s_min), -2 (s_min / s_max), or a norm order of
    ``norm`` ('fro', 'nuc', 1, -1, inf, -inf: ``norm(x) * norm(inv(x))``, square matrices;
    a singular one is an MXNetError, where NumPy returned inf). A singular matrix gives inf
    for p None/2.

    >>> from mxlite import np
    >>> float(np.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    from ._linalg_core import matrices, oriented_svd, named
    x = matrices("cond", x, arg="x")
    p = _ord_value(p)
    if p in (None, 2, -2):
        work, back = upcast(x)
        s = oriented_svd(work)[1]
        hi, lo = R.max(s, axis=-1), R.min(s, axis=-1)
        return back(U.true_divide(lo, hi) if p == -2 else U.true_divide(hi, lo))
    shape = shape_of(x)
    if shape is not None and shape[-1] != shape[-2]:
        raise op_error("cond", f"p={p!r} needs square matrices, got shape {shape}")
    inv = named("cond", lambda: call("_linalg_inverse", [x]))
    return U.multiply(norm(x, p, axis=(-2, -1)), norm(inv, p, axis=(-2, -1)))
