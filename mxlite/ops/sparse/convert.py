"""Storage rules of the ops that move values between storage types or pick some of them:
``cast_storage``, ``_sparse_retain`` (``mx.nd.sparse.retain``), ``slice`` and ``take`` of a
csr matrix's rows, ``zeros`` and ``zeros_like``, ``_copy`` and ``stop_gradient``/``make_loss``
(MXNet's sparse set)."""
import numpy as np

from ...base import op_error
from ..registry import OpDef, REGISTRY, register
from ..common import check_num_inputs
from ..shape import _slice_key
from . import formats as F
from .rules import ANY, SPARSE, StorageRule, add_rule

CPU = "cpu"


# ---- cast_storage --------------------------------------------------------------------------
def _cast(rctx, values, attrs, shapes, dtypes):
    x, want = values[0], attrs.stype
    have = F.stype_of_raw(x)
    if want == F.DEFAULT:
        return [F.to_dense(x)]
    if have == want:
        return [F.checked(x, "cast_storage").copy()]
    if have != F.DEFAULT:
        raise op_error("cast_storage", f"{have} storage does not convert to {want} (convert "
                       "to 'default' first)")
    return [F.dense_to_csr(x) if want == F.CSR_STYPE else F.dense_to_rsp(x)]


add_rule("cast_storage", StorageRule((ANY,), lambda attrs, stypes: (attrs.stype,),
                                     {CPU: _cast}))


# ---- _sparse_retain ------------------------------------------------------------------------
def _retain_shape(shapes, attrs):
    check_num_inputs("_sparse_retain", shapes, 2)
    if len(shapes[1]) != 1:
        raise op_error("_sparse_retain", f"indices must be 1-D, got shape {shapes[1]}")
    return [tuple(shapes[0])]


def _retained_rows(indices, n):
    """The row numbers of ``indices`` (a host array; floats truncated toward zero, as
    MXNet's), sorted and unique; MXNetError for one outside [0, n) or not finite."""
    want = np.asarray(indices)
    if want.dtype.kind == "f":
        if not np.isfinite(want).all():
            raise op_error("_sparse_retain", "indices must be finite")
        want = np.trunc(want)
    if want.size and (want.min() < 0 or want.max() >= n):
        raise op_error("_sparse_retain", f"indices must be in [0, {n}) (the rows of data), "
                       f"got values in [{want.min()}, {want.max()}]")
    return np.unique(want.astype(F.INDEX))


def _retain_values(x, indices):
    """The rows of row_sparse ``x`` whose numbers are in ``indices``."""
    F.checked(x, "_sparse_retain")
    keep = np.isin(x.indices, _retained_rows(indices, x.shape[0]))
    return F.RowSparse(np.ascontiguousarray(x.data[keep]), x.indices[keep], x.shape, True)


def _retain(rctx, values, attrs, shapes, dtypes):
    return [_retain_values(values[0], rctx.xp.to_host(values[1]))]


def _retain_dense(rctx, ins, outs, attrs):
    """Dense data: the rows of ``indices`` kept, the others zero (the same values as the
    row_sparse result; device-generic, so it runs on a GPU too)."""
    data, out, xp = ins[0], outs[0], rctx.xp
    rows = _retained_rows(xp.to_host(ins[1]), data.shape[0])
    xp.fill_zero(out)
    if rows.size:
        pick = xp.from_host(rows)
        out[pick] = data[pick]


def _retain_grad(F_, node, ograds):
    """Linear in data: the head gradient's rows of ``indices`` (none for the indices)."""
    return [F_.sparse.retain(ograds[0], node.inputs[1]) if node.wants[0] else None, None]


register(OpDef(
    "_sparse_retain", inputs=("data", "indices"), infer_shape=_retain_shape,
    infer_type=lambda dtypes, attrs: [dtypes[0]], compute={"cpu": _retain_dense},
    gradient=_retain_grad, grad_needs=("inputs",), doc="""The rows of ``data`` whose row
numbers are in ``indices`` (any order, repeats allowed); the other rows are zero. For
row_sparse data the result is row_sparse and holds only the rows both store; dense data
gives a dense result. Float indices are truncated toward zero (MXNet's reading); one outside
``[0, data.shape[0])`` is an MXNetError. The gradient is the head gradient's retained rows.

>>> x = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 3]), shape=(5, 2))
>>> mx.nd.sparse.retain(x, mx.nd.array([3, 0])).indices.asnumpy().tolist()
[3]
"""))
add_rule("_sparse_retain", StorageRule((F.RSP_STYPE, F.DEFAULT), (F.RSP_STYPE,), {CPU: _retain}))


