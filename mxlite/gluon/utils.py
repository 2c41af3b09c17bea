"""Gluon utilities: splitting a batch across devices, and clipping gradients by their global
norm (MXNet 1.x's gluon.utils)."""
import math

from .. import ndarray as nd
from ..base import MXNetError

__all__ = ["split_data", "split_and_load", "clip_global_norm", "part_bounds"]


def part_bounds(size, num_parts):
    """``(start, stop)`` of ``num_parts`` contiguous parts of ``range(size)``, in order, whose
    lengths differ by at most one: the first ``size % num_parts`` parts take the extra item
    (MXNet's rule for both ``split_data`` and ``Dataset.shard``: 9 into 4 is 3, 2, 2, 2)."""
    step, extra = divmod(size, num_parts)
    bounds, start = [], 0
    for i in range(num_parts):
        stop = start + step + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``data`` cut into ``num_slice`` slices along ``batch_axis``. With ``even_split`` the
    batch must divide evenly; otherwise the first slices take one extra sample each."""
    size = data.shape[batch_axis]
    if num_slice <= 0:
        raise MXNetError(f"split_data: num_slice must be positive, got {num_slice}")
    if even_split and size % num_slice:
        raise MXNetError(f"split_data: data with shape {data.shape} cannot be split evenly "
                         f"into {num_slice} slices along axis {batch_axis}; use a batch size "
                         "that is a multiple of the number of devices or even_split=False")
    if size < num_slice:
        raise MXNetError(f"split_data: {size} samples along axis {batch_axis} are too few "
                         f"for {num_slice} slices")
    if num_slice == 1:
        return [data]
    return [nd.slice_axis(data, axis=batch_axis, begin=b, end=e)
            for b, e in part_bounds(size, num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` (an NDArray or NumPy array) split along ``batch_axis`` into one slice per
    context of ``ctx_list``, each slice loaded onto its context."""
    if not isinstance(data, nd.NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``; returns that norm before scaling (a float with ``check_isfinite``, which
    also warns when it is not finite; an NDArray without, so nothing waits for it)."""
    if not arrays:
        raise MXNetError("clip_global_norm: no arrays given")
    ctx = arrays[0].context
    total = sum(nd.sum(nd.square(a.astype("float32"))).as_in_context(ctx) for a in arrays)
    total_norm = nd.sqrt(total)
    if check_isfinite:
        value = float(total_norm.asscalar())
        if not math.isfinite(value):
            import warnings
            warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                      "undefined."), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.minimum(scale, nd.ones((1,), ctx=ctx, dtype="float32"))
    for a in arrays:
        a *= scale.as_in_context(a.context).astype(a.dtype)
    return value if check_isfinite else total_norm
