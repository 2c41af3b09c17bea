"""``mx.nd.sparse``: CSR and row_sparse NDArrays (MXNet 1.9.1's ``CSRNDArray`` and
``RowSparseNDArray``), their creation, and the operators that compute on them natively.

A sparse array keeps its storage (``mxlite.ops.sparse.formats``: ``CSR`` or ``RowSparse``,
int64 indices) in place of a dense buffer. Every operator takes it: one whose record has a
storage rule for these inputs computes on the stored values; any other runs on dense
copies, with MXNet's one-time "storage fallback" warning (``mxlite.ndarray._sparse_invoke``).

Differences from MXNet 1.9.1, on purpose:

- bad index data reaches no kernel: an operator checks a format it did not make itself
  (``check_format``) before it follows an index, and raises MXNetError where MXNet could
  read or write outside a buffer;
- ``.data``, ``.indices`` and ``.indptr`` are copies, as MXNet documents them ("a deep
  copy"), so a write to one cannot break the format.

On a GPU context the storage's parts are device arrays (``formats.DEVICE``: the GPU's
checks and conversions); arrays are built on the host and copied there, and
``copyto``/``as_in_context`` move them between devices.
"""
import builtins
import warnings

import numpy as np

from ..base import MXNetError, normalize_dtype
from ..context import Context, current_context
from .._core.dispatch import NDArrayBase
from ..ops.sparse import formats as F
from .ndarray import NDArray, _checked_values
from .ndarray import array as _dense_array

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "add", "subtract", "multiply",
           "divide"]

_NUMBERS = (int, float, np.integer, np.floating, np.bool_)
# (mx.nd.sparse also holds the operators with storage rules, ``slice`` and ``abs`` among
# them, as module attributes: this module reads Python's builtins by these names)
_PySlice = builtins.slice


def _context(ctx):
    """``ctx`` (default: the current one) as a Context whose device holds sparse storage
    (a GPU without a backend is an MXNetError saying why)."""
    ctx = ctx or current_context()
    ctx = ctx if isinstance(ctx, Context) else Context(ctx)
    if ctx.compute_device != "cpu":
        from ..device import run_context
        if F.device_formats(run_context(ctx)) is None:
            raise MXNetError(f"sparse storage on {ctx}: no sparse kernels for its device")
    return ctx


def _xp(ctx):
    """(the array namespace of ``ctx``, its device's format functions or None on the CPU)."""
    from ..device import run_context
    r = run_context(ctx)
    return r.xp, F.device_formats(r)


def _placed(value, ctx):
    """The NDArray of host format ``value`` on ``ctx`` (copied to a GPU there)."""
    if ctx.compute_device != "cpu":
        value = F.moved(value, F.HOST, _xp(ctx)[0])
    return wrap(value, ctx)


def _host_value(x):
    """The storage of sparse NDArray ``x`` with host (NumPy) parts: itself on the CPU."""
    if x._ctx.compute_device == "cpu":
        return x._sp
    return F.moved(x._sp, _xp(x._ctx)[0], F.HOST)


def _copied(a, ctx):
    """A copy of part ``a`` of a storage on ``ctx``."""
    if ctx.compute_device == "cpu":
        return a.copy()
    xp = _xp(ctx)[0]
    out = xp.empty(a.shape, a.dtype)
    xp.strided_copy(a, out)
    return out


def wrap(value, ctx):
    """The NDArray holding raw ``value``: a CSRNDArray, a RowSparseNDArray, or for a dense
    array an NDArray."""
    if isinstance(value, F.CSR):
        cls = CSRNDArray
    elif isinstance(value, F.RowSparse):
        cls = RowSparseNDArray
    else:
        return NDArray._wrap(value, ctx)
    a = NDArrayBase.__new__(cls)
    a._data = None
    a._sp = value
    a._ctx = ctx
    a._grad_req = "null"
    a._version = [0]
    return a


def raw(x):
    """The raw value of NDArray ``x``: its storage, or its dense buffer."""
    return x._sp if x._data is None else x._data


