"""Raw buffers of NDArrays for the stores: sums of pushed copies, in-place writes that
keep version counters honest, and which outputs may receive a result directly."""
from .. import ndarray as nd
from ..device import namespace_for
from ..ndarray import NDArray

__all__ = ["local_sum", "written", "same_buffer", "direct_targets", "new_like", "rows_of",
           "is_sparse", "summed_stype", "merge_rows"]


def is_sparse(arrays):
    """Whether any of ``arrays`` is in sparse storage."""
    return any(a._data is None for a in arrays)


def summed_stype(arrays):
    """The storage type of ``local_sum(arrays)``: the arrays' own when they share one
    ('row_sparse' plus 'row_sparse' stays row_sparse), else 'default'."""
    stypes = {a.stype for a in arrays}
    return stypes.pop() if len(stypes) == 1 else "default"


def merge_rows(ids, rows, counts):
    """Sum the row_sparse parts of several ranks, given concatenated in rank order: ``ids``
    (int64; each rank's ``counts[r]`` ids strictly increasing), ``rows`` (one row per id).
    Returns ``(unique_ids, summed_rows)``, ids increasing. A row held by several ranks is
    their sum in rank order (the first rank's row, plus the next one's, ...), so every rank
    that merges the same parts gets the same bits; bool rows combine by logical or."""
    import numpy as np
    unique = np.unique(ids)
    if unique.size == ids.size:                 # no row held twice: a permutation
        return unique, rows[np.argsort(ids, kind="stable")]
    out = np.empty((unique.size,) + rows.shape[1:], rows.dtype)
    seen = np.zeros(unique.size, bool)
    start = 0
    for count in counts:
        at = np.searchsorted(unique, ids[start:start + count])
        part = rows[start:start + count]
        first = ~seen[at]
        out[at[first]] = part[first]
        out[at[~first]] += part[~first]
        seen[at] = True
        start += count
    return unique, out


def rows_of(value, row_ids):
    """The rows ``row_ids`` (an NDArray of row numbers, any order, repeats allowed) of
    ``value`` (dense or row_sparse) as a RowSparseNDArray (rows ``value`` does not store are
    left out: they are zero)."""
    import numpy as np
    from ..base import MXNetError
    ids = np.unique(row_ids.asnumpy().reshape(-1))
    if ids.size and (ids.min() < 0 or ids.max() >= value.shape[0]
                     or not np.all(np.trunc(ids) == ids)):
        raise MXNetError(f"kv.row_sparse_pull: row_ids must be integers in [0, "
                         f"{value.shape[0]}), got {ids.min()}..{ids.max()}")
    ids = ids.astype(np.int64)
    if value._data is None:
        return nd.sparse.retain(value.tostype("row_sparse") if value.stype != "row_sparse"
                                else value, nd.array(ids, ctx=value.context))
    from ..ops.sparse.formats import RowSparse
    rows = namespace_for(value.context).to_host(value._data)[ids]
    # ids are sorted, unique and in range: a valid format, not checked again by kernels
    return nd.sparse.wrap(RowSparse(rows, ids, value.shape, valid=True), value.context)


def new_like(array, ctx=None):
    """An uninitialised NDArray of ``array``'s shape and dtype on ``ctx`` (its own default)."""
    ctx = ctx or array.context
    if array._data is None:
        return nd.sparse.zeros(array.stype, array.shape, ctx=ctx, dtype=array.dtype)
    return NDArray._wrap(namespace_for(ctx).empty(array.shape, array._data.dtype), ctx)


def local_sum(arrays, ctx):
    """The element-wise sum of ``arrays`` (one shape and dtype) on ``ctx``: the first array
    itself when it is the only one, else a new array summed left to right. bool values
    combine by logical or (their sum cast to bool)."""
    if len(arrays) == 1 and arrays[0]._ctx == ctx:
        return arrays[0]
    vals = [a.as_in_context(ctx) for a in arrays]
    if len(vals) == 1:
        return vals[0]
    if vals[0].dtype == bool:
        acc = nd.logical_or(vals[0], vals[1])
        for v in vals[2:]:
            acc = nd.logical_or(acc, v)
        return acc
    acc = nd.elemwise_add(vals[0], vals[1])
    for v in vals[2:]:
        nd.elemwise_add(acc, v, out=acc)
    return acc


def written(array):
    """Record an in-place write into ``array``'s buffer made outside its operators (bump the
    version counter its views and the autograd tape read)."""
    array._version[0] += 1


def _interval(array):
    """``(first byte, past the last byte)`` of an array's buffer; None when it is empty."""
    data = array._data
    if data is None or data.size == 0:          # (sparse storage: no one buffer)
        return None
    start = namespace_for(array.context).data_ptr(data)
    return start, start + data.nbytes


def _overlap(a, b):
    ia, ib = _interval(a), _interval(b)
    return ia is not None and ib is not None and ia[0] < ib[1] and ib[0] < ia[1]


# NDArrays that alias one buffer (views, reshapes, detach()) share one version counter
# list, so arrays with different lists never overlap and need no address comparison.
def same_buffer(a, b):
    """True when NDArrays ``a`` and ``b`` hold exactly the same bytes (a, b C-contiguous)."""
    if a is b:
        return True
    if a._data is None or b._data is None:      # sparse: only itself
        return False
    return (a._version is b._version and a._ctx == b._ctx and a._data.shape == b._data.shape
            and _interval(a) == _interval(b))


def direct_targets(items):
    """For ``items``, a list of ``(sends, target)`` (a list of NDArrays read, one NDArray
    written), which targets may receive their item's result while the other items are still
    to be read: a flag per item, True when the target overlaps no array read by the call,
    or only its own single send, byte for byte (an in-place reduction)."""
    family = {}                 # id(version list) -> [(item, send)]: possibly aliasing sends
    for i, (arrays, _) in enumerate(items):
        for a in arrays:
            family.setdefault(id(a._version), []).append((i, a))
    flags = []
    for i, (arrays, target) in enumerate(items):
        ok = True
        for j, send in family.get(id(target._version), ()):
            own = j == i and len(arrays) == 1 and same_buffer(send, target)
            if not own and _overlap(send, target):
                ok = False
                break
        flags.append(ok)
    return flags
