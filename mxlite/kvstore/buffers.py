"""Raw buffers of NDArrays for the stores: sums of pushed copies, in-place writes that
keep version counters honest, and which outputs may receive a result directly."""
from bisect import bisect_left

from .. import ndarray as nd
from ..device import namespace_for
from ..ndarray import NDArray

__all__ = ["local_sum", "written", "same_buffer", "direct_targets", "new_like"]


def new_like(array, ctx=None):
    """An uninitialised NDArray of ``array``'s shape and dtype on ``ctx`` (its own default)."""
    ctx = ctx or array.context
    return NDArray._wrap(namespace_for(ctx).empty(array.shape, array._data.dtype), ctx)


def local_sum(arrays, ctx):
    """The element-wise sum of ``arrays`` (one shape and dtype) on ``ctx``: the first array
    itself when it is the only one, else a new array summed left to right. bool values
    combine by logical or (their sum cast to bool)."""
    vals = [a.as_in_context(ctx) for a in arrays]
    if len(vals) == 1:
        return vals[0]
    if vals[0]._data.dtype == bool:
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
    if data.size == 0:
        return None
    start = namespace_for(array.context).data_ptr(data)
    return start, start + data.nbytes


def same_buffer(a, b):
    """True when NDArrays ``a`` and ``b`` hold exactly the same bytes (a, b C-contiguous)."""
    return a.context == b.context and _interval(a) == _interval(b) and a.shape == b.shape


def direct_targets(items):
    """For ``items``, a list of ``(sends, target)`` (a list of NDArrays read, one NDArray
    written), which targets may receive their item's result while the other items are still
    to be read: a flag per item, True when the target overlaps no array read by the call,
    or only its own single send, byte for byte (an in-place reduction)."""
    sends = sorted((iv, i) for i, (arrays, _) in enumerate(items) for a in arrays
                   if (iv := _interval(a)) is not None)
    starts = [iv[0] for iv, _ in sends]
    reach = []            # reach[i]: the largest end among sends[0..i]
    for iv, _ in sends:
        reach.append(max(iv[1], reach[-1]) if reach else iv[1])
    flags = []
    for i, (arrays, target) in enumerate(items):
        iv = _interval(target)
        if iv is None:
            flags.append(True)
            continue
        lo, hi = bisect_left(starts, iv[0]), bisect_left(starts, iv[1])
        inside = sends[lo:hi]                         # sends starting within the target
        before = lo > 0 and reach[lo - 1] > iv[0]     # a send starting earlier reaches in
        own = len(arrays) == 1 and same_buffer(arrays[0], target)
        flags.append(not before and (not inside or (own and len(inside) == 1)))
    return flags
