"""The ``index`` parameter kind: the canonical key of ``_getitem``/``_setitem``.

A key is a tuple of ints, slices (of int-or-None), None, Ellipsis and NumPy index arrays
(int64 or bool). MXNet has no string form for it, so a key is written as JSON, one entry
per item::

    int        ->  3
    None       ->  null
    Ellipsis   ->  "..."
    slice      ->  {"slice": [start, stop, step]}          (null for None)
    array      ->  {"array": [flat values], "shape": [...], "dtype": "int64" | "bool"}

so ``(0, slice(1, None, 2), None, Ellipsis, np.array([1, 2]))`` is
``[0,{"slice":[1,null,2]},null,"...",{"array":[1,2],"shape":[2],"dtype":"int64"}]``.
"""
import json

import numpy as np

__all__ = ["parse_index", "format_index"]

_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _int(v, what):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    return int(v)


def _opt_int(v):
    return None if v is None else _int(v, "a slice bound")


def _array(v):
    a = np.asarray(v)
    if a.dtype == _I64 or a.dtype == _BOOL:
        return a
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError("an index array holds values beyond int64")
    if a.dtype.kind not in "iu":
        raise TypeError(f"an index array must hold integers or booleans, got {a.dtype}")
    return a.astype(np.int64)


def _item(k):
    if k is None or k is Ellipsis:
        return k
    t = type(k)
    if t is int:
        return k
    if t is slice:
        return slice(_opt_int(k.start), _opt_int(k.stop), _opt_int(k.step))
    if isinstance(k, (np.ndarray, list)):
        return _array(k)
    return _int(k, "an index")


def _decode(e):
    if e is None or type(e) is int:
        return e
    if e == "...":
        return Ellipsis
    if isinstance(e, dict) and set(e) == {"slice"} and len(e["slice"]) == 3:
        return slice(*(_opt_int(b) for b in e["slice"]))
    if isinstance(e, dict) and set(e) == {"array", "shape", "dtype"}:
        if e["dtype"] not in ("int64", "bool"):
            raise ValueError(f"an index array's dtype must be int64 or bool, got {e['dtype']!r}")
        shape = tuple(_int(d, "an array dimension") for d in e["shape"])
        return np.array(e["array"], dtype=e["dtype"]).reshape(shape)
    raise ValueError(f"not an index item: {e!r}")


def parse_index(v):
    """The canonical key for ``v``: a tuple of items, one item, or the JSON text above."""
    if isinstance(v, str):
        items = json.loads(v)
        if not isinstance(items, list):
            raise ValueError(f"the JSON form of an index is a list, got {v!r}")
        return tuple(_decode(e) for e in items)
    if type(v) is not tuple:
        v = (v,)
    return tuple(_item(k) for k in v)


def _encode(k):
    if k is None or type(k) is int:
        return k
    if k is Ellipsis:
        return "..."
    if type(k) is slice:
        return {"slice": [k.start, k.stop, k.step]}
    return {"array": k.ravel().tolist(), "shape": list(k.shape), "dtype": k.dtype.name}


def format_index(key):
    """The JSON text of a canonical key (``parse_index`` reads it back)."""
    return json.dumps([_encode(k) for k in key], separators=(",", ":"))
