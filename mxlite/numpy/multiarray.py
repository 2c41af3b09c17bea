"""``mx.np.ndarray``: an mxlite array with NumPy's semantics.

The class is a subclass of ``NDArray`` over the same buffer, tape entry and device, so
every registered operator, autograd and the device backends work unchanged; what differs
is the Python surface: zero-dim results (``a[0]`` of a 1-d array is 0-d), NumPy indexing
including boolean masks, NumPy/MXNet type promotion in the operators (``_ufuncs``),
comparisons that give booleans, NumPy's method signatures (``a.sum(axis, dtype, out,
keepdims)``, ``a.reshape(2, -1)``), and NumPy's ``repr``.
"""
import numpy as _onp

from ..base import MXNetError
from ..context import Context, current_context
from ..device import namespace_for
from ..ndarray.ndarray import NDArray, _checked_values, _value_nd
from ..ops.indexing import _view_key, canonical_key, is_basic, region_shape
from ..ops.registry import REGISTRY, Attrs
from . import _front
from ._dtypes import as_dtype, default_float

__all__ = ["ndarray", "array", "asarray", "to_array", "to_ctx"]

_GETITEM = REGISTRY["_getitem"]
_RESHAPE = REGISTRY["reshape"]
_COPY = REGISTRY["_copy"]


def to_ctx(ctx):
    """``ctx`` (None: the current context; a Context or its string) as a Context."""
    if ctx is None:
        return current_context()
    return ctx if isinstance(ctx, Context) else Context(ctx)


