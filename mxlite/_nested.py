"""Nested lists of arrays (or Symbols), as MXNet's control-flow front ends take and return
them: ``flatten`` to a flat list and a structure, ``regroup`` back."""
from .base import MXNetError

__all__ = ["flatten", "regroup"]


def flatten(value, what, leaf):
    """(flat list of ``leaf`` values, structure) of a ``leaf`` or nested list/tuple of them."""
    if isinstance(value, leaf):
        return [value], None
    if isinstance(value, (list, tuple)):
        flat, shape = [], []
        for item in value:
            items, sub = flatten(item, what, leaf)
            flat += items
            shape.append((len(items), sub))
        return flat, shape
    raise MXNetError(f"{what} must be an {leaf.__name__} or a (nested) list of "
                     f"{leaf.__name__}s, got {type(value).__name__}")


def regroup(flat, structure):
    """Inverse of ``flatten``: ``flat`` in ``structure`` (lists for lists and tuples)."""
    if structure is None:
        return flat[0]
    out, i = [], 0
    for count, sub in structure:
        out.append(regroup(flat[i:i + count], sub))
        i += count
    return out