class BaseSparseNDArray(NDArray):
    """An NDArray in sparse storage (``CSRNDArray``, ``RowSparseNDArray``)."""

    __slots__ = ("_sp",)

    shape = property(lambda self: self._sp.shape, doc="Tuple of dimensions (the dense shape).")
    dtype = property(lambda self: self._sp.data.dtype.type, doc="NumPy scalar type.")
    ndim = property(lambda self: len(self._sp.shape), doc="Number of dimensions.")
    stype = property(lambda self: self._sp.stype, doc="Storage type: 'csr' or 'row_sparse'.")

    @property
    def size(self):
        """Not defined for sparse storage (as MXNet: the dense count or the stored count
        would both be a guess); NotImplementedError."""
        raise NotImplementedError(f"size of a {type(self).__name__} is ambiguous: use "
                                  "data.size (stored values) or the product of shape")

    def __repr__(self):
        """MXNet's format: ``<CSRNDArray 3x4 @cpu(0)>``."""
        return f"\n<{type(self).__name__} {'x'.join(map(str, self.shape))} @{self._ctx}>"

    def __bool__(self):
        raise MXNetError(f"the truth value of a {type(self).__name__} is ambiguous")

    def __iter__(self):
        raise MXNetError(f"iterating over a {type(self).__name__} is not supported")

    @property
    def _num_aux(self):
        return len(self._sp.aux)

    @property
    def _aux_types(self):
        return [a.dtype.type for a in self._sp.aux]

    def _aux_data(self, i):
        """A copy of aux array ``i`` (csr: 0 indptr, 1 indices; row_sparse: 0 indices)."""
        return NDArray._wrap(_copied(self._sp.aux[i], self._ctx), self._ctx)

    @property
    def data(self):
        """A copy of the stored values (an NDArray)."""
        return NDArray._wrap(_copied(self._sp.data, self._ctx), self._ctx)

    @property
    def indices(self):
        """A copy of the indices (int64 NDArray): csr column indices, row_sparse row indices."""
        return NDArray._wrap(_copied(self._sp.indices, self._ctx), self._ctx)

    def asnumpy(self):
        """A dense NumPy copy (made on the host from a GPU array's parts)."""
        return F.to_dense(_host_value(self))

    def __array__(self, dtype=None, copy=None):
        dense = F.to_dense(_host_value(self))
        return dense if dtype is None else dense.astype(dtype, copy=False)

    def asscalar(self):
        raise MXNetError(f"asscalar of a {type(self).__name__}: convert with tostype('default')")

    def astype(self, dtype, copy=True):
        """A copy with values cast to ``dtype``, in the same storage (the ``cast`` operator:
        recorded; ``copy=False``: this array itself when the dtype matches)."""
        dt = normalize_dtype(dtype, "astype")
        if not copy and dt == self._sp.dtype:
            return self
        from .ndarray import invoke
        from ..ops.registry import REGISTRY
        return invoke(REGISTRY["cast"], [self], {"dtype": dt})

    def copy(self):
        """A deep copy in the same storage (the ``_copy`` operator: recorded)."""
        from .ndarray import invoke
        from ..ops.registry import REGISTRY
        return invoke(REGISTRY["_copy"], [self], {})

    def tostype(self, stype):
        """This array in storage ``stype`` (a copy): 'default', or its own storage type;
        csr and row_sparse do not convert into each other (MXNet's rule)."""
        from .ndarray import invoke
        from ..ops.registry import REGISTRY
        return invoke(REGISTRY["cast_storage"], [self], {"stype": stype})

    def copyto(self, other):
        """Copy into NDArray ``other`` (the same shape; dense, or this storage type) and
        return it, or into a new array on Context ``other``."""
        if isinstance(other, Context):
            _context(other)
            return wrap(_moved(self._sp, self._ctx, other), other)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto: expected an NDArray or Context, got {type(other).__name__}")
        if other is self:
            warnings.warn("copyto: copying an array to itself", RuntimeWarning, stacklevel=2)
            return other
        if other.shape != self.shape:
            raise MXNetError(f"copyto: shape mismatch: source {self.shape}, target {other.shape}")
        if other.stype == "default":
            return self.tostype("default").copyto(other)
        if other.stype != self.stype:
            raise MXNetError(f"copyto: a {self.stype} array cannot be copied into a "
                             f"{other.stype} array")
        dtype = np.dtype(other.dtype)
        if dtype == self._sp.dtype:
            _assign(other, _moved(self._sp, self._ctx, other._ctx))
            return other
        sp = _host_value(self) if self._ctx.compute_device != "cpu" else self._sp.copy()
        sp.data = _checked_values(sp.data, dtype, "copyto")
        _assign(other, _placed(sp, other._ctx)._sp)
        return other

    def detach(self):
        """This storage in a new array cut from the autograd graph. A write replaces a
        sparse array's storage, so a later write to one of the two is not seen by the
        other (a dense ``detach`` shares one buffer)."""
        return wrap(self._sp, self._ctx)

    def as_in_context(self, context):
        """This array on ``context`` (itself when already there)."""
        if not isinstance(context, Context):
            raise TypeError(f"as_in_context: expected a Context, got {type(context).__name__}")
        return self if context == self._ctx else self.copyto(context)

    def check_format(self, full_check=True):
        """MXNetError if the storage is not a valid format: the sizes of the parts always;
        with ``full_check`` (O(nnz)) also the indices (in range, sorted, no repeats; indptr
        from 0 to nnz, never decreasing)."""
        xp, dev = _xp(self._ctx)
        if dev is None or not full_check:
            F.check_format(self._sp, full_check)
        else:
            dev.checked(xp, self._sp, "check_format", canonical=True, force=True)

    def wait_to_read(self):
        """Wait for the kernels writing this array (none on the CPU: sparse kernels there
        run synchronously)."""
        if self._ctx.compute_device != "cpu":
            _xp(self._ctx)[0].synchronize()

    def reshape(self, *shape, **kwargs):
        raise MXNetError(f"reshape of a {type(self).__name__} is not supported")

    def _setitem_all(self, key, value):
        if not _whole(key):
            raise MXNetError(f"{type(self).__name__} supports only [:] for assignment")
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
        elif isinstance(value, (np.ndarray, np.generic, list, tuple)):
            _dense_array(value, dtype=self.dtype).copyto(self)
        else:
            return False
        return True

    def __reduce__(self):
        sp = _host_value(self)
        return (_rebuild, (self.stype, [np.asarray(a) for a in (sp.data,) + sp.aux],
                           self.shape, (self._ctx.device_type, self._ctx.device_id)))

    # arithmetic: MXNet's sparse.add/subtract/multiply/divide
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return divide(self, other)

    def __rtruediv__(self, other):
        return divide(other, self)

    def __neg__(self):
        from . import negative
        return negative(self)


