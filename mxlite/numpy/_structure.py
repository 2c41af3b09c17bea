"""NumPy's structural functions: insert, delete, resize, choose, compress, extract,
select, piecewise, partition, msort, trim_zeros, apply_along_axis, apply_over_axes and the
index helpers (``tril_indices``, ``ix_``, ...).

Functions that move elements compute *where* each output element comes from on the host
(NumPy's own function on position tags, ``_gather``) and pick the values on the device
with the registered ``_getitem``: the values are differentiable (to any order), the
indices, conditions and counts that steer them are read on the host and are not. Those
that need only shapes also build graphs inside a traced Gluon block. ``select`` is a
chain of ``where``; ``partition`` gathers along the host's ``argpartition``.

This module also gathers the other modules of the longer tail: ``_pad`` (``pad``),
``_sets`` (``unique`` and the set functions, ``lexsort``, ``argpartition``),
``_hostfuncs`` (dtype functions, memory queries, bit packing, print options,
``genfromtxt``, the financial names) and the ``fallback`` and ``fallback_linalg`` module
names.
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front, _hostfuncs, _pad, _sets
from . import fallback, fallback_linalg
from ._gather import (arr, as_source, common_dtype, constant, ctx_of, dtype_of, gather, host,
                      index_constant, int_array, is_symbol, numpy_errors, refuse_symbols,
                      shape_of, tags)

__all__ = ["insert", "delete", "resize", "choose", "compress", "extract", "select",
           "piecewise", "partition", "msort", "trim_zeros", "apply_along_axis",
           "apply_over_axes", "tril_indices", "triu_indices", "tril_indices_from",
           "triu_indices_from", "diag_indices_from", "ix_", "fallback", "fallback_linalg"]
__all__ += _pad.__all__ + _sets.__all__ + _hostfuncs.__all__
for _m in (_pad, _sets, _hostfuncs):
    for _n in _m.__all__:
        globals()[_n] = getattr(_m, _n)


def _index_arg(obj):
    """An index argument (int, slice, list or array) as the host object NumPy takes."""
    if isinstance(obj, NDArray):
        return obj.asnumpy()
    return obj


# ---- insert / delete / resize ---------------------------------------------------------------
def _source_shape(fn, v):
    return shape_of(fn, v) if isinstance(v, NDArray) or is_symbol(v) else _onp.shape(v)


def insert(arr_, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis`` (of the
    flattened array if None), NumPy's rules; ``values`` are cast to ``arr``'s dtype.
    Differentiable with respect to ``arr`` and ``values``; ``obj`` is read on the host.

    >>> mx.np.insert(mx.np.array([[1., 2.], [3., 4.]]), 1, [7., 8.], axis=0)
    array([[1., 2.],
           [7., 8.],
           [3., 4.]])"""
    a = arr(arr_)
    refuse_symbols("insert", obj)
    v = as_source(values, dtype=dtype_of("insert", a), ctx=ctx_of(a),
                  symbolic=is_symbol(a) or is_symbol(values))
    ta, tv = tags([shape_of("insert", a), _source_shape("insert", values)])
    with numpy_errors("insert"):
        index = _onp.insert(ta, _index_arg(obj), tv, axis=axis)
    return gather("insert", [a, v], index)


def delete(arr_, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, slice, list or array of indices, or a
    boolean mask) along ``axis`` (of the flattened array if None), NumPy's rules:
    negative indices count from the end, an index out of range is an error. (MXNet 1.9.1
    silently dropped negative and out-of-range entries of an index array.)
    Differentiable with respect to ``arr``.

    >>> mx.np.delete(mx.np.array([1., 2., 3., 4.]), mx.np.array([0, -1], dtype="int64"))
    array([2., 3.])"""
    a = arr(arr_)
    refuse_symbols("delete", obj)
    with numpy_errors("delete"):
        index = _onp.delete(tags([shape_of("delete", a)])[0], _index_arg(obj), axis=axis)
    return gather("delete", [a], index)


def resize(a, new_shape):
    """An array of ``new_shape`` filled with ``a``'s elements repeated in order (zeros when
    ``a`` is empty), as ``numpy.resize``. Differentiable with respect to ``a``."""
    a = arr(a)
    if isinstance(new_shape, (int, _onp.integer)):
        new_shape = (int(new_shape),)
    new_shape = tuple(int(d) for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise op_error("resize", f"new_shape must hold non-negative sizes, got {new_shape}")
    shape = shape_of("resize", a)
    if 0 in shape:
        return constant(_onp.zeros(new_shape), dtype_of("resize", a), is_symbol(a),
                        ctx_of(a))
    with numpy_errors("resize"):
        index = _onp.resize(tags([shape])[0], new_shape)
    return gather("resize", [a], index)


# ---- selection by host indices or conditions ------------------------------------------------
def _sources(fn, values):
    """``values`` (arrays, Symbols, numbers) promoted to one dtype."""
    dt = common_dtype(values)
    sym, ctx = any(is_symbol(v) for v in values), ctx_of(*values)
    return [as_source(v, dtype=dt, ctx=ctx, symbolic=sym) for v in values]


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for every ``i`` (all broadcast), NumPy's rules; ``mode`` 'raise',
    'wrap' or 'clip' for indices out of range. The choices are promoted to one dtype;
    differentiable with respect to them (``a`` is read on the host)."""
    refuse_symbols("choose", a)
    whole = isinstance(choices, NDArray) or is_symbol(choices)
    items = [choices] if whole else list(choices)
    if not items:
        raise op_error("choose", "choices must hold at least one array")
    sources = [arr(choices)] if whole else _sources("choose", items)
    t = tags([shape_of("choose", s) for s in sources])
    with numpy_errors("choose"):
        index = _onp.choose(host(a), t[0] if whole else t, mode=mode)
    return _finish(gather("choose", sources, index), out)


