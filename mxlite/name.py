"""``mx.name``: MXNet's module name for ``NameManager`` and ``Prefix`` (defined in
``mxlite.symbol.naming``)."""
from .symbol.naming import NameManager, Prefix

__all__ = ["NameManager", "Prefix"]
