"""Sparse storage formats (MXNet's ``csr`` and ``row_sparse``) and their conversions.

A sparse NDArray (``mxlite.ndarray.sparse``) holds one of these; the operators' storage
rules (``mxlite.ops.sparse.rules``) compute on them. Index arrays are int64 (MXNet's aux
types, and mxlite's large-tensor rule: ``nnz`` and every dimension may pass 2**32).

- ``CSR``: a matrix of ``shape`` (rows, cols); row ``i`` holds the values
  ``data[indptr[i]:indptr[i+1]]`` in the columns ``indices[indptr[i]:indptr[i+1]]``.
- ``RowSparse``: an array of ``shape`` whose rows ``indices`` (strictly increasing) are
  ``data`` (one row of ``shape[1:]`` each); every other row is zero.

A format read from a user (``csr_matrix((data, indices, indptr))``) is not checked when it
is made, as MXNet's is not (``check_format`` does that); every kernel that follows an index
checks it first (``checked``), so a bad index is an MXNetError, never a read or write
outside a buffer. Kernels that add terms in any order (``dot``, element-wise functions of
the values, conversions to dense) also take a csr matrix whose columns are unsorted within a
row, as MXNet's do, and read a repeated column as the sum of its values (SciPy's reading);
the others (merges of two formats, ``retain``) need the canonical format. Conversions here
run on host (NumPy) arrays.

On a GPU the parts are the device namespace's arrays (CuPy's; NumPy's under the host
emulator), made by the GPU's storage kernels (``mxlite/cuda/ops/sparse_formats.py``), which
register their checks and conversions in ``DEVICE`` under their kernels key ('gpu');
``moved`` copies a format between devices.
"""
import numpy as np

from ...base import MXNetError

__all__ = ["DEFAULT", "CSR_STYPE", "RSP_STYPE", "STYPES", "INDEX", "CSR", "RowSparse",
           "stype_of_raw", "segment_sums", "dense_to_csr", "dense_to_rsp", "to_dense", "check_format",
           "checked", "empty_like_storage", "csr_zeros", "rsp_zeros", "DEVICE", "device_formats",
           "moved", "index_error", "HOST"]

DEFAULT, CSR_STYPE, RSP_STYPE = "default", "csr", "row_sparse"
STYPES = (DEFAULT, RSP_STYPE, CSR_STYPE)
INDEX = np.dtype(np.int64)

# kernels key ('gpu') -> the module of that device's format functions: ``checked(xp, value,
# op, canonical)``, ``to_dense(xp, value)``, ``from_dense(xp, dense, stype)``,
# ``empty_like_storage(xp, stype, shape, dtype)`` (mxlite/cuda/ops/sparse_formats.py)
DEVICE = {}


def device_formats(rctx):
    """The format functions of ``rctx``'s device, or None on the CPU (this module's)."""
    return None if rctx.kernels == "cpu" else DEVICE.get(rctx.kernels)


