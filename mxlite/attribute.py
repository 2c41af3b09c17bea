"""``mx.attribute``: MXNet's module name for ``AttrScope`` (defined in
``mxlite.symbol.naming``, with the automatic names it shares a thread-local state with)."""
from .symbol.naming import AttrScope

__all__ = ["AttrScope"]
