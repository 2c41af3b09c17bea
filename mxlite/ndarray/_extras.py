"""MXNet 1.9.1's Python front ends in ``mx.nd`` over registered operators whose call differs
from the operator's own signature: ``histogram`` (over ``_histogram``)."""
from ..base import MXNetError
from ..ops.registry import REGISTRY
from .ndarray import NDArray, _call

__all__ = ["histogram"]


def histogram(a, bins=10, range=None):   # noqa: A002 - MXNet's argument name
    """The histogram of the flattened ``a``: ``(counts, edges)`` with int64 counts.

    ``bins`` is an int (that many equal bins over ``range``; without a range, over
    ``(a.min(), a.max())`` as NumPy) or an NDArray of increasing edges. The operator is
    ``_histogram``; MXNet computed the range-less case with NumPy and returned float32
    counts, mxlite runs the operator (int64 counts)."""
    if isinstance(bins, NDArray):
        if range is not None:
            raise MXNetError("histogram: range goes with an int bins, not with bin edges")
        return _call(REGISTRY["_histogram"], a, bins)
    if isinstance(bins, bool) or not isinstance(bins, int):
        raise MXNetError(f"histogram: bins must be an int or an NDArray of edges, got "
                         f"{type(bins).__name__}")
    if range is None:
        range = (float(a.min().asscalar()), float(a.max().asscalar())) if a.size else (0.0, 1.0)
    return _call(REGISTRY["_histogram"], a, bin_cnt=bins, range=tuple(range))
