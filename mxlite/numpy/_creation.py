"""NumPy's array-creation functions over the registered creation operators.

Without ``dtype`` the default float is used (float32, or float64 after
``npx.set_np(dtype=True)``), as MXNet's ``mx.np``; the ``*_like`` functions keep the
prototype's dtype. Inside ``mx.sym.np`` these build graph nodes (shape and dtype are
parameters, so they need no data).
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import as_dtype, default_float, is_np_default_dtype
from .multiarray import OrderNotSupported, _check_order, array, asarray, to_ctx

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "arange", "linspace", "logspace", "eye", "identity", "tril", "triu",
           "meshgrid", "array", "asarray", "copy", "indices", "tri"]


def _shape(fn, shape):
    if isinstance(shape, (int, _onp.integer)):
        return (int(shape),)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise op_error(fn, f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise op_error(fn, f"negative dimensions are not allowed, got shape {shape}")
    return shape


def _new_order(fn, order):
    """A new array is C-ordered: order 'C' (or None) only; 'F' and 'A' are
    NotImplementedError (``OrderNotSupported``), as MXNet's."""
    if order not in ("C", None):
        raise OrderNotSupported(f"{fn}: order={order!r} is not supported; mxlite arrays "
                                "are C-ordered")


def _ctx_kw(ctx):
    return None if _front.is_symbolic([]) and ctx is None else to_ctx(ctx)


def zeros(shape, dtype=None, order="C", ctx=None):
    """An array of zeros (``dtype`` default: the default float)."""
    _new_order("zeros", order)
    return _front.call("_zeros", [], shape=_shape("zeros", shape), ctx=_ctx_kw(ctx),
                       dtype=as_dtype(dtype, "zeros"))


def ones(shape, dtype=None, order="C", ctx=None):
    """An array of ones (``dtype`` default: the default float)."""
    _new_order("ones", order)
    return _front.call("_ones", [], shape=_shape("ones", shape), ctx=_ctx_kw(ctx),
                       dtype=as_dtype(dtype, "ones"))


def empty(shape, dtype=None, order="C", ctx=None):
    """An array whose values are not set (mxlite gives zeros: reading one is defined)."""
    _new_order("empty", order)
    return zeros(shape, dtype, order, ctx)


def full(shape, fill_value, dtype=None, order="C", ctx=None, out=None):
    """An array filled with ``fill_value`` (a number, or an array broadcast to ``shape``).
    Without ``dtype``: the default float for a float value, int64 for an int, bool for a
    bool, an array value's own dtype."""
    _new_order("full", order)
    shape = _shape("full", shape)
    if isinstance(fill_value, NDArray) or _front.is_symbolic([fill_value]):
        known = _front.dtype_of(fill_value)
        dt = known if dtype is None else as_dtype(dtype, "full")
        value = fill_value if dt is None or known == dt else \
            _front.call("cast", [fill_value], dtype=dt)
        from ._manipulation import broadcast_to
        y = broadcast_to(value, shape)
        return y if out is None else _front.call("_copy", [y], out=out)
    if dtype is None:
        if isinstance(fill_value, (bool, _onp.bool_)):
            dtype = _onp.bool_
        elif isinstance(fill_value, (int, _onp.integer)):
            dtype = _onp.int64
    dt = as_dtype(dtype, "full")
    try:        # NumPy's conversion: 2.7 into int32 is 2; 300 into int8 is an error
        value = _onp.array(fill_value, dtype=dt).item() if dt.kind in "biu" else \
            (fill_value.item() if isinstance(fill_value, _onp.generic) else fill_value)
    except (OverflowError, ValueError, TypeError) as e:
        raise op_error("full", f"fill_value={fill_value!r} does not fit dtype {dt}: {e}") \
            from None
    return _front.call("_full", [], out=out, shape=shape, val=value, ctx=_ctx_kw(ctx), dtype=dt)


def _symbolic_like(a, value, dtype):
    """A graph node: ``value`` in the shape of Symbol ``a``, in ``dtype`` (None: ``a``'s;
    a NumPy-converted ``value`` as ``full``)."""
    y = _front.call("zeros_like" if value != 1 else "ones_like", [a])
    if value not in (0, 1):
        y = _front.call("_plus_scalar", [y], scalar=value)
    if dtype is not None:
        y = _front.call("cast", [y], dtype=as_dtype(dtype, "full_like"))
    elif value not in (0, 1) and _front.dtype_of(a) is not None:
        y = _front.call("cast", [y], dtype=_front.dtype_of(a))
    return y


