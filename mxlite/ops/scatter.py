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
own record, so its storage rules are its own: ``mxlite.ops.sparse.scatter``). Imported
after ``mxlite.ops.sparse``.
"""
import copy

from .registry import REGISTRY, register


def _scatter_of(name, base, doc):
    """A record ``name`` with ``base``'s kernels, gradient and parameters, and no alias nor
    storage rule of its own yet."""
    op = copy.copy(REGISTRY[base])
    op.name, op.aliases, op.doc = name, (), doc
    op.attrs_cache, op.infer_cache = {}, {}
    op.storage, op.grad_stypes = (), None
    return register(op)


for _name, _base, _sign in (("_scatter_plus_scalar", "_plus_scalar", "+"),
                            ("_scatter_minus_scalar", "_minus_scalar", "-")):
    _scatter_of(_name, _base, (
        f"``data {_sign} scalar`` on the stored values of a csr or row_sparse ``data`` (its "
        f"storage and positions kept: where ``data`` stores nothing the result is 0); on a "
        f"dense array the same as ``{_base}``."))

_scatter_of("_scatter_elemwise_div", "elemwise_div", (
    "``lhs / rhs``. With a row_sparse ``lhs`` the result is row_sparse: ``lhs``'s stored rows "
    "divided by the same rows of ``rhs`` (rows ``lhs`` does not store are 0); other storage "
    "types give the dense ``elemwise_div``."))

from .sparse import scatter as _rules  # noqa: E402,F401  (their storage rules)
