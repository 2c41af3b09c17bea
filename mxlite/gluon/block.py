"""Gluon blocks (being written)."""


class Block:
    """The base of Gluon models (being written)."""


class HybridBlock(Block):
    """A block that can be hybridized (being written)."""


class SymbolBlock(HybridBlock):
    """A block over a symbol (being written)."""
