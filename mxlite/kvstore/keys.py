"""The key/value arguments of the store methods, as MXNet 1.x reads them.

A call takes one key (an ``int`` or a ``str``) with an NDArray or a list of NDArrays, or a
list of keys with one such value per key. Repeated keys in one call are merged (their
values are summed on push), as MXNet grouped them.
"""
import numbers

from ..base import MXNetError
from ..ndarray import NDArray

__all__ = ["group", "key_kind"]


def key_kind(what, key):
    """``'int'`` or ``'str'`` for a valid key; an MXNetError naming ``what`` otherwise."""
    if isinstance(key, str):
        return "str"
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return "int"
    raise MXNetError(f"{what}: a key must be an int or a str, got {key!r} of type "
                     f"{type(key).__name__}")


def _arrays(what, key, value, argument, single):
    if isinstance(value, NDArray):
        return [value]
    if single:
        raise MXNetError(f"{what}: {argument} for key {key!r} must be one NDArray, got "
                         f"{type(value).__name__}")
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, NDArray) for v in value):
        return list(value)
    raise MXNetError(f"{what}: {argument} for key {key!r} must be an NDArray or a non-empty "
                     f"list of NDArrays, got {value!r}")


def group(what, keys, values, argument="value", single=False):
    """``(kind, [(key, [NDArray, ...]), ...])``: the pairs of a call in order of first
    appearance, values of a repeated key concatenated; ``kind`` is ``'int'`` or ``'str'``.
    With ``single`` every key takes exactly one NDArray and may not repeat (``init``)."""
    if isinstance(keys, (list, tuple)):
        if not isinstance(values, (list, tuple)) or len(values) != len(keys):
            given = len(values) if isinstance(values, (list, tuple)) else type(values).__name__
            raise MXNetError(f"{what}: {len(keys)} keys need a list of {len(keys)} "
                             f"{argument}s, got {given}")
        pairs = list(zip(keys, values))
    else:
        pairs = [(keys, values)]
    kinds = {key_kind(what, k) for k, _ in pairs}
    if len(kinds) > 1:
        raise MXNetError(f"{what}: keys must be all int or all str, got {list(keys)!r}")
    grouped = {}
    for k, v in pairs:
        k = int(k) if not isinstance(k, str) else k
        arrays = _arrays(what, k, v, argument, single)
        if single and k in grouped:
            raise MXNetError(f"{what}: key {k!r} is given twice")
        grouped.setdefault(k, []).extend(arrays)
    return (kinds.pop() if kinds else None), list(grouped.items())
