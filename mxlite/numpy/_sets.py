"""NumPy's ``unique``, set functions and index-valued sorting helpers.

What is found (which values are unique, common, missing) depends on the data, so it is
worked out on the host by NumPy; the returned *indices, inverse indices, counts and
masks* are int64/bool arrays and not differentiable. The returned *values* are gathered
from the inputs on the device at the positions found (``_gather``), so they are recorded
and carry gradients back to the elements they came from (for ``intersect1d``, to
``ar1``'s first occurrence).
"""
import numpy as _onp

from ..base import op_error
from . import _front
from ._gather import (arr, as_source, common_dtype, gather, host, int_array, numpy_errors,
                      refuse_symbols)

__all__ = ["unique", "in1d", "isin", "intersect1d", "setdiff1d", "setxor1d", "union1d",
           "lexsort", "argpartition"]


def _flat_sources(fn, *arrays):
    """The inputs as np arrays of their common dtype (and their host data, flattened)."""
    refuse_symbols(fn, *arrays)
    dt = common_dtype(list(arrays))
    ctx = next((a._ctx for a in arrays if hasattr(a, "_ctx")), None)
    sources = [as_source(a, dtype=dt, ctx=ctx) for a in arrays]
    return sources, [s.asnumpy().reshape(-1) for s in sources]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True):
    """The sorted unique elements of ``ar`` (flattened), or its unique slices along
    ``axis``, with optionally the int64 indices of their first occurrences, the inverse
    indices that rebuild ``ar`` and the counts (NumPy's shapes: the inverse of a
    flattened call has ``ar``'s shape). The values are differentiable (gathered from the
    first occurrences); the rest is computed on the host.

    >>> mx.np.unique(mx.np.array([3., 1., 3.]), return_counts=True)
    (array([1., 3.]), array([1, 2], dtype=int64))"""
    a = arr(ar)
    refuse_symbols("unique", a)
    with numpy_errors("unique"):
        res = _onp.unique(a.asnumpy(), return_index=True, return_inverse=return_inverse,
                          return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    first = res[1]
    if axis is None:
        values = gather("unique", [a], first)
    else:
        values = _front.call("take", [a, int_array(first, a._ctx)], axis=int(axis) % a.ndim,
                             mode="clip")
    # res: values, index, then inverse and counts where asked
    parts = [res[1]] if return_index else []
    parts += list(res[2:])
    out = [values] + [int_array(p, a._ctx) for p in parts]
    return out[0] if len(out) == 1 else tuple(out)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """A boolean array of ``element``'s shape: whether each element is in
    ``test_elements`` (not in, with ``invert``). Computed on the host."""
    refuse_symbols("isin", element, test_elements)
    e = arr(element)
    with numpy_errors("isin"):
        out = _onp.isin(e.asnumpy(), host(test_elements), assume_unique=assume_unique,
                        invert=invert, kind=kind)
    return as_source(out, dtype=_onp.bool_, ctx=e._ctx)


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """``isin`` of the flattened ``ar1``: a 1-D boolean array (NumPy 2 dropped this name;
    mx.np keeps it)."""
    refuse_symbols("in1d", ar1, ar2)
    return isin(arr(ar1).reshape(-1), ar2, assume_unique, invert, kind=kind)


def union1d(ar1, ar2):
    """The sorted unique elements of both arrays (flattened), in their common dtype;
    differentiable (each value from its first occurrence in ``concatenate(ar1, ar2)``)."""
    sources, hosts = _flat_sources("union1d", ar1, ar2)
    with numpy_errors("union1d"):
        _, first = _onp.unique(_onp.concatenate(hosts), return_index=True)
    return gather("union1d", sources, first)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique elements common to both arrays (flattened), in their common
    dtype; with ``return_indices`` also the int64 positions of those values in the
    flattened ``ar1`` and ``ar2`` (first occurrences). The values are gathered from ``ar1``."""
    sources, hosts = _flat_sources("intersect1d", ar1, ar2)
    with numpy_errors("intersect1d"):
        _, i1, i2 = _onp.intersect1d(hosts[0], hosts[1], assume_unique=assume_unique,
                                     return_indices=True)
    values = gather("intersect1d", sources[:1], i1)
    if not return_indices:
        return values
    ctx = values._ctx
    return values, int_array(i1, ctx), int_array(i2, ctx)


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ``ar1`` that are not in ``ar2`` (all of ``ar1``'s
    values in order when ``assume_unique``), in ``ar1``'s dtype; differentiable with
    respect to ``ar1``."""
    refuse_symbols("setdiff1d", ar1, ar2)
    a = arr(ar1)
    h = a.asnumpy().reshape(-1)
    with numpy_errors("setdiff1d"):
        if assume_unique:
            picked = _onp.flatnonzero(~_onp.isin(h, host(ar2), assume_unique=True))
        else:
            u, first = _onp.unique(h, return_index=True)
            picked = first[~_onp.isin(u, host(ar2))]
    return gather("setdiff1d", [a], picked)


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values that are in exactly one of the arrays, in their common
    dtype; differentiable (each value gathered from where it occurs)."""
    sources, hosts = _flat_sources("setxor1d", ar1, ar2)
    n1 = hosts[0].size
    with numpy_errors("setxor1d"):
        if assume_unique:
            f1, f2 = _onp.arange(n1), _onp.arange(hosts[1].size)
        else:
            f1 = _onp.unique(hosts[0], return_index=True)[1]
            f2 = _onp.unique(hosts[1], return_index=True)[1]
        pos = _onp.concatenate([f1, n1 + f2]).astype(_onp.int64)
        both = _onp.concatenate(hosts)[pos]
        _, first, counts = _onp.unique(both, return_index=True, return_counts=True)
    return gather("setxor1d", sources, pos[first[counts == 1]])


def lexsort(keys, axis=-1):
    """The int64 indices that sort by the last key, then the one before, ... (``keys``:
    a sequence of arrays of one shape, or a 2-D array whose rows are the keys); stable.
    Computed on the host."""
    refuse_symbols("lexsort", keys)
    ctx = getattr(keys, "_ctx", None)
    if isinstance(keys, (list, tuple)):
        ctx = next((k._ctx for k in keys if hasattr(k, "_ctx")), None)
        keys = [host(k) for k in keys]
    else:
        keys = host(keys)
    with numpy_errors("lexsort"):
        idx = _onp.lexsort(keys, axis=axis)
    return int_array(idx, ctx)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """The int64 indices that partition ``a`` along ``axis`` (flattened if None) around
    ``kth`` (see ``partition``). Computed on the host."""
    a = arr(a)
    refuse_symbols("argpartition", a)
    if order is not None:
        raise op_error("argpartition", "order is not supported (no structured arrays)")
    with numpy_errors("argpartition"):
        idx = _onp.argpartition(a.asnumpy(), host(kth) if hasattr(kth, "asnumpy") else kth,
                                axis=axis, kind=kind)
    return int_array(idx, a._ctx)
