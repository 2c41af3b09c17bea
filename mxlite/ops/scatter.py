"""MXNet's sparse-storage forms of three element-wise ops, and ``contrib.quadratic``'s csr rule.

- ``_scatter_plus_scalar`` / ``_scatter_minus_scalar`` (``x + s``, ``x - s``): on a csr or
  row_sparse array they add the scalar to the stored values only, keeping the storage and
  its positions (so the result is not ``x + s`` where ``x`` stores nothing: MXNet's
  definition); on a dense array they are ``_plus_scalar`` / ``_minus_scalar``.
- ``_scatter_elemwise_div(lhs, rhs)``: with a row_sparse ``lhs`` (``rhs`` of any storage),
  a row_sparse result of ``lhs``'s rows, each ``lhs``'s row divided by ``rhs``'s (rows
  ``lhs`` does not store are 0, whatever ``rhs`` holds there); any other storage runs
  ``elemwise_div`` on dense copies (MXNet's fallback).
- ``contrib.quadratic`` of a csr matrix with ``c == 0`` is a csr matrix of the same
  positions (``a x**2 + b x`` of the stored values), as MXNet's; otherwise dense.

Each scatter op has the dense kernel, gradient and parameters of the op it scatters (its
own record, so its storage rules are its own). Imported after ``mxlite.ops.sparse``.
"""
import copy

import numpy as np

from .registry import REGISTRY, register
from .sparse import formats as F
from .sparse.elemwise import _on_values
from .sparse.rules import ANY, SPARSE, StorageRule

CPU = "cpu"


def _scatter_of(name, base, doc):
    """A record ``name`` with ``base``'s kernels, gradient and parameters, and no alias nor
    storage rule of its own yet."""
    op = copy.copy(REGISTRY[base])
    op.name, op.aliases, op.doc = name, (), doc
    op.attrs_cache, op.infer_cache = {}, {}
    op.storage, op.grad_stypes = (), None
    return register(op)


def _same_stype(attrs, stypes):
    return stypes[:1]


for _name, _base, _sign in (("_scatter_plus_scalar", "_plus_scalar", "+"),
                            ("_scatter_minus_scalar", "_minus_scalar", "-")):
    _op = _scatter_of(_name, _base, (
        f"``data {_sign} scalar`` on the stored values of a csr or row_sparse ``data`` (its "
        f"storage and positions kept: where ``data`` stores nothing the result is 0); on a "
        f"dense array the same as ``{_base}``."))
    _op.storage = (StorageRule((SPARSE,), _same_stype, {CPU: _on_values(_op)}),)


def rows_of(value, rows, op):
    """Rows ``rows`` (int64, in range) of ``value`` (dense, csr or row_sparse) as a dense
    array: a row a sparse ``value`` does not store is zeros, a csr's repeated column the sum
    of its values. Only those rows are made, whatever ``value``'s dense shape."""
    if isinstance(value, F.RowSparse):
        value = F.checked(value, op)
        out = np.zeros((rows.size,) + value.shape[1:], value.dtype)
        if value.nnz and rows.size:
            slot = np.minimum(np.searchsorted(value.indices, rows), value.nnz - 1)
            stored = value.indices[slot] == rows
            out[stored] = value.data[slot[stored]]
        return out
    if isinstance(value, F.CSR):
        value = F.checked(value, op, canonical=False)
        starts, counts = value.indptr[rows], np.diff(value.indptr)[rows]
        which = np.repeat(np.arange(rows.size, dtype=F.INDEX), counts)
        entries = np.repeat(starts - np.cumsum(counts) + counts, counts) + \
            np.arange(int(counts.sum()), dtype=F.INDEX)
        out = np.zeros((rows.size, value.shape[1]), value.dtype)
        np.add.at(out, (which, value.indices[entries]), value.data[entries])
        return out
    return np.ascontiguousarray(np.asarray(value)[rows])


def _rows_divided(op):
    """``lhs``'s stored rows divided by the same rows of ``rhs`` (any storage)."""
    def compute(rctx, values, attrs, shapes, dtypes):
        lhs = F.checked(values[0], op.name, canonical=False)
        rows = rows_of(values[1], lhs.indices, op.name)
        out = np.empty(lhs.data.shape, dtypes[0])
        op.compute[rctx.kernels](rctx, [np.ascontiguousarray(lhs.data), rows], [out], attrs)
        return [F.RowSparse(out, lhs.indices, lhs.shape, lhs.valid)]
    return compute


_div = _scatter_of("_scatter_elemwise_div", "elemwise_div", (
    "``lhs / rhs``. With a row_sparse ``lhs`` the result is row_sparse: ``lhs``'s stored rows "
    "divided by the same rows of ``rhs`` (rows ``lhs`` does not store are 0); other storage "
    "types give the dense ``elemwise_div``."))
_div.storage = (StorageRule((F.RSP_STYPE, ANY), (F.RSP_STYPE,), {CPU: _rows_divided(_div)}),)

_quadratic = REGISTRY["_contrib_quadratic"]
_quadratic.storage = _quadratic.storage + (StorageRule(
    (F.CSR_STYPE,), (F.CSR_STYPE,), {CPU: _on_values(_quadratic)},
    when=lambda attrs, shapes: attrs.c == 0),)