class ndarray(NDArray):
    """An n-dimensional array with NumPy semantics on an mxlite device
    (``mx.np.array([[1, 2], [3, 4]])``). See the module docstring; ``as_nd_ndarray()``
    gives the same buffer as a legacy ``mx.nd.NDArray``."""

    __slots__ = ()

    # ---- properties -------------------------------------------------------------------
    dtype = property(lambda self: self._data.dtype, doc="The NumPy dtype.")
    itemsize = property(lambda self: self._data.dtype.itemsize, doc="Bytes per element.")
    nbytes = property(lambda self: self._data.nbytes, doc="Bytes of the data.")
    device = property(lambda self: self._ctx, doc="The Context (the array API's name).")

    @property
    def T(self):
        """The transpose (reversed axes; a copy)."""
        return self.transpose()

    @property
    def grad(self):
        """The gradient buffer attached by ``attach_grad``, an np array (None if none, or
        when attached with ``grad_req='null'``, as MXNet's np arrays)."""
        if getattr(self, "_grad_req", None) == "null":
            return None
        return _front.as_np(self._grad)

    @property
    def strides(self):
        """Bytes between consecutive elements of each axis (the data is C-contiguous)."""
        return self._data.strides

    def __repr__(self):
        """NumPy's ``array(...)`` text with the dtype shown unless it is float32 or bool
        (MXNet's format: ``array([1., 2.])``, ``array([1, 2], dtype=int64)``), and
        ``ctx=gpu(0)`` appended for a device other than the CPU."""
        host = self.asnumpy()
        text = repr(host)
        if "dtype=" in text:
            if host.dtype == _onp.float32:
                text = text.replace(", dtype=float32", "")
        elif host.dtype not in (_onp.float32, _onp.bool_):
            text = f"{text[:-1]}, dtype={host.dtype})"
        if self._ctx.device_type != "cpu":
            text = f"{text[:-1]}, ctx={self._ctx})"
        return text

    def __str__(self):
        """NumPy's ``str`` of the data, with `` @gpu(0)`` appended for an array of one or
        more axes on a device other than the CPU."""
        text = str(self.asnumpy())
        if self._ctx.device_type == "cpu" or self.ndim == 0:
            return text
        return f"{text} @{self._ctx}"

    def __format__(self, spec):
        """A 0-d array formats as its element (``f"{a:.3f}"``); a larger array takes only
        the empty spec (its ``str``), as MXNet's; a spec is a TypeError."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to an mx.np.ndarray "
                            f"of shape {tuple(self.shape)}; format a 0-d array or its item()")
        return str(self)

    # ---- scalars and conversion ---------------------------------------------------------
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __bool__(self):
        """The truth of a one-element array; an empty or larger array is a ValueError, as
        in NumPy."""
        if self.size == 1:
            return bool(self.item())
        if self.size == 0:
            raise ValueError("the truth value of an empty array is ambiguous")
        raise ValueError(f"the truth value of an array with {self.size} elements is "
                         "ambiguous; use a.any() or a.all()")

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def item(self, *args):
        """The element (``a.item()`` of a one-element array, or ``a.item(i)`` flat index /
        ``a.item(i, j)``) as a Python scalar."""
        return self.asnumpy().item(*args)

    def tolist(self):
        """The data as nested Python lists (a scalar for a 0-d array)."""
        return self.asnumpy().tolist()

    def asscalar(self):
        """The single element as a NumPy scalar (MXNet's legacy name)."""
        return super().asscalar()

    def as_nd_ndarray(self):
        """The same buffer as a legacy ``mx.nd.NDArray`` (no copy; recorded as an identity
        under ``autograd.record()``, so gradients flow through)."""
        view = self._alias(self._data, _COPY, _COPY.default_attrs)
        return _front.as_nd(view)

    def as_np_ndarray(self):
        """This array (already an np array)."""
        return self

    def as_in_ctx(self, ctx):
        """This array on ``ctx`` (itself when already there)."""
        return self.as_in_context(to_ctx(ctx))

    to_device = as_in_ctx

    def as_in_context(self, context):
        return _front.as_np(super().as_in_context(to_ctx(context)))

    def copyto(self, other):
        return _front.as_np(super().copyto(other))

    def copy(self, order="C"):
        """A deep copy (recorded and differentiable)."""
        _check_order("copy", order)
        return _front.call("_copy", [self])

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """A copy cast to ``dtype`` (None: the default float); ``copy=False`` returns this
        array when the dtype already matches."""
        dt = as_dtype(dtype, "astype")
        if not copy and dt == self._data.dtype:
            return self
        return _front.call("cast", [self], dtype=dt)

    def detach(self):
        return _front.as_np(super().detach())

    def attach_grad(self, grad_req="write", stype=None):
        super().attach_grad(grad_req, stype)

    def __array__(self, dtype=None, copy=None):
        return super().__array__(dtype, copy)

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), (self._ctx.device_type, self._ctx.device_id)))

    # ---- shape ----------------------------------------------------------------------------
    def reshape(self, *shape, order="C", **kwargs):
        """A view with a new shape (NumPy's rules: one -1 is inferred; no other codes)."""
        if "newshape" in kwargs:
            shape = (kwargs.pop("newshape"),)
        if "shape" in kwargs:
            shape = (kwargs.pop("shape"),)
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        from ._manipulation import reshape
        return reshape(self, shape, order=order)

    def transpose(self, *axes):
        """The axes permuted (reversed by default); a copy."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        from ._manipulation import transpose
        return transpose(self, axes or None)

    def flatten(self, order="C"):
        """A 1-d copy."""
        _check_order("flatten", order)
        return self.reshape(-1).copy()

    def ravel(self, order="C"):
        """The data as 1-d (a view)."""
        _check_order("ravel", order)
        return self.reshape(-1)

    def squeeze(self, axis=None):
        from ._manipulation import squeeze
        return squeeze(self, axis)

    def expand_dims(self, axis):
        from ._manipulation import expand_dims
        return expand_dims(self, axis)

    # ---- indexing --------------------------------------------------------------------------
    def __getitem__(self, key):
        """``a[key]`` with NumPy's rules: integers drop their axis (``a[0]`` of a 1-d array
        is 0-d), index arrays and boolean masks select copies, a basic key that selects a
        contiguous block is a view that writes through. Recorded under ``autograd``."""
        key = _index_key(key)
        flat = _bool_scalar_positions(key, self.shape)
        if flat is not None:
            return self.reshape(-1)[flat]
        key = canonical_key(key, self.shape, numpy=True)
        attrs = Attrs(key=key)
        if is_basic(key):
            try:
                data = self._data[_view_key(key)]
            except IndexError as e:
                raise IndexError(f"__getitem__: index {key!r} for shape {self.shape}: "
                                 f"{e}") from None
            if data.flags.c_contiguous:
                return _front.as_np(self._alias(data, _GETITEM, attrs))
        return _front.call("_getitem", [self], key=key)

    def __setitem__(self, key, value):
        """``a[key] = value`` in place (``value`` broadcast and cast to ``a``'s dtype;
        boolean masks and index arrays allowed). Recorded under ``autograd``."""
        if isinstance(value, ndarray) and value._data.dtype != self._data.dtype:
            value = value.astype(self._data.dtype)
        elif not isinstance(value, NDArray):
            value = _value_nd(_onp.asarray(value, dtype=self._data.dtype)
                              if _is_number(value) else value, self._data.dtype, self._ctx)
        key = _index_key(key)
        flat = _bool_scalar_positions(key, self.shape)
        if flat is not None:
            self.reshape(-1)[flat] = value
            return
        if value.ndim:
            # leading length-1 axes beyond the region's rank go (NumPy's rule), reshaped
            # with NumPy's reshape (a 0 in a shape is a length, not "keep")
            region = region_shape(canonical_key(key, self.shape, "__setitem__", numpy=True),
                                  self.shape, "__setitem__")
            extra = 0
            while value.ndim - extra > len(region) and value.shape[extra] == 1:
                extra += 1
            if extra:
                from ._manipulation import reshape
                value = reshape(value, tuple(value.shape[extra:]))
        NDArray.__setitem__(self, key, value)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


def _rebuild(host, ctx):
    return array(host, ctx=Context(*ctx), dtype=host.dtype)


class NotSupported(MXNetError, NotImplementedError):
    """A NumPy option mxlite does not offer (a memory order other than 'C', a ufunc's
    ``where=``); a NotImplementedError, as MXNet's, and an MXNetError."""


