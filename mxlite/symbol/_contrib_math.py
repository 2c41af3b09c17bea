"""``mx.sym.contrib.boolean_mask``: present for MXNet's name, an MXNetError when called.

Its output shape depends on the mask's values, and a symbol's shapes are inferred from its
inputs' shapes alone (MXNet 1.9.1 built the node and failed later, in shape inference). The
imperative ``mx.nd.contrib.boolean_mask`` works; in a hybridized block, select with
``take`` of positions computed outside the graph instead.
"""
from ..base import MXNetError

__all__ = ["boolean_mask"]


def boolean_mask(data, index, axis=0, name=None, **kwargs):
    """Refused: the rows a mask keeps are known only when the mask's values are (an
    MXNetError; ``mx.nd.contrib.boolean_mask`` runs imperatively)."""
    raise MXNetError("boolean_mask: its output shape depends on the values of index, which a "
                     "symbol cannot infer; use mx.nd.contrib.boolean_mask imperatively, or take "
                     "with positions computed outside the graph")