def _whole(key):
    """``[:]``, ``[()]`` or ``[...]``: the whole array."""
    return (isinstance(key, _PySlice) and key == _PySlice(None)) or key == () or key is Ellipsis


def _assign(target, value):
    """Make sparse NDArray ``target`` hold ``value`` (an in-place write: its version moves)."""
    target._sp = value
    target._version[0] += 1


def _rebuild(stype, parts, shape, ctx):
    parts = [np.ascontiguousarray(p) for p in parts]
    value = F.CSR(parts[0], parts[2], parts[1], shape) if stype == "csr" else \
        F.RowSparse(parts[0], parts[1], shape)
    return _placed(value, Context(*ctx))


def _moved(value, src, dst):
    """A copy of storage ``value`` of Context ``src`` on Context ``dst``."""
    if src == dst:
        xp, dev = _xp(src)
        return value.copy() if dev is None else dev.copy(xp, value)
    return F.moved(value, _xp(src)[0] if src.compute_device != "cpu" else F.HOST,
                   _xp(dst)[0] if dst.compute_device != "cpu" else F.HOST)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row storage: ``data`` (the stored values),
    ``indices`` (their columns) and ``indptr`` (row ``i`` is ``indptr[i]:indptr[i+1]``)."""

    __slots__ = ()

    @property
    def indptr(self):
        """A copy of the row pointers (int64 NDArray of rows + 1 entries)."""
        return NDArray._wrap(_copied(self._sp.indptr, self._ctx), self._ctx)

    def __getitem__(self, key):
        """Rows as a CSRNDArray: ``x[i]`` (one row, shape (1, cols)) or ``x[a:b]``."""
        from . import slice as _slice
        if isinstance(key, (int, np.integer)):
            i = int(key)
            begin = self.shape[0] + i if i < 0 else i
            if not 0 <= begin < self.shape[0]:
                raise IndexError(f"row {i} is out of range for a CSRNDArray of shape "
                                 f"{self.shape}")
            return _slice(self, begin=(begin,), end=(begin + 1,))
        if isinstance(key, _PySlice):
            if key.step not in (None, 1):
                raise MXNetError("CSRNDArray supports only contiguous row slices (step 1)")
            if key == _PySlice(None):
                return self
            begin, end, _ = key.indices(self.shape[0])
            return _slice(self, begin=(begin,), end=(max(begin, end),))
        raise MXNetError(f"CSRNDArray indexing takes an int or a row slice, got {key!r}")

    def __setitem__(self, key, value):
        """``x[:] = value``: an NDArray or NumPy array of the same shape (a number is refused,
        as MXNet: it would make every element stored)."""
        if not self._setitem_all(key, value):
            raise MXNetError(f"CSRNDArray[:] = {type(value).__name__}: assign an NDArray or "
                             "NumPy array")

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` copy (needs SciPy)."""
        import scipy.sparse as spsp
        sp = _host_value(self)
        return spsp.csr_matrix((sp.data.copy(), sp.indices.copy(), sp.indptr.copy()),
                               shape=sp.shape, dtype=sp.data.dtype)


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose rows ``indices`` (increasing int64) are ``data``; every other row is 0."""

    __slots__ = ()

    def __getitem__(self, key):
        if isinstance(key, _PySlice) and key == _PySlice(None):
            return self
        raise MXNetError("RowSparseNDArray supports only [:] for indexing")

    def __setitem__(self, key, value):
        """``x[:] = value``: an NDArray or NumPy array, or a number (every row stored)."""
        if isinstance(value, _NUMBERS) and not isinstance(value, bool):
            if not _whole(key):
                raise MXNetError("RowSparseNDArray supports only [:] for assignment")
            full = np.full(self.shape, value, self._sp.dtype)
            _assign(self, _placed(F.dense_to_rsp(full) if value == 0 else F.RowSparse(
                full, np.arange(self.shape[0], dtype=F.INDEX), self.shape, True), self._ctx)._sp)
        elif not self._setitem_all(key, value):
            raise MXNetError(f"RowSparseNDArray[:] = {type(value).__name__}: assign an "
                             "NDArray, a NumPy array or a number")

    def retain(self, indices):
        """The rows of ``indices`` that are stored (MXNet's ``sparse.retain``)."""
        from . import _internal as internal
        return internal._sparse_retain(self, indices)


# ---- creation ------------------------------------------------------------------------------
def _default_dtype(source, dtype):
    """MXNet's rule: the source's dtype for an NDArray, NumPy array or SciPy matrix, else
    float32."""
    if dtype is not None:
        return normalize_dtype(dtype, "sparse")
    if isinstance(source, (NDArray, np.ndarray)) or _is_scipy(source):
        return np.dtype(source.dtype)
    return np.dtype(np.float32)


def _is_scipy(x):
    mod = type(x).__module__
    return mod.startswith("scipy.sparse") and hasattr(x, "tocsr")


def _host(source, dtype, what):
    """A 1-D-or-more host array of ``dtype`` from an NDArray, NumPy array or list."""
    if isinstance(source, BaseSparseNDArray):
        raise MXNetError(f"{what}: expected a dense array, got a {type(source).__name__}")
    if isinstance(source, NDArray):
        source = source.asnumpy()
    return np.ascontiguousarray(_checked_values(source, dtype, what))


def _index_array(source, what):
    idx = _host(source, np.dtype(np.float64) if _is_float(source) else F.INDEX, what)
    if idx.dtype != F.INDEX:
        if not np.all(np.trunc(idx) == idx):
            raise MXNetError(f"{what}: indices must be integers")
        idx = idx.astype(F.INDEX)
    if idx.ndim != 1:
        raise MXNetError(f"{what}: indices must be 1-D, got shape {idx.shape}")
    return idx


def _is_float(source):
    kind = np.asarray(source.asnumpy() if isinstance(source, NDArray) else source).dtype.kind
    return kind == "f"


def _shape(shape, what):
    if shape is None:
        return None
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise MXNetError(f"{what}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise MXNetError(f"{what}: negative dimension in shape {shape}")
    return shape


def _check_shape(given, want, what):
    if want is not None and tuple(given) != tuple(want):
        raise MXNetError(f"{what}: the source has shape {tuple(given)}, shape={tuple(want)} "
                         "was asked")


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from any form MXNet takes:

    - ``csr_matrix(D)``: a dense 2-D array (NDArray, NumPy array or nested lists);
    - ``csr_matrix(S)``: a CSRNDArray or a SciPy sparse matrix (a copy);
    - ``csr_matrix((M, N))``: all zeros;
    - ``csr_matrix((data, indices, indptr), shape=None)``: the parts (shape inferred as
      ``(len(indptr) - 1, max(indices) + 1)`` when not given);
    - ``csr_matrix((data, (row, col)), shape=None)``: coordinates (repeats are summed).

    dtype: the source's for an NDArray, NumPy array or SciPy matrix, else float32.
    """
    what = "csr_matrix"
    ctx = _context(ctx)
    shape = _shape(shape, what)
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(
            isinstance(d, (int, np.integer)) for d in arg1):
        _check_shape(arg1, shape, what)
        return zeros("csr", arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = arg1
        dt = _default_dtype(data, dtype)
        data = _host(data, dt, what)
        indices, indptr = _index_array(indices, what), _index_array(indptr, what)
        if data.ndim != 1 or indptr.shape[0] == 0:
            raise MXNetError(f"{what}: data must be 1-D and indptr non-empty (data "
                             f"{data.shape}, indptr {indptr.shape})")
        if shape is None:
            if indices.shape[0] == 0:
                raise MXNetError(f"{what}: the shape cannot be inferred from no indices; "
                                 "give shape=")
            shape = (indptr.shape[0] - 1, int(indices.max()) + 1)
        if len(shape) != 2:
            raise MXNetError(f"{what}: csr storage is 2-D, shape={shape}")
        value = F.CSR(data, indices, indptr, shape)
        F.check_format(value, full_check=False, op=what)
        return _placed(value, ctx)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, (row, col) = arg1[0], arg1[1]
        dt = _default_dtype(data, dtype) if dtype is not None or isinstance(
            data, (NDArray, np.ndarray)) else np.dtype(np.float32)
        return _from_coo(_host(data, dt, what), _index_array(row, what),
                         _index_array(col, what), shape, ctx, what)
    if isinstance(arg1, CSRNDArray):
        _check_shape(arg1.shape, shape, what)
        out = arg1.copyto(ctx) if arg1._ctx != ctx else arg1.copy()
        return out.astype(dtype) if dtype is not None else out
    if isinstance(arg1, BaseSparseNDArray):
        raise MXNetError(f"{what}: a {type(arg1).__name__} does not convert to csr")
    if _is_scipy(arg1):
        s = arg1.tocsr()
        s.sum_duplicates()
        s.sort_indices()
        _check_shape(s.shape, shape, what)
        dt = _default_dtype(arg1, dtype)
        value = F.CSR(_checked_values(s.data, dt, what), s.indices.astype(F.INDEX),
                      s.indptr.astype(F.INDEX), s.shape)
        F.check_format(value, True, what)
        return _placed(value, ctx)
    dense = _host(arg1, _default_dtype(arg1, dtype), what)
    _check_shape(dense.shape, shape, what)
    return _placed(F.dense_to_csr(dense), ctx)


def _from_coo(data, row, col, shape, ctx, what):
    if not (data.ndim == 1 and data.shape == row.shape == col.shape):
        raise MXNetError(f"{what}: data, row and col must be 1-D of one length (got "
                         f"{data.shape}, {row.shape}, {col.shape})")
    if shape is None:
        if not row.size:
            raise MXNetError(f"{what}: the shape cannot be inferred from no entries; give shape=")
        shape = (int(row.max()) + 1, int(col.max()) + 1)
    if len(shape) != 2:
        raise MXNetError(f"{what}: csr storage is 2-D, shape={shape}")
    if row.size and (row.min() < 0 or row.max() >= shape[0] or col.min() < 0
                     or col.max() >= shape[1]):
        raise MXNetError(f"{what}: a coordinate is outside the shape {shape}")
    order = np.lexsort((col, row))
    row, col, data = row[order], col[order], data[order]
    first = np.ones(row.shape[0], bool)
    first[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(data, starts) if starts.size else data[:0]
    row, col = row[starts], col[starts]
    indptr = np.zeros(shape[0] + 1, F.INDEX)
    np.cumsum(np.bincount(row, minlength=shape[0]), out=indptr[1:])
    return _placed(F.CSR(np.ascontiguousarray(summed, data.dtype), col, indptr, shape, True), ctx)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from any form MXNet takes:

    - ``row_sparse_array(D)``: a dense array (ndim >= 1; NDArray, NumPy array or lists);
    - ``row_sparse_array(S)``: a RowSparseNDArray (a copy);
    - ``row_sparse_array((D0, D1, ...))``: all zeros of that shape;
    - ``row_sparse_array((data, indices), shape=None)``: row ``indices[i]`` is ``data[i]``
      (shape inferred as ``(indices[-1] + 1,) + data.shape[1:]`` when not given).

    dtype: the source's for an NDArray or NumPy array, else float32.
    """
    what = "row_sparse_array"
    ctx = _context(ctx)
    shape = _shape(shape, what)
    if isinstance(arg1, tuple) and (len(arg1) > 2 or all(
            isinstance(d, (int, np.integer)) for d in arg1)):
        _check_shape(arg1, shape, what)
        return zeros("row_sparse", _shape(arg1, what), ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = arg1
        dt = _default_dtype(data, dtype)
        data = _host(data, dt, what)
        indices = _index_array(indices, what)
        if data.ndim < 1:
            raise MXNetError(f"{what}: data must have one row per index, got shape {data.shape}")
        if shape is None:
            if not indices.shape[0]:
                raise MXNetError(f"{what}: the shape cannot be inferred from no indices; "
                                 "give shape=")
            shape = (int(indices[-1]) + 1,) + data.shape[1:]
        value = F.RowSparse(data, indices, shape)
        F.check_format(value, full_check=False, op=what)
        return _placed(value, ctx)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape, what)
        out = arg1.copyto(ctx) if arg1._ctx != ctx else arg1.copy()
        return out.astype(dtype) if dtype is not None else out
    if isinstance(arg1, BaseSparseNDArray):
        raise MXNetError(f"{what}: a {type(arg1).__name__} does not convert to row_sparse")
    dense = _host(arg1, _default_dtype(arg1, dtype), what)
    _check_shape(dense.shape, shape, what)
    return _placed(F.dense_to_rsp(dense), ctx)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage ``stype`` ('csr', 'row_sparse' or 'default')."""
    if stype == "default":
        from . import zeros as dense_zeros
        return dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    if stype not in ("csr", "row_sparse"):
        raise MXNetError(f"zeros: unknown storage type {stype!r}")
    shape = _shape((shape,) if isinstance(shape, (int, np.integer)) else shape, "zeros")
    if stype == "csr" and len(shape) != 2:
        raise MXNetError(f"zeros: csr storage is 2-D, shape={shape}")
    if stype == "row_sparse" and len(shape) < 1:
        raise MXNetError("zeros: row_sparse storage needs at least 1 dimension")
    dt = normalize_dtype(dtype, "zeros")
    ctx = _context(ctx)
    xp, dev = _xp(ctx)
    value = F.empty_like_storage(stype, shape, dt) if dev is None else \
        dev.empty_like_storage(xp, stype, shape, dt)
    return wrap(value, ctx)


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage ``stype`` with nothing stored (all zeros, as MXNet's)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a CSRNDArray, RowSparseNDArray or SciPy sparse matrix (a copy)."""
    if isinstance(source_array, RowSparseNDArray):
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, CSRNDArray) or _is_scipy(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise MXNetError(f"sparse.array: expected a sparse NDArray or a SciPy sparse matrix, got "
                     f"{type(source_array).__name__}")


# ---- arithmetic (MXNet's sparse.add etc.: element-wise ops keep sparsity) ------------------
def _binary(lhs, rhs, elemwise, broadcast, scalar, rscalar):
    from . import _internal as internal
    import mxlite.ndarray as nd
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        op = elemwise if lhs.shape == rhs.shape else broadcast
        return getattr(nd, op)(lhs, rhs)
    if isinstance(lhs, NDArray) and isinstance(rhs, _NUMBERS):
        return getattr(internal, scalar)(lhs, scalar=float(rhs))
    if isinstance(rhs, NDArray) and isinstance(lhs, _NUMBERS):
        return getattr(internal, rscalar)(rhs, scalar=float(lhs))
    raise TypeError(f"unsupported operand types {type(lhs).__name__} and {type(rhs).__name__}")


def add(lhs, rhs):
    """``lhs + rhs``: element-wise (sparse results where both are sparse of one type),
    broadcast for different shapes, or with a number."""
    return _binary(lhs, rhs, "elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar")


def subtract(lhs, rhs):
    """``lhs - rhs`` (see ``add``)."""
    return _binary(lhs, rhs, "elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar")


def multiply(lhs, rhs):
    """``lhs * rhs`` (see ``add``); a sparse array times a number stays sparse."""
    return _binary(lhs, rhs, "elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar")


def divide(lhs, rhs):
    """``lhs / rhs`` (see ``add``); a sparse array divided by a number stays sparse."""
    return _binary(lhs, rhs, "elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar")