def _like(fn, prototype, dtype, ctx):
    if not isinstance(prototype, NDArray):
        prototype = asarray(prototype)
    dt = prototype.dtype if dtype is None else as_dtype(dtype, fn)
    return tuple(prototype.shape), dt, prototype._ctx if ctx is None else to_ctx(ctx)


def _filled_like(fn, op, value, a, dtype, order, ctx, out):
    """``op`` (``_zeros``/``_ones``) in ``a``'s shape and dtype (unless ``dtype``)."""
    if _front.is_symbolic([a]):
        return _symbolic_like(a, value, dtype)
    _check_order(fn, order)
    shape, dt, ctx = _like(fn, a, dtype, ctx)
    return _front.call(op, [], out=out, shape=shape, ctx=ctx, dtype=dt)


def zeros_like(a, dtype=None, order="C", ctx=None, out=None):
    """Zeros of ``a``'s shape and dtype (unless ``dtype``)."""
    return _filled_like("zeros_like", "_zeros", 0, a, dtype, order, ctx, out)


def ones_like(a, dtype=None, order="C", ctx=None, out=None):
    """Ones of ``a``'s shape and dtype (unless ``dtype``)."""
    return _filled_like("ones_like", "_ones", 1, a, dtype, order, ctx, out)


def full_like(a, fill_value, dtype=None, order="C", ctx=None, out=None):
    """``fill_value`` in ``a``'s shape and dtype (unless ``dtype``)."""
    _check_order("full_like", order)
    if _front.is_symbolic([a]):
        return _symbolic_like(a, fill_value, dtype)
    shape, dt, ctx = _like("full_like", a, dtype, ctx)
    return full(shape, fill_value, dtype=dt, ctx=ctx, out=out)


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    """An array of ``prototype``'s shape and dtype (values not set: zeros here)."""
    _check_order("empty_like", order)
    s, dt, ctx = _like("empty_like", prototype, dtype, None)
    return zeros(s if shape is None else shape, dtype=dt, ctx=ctx)


def copy(a):
    """A copy of ``a`` (recorded and differentiable)."""
    return _front.call("_copy", [a])


