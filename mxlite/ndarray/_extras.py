"""MXNet 1.9.1's Python front ends in ``mx.nd`` over registered operators whose call differs
from the operator's own signature: ``histogram`` (over ``_histogram``), ``split_v2`` (over ``_split_v2``),
``onehot_encode`` (over ``_onehot_encode``) and ``true_divide`` (``divide``)."""
from ..base import MXNetError
from ..ops.registry import REGISTRY
from .ndarray import NDArray, _call

__all__ = ["histogram", "split_v2", "onehot_encode", "true_divide"]


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


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """``ary`` split along ``axis`` (NumPy's ``split``): an int gives that many equal parts,
    a tuple of split points (increasing, at most the axis size) the parts between them.
    A list of NDArrays, or one NDArray for a single part (MXNet)."""
    return _call(REGISTRY["_split_v2"], ary, **split_v2_params(
        ary.shape, indices_or_sections, axis, squeeze_axis))


def split_v2_params(shape, indices_or_sections, axis, squeeze_axis):
    """``_split_v2``'s parameters for MXNet's ``split_v2`` front end (shared with mx.sym)."""
    if isinstance(indices_or_sections, bool):
        raise MXNetError("split_v2: indices_or_sections must be an int or a tuple of ints")
    if isinstance(indices_or_sections, int):
        if shape is not None:
            size = shape[axis] if -len(shape) <= axis < len(shape) else None
            if size is not None and indices_or_sections > 0 and size % indices_or_sections:
                raise MXNetError(f"split_v2: axis {axis} of size {size} does not split into "
                                 f"{indices_or_sections} equal sections")
        if indices_or_sections < 1:
            raise MXNetError(f"split_v2: the number of sections must be positive, got "
                             f"{indices_or_sections}")
        return dict(indices=(), axis=axis, squeeze_axis=squeeze_axis,
                    sections=indices_or_sections)
    if isinstance(indices_or_sections, (tuple, list)):
        return dict(indices=(0,) + tuple(indices_or_sections), axis=axis,
                    squeeze_axis=squeeze_axis, sections=0)
    raise MXNetError(f"split_v2: indices_or_sections must be an int or a tuple of ints, got "
                     f"{type(indices_or_sections).__name__}")


def onehot_encode(indices, out):
    """One-hot rows of ``indices`` written into ``out`` (n, depth), which is returned:
    MXNet's deprecated front end over ``_onehot_encode`` (use ``one_hot``)."""
    return _call(REGISTRY["_onehot_encode"], indices, out, out=out)


def true_divide(lhs, rhs):
    """``lhs / rhs`` with broadcasting, arrays or scalars: MXNet's name for ``divide``."""
    from . import divide
    return divide(lhs, rhs)


# MXNet's fluent method: x.split_v2(2, axis=1) (the same front end, on the tape through _split_v2)
NDArray.split_v2 = split_v2