OrderNotSupported = NotSupported


def _check_order(fn, order):
    """Refuse a memory order other than C ('K' and 'A' of a C-ordered array are C)."""
    if order not in ("C", "K", "A", None):
        raise OrderNotSupported(f"{fn}: order={order!r} is not supported; mxlite arrays "
                                "are C-ordered")


def _is_number(v):
    return isinstance(v, (int, float, bool, _onp.number, _onp.bool_))


def _index_key(key):
    """NumPy-level items from np/nd arrays used as indices (host data; booleans kept);
    a sequence (list, tuple or range) inside the key tuple is an index array, as in
    NumPy (``a[[1, 2], (2, 3)]``)."""
    if isinstance(key, tuple):
        return tuple(_index_item(k, nested=True) for k in key)
    return _index_item(key)


def _index_item(k, nested=False):
    if isinstance(k, NDArray):
        host = namespace_for(k._ctx).to_host(k._data)
        if host.ndim == 0 and host.dtype.kind in "iu":
            return int(host)
        return host
    if isinstance(k, (float, _onp.floating)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                         f"(`None`) and integer or boolean arrays are valid indices, got {k!r}")
    if isinstance(k, range):
        return _onp.arange(k.start, k.stop, k.step, dtype=_onp.int64)
    if isinstance(k, (list, tuple)) and (nested or isinstance(k, list)):
        if any(isinstance(v, NDArray) for v in k):
            return _onp.array([_index_item(v) for v in k])
        return _onp.asarray(k) if isinstance(k, tuple) else k
    return k