# ---- slice of a csr matrix -----------------------------------------------------------------
def _csr_slice_rows(x, start, stop):
    lo, hi = int(x.indptr[start]), int(x.indptr[stop])
    return F.CSR(x.data[lo:hi].copy(), x.indices[lo:hi].copy(),
                 x.indptr[start:stop + 1] - lo, (stop - start, x.shape[1]), True)


def _csr_slice(rctx, values, attrs, shapes, dtypes):
    x = F.checked(values[0], "slice", canonical=False)
    key = _slice_key(x.shape, attrs)
    rows = range(*key[0].indices(x.shape[0]))
    out = _csr_slice_rows(x, rows.start, rows.start + len(rows))
    if len(key) > 1:
        cols = range(*key[1].indices(x.shape[1]))
        lo, hi = cols.start, cols.start + len(cols)
        keep = (out.indices >= lo) & (out.indices < hi)
        counts = F.segment_sums(keep.astype(F.INDEX), out.indptr)
        indptr = np.zeros(out.shape[0] + 1, F.INDEX)
        np.cumsum(counts, out=indptr[1:])
        out = F.CSR(out.data[keep], out.indices[keep] - lo, indptr, (out.shape[0], len(cols)),
                    True)
    return [out]


def _contiguous(attrs, shapes):
    """A slice a csr result can hold: step 1 on both axes."""
    step = attrs.step
    return not step or all(s in (None, 1) for s in step)


add_rule("slice", StorageRule((F.CSR_STYPE,), (F.CSR_STYPE,), {CPU: _csr_slice},
                              when=_contiguous))


# ---- take of csr rows ----------------------------------------------------------------------
def _rows_axis(attrs, shapes):
    return attrs.axis in (0, -2) and len(shapes[1]) == 1


def _csr_take(rctx, values, attrs, shapes, dtypes):
    """Rows ``indices`` of csr ``x`` (MXNet's take of a csr matrix along axis 0), the
    indices read with the op's mode (clip, wrap or raise)."""
    from ..index import _positions
    x = F.checked(values[0], "take", canonical=False)
    rows = _positions(rctx.xp, "take", values[1], x.shape[0], attrs.mode, 0).reshape(-1)
    starts, ends = x.indptr[rows], x.indptr[rows + 1]
    counts = ends - starts
    indptr = np.zeros(rows.shape[0] + 1, F.INDEX)
    np.cumsum(counts, out=indptr[1:])
    picks = (np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1], dtype=F.INDEX)
             if indptr[-1] else np.zeros(0, F.INDEX))
    out = F.CSR(x.data[picks], x.indices[picks], indptr, (rows.shape[0], x.shape[1]),
                x.valid)
    out.in_range = True
    return [out]


add_rule("take", StorageRule((F.CSR_STYPE, F.DEFAULT), (F.CSR_STYPE,), {CPU: _csr_take},
                             when=_rows_axis))


# ---- zeros(stype=) -------------------------------------------------------------------------
def _sparse_stype(attrs, shapes):
    return attrs.stype in (F.CSR_STYPE, F.RSP_STYPE)


def _zeros(rctx, values, attrs, shapes, dtypes):
    return [F.empty_like_storage(attrs.stype, shapes[0], dtypes[0])]


add_rule("zeros", StorageRule((), lambda attrs, stypes: (attrs.stype,), {CPU: _zeros},
                              when=_sparse_stype))


# ---- zeros_like, copies, gradient stops: the same storage ----------------------------------
def _zeros_like(rctx, values, attrs, shapes, dtypes):
    x = values[0]
    return [F.empty_like_storage(F.stype_of_raw(x), x.shape, x.dtype)]


def _same(rctx, values, attrs, shapes, dtypes):
    return [F.checked(values[0], "copy", canonical=False).copy()]


def _same_stype(attrs, stypes):
    return stypes[:1]


add_rule("zeros_like", StorageRule((SPARSE,), _same_stype, {CPU: _zeros_like}))
for _name in ("_copy", "stop_gradient", "make_loss"):
    if _name in REGISTRY:
        add_rule(_name, StorageRule((SPARSE,), _same_stype, {CPU: _same}))
