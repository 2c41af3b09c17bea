"""Storage rules of the element-wise ops (MXNet 1.9.1's sparse set and output types).

- A unary op or an op with a scalar that maps 0 to 0 (``abs``, ``sqrt``, ``x * 2``,
  ``x > 0``, ...) keeps the storage: its own dense kernel runs on the stored values. Each
  call checks that the op, with these parameters, maps 0 to 0 (``clip(a_min=1)`` does not,
  and runs dense), so a rule never drops a value the dense result would have.
- ``elemwise_add``/``elemwise_sub`` of two arrays of one sparse type keep it (the union of
  the stored positions); with a dense operand the result is dense.
- ``elemwise_mul`` of two sparse arrays of one type keeps it (the intersection); with a
  dense operand the result has the sparse operand's storage (its positions), as does
  ``broadcast_mul``/``broadcast_div`` of a csr matrix by a dense row or column vector.
- ``add_n`` of row_sparse arrays is row_sparse.

A position stored in a result may hold 0 (``x - x``): MXNet's results keep them too. A
position not stored is a structural zero: a dense operand's infinity or NaN there does not
reach the result (``csr * inf`` is 0 where csr stores nothing), which is what MXNet and
SciPy compute.
"""
import numpy as np

from ...context import Context
from ..registry import REGISTRY
from . import formats as F
from .rules import SPARSE, StorageRule, add_rule

CPU = "cpu"

# MXNet 1.9.1's unary ops with sparse outputs, and its scalar ops that keep sparsity
UNARY = ("abs", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil", "degrees", "expm1",
         "fix", "floor", "log1p", "negative", "radians", "relu", "rint", "round", "sign", "sin",
         "sinh", "sqrt", "square", "tan", "tanh", "trunc", "clip", "_contrib_round_ste",
         "_contrib_sign_ste")
SCALAR = ("_mul_scalar", "_div_scalar", "_plus_scalar", "_minus_scalar", "_greater_scalar",
          "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar", "_equal_scalar",
          "_not_equal_scalar")

_zero_maps = {}


def _cpu_run_context():
    from ...device import run_context
    return run_context(Context("cpu", 0))


def maps_zero_to_zero(op, attrs):
    """Whether ``op`` with ``attrs`` maps 0 to 0 (its dense kernel on a float64 zero and a
    float32 one; remembered per parameters)."""
    key = (op.name, tuple(sorted((k, repr(v)) for k, v in attrs.items())))
    known = _zero_maps.get(key)
    if known is None:
        rctx = _cpu_run_context()
        known = True
        for dt in (np.float64, np.float32):
            x = np.zeros((1,), dt)
            out = np.empty((1,), op.infer_type([x.dtype], attrs)[0])
            op.compute["cpu"](rctx, [x], [out], attrs)
            known = known and bool(out[0] == 0)
        _zero_maps[key] = known
    return known


def _with_data(x, data):
    if isinstance(x, F.CSR):
        return F.CSR(data, x.indices, x.indptr, x.shape, x.valid)
    return F.RowSparse(data, x.indices, x.shape, x.valid)


def _on_values(op):
    """Compute ``op`` on the stored values of its one sparse input."""
    def compute(rctx, values, attrs, shapes, dtypes):
        x = F.checked(values[0], op.name, canonical=False)
        data = np.ascontiguousarray(x.data)
        out = np.empty(data.shape, dtypes[0])
        op.compute[rctx.kernels](rctx, [data], [out], attrs)
        return [_with_data(x, out)]
    return compute


def _same_stype(attrs, stypes):
    return stypes[:1]


# ``cast`` keeps the storage too (``astype`` of a sparse array; not in MXNet's set, whose
# ``astype`` copied into a new sparse array instead)
for _name in UNARY + SCALAR + ("cast",):
    _op = REGISTRY[_name]
    add_rule(_name, StorageRule(
        (SPARSE,), _same_stype, {CPU: _on_values(_op)},
        when=lambda attrs, shapes, _op=_op: maps_zero_to_zero(_op, attrs)))


# ---- two operands ----------------------------------------------------------------------------
def _keys(x):
    """One int64 key per stored position of csr ``x`` (row * cols + col), increasing."""
    rows = np.repeat(np.arange(x.shape[0], dtype=F.INDEX), np.diff(x.indptr))
    return rows * x.shape[1] + x.indices


def _csr_from_keys(keys, data, shape):
    rows, cols = np.divmod(keys, shape[1]) if shape[1] else (keys, keys)
    indptr = np.zeros(shape[0] + 1, F.INDEX)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return F.CSR(np.ascontiguousarray(data), cols.astype(F.INDEX), indptr, shape, True)


def _positions(a, b):
    """(keys of a, keys of b, their sorted union or intersection source): positions as keys
    (csr) or row numbers (row_sparse)."""
    if isinstance(a, F.CSR):
        return _keys(a), _keys(b)
    return a.indices, b.indices