def _is_bool_scalar(k):
    return isinstance(k, (bool, _onp.bool_)) or (isinstance(k, _onp.ndarray) and k.ndim == 0
                                                 and k.dtype == _onp.bool_)


def _bool_scalar_positions(key, shape):
    """For a key holding a boolean scalar (``a[True]`` adds a length-1 axis, ``a[False]`` a
    length-0 one, NumPy's rule), the flat positions it selects (int64, NumPy's shape of
    the result); None for any other key."""
    items = key if isinstance(key, tuple) else (key,)
    if not any(_is_bool_scalar(k) for k in items):
        return None
    size = 1
    for d in shape:
        size *= d
    try:
        return _onp.arange(size, dtype=_onp.int64).reshape(shape)[key]
    except IndexError as e:
        raise IndexError(f"__getitem__: index {key!r} for shape {tuple(shape)}: {e}") from None


# ---- creation from data ---------------------------------------------------------------------
def array(object, dtype=None, ctx=None, copy=True):  # noqa: A002  (NumPy's argument name)
    """An np array holding ``object`` (a list, number, NumPy array or mxlite array; always
    a copy on ``ctx``). ``dtype`` defaults to the source's dtype for arrays and to the
    default float (float32; float64 after ``npx.set_np(dtype=True)``) for lists and
    numbers, as MXNet's ``mx.np.array``; a boolean list gives booleans."""
    ctx = to_ctx(ctx)
    if isinstance(object, NDArray):
        dt = object._data.dtype if dtype is None else as_dtype(dtype, "array")
        src = namespace_for(object._ctx).to_host(object._data)
    else:
        src = object
        if dtype is not None:
            dt = as_dtype(dtype, "array")
        elif isinstance(object, (_onp.ndarray, _onp.generic)):
            dt = object.dtype
        else:
            host = _onp.asarray(object)
            dt = host.dtype if host.dtype.kind == "b" else default_float()
    data = _checked_values(src, _onp.dtype(dt), "array")
    return _front.as_np(NDArray._wrap(namespace_for(ctx).from_host(data), ctx))


def asarray(a, dtype=None, ctx=None):
    """``a`` itself when it is an np array of ``dtype`` on ``ctx``, else ``array(a, ...)``."""
    if isinstance(a, ndarray) and (dtype is None or as_dtype(dtype) == a._data.dtype) and \
            (ctx is None or to_ctx(ctx) == a._ctx):
        return a
    if isinstance(a, NDArray) and dtype is None and (ctx is None or to_ctx(ctx) == a._ctx):
        return a.as_np_ndarray()
    return array(a, dtype=dtype, ctx=ctx)


def to_array(x, like=None, dtype=None):
    """An operand as an np array: arrays (np or legacy) as they are, numbers and lists as
    new arrays on ``like``'s context (numbers: ``dtype``, else NumPy's kind at the default
    widths)."""
    if isinstance(x, NDArray):
        return x
    ctx = like._ctx if isinstance(like, NDArray) else None
    if dtype is None and _is_number(x):
        if isinstance(x, (bool, _onp.bool_)):
            dtype = _onp.bool_
        elif isinstance(x, (int, _onp.integer)):
            dtype = _onp.int64
    return array(x, dtype=dtype, ctx=ctx)


def _np_ndarray_of_nd(self):
    """``NDArray.as_np_ndarray``: the same buffer as an ``mx.np.ndarray`` (no copy;
    recorded as an identity under ``autograd.record()``)."""
    view = self._alias(self._data, _COPY, _COPY.default_attrs)
    return _front.as_np(view)


def _nd_ndarray_of_nd(self):
    """``NDArray.as_nd_ndarray``: this array (already a legacy NDArray)."""
    return self


NDArray.as_np_ndarray = _np_ndarray_of_nd
NDArray.as_nd_ndarray = _nd_ndarray_of_nd
_front.set_classes(array_cls=ndarray)
