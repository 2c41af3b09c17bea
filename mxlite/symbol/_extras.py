"""MXNet 1.9.1's Python front ends in ``mx.sym`` over registered operators whose call differs
from the operator's own signature: ``histogram`` (over ``_histogram``), ``split_v2`` (over ``_split_v2``)."""
from ..base import MXNetError

__all__ = ["histogram", "split_v2"]


def histogram(a, bins=10, range=None, **kwargs):   # noqa: A002 - MXNet's argument name
    """``_histogram`` of ``a``: ``bins`` a Symbol of edges, or an int with ``range`` (a graph
    cannot take the data's range, as in MXNet)."""
    from . import Symbol, _internal
    if isinstance(bins, Symbol):
        return _internal._histogram(a, bins, **kwargs)
    if isinstance(bins, bool) or not isinstance(bins, int):
        raise MXNetError(f"histogram: bins must be an int or a Symbol of edges, got "
                         f"{type(bins).__name__}")
    if range is None:
        raise MXNetError("histogram: a Symbol's histogram needs range=(low, high)")
    return _internal._histogram(a, bin_cnt=bins, range=tuple(range), **kwargs)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False, **kwargs):
    """``_split_v2`` with MXNet's ``split_v2`` front end: an int gives that many equal parts,
    a tuple of split points the parts between them."""
    from . import _internal
    from ..ndarray._extras import split_v2_params
    return _internal._split_v2(ary, **split_v2_params(None, indices_or_sections, axis,
                                                      squeeze_axis), **kwargs)