def _finish(y, out):
    return y if out is None else _front.call("_copy", [y], out=out)


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` (of the flattened array if None) where
    ``condition`` (1-D, read on the host) is true. Differentiable with respect to ``a``."""
    a = arr(a)
    refuse_symbols("compress", condition)
    with numpy_errors("compress"):
        index = _onp.compress(host(condition), tags([shape_of("compress", a)])[0], axis=axis)
    return _finish(gather("compress", [a], index), out)


def extract(condition, arr_):
    """The elements of ``arr`` (flattened) where ``condition`` (flattened, read on the
    host) is non-zero. Differentiable with respect to ``arr``."""
    a = arr(arr_)
    refuse_symbols("extract", condition)
    with numpy_errors("extract"):
        index = _onp.extract(host(condition), tags([shape_of("extract", a)])[0])
    return gather("extract", [a], index)


def select(condlist, choicelist, default=0):
    """``choicelist[k]`` where ``condlist[k]`` is the first true condition, ``default``
    where none is (all broadcast; the choices promoted to one dtype). A chain of ``where``:
    differentiable with respect to the choices and ``default``.

    >>> x = mx.np.array([[1., 2.], [3., 4.]])
    >>> mx.np.select([x > 2], [x * 10], default=-1)
    array([[-1., -1.],
           [30., 40.]])"""
    from ._indexing import where
    from ._manipulation import broadcast_to
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise op_error("select", f"condlist and choicelist must be of the same length, got "
                       f"{len(condlist)} and {len(choicelist)}")
    if not condlist:
        raise op_error("select", "condlist and choicelist must not be empty")
    conds = [arr(c) for c in condlist]
    for i, c in enumerate(conds):
        if dtype_of("select", c) != _onp.bool_:
            raise op_error("select", f"condlist entry {i} must be a boolean array, got "
                           f"{dtype_of('select', c)}")
    values = _sources("select", choicelist + [default])
    shape = _onp.broadcast_shapes(*[shape_of("select", x) for x in conds + values])
    conds, values = ([x if shape_of("select", x) == shape else broadcast_to(x, shape)
                      for x in group] for group in (conds, values))
    y = values[-1]
    for c, v in zip(reversed(conds), reversed(values[:-1])):
        y = where(c, v, y)
    return y


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[k](x[condlist[k]], *args, **kw)`` where ``condlist[k]`` holds (a later
    condition wins; an extra last function covers the positions of no condition; a
    non-callable entry is a constant), zeros elsewhere, in ``x``'s dtype. Each function
    sees only its elements, as NumPy's; the result gathers their outputs, so it is
    differentiable through functions of mxlite operators. The conditions are read on the
    host."""
    x = arr(x)
    refuse_symbols("piecewise", condlist)
    shape, dt, sym = shape_of("piecewise", x), dtype_of("piecewise", x), is_symbol(x)
    conds = _conditions(condlist, len(shape))
    funcs = list(funclist)
    n = len(conds)
    if len(funcs) == n + 1:
        hit = _onp.zeros(shape, bool)
        for c in conds:
            hit = hit | _broadcast_condition(c, shape)
        conds.append(~hit)
    elif len(funcs) != n:
        raise op_error("piecewise", f"with {n} condition(s) funclist must have {n} or "
                       f"{n + 1} entries, got {len(funcs)}")
    sources = [constant(_onp.zeros(1), dt, sym, ctx_of(x))]
    index = _onp.zeros(shape, _onp.int64)
    start = 1
    positions = tags([shape])[0]
    for c, f in zip(conds, funcs):
        mask = _broadcast_condition(c, shape)
        k = int(mask.sum())
        if callable(f):
            v = as_source(f(gather("piecewise", [x], positions[mask]), *args, **kw),
                          dtype=dt, ctx=ctx_of(x), symbolic=sym)
        else:
            v = as_source(f, dtype=dt, ctx=ctx_of(x), symbolic=sym)
        size = int(_onp.prod(shape_of("piecewise", v)))
        if size not in (1, k):
            raise op_error("piecewise", f"a function gave {size} values for {k} selected "
                           "elements")
        sources.append(v)
        index[mask] = start + (_onp.arange(k) if size == k else 0)
        start += size
    return gather("piecewise", sources, index)


def _broadcast_condition(c, shape):
    try:
        return _onp.broadcast_to(c, shape)
    except ValueError:
        raise op_error("piecewise", f"a condition of shape {c.shape} does not match x of "
                       f"shape {shape}") from None


def _conditions(condlist, ndim):
    """piecewise's conditions as host boolean arrays (NumPy's rule: a scalar, or a sequence
    whose first entry is not itself a sequence, is one condition when ``x`` is not 0-d)."""
    cl = condlist.asnumpy() if isinstance(condlist, NDArray) else condlist
    if isinstance(cl, (list, tuple)):
        cl = [c.asnumpy() if isinstance(c, NDArray) else c for c in cl]
    if _onp.ndim(cl) == 0 or (not isinstance(cl[0], (list, tuple, _onp.ndarray)) and ndim):
        cl = [cl]
    return [_onp.asarray(c, dtype=bool) for c in cl]


# ---- partition and sorting ------------------------------------------------------------------
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of ``a`` with the element(s) at ``kth`` along ``axis`` (flattened if None)
    in their sorted position, smaller ones before and larger ones after. The order comes
    from ``argpartition`` on the host; the values are gathered with ``take_along_axis``,
    so differentiable."""
    a = arr(a)
    refuse_symbols("partition", a)
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise op_error("partition", "a 0-d array cannot be partitioned")
    with numpy_errors("partition"):
        idx = _onp.argpartition(a.asnumpy(), _index_arg(kth), axis=axis)
    return _front.call("_take_along_axis", [a, int_array(idx, a._ctx)], axis=axis)


def msort(a):
    """A copy of ``a`` sorted along its first axis (``sort(a, axis=0)``; differentiable)."""
    from ._indexing import sort
    a = arr(a)
    if not is_symbol(a) and a.ndim == 0:
        raise op_error("msort", "a 0-d array has no first axis to sort")
    return sort(a, axis=0)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading ('f') and/or trailing ('b') zeros, along ``axis`` (every
    axis if None: the smallest box that holds the non-zero elements), as ``numpy.trim_zeros``.
    The bounds are read on the host; the result is a slice, so differentiable."""
    a = arr(filt)
    refuse_symbols("trim_zeros", a)
    trim = str(trim).lower()
    if not trim or set(trim) - {"f", "b"}:
        raise op_error("trim_zeros", f"trim must be a combination of 'f' and 'b', got {trim!r}")
    if a.ndim == 0:
        raise op_error("trim_zeros", "filt must be at least 1-d")
    from ..ops.shape_utils import normalize_axes
    axes = range(a.ndim) if axis is None else normalize_axes(
        "trim_zeros", (axis,) if isinstance(axis, int) else tuple(axis), a.ndim, "axis")
    nz = a.asnumpy() != 0
    key = [slice(None)] * a.ndim
    for ax in axes:
        other = tuple(i for i in range(a.ndim) if i != ax)
        along = nz.any(axis=other) if other else nz
        hits = _onp.flatnonzero(along)
        n = a.shape[ax]
        start = (hits[0] if hits.size else n) if "f" in trim else 0
        stop = (hits[-1] + 1 if hits.size else 0) if "b" in trim else n
        key[ax] = slice(int(start), int(max(start, stop)))
    return a[tuple(key)]


# ---- apply ----------------------------------------------------------------------------------
def apply_along_axis(func1d, axis, arr_, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``; the results (all of
    one shape) take the place of that axis, as ``numpy.apply_along_axis``. Differentiable
    when ``func1d`` is made of mxlite operators."""
    from ..ops.shape_utils import normalize_axis
    from ._manipulation import moveaxis, reshape, stack
    a = arr(arr_)
    refuse_symbols("apply_along_axis", a)
    if a.ndim == 0:
        raise op_error("apply_along_axis", "arr must be at least 1-d")
    axis = normalize_axis("apply_along_axis", axis, a.ndim)
    moved = moveaxis(a, axis, -1)
    outer = tuple(moved.shape[:-1])
    if 0 in outer:
        raise op_error("apply_along_axis", f"cannot apply a function to the slices of an "
                       f"array of shape {tuple(a.shape)} that has none")
    rows = reshape(moved, (-1, a.shape[axis]))
    results = [arr(func1d(rows[i], *args, **kwargs)) for i in range(rows.shape[0])]
    first = tuple(results[0].shape)
    if any(tuple(r.shape) != first for r in results):
        raise op_error("apply_along_axis", "func1d must return results of one shape")
    dt = common_dtype(results)
    y = stack([as_source(r, dtype=dt) for r in results], axis=0)
    y = reshape(y, outer + first)
    # the result's own axes go where ``axis`` was
    order = list(range(len(outer)))
    order[axis:axis] = list(range(len(outer), len(outer) + len(first)))
    from ._manipulation import transpose
    return y if order == sorted(order) else transpose(y, tuple(order))


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in ``axes`` in turn, each result keeping
    ``a``'s rank (a result one axis shorter gets the axis back with length 1), as
    ``numpy.apply_over_axes``."""
    from ._manipulation import expand_dims
    a = arr(a)
    axes = (axes,) if isinstance(axes, (int, _onp.integer)) else tuple(axes)
    y = a
    for ax in axes:
        ax = ax + a.ndim if ax < 0 else ax
        r = arr(func(y, ax))
        if r.ndim == y.ndim:
            y = r
        elif r.ndim == y.ndim - 1:
            y = expand_dims(r, ax)
        else:
            raise op_error("apply_over_axes", f"func must return an array of rank {y.ndim} or "
                           f"{y.ndim - 1}, got rank {r.ndim}")
    return y


# ---- index helpers (host-computed int64 indices) --------------------------------------------
def _index_tuple(fn, make, symbolic=False, ctx=None):
    with numpy_errors(fn):
        parts = make()
    return tuple(index_constant(p, symbolic, ctx) for p in parts)


def tril_indices(n, k=0, m=None, ctx=None):
    """The (row, column) int64 indices of the lower triangle (diagonal ``k``) of an
    ``(n, m)`` array."""
    return _index_tuple("tril_indices", lambda: _onp.tril_indices(n, k, m), ctx=ctx)


def triu_indices(n, k=0, m=None, ctx=None):
    """The (row, column) int64 indices of the upper triangle (diagonal ``k``) of an
    ``(n, m)`` array."""
    return _index_tuple("triu_indices", lambda: _onp.triu_indices(n, k, m), ctx=ctx)


def _from_2d(fn, arr_, numpy_fn, k):
    a = arr(arr_)
    shape = shape_of(fn, a)
    if len(shape) != 2:
        raise op_error(fn, f"input array must be 2-d, got shape {shape}")
    return _index_tuple(fn, lambda: numpy_fn(shape[0], k, shape[1]), is_symbol(a),
                        ctx_of(a))


def tril_indices_from(arr_, k=0):
    """``tril_indices`` for the shape of the 2-D array ``arr``."""
    return _from_2d("tril_indices_from", arr_, _onp.tril_indices, k)


def triu_indices_from(arr_, k=0):
    """``triu_indices`` for the shape of the 2-D array ``arr``."""
    return _from_2d("triu_indices_from", arr_, _onp.triu_indices, k)


def diag_indices_from(arr_):
    """The int64 indices of the main diagonal of ``arr`` (at least 2-d, all sides equal):
    ``arr.ndim`` copies of ``arange(n)``."""
    a = arr(arr_)
    shape = shape_of("diag_indices_from", a)
    if len(shape) < 2:
        raise op_error("diag_indices_from", f"input array must be at least 2-d, got shape "
                       f"{shape}")
    if len(set(shape)) != 1:
        raise op_error("diag_indices_from", f"all dimensions of the input must be of equal "
                       f"length, got shape {shape}")
    return _index_tuple("diag_indices_from", lambda: [_onp.arange(shape[0])] * len(shape),
                        is_symbol(a), ctx_of(a))


def ix_(*args):
    """An open mesh from 1-D sequences: the k-th result has shape ``(1, ..., n_k, ..., 1)``
    so the results index the cross product. A boolean sequence stands for its non-zero
    positions; arrays keep their dtype (reshaped views), lists become int64 (float lists
    are refused, as indices)."""
    from ._manipulation import reshape
    refuse_symbols("ix_", *args)
    out, nd = [], len(args)
    for k, s in enumerate(args):
        if isinstance(s, NDArray):
            a = arr(s)
        else:
            h = _onp.asarray(s)
            if h.size == 0:
                h = h.astype(_onp.int64)
            if h.dtype.kind not in "iub":
                raise op_error("ix_", f"argument {k} must be integer or boolean, got {h.dtype}")
            a = as_source(h, dtype=_onp.int64 if h.dtype.kind != "b" else _onp.bool_)
        if a.ndim != 1:
            raise op_error("ix_", f"argument {k} must be 1-d, got shape {tuple(a.shape)}")
        if a.dtype == _onp.bool_:
            a = int_array(_onp.flatnonzero(a.asnumpy()), a._ctx)
        out.append(reshape(a, (1,) * k + (a.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)
