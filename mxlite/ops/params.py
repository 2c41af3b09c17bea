"""Typed operator parameters: ``Param`` parses a value (or MXNet's string form of it) and
formats it back to that string, as a symbol JSON's ``attrs`` dict holds it.

String forms follow what MXNet's Python front end wrote (``str(value)``) and its C++ parser
read: ``'128'``, ``'(3, 3)'`` (also ``'[3,3]'``, ``'(3,)'``, ``'3'``), ``'None'``,
``'True'``/``'False'``/``'1'``/``'0'``, ``'float32'``, ``'cpu(0)'``, ``'1e-05'``.
``parse(format(v)) == v`` for every canonical value ``v`` of every kind.
"""
import math
import numbers
import re

import numpy as np

from ..base import MXNetError, as_number, normalize_dtype, op_error
from ..context import Context
from .param_index import format_index, parse_index

__all__ = ["Param", "REQUIRED", "KINDS"]

REQUIRED = object()        # a Param default: the caller must give a value

_INT = re.compile(r"\s*[+-]?\d+\s*\Z")
_FLOAT = re.compile(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)\s*\Z",
                    re.IGNORECASE)
_TUPLE = re.compile(r"\s*[(\[](.*)[)\]]\s*\Z", re.DOTALL)
_CTX = re.compile(r"\s*(cpu|gpu|cpu_pinned|cpu_shared)(?:\((\d+)\))?\s*\Z")