def _rebuild(like, keys, data):
    if isinstance(like, F.CSR):
        return _csr_from_keys(keys, data, like.shape)
    return F.RowSparse(np.ascontiguousarray(data), keys.astype(F.INDEX), like.shape, True)


def _union(a, b, sign, dtype):
    ka, kb = _positions(a, b)
    keys = np.union1d(ka, kb)
    data = np.zeros((keys.shape[0],) + a.data.shape[1:], dtype)
    data[np.searchsorted(keys, ka)] += a.data
    if sign > 0:
        data[np.searchsorted(keys, kb)] += b.data
    else:
        data[np.searchsorted(keys, kb)] -= b.data
    return _rebuild(a, keys, data)


def _intersection(a, b, dtype):
    ka, kb = _positions(a, b)
    keys, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return _rebuild(a, keys, (a.data[ia] * b.data[ib]).astype(dtype, copy=False))


def _add_sub(sign):
    def compute(rctx, values, attrs, shapes, dtypes):
        a, b = (F.checked(v, "elemwise") for v in values)
        return [_union(a, b, sign, dtypes[0])]
    return compute


def _dense_plus_sparse(sign):
    """dense result of a sparse and a dense operand (either order)."""
    def compute(rctx, values, attrs, shapes, dtypes):
        a, b = values
        da = F.to_dense(a).astype(dtypes[0], copy=False)
        db = F.to_dense(b).astype(dtypes[0], copy=False)
        return [da + db if sign > 0 else da - db]
    return compute


def _mul(rctx, values, attrs, shapes, dtypes):
    a, b = (F.checked(v, "elemwise_mul") for v in values)
    return [_intersection(a, b, dtypes[0])]


def _sparse_times_dense(sparse_index, divide=False):
    """The sparse operand's positions times (or divided by) the dense one's values there."""
    def compute(rctx, values, attrs, shapes, dtypes):
        x = F.checked(values[sparse_index], "elemwise_mul")
        dense = values[1 - sparse_index]
        if isinstance(x, F.CSR):
            rows = np.repeat(np.arange(x.shape[0], dtype=F.INDEX), np.diff(x.indptr))
            other = np.broadcast_to(dense, x.shape)[rows, x.indices]
        else:
            other = np.broadcast_to(dense, x.shape)[x.indices]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            data = x.data / other if divide else x.data * other
        return [_with_data(x, data.astype(dtypes[0], copy=False))]
    return compute


for _stype in (F.CSR_STYPE, F.RSP_STYPE):
    add_rule("elemwise_add", StorageRule((_stype, _stype), (_stype,), {CPU: _add_sub(1)}))
    add_rule("elemwise_sub", StorageRule((_stype, _stype), (_stype,), {CPU: _add_sub(-1)}))
    add_rule("elemwise_mul", StorageRule((_stype, _stype), (_stype,), {CPU: _mul}))
    add_rule("elemwise_mul", StorageRule((_stype, F.DEFAULT), (_stype,),
                                         {CPU: _sparse_times_dense(0)}))
    add_rule("elemwise_mul", StorageRule((F.DEFAULT, _stype), (_stype,),
                                         {CPU: _sparse_times_dense(1)}))
    for _pair in ((_stype, F.DEFAULT), (F.DEFAULT, _stype)):
        add_rule("elemwise_add", StorageRule(_pair, (F.DEFAULT,), {CPU: _dense_plus_sparse(1)}))
        add_rule("elemwise_sub", StorageRule(_pair, (F.DEFAULT,),
                                             {CPU: _dense_plus_sparse(-1)}))


def _vector_of(attrs, shapes):
    """A dense rhs of shape (1, n) or (m, 1) against a csr lhs of shape (m, n)."""
    (m, n), rhs = shapes[0], shapes[1]
    return len(rhs) == 2 and tuple(rhs) in ((1, n), (m, 1))


add_rule("broadcast_mul", StorageRule((F.CSR_STYPE, F.DEFAULT), (F.CSR_STYPE,),
                                      {CPU: _sparse_times_dense(0)}, when=_vector_of))
add_rule("broadcast_div", StorageRule((F.CSR_STYPE, F.DEFAULT), (F.CSR_STYPE,),
                                      {CPU: _sparse_times_dense(0, divide=True)},
                                      when=_vector_of))


def _add_n_rsp(rctx, values, attrs, shapes, dtypes):
    out = F.checked(values[0], "add_n")
    for v in values[1:]:
        out = _union(out, F.checked(v, "add_n"), 1, dtypes[0])
    if len(values) == 1:
        out = out.copy()
    return [out]


add_rule("add_n", StorageRule((F.RSP_STYPE,), (F.RSP_STYPE,), {CPU: _add_n_rsp}))