def _contiguous(a):
    """``a`` as a C-contiguous array of its own library (NumPy, or a device's)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "flags"):
        return np.ascontiguousarray(a)
    return a if a.flags.c_contiguous else a.copy()


class CSR:
    """A compressed-sparse-row matrix (see the module docstring)."""

    __slots__ = ("data", "indices", "indptr", "shape", "valid", "in_range")
    stype = CSR_STYPE

    def __init__(self, data, indices, indptr, shape, valid=False):
        self.data, self.indices, self.indptr = (_contiguous(a) for a in (data, indices, indptr))
        self.shape = tuple(int(d) for d in shape)
        self.valid = valid          # made by mxlite (or checked): a canonical format
        self.in_range = valid       # every index in range (its order unchecked)

    dtype = property(lambda self: self.data.dtype)
    nnz = property(lambda self: int(self.data.shape[0]))
    aux = property(lambda self: (self.indptr, self.indices))   # MXNet's aux order

    def copy(self):
        out = CSR(self.data.copy(), self.indices.copy(), self.indptr.copy(), self.shape,
                  self.valid)
        out.in_range = self.in_range
        return out


class RowSparse:
    """Rows ``indices`` of an array of ``shape``; the others are zero (module docstring)."""

    __slots__ = ("data", "indices", "shape", "valid", "in_range")
    stype = RSP_STYPE

    def __init__(self, data, indices, shape, valid=False):
        self.data, self.indices = _contiguous(data), _contiguous(indices)
        self.shape = tuple(int(d) for d in shape)
        self.valid = valid
        self.in_range = valid

    dtype = property(lambda self: self.data.dtype)
    nnz = property(lambda self: int(self.data.shape[0]))
    aux = property(lambda self: (self.indices,))

    def copy(self):
        out = RowSparse(self.data.copy(), self.indices.copy(), self.shape, self.valid)
        out.in_range = self.in_range
        return out


class _Host:
    """The host as a transfer end of ``moved``: ``asnumpy`` copies, ``from_host`` takes."""

    asnumpy = staticmethod(lambda a: np.array(a, copy=True))
    from_host = staticmethod(np.ascontiguousarray)


HOST = _Host()


def moved(value, src_xp, dst_xp):
    """A copy of format ``value`` (parts of ``src_xp``'s device) on ``dst_xp``'s device: one
    transfer per part, through the host; the flags (valid, in range) carry over."""
    parts = [dst_xp.from_host(np.ascontiguousarray(src_xp.asnumpy(a)))
             for a in (value.data,) + value.aux[::-1]]
    out = CSR(parts[0], parts[1], parts[2], value.shape, value.valid) \
        if isinstance(value, CSR) else RowSparse(parts[0], parts[1], value.shape, value.valid)
    out.in_range = value.in_range
    return out


def stype_of_raw(value):
    """'csr', 'row_sparse' or 'default' (a dense array) for a raw storage value."""
    return getattr(value, "stype", DEFAULT) if isinstance(value, (CSR, RowSparse)) else DEFAULT


def csr_zeros(shape, dtype):
    """An all-zero CSR matrix of ``shape``."""
    return CSR(np.zeros((0,), dtype), np.zeros((0,), INDEX), np.zeros((shape[0] + 1,), INDEX),
               shape, valid=True)


def rsp_zeros(shape, dtype):
    """An all-zero row_sparse array of ``shape``."""
    return RowSparse(np.zeros((0,) + tuple(shape[1:]), dtype), np.zeros((0,), INDEX), shape,
                     valid=True)


def empty_like_storage(stype, shape, dtype):
    """The all-zero value of storage ``stype`` (dense: zeros)."""
    if stype == CSR_STYPE:
        return csr_zeros(shape, dtype)
    if stype == RSP_STYPE:
        return rsp_zeros(shape, dtype)
    return np.zeros(shape, dtype)


def dense_to_csr(dense):
    """The CSR form of a 2-D host array: every element that is not 0 (NaN included), in
    row-major order (so each row's columns are increasing)."""
    if dense.ndim != 2:
        raise MXNetError(f"cast_storage: csr storage is 2-D, got an array of shape {dense.shape}")
    rows, cols = np.nonzero(dense)
    counts = np.bincount(rows, minlength=dense.shape[0]) if rows.size else \
        np.zeros(dense.shape[0], INDEX)
    indptr = np.zeros(dense.shape[0] + 1, INDEX)
    np.cumsum(counts, out=indptr[1:])
    return CSR(np.ascontiguousarray(dense[rows, cols]), cols.astype(INDEX, copy=False), indptr,
               dense.shape, valid=True)


def dense_to_rsp(dense):
    """The row_sparse form of a host array (ndim >= 1): the rows holding any element that is
    not 0 (NaN included)."""
    if dense.ndim < 1:
        raise MXNetError("cast_storage: row_sparse storage needs at least 1 dimension")
    flat = dense.reshape(dense.shape[0], -1)
    rows = np.flatnonzero((flat != 0).any(axis=1)) if flat.shape[1] else np.zeros(0, INDEX)
    return RowSparse(np.ascontiguousarray(dense[rows]), rows.astype(INDEX, copy=False),
                     dense.shape, valid=True)


def to_dense(value):
    """The dense host array of a CSR or RowSparse value (checked first: a bad index is an
    MXNetError); a dense array is returned as it is."""
    if isinstance(value, CSR):
        checked(value, "cast_storage", canonical=False)
        out = np.zeros(value.shape, value.dtype)
        rows = np.repeat(np.arange(value.shape[0], dtype=INDEX), np.diff(value.indptr))
        if value.valid:
            out[rows, value.indices] = value.data
        else:                   # repeated columns of a row add up (SciPy's reading)
            np.add.at(out, (rows, value.indices), value.data)
        return out
    if isinstance(value, RowSparse):
        checked(value, "cast_storage")
        out = np.zeros(value.shape, value.dtype)
        out[value.indices] = value.data
        return out
    return value


def segment_sums(values, indptr):
    """The sum of ``values[indptr[i]:indptr[i+1]]`` for each row ``i`` (0 for an empty
    row), in ``values``' dtype: a csr matrix's row sums."""
    counts = np.diff(indptr)
    out = np.zeros((counts.shape[0],) + values.shape[1:], values.dtype)
    nonempty = counts > 0
    if nonempty.any():
        # each segment runs to the next non-empty row's start, which is its own end
        out[nonempty] = np.add.reduceat(values, indptr[:-1][nonempty], axis=0)
    return out


def _format_error(op, what):
    return MXNetError(f"{op}: invalid sparse format: {what}")


def index_error(op, kind, value, first=None, last=None):
    """The MXNetError of a failed index check ``kind`` (the CPU's and the GPU's checks give
    the same messages): 'indptr_ends' (with ``first``/``last``, indptr's ends),
    'indptr_decreases', 'col_range', 'col_order', 'row_range', 'row_order'."""
    what = {
        "indptr_ends": lambda: (f"indptr must start at 0 and end at nnz={value.nnz}; it runs "
                                f"from {first} to {last}"),
        "indptr_decreases": lambda: "indptr decreases",
        "col_range": lambda: f"a column index is outside [0, {value.shape[1]})",
        "col_order": lambda: ("the column indices of a row are not strictly increasing "
                              "(unsorted or repeated)"),
        "row_range": lambda: f"a row index is outside [0, {value.shape[0]})",
        "row_order": lambda: "the row indices are not strictly increasing (unsorted or repeated)",
    }[kind]()
    return _format_error(op, what)


def _check_shapes(value, op):
    """The structural checks (MXNet's ``check_format(full_check=False)``): the component
    arrays' sizes agree with each other and with the shape."""
    if isinstance(value, CSR):
        if len(value.shape) != 2:
            raise _format_error(op, f"csr storage is 2-D, the shape is {value.shape}")
        if value.indptr.ndim != 1 or value.indptr.shape[0] != value.shape[0] + 1:
            raise _format_error(op, f"indptr has shape {value.indptr.shape}; a csr matrix of "
                                f"shape {value.shape} needs {value.shape[0] + 1} entries")
        if value.indices.ndim != 1 or value.data.ndim != 1 or \
                value.indices.shape[0] != value.data.shape[0]:
            raise _format_error(op, f"indices has shape {value.indices.shape} and data "
                                f"{value.data.shape}; both must be 1-D with one entry per "
                                "stored value")
    else:
        if value.indices.ndim != 1 or value.data.shape[:1] != value.indices.shape:
            raise _format_error(op, f"indices has shape {value.indices.shape} and data "
                                f"{value.data.shape}; data needs one row per index")
        if tuple(value.data.shape[1:]) != tuple(value.shape[1:]):
            raise _format_error(op, f"data rows have shape {value.data.shape[1:]}; the array "
                                f"of shape {value.shape} has rows of {value.shape[1:]}")


def check_format(value, full_check=True, op="check_format"):
    """MXNet's ``check_format``: MXNetError naming what is wrong, else None. The full check
    also reads the indices: CSR's indptr starts at 0, never decreases and ends at nnz, and
    each row's column indices are in range and strictly increasing; row_sparse's row indices
    are in range and strictly increasing. A value passing the full check is marked valid."""
    _check_shapes(value, op)
    if full_check:
        _check_indices(value, op, canonical=True)


def _check_indices(value, op, canonical):
    """The index checks of ``check_format``; ``canonical=False`` leaves out the order (the
    kernels that add terms in any order take unsorted column indices, as MXNet's do)."""
    if isinstance(value, CSR):
        indptr, idx, nnz = value.indptr, value.indices, value.nnz
        if indptr[0] != 0 or indptr[-1] != nnz:
            raise index_error(op, "indptr_ends", value, int(indptr[0]), int(indptr[-1]))
        if np.any(np.diff(indptr) < 0):
            raise index_error(op, "indptr_decreases", value)
        if nnz:
            if idx.min() < 0 or idx.max() >= value.shape[1]:
                raise index_error(op, "col_range", value)
            if canonical:
                step = np.diff(idx)
                starts = indptr[1:-1]
                starts = starts[(starts > 0) & (starts < nnz)] - 1   # no step across rows
                bad = step <= 0
                bad[starts] = False
                if bad.any():
                    raise index_error(op, "col_order", value)
    else:
        idx = value.indices
        if idx.shape[0]:
            if idx.min() < 0 or idx.max() >= value.shape[0]:
                raise index_error(op, "row_range", value)
            if canonical and np.any(np.diff(idx) <= 0):
                raise index_error(op, "row_order", value)
    value.in_range = True
    if canonical:
        value.valid = True


def checked(value, op, canonical=True):
    """``value`` after the format check, done once per value: kernels call this before they
    follow an index. ``canonical=False``: indices in range, in any order within a row (for
    the kernels that add terms in any order: ``dot``, ``cast_storage``)."""
    if not value.valid and not (value.in_range and not canonical):
        _check_shapes(value, op)
        _check_indices(value, op, canonical)
    return value