# ---- parsers: parse(op, name, value) -> canonical value, or MXNetError ------------------------
def _int_value(op, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return int(v)
        raise op_error(op, f"parameter {name!r} must be an integer, got {v!r}")
    return int(v)


def _int_text(op, name, v):
    if _INT.match(v):
        return int(v)
    raise op_error(op, f"parameter {name!r} must be an integer, got {v!r}")


def _as_int(op, name, v):
    return _int_text(op, name, v) if isinstance(v, str) else _int_value(op, name, v)


def _opt_int_value(op, name, v):
    return None if v is None else _int_value(op, name, v)


def _opt_int_text(op, name, v):
    return None if v == "None" else _int_text(op, name, v)


def _tuple_items(text):
    """The items of MXNet's tuple text: ``'(1, 2)'``, ``'[1,2]'``, ``'(3,)'``, ``'3'``."""
    m = _TUPLE.match(text)
    if m is None:
        return [text.strip()]
    body = m.group(1).strip()
    if not body:
        return []
    items = [s.strip() for s in body.split(",")]
    return items[:-1] if items[-1] == "" and len(items) > 1 else items


def _int_tuple(value_item, text_item):
    """A parser of tuples (or MXNet's tuple text) whose items ``value_item`` (``text_item``
    for text) converts; a lone item is a 1-tuple."""
    def parse(op, name, v):
        if type(v) is tuple and all(type(d) is int for d in v):
            return v            # the common case, already canonical
        item = value_item
        if isinstance(v, str):
            v, item = _tuple_items(v), text_item
        elif isinstance(v, (int, np.integer)) or v is None:
            v = (v,)
        try:
            return tuple(item(op, name, d) for d in v)
        except TypeError:
            raise op_error(op, f"parameter {name!r} must be a tuple of integers, "
                           f"got {v!r}") from None
    return parse


_parse_shape = _int_tuple(_int_value, _int_text)
_parse_opt_ints_items = _int_tuple(_opt_int_value, _opt_int_text)


def _parse_opt_ints(op, name, v):
    try:
        return _parse_opt_ints_items(op, name, v)
    except MXNetError:
        raise op_error(op, f"parameter {name!r} must be a tuple of integers or None, "
                       f"got {v!r}") from None


def _float_text(op, name, v, what="parameter {!r} must be a number"):
    if not _FLOAT.match(v):
        raise op_error(op, f"{what.format(name)}, got {v!r}")
    f = float(v)
    if math.isinf(f) and "inf" not in v.lower():
        raise op_error(op, f"parameter {name!r}={v!r} is beyond the float64 range")
    return f


def _parse_float(op, name, v):
    if isinstance(v, str):
        return _float_text(op, name, v)
    try:
        return float(v)
    except (TypeError, ValueError):
        raise op_error(op, f"parameter {name!r} must be a number, got {v!r}") from None
    except OverflowError:
        raise op_error(op, f"parameter {name!r}={v!r} is beyond the float64 range") from None


_REAL = "{} must be a real number (int or float)"     # as_number's words


def _parse_number(op, name, v):
    t = type(v)
    if t is int or t is float:
        return v            # the common case, already canonical
    if t is str:
        return int(v) if _INT.match(v) else _float_text(op, name, v, _REAL)
    return as_number(op, name, v)


def _parse_bool(op, name, v):
    if isinstance(v, str):
        text = v.strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
    elif isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise op_error(op, f"parameter {name!r} must be a boolean, got {v!r}")


def _parse_dtype(op, name, v):
    try:
        return normalize_dtype(v.strip() if isinstance(v, str) else v, op)
    except MXNetError as e:     # name the parameter too (not every dtype param is 'dtype')
        raise op_error(op, f"parameter {name!r}: {str(e).split(': ', 1)[-1]}") from None


def _parse_str(op, name, v):
    if not isinstance(v, str):
        raise op_error(op, f"parameter {name!r} must be a string, got {v!r}")
    return v


def _parse_ctx(op, name, v):
    if isinstance(v, Context):
        return v
    m = _CTX.match(v) if isinstance(v, str) else None
    if m is None:
        raise op_error(op, f"parameter {name!r} must be a Context or a string like 'cpu(0)', "
                       f"got {v!r}")
    try:
        return Context(m.group(1), int(m.group(2) or 0))
    except MXNetError as e:
        raise op_error(op, f"parameter {name!r}={v!r}: {e}") from None


def _parse_index(op, name, v):
    try:
        return parse_index(v)
    except (TypeError, ValueError) as e:
        raise op_error(op, f"parameter {name!r} must be an index tuple: {e}") from None


def _parse_any(op, name, v):
    return v


# ---- formatters: format(canonical value) -> MXNet's string ------------------------------------
def _format_float(v):
    return repr(float(v))


def _format_number(v):
    return repr(v) if type(v) is float else str(int(v))


def _format_tuple(v):
    return str(tuple(v))


def _parse_floats(op, name, v):
    """A tuple of floats (MXNet's ``Tuple<float>``: ``lrs``, ``wds``), or its text."""
    items = _tuple_items(v) if isinstance(v, str) else v
    if isinstance(items, numbers.Real) and not isinstance(items, bool):
        items = (items,)
    try:
        return tuple(_float_text(op, name, d) if isinstance(d, str) else float(d)
                     for d in items)
    except (TypeError, ValueError):
        raise op_error(op, f"parameter {name!r} must be a tuple of numbers, got {v!r}") from None


def _format_dtype(v):
    return np.dtype(v).name


def _format_ctx(v):
    return f"{v.device_type}({v.device_id})"


def _format_any(v):
    raise TypeError("a parameter of kind 'any' has no string form")


class _Kind:
    __slots__ = ("parse", "format", "none_ok", "doc")

    def __init__(self, parse, format, none_ok, doc):
        self.parse, self.format, self.none_ok, self.doc = parse, format, none_ok, doc


KINDS = {
    "int": _Kind(_as_int, str, False, "an integer: ``'128'``"),
    "float": _Kind(_parse_float, _format_float, False, "a float: ``'1e-05'``, ``'inf'``"),
    "number": _Kind(_parse_number, _format_number, False,
                    "an int (kept exact) or a float: ``'3'``, ``'2.5'``"),
    "bool": _Kind(_parse_bool, str, False, "``'True'``/``'False'`` (also ``'1'``/``'0'``)"),
    "axis": _Kind(_as_int, str, True, "an int or None: ``'-1'``, ``'None'``"),
    "axes": _Kind(_parse_shape, _format_tuple, True,
                  "a tuple of ints or None: ``'(0, 2)'``, ``'1'``, ``'None'``"),
    "shape": _Kind(_parse_shape, _format_tuple, False,
                   "a tuple of ints: ``'(3, 3)'``, ``'[3,3]'``, ``'(3,)'``, ``'3'``"),
    "opt_ints": _Kind(_parse_opt_ints, _format_tuple, True,
                      "a tuple of int-or-None (MXNet's ``Tuple<optional<int>>``): "
                      "``'(0, None, -1)'``"),
    "dtype": _Kind(_parse_dtype, _format_dtype, True, "a dtype name: ``'float32'``"),
    "str": _Kind(_parse_str, str, False, "a string, written as is"),
    "ctx": _Kind(_parse_ctx, _format_ctx, True, "a Context: ``'cpu(0)'``, ``'gpu(1)'``"),
    "index": _Kind(_parse_index, format_index, False,
                   "a canonical index tuple, written as JSON (see ``param_index``)"),
    "any": _Kind(_parse_any, _format_any, True, "any Python value; no string form"),
    "floats": _Kind(_parse_floats, _format_tuple, False,
                    "a tuple of floats: ``'(0.1, 0.05)'``"),
}


class Param:
    """A typed operator parameter: ``Param('axis', 'axis', None, 'the axis to reduce')``.

    ``kind`` is a key of ``KINDS`` (int, float, number, bool, axis, axes, shape, opt_ints,
    dtype, str, ctx, index, any). ``choices`` restricts the value. A parameter whose kind
    allows None, or whose default is None (MXNet's ``dmlc::optional``), takes None and the
    string ``'None'``.
    """

    __slots__ = ("name", "kind", "default", "doc", "choices", "optional", "_kind")

    def __init__(self, name, kind, default=REQUIRED, doc="", choices=None):
        if kind not in KINDS:
            raise ValueError(f"Param {name}: unknown kind {kind!r}")
        self.name, self.kind, self.default, self.doc = name, kind, default, doc
        self.choices = tuple(choices) if choices else None
        self._kind = KINDS[kind]
        self.optional = self._kind.none_ok or default is None

    def parse(self, op_name, value):
        """Validate and convert ``value`` (or its string form); MXNetError naming op and
        parameter."""
        if self.optional and (value is None or type(value) is str and value.strip() in
                              ("None", "")):
            return None
        v = self._kind.parse(op_name, self.name, value)     # None here: the kind's error
        if self.choices is not None and v not in self.choices:
            raise op_error(op_name, f"parameter {self.name!r} must be one of {self.choices}, "
                           f"got {v!r}")
        return v

    def format(self, value):
        """MXNet's string for the canonical ``value`` (what a symbol JSON's attrs hold)."""
        return "None" if value is None else self._kind.format(value)