def arange(start, stop=None, step=None, dtype=None, ctx=None):
    """Evenly spaced values in ``[start, stop)`` (``step`` None: 1). Without ``dtype``:
    the default float, as MXNet's ``mx.np.arange`` (float32: ``arange(5)`` feeds float32
    models without a cast); after ``npx.set_np(dtype=True)``, NumPy's rule (int64 when
    every bound is an int)."""
    if step is None:
        step = 1
    if step == 0:
        raise op_error("arange", "step must not be 0")
    if dtype is None:
        bounds = [b for b in (start, stop, step) if b is not None]
        ints = all(isinstance(b, (int, _onp.integer)) and not isinstance(b, bool)
                   for b in bounds)
        dtype = _onp.int64 if ints and is_np_default_dtype() else default_float()
    if stop is None:
        start, stop = 0, start
    return _front.call("_arange", [], start=start, stop=stop, step=step, ctx=_ctx_kw(ctx),
                       dtype=as_dtype(dtype, "arange"))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``); ``retstep=True`` also returns the spacing."""
    if int(num) < 0:
        raise op_error("linspace", f"num must be non-negative, got {num}")
    if axis != 0:
        raise op_error("linspace", "only axis=0 is supported (scalar start and stop)")
    dt = as_dtype(dtype, "linspace")
    y = _front.call("_linspace", [], start=float(start), stop=float(stop), num=int(num),
                    endpoint=bool(endpoint), ctx=_ctx_kw(ctx), dtype=dt)
    if retstep:
        div = (num - 1) if endpoint else num
        step = (stop - start) / div if div > 0 else _onp.nan
        return y, step
    return y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    """``base ** linspace(start, stop, num)``."""
    exponent = linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis, ctx=ctx)
    from ._ufuncs import power
    return power(float(base), exponent)


def eye(N, M=None, k=0, dtype=None, ctx=None, **kwargs):
    """An ``N`` x ``M`` array with ones on diagonal ``k``."""
    _new_order("eye", kwargs.pop("order", "C"))
    if kwargs:
        raise TypeError(f"eye() got unexpected keyword arguments {sorted(kwargs)}")
    if int(N) < 0 or (M is not None and int(M) < 0):
        raise op_error("eye", f"negative dimensions are not allowed, got N={N}, M={M}")
    if M is not None and int(M) == 0:       # (the operator reads M=0 as "M = N")
        return zeros((int(N), 0), dtype=dtype, ctx=ctx)
    return _front.call("_eye", [], N=int(N), M=0 if M is None else int(M), k=int(k),
                       ctx=_ctx_kw(ctx), dtype=as_dtype(dtype, "eye"))


def identity(n, dtype=None, ctx=None):
    """The ``n`` x ``n`` identity."""
    return eye(n, dtype=dtype, ctx=ctx)


def tri(N, M=None, k=0, dtype=None, ctx=None):
    """Ones at and below diagonal ``k`` of an ``N`` x ``M`` array, zeros above."""
    return tril(ones((N, N if M is None else M), dtype=dtype, ctx=ctx), k)


def _band(fn, m, k, lower):
    """``m`` with the elements outside the band (``j - i <= k`` for ``lower``, else
    ``j - i >= k``) of its last two axes set to 0 (selected, not multiplied, so NaN and
    inf outside the band become 0 too); a 1-d ``m`` is broadcast to a square first."""
    symbolic = _front.is_symbolic([m])
    if not symbolic:
        m = asarray(m)
    shape = _front.shape_of(m)
    if shape is None or (symbolic and any(d < 0 for d in shape[-2:])):
        raise op_error(fn, "needs the shape of its input (a Symbol knows it while a block "
                       "is traced)")
    if len(shape) == 0:
        raise op_error(fn, "input must be at least 1-d")
    from ._indexing import where
    from ._manipulation import broadcast_to, reshape
    if len(shape) == 1:
        m = broadcast_to(m, (shape[0], shape[0]))
        shape = (shape[0], shape[0])
    rows, cols = shape[-2:]
    if symbolic:
        with _front.symbolic_creation():
            i, j = arange(rows), arange(cols)
        from ._ufuncs import greater_equal, less_equal, subtract
        d = subtract(reshape(j, (1, cols)), reshape(i, (rows, 1)))
        keep = less_equal(d, k) if lower else greater_equal(d, k)
    else:
        d = _onp.arange(cols)[None, :] - _onp.arange(rows)[:, None]
        keep = array((d <= k) if lower else (d >= k), dtype=_onp.bool_, ctx=m._ctx)
    return where(keep, m, zeros_like(m))


def tril(m, k=0):
    """``m`` with the elements above diagonal ``k`` zeroed (the last two axes)."""
    return _band("tril", m, k, True)


def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` zeroed (the last two axes)."""
    return _band("triu", m, k, False)


def meshgrid(*xi, **kwargs):
    """Coordinate arrays from 1-d coordinate vectors (``indexing`` 'xy' or 'ij',
    ``sparse``, ``copy``), NumPy's rules."""
    indexing = kwargs.pop("indexing", "xy")
    sparse = kwargs.pop("sparse", False)
    kwargs.pop("copy", True)
    if kwargs:
        raise TypeError(f"meshgrid() got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise op_error("meshgrid", f"indexing must be 'xy' or 'ij', got {indexing!r}")
    from ._manipulation import broadcast_to, reshape
    ndim = len(xi)
    xs = [reshape(asarray(x), (-1,)) for x in xi]
    shapes = [x.shape[0] for x in xs]
    if indexing == "xy" and ndim > 1:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    out = []
    for i, x in enumerate(xs):
        view = [1] * ndim
        axis = i
        if indexing == "xy" and ndim > 1 and i < 2:
            axis = 1 - i
        view[axis] = x.shape[0]
        y = reshape(x, tuple(view))
        out.append(y if sparse else broadcast_to(y, tuple(shapes)))
    return out


def indices(dimensions, dtype=None, ctx=None):
    """An array of shape ``(len(dimensions), *dimensions)`` holding each axis's index
    (int64 by default); built from ``arange``/``broadcast_to``/``stack``, so it is a graph
    node inside ``mx.sym.np`` too."""
    dims = tuple(int(d) for d in dimensions)
    dt = _onp.dtype(_onp.int64) if dtype is None else as_dtype(dtype, "indices")
    if not dims or 0 in dims:
        return zeros((len(dims),) + dims, dtype=dt, ctx=ctx)
    from ._manipulation import broadcast_to, reshape, stack
    grids = []
    for axis, d in enumerate(dims):
        view = tuple(d if i == axis else 1 for i in range(len(dims)))
        grids.append(broadcast_to(reshape(arange(d, dtype=dt, ctx=ctx), view), dims))
    return stack(grids, axis=0)
