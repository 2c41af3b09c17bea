"""The operator registry: one ``OpDef`` record per operator, the single source of truth.

``mxlite.nd.*`` and (later) ``mxlite.sym.*`` are generated from these records; the autograd
tape and the symbolic executor look operators up here and never import a family module.
"""
import numpy as np

from ..base import MXNetError, normalize_dtype, op_error

__all__ = ["Param", "OpDef", "Attrs", "register", "get_op", "list_ops", "REGISTRY",
           "NON_DIFFERENTIABLE", "REQUIRED", "namespace_of"]

REQUIRED = object()        # a Param default: the caller must give a value
NON_DIFFERENTIABLE = "non-differentiable"   # explicit gradient marker (comparisons, argmax, ...)


class Attrs(dict):
    """Parsed operator parameters; ``attrs.axis`` reads ``attrs['axis']``."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _as_int(op, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return int(v)
        raise op_error(op, f"parameter {name!r} must be an integer, got {v!r}")
    return int(v)


def _as_shape(op, name, v):
    if type(v) is tuple and all(type(d) is int for d in v):
        return v            # the common case, already canonical
    if isinstance(v, (int, np.integer)):
        v = (v,)
    try:
        return tuple(_as_int(op, name, d) for d in v)
    except TypeError:
        raise op_error(op, f"parameter {name!r} must be a tuple of integers, got {v!r}") from None


def _parse_int(op, name, v):
    return _as_int(op, name, v)


def _parse_float(op, name, v):
    try:
        return float(v)
    except (TypeError, ValueError):
        raise op_error(op, f"parameter {name!r} must be a number, got {v!r}") from None
    except OverflowError:
        raise op_error(op, f"parameter {name!r}={v!r} is beyond the float64 range") from None


def _parse_bool(op, name, v):
    if isinstance(v, str):
        if v.lower() in ("true", "1"):
            return True
        if v.lower() in ("false", "0"):
            return False
        raise op_error(op, f"parameter {name!r} must be a boolean, got {v!r}")
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and v in (0, 1)):
        return bool(v)
    raise op_error(op, f"parameter {name!r} must be a boolean, got {v!r}")


def _parse_axis(op, name, v):
    return None if v is None else _as_int(op, name, v)


def _parse_axes(op, name, v):
    return None if v is None else _as_shape(op, name, v)


def _parse_shape(op, name, v):
    shape = _as_shape(op, name, v)
    return shape


def _parse_dtype(op, name, v):
    if v is None:
        return None
    try:
        return normalize_dtype(v, op)
    except MXNetError as e:     # name the parameter too (not every dtype param is 'dtype')
        raise op_error(op, f"parameter {name!r}: {str(e).split(': ', 1)[-1]}") from None


def _parse_str(op, name, v):
    if not isinstance(v, str):
        raise op_error(op, f"parameter {name!r} must be a string, got {v!r}")
    return v


def _parse_any(op, name, v):
    return v


_PARSERS = {
    "int": _parse_int, "float": _parse_float, "bool": _parse_bool, "axis": _parse_axis,
    "axes": _parse_axes, "shape": _parse_shape, "dtype": _parse_dtype, "str": _parse_str,
    "ctx": _parse_any, "any": _parse_any,
}


_NONE_OK = frozenset(("axis", "axes", "dtype", "ctx", "any"))


class Param:
    """A typed operator parameter: ``Param('axis', 'axis', None, 'the axis to reduce')``.

    ``kind`` is one of int, float, bool, axis (int or None), axes (tuple or None), shape,
    dtype, str, ctx, any. ``choices`` restricts a str parameter.
    """

    __slots__ = ("name", "kind", "default", "doc", "choices", "_parse")

    def __init__(self, name, kind, default=REQUIRED, doc="", choices=None):
        if kind not in _PARSERS:
            raise ValueError(f"Param {name}: unknown kind {kind!r}")
        self.name, self.kind, self.default, self.doc = name, kind, default, doc
        self.choices = tuple(choices) if choices else None
        self._parse = _PARSERS[kind]

    def parse(self, op_name, value):
        """Validate and convert ``value``; raise MXNetError naming op and parameter."""
        if value is None and self.kind in _NONE_OK:
            return None
        v = self._parse(op_name, self.name, value)
        if self.choices is not None and v not in self.choices:
            raise op_error(op_name, f"parameter {self.name!r} must be one of {self.choices}, got {v!r}")
        return v


class OpDef:
    """One operator record.

    Fields:
      name, aliases         MXNet names (``_random_randint`` is shown as ``random.randint``)
      inputs                input names; ``variadic=True`` makes them one ``*data`` list
      params                tuple of ``Param``
      infer_shape(shapes, attrs) -> list of output shapes (pure; raises MXNetError)
      infer_type(dtypes, attrs)  -> list of output dtypes (pure; raises MXNetError)
      compute               {'cpu': fn(in_arrays, out_arrays, attrs)}; kernels write into outputs
      gradient              FGradient: fn(F, node, ograds) -> input gradients built from
                            registered ops; ``NON_DIFFERENTIABLE``; or None (not declared yet)
      grad_needs            what the gradient reads: subset of {'inputs', 'outputs'}
      num_outputs           an int, or a function of attrs (split: attrs.num_outputs)
      doc
    """

    __slots__ = ("name", "aliases", "inputs", "params", "infer_shape", "infer_type", "compute",
                 "gradient", "grad_needs", "num_outputs", "variadic", "doc", "_param_map",
                 "_defaults", "elementwise")

    def __init__(self, name, inputs, infer_shape, infer_type, compute, doc, params=(),
                 gradient=None, grad_needs=("inputs",), aliases=(), num_outputs=1,
                 variadic=False, elementwise=False):
        self.name, self.aliases, self.inputs = name, tuple(aliases), tuple(inputs)
        self.params = tuple(params)
        self.infer_shape, self.infer_type = infer_shape, infer_type
        self.compute = dict(compute)
        self.gradient, self.grad_needs = gradient, frozenset(grad_needs)
        self.num_outputs, self.variadic, self.doc = num_outputs, variadic, doc
        self.elementwise = elementwise   # output[i] depends only on inputs[i]: safe in place
        self._param_map = {p.name: p for p in self.params}
        self._defaults = Attrs((p.name, p.default) for p in self.params
                               if p.default is not REQUIRED)

    @property
    def differentiable(self):
        """True when the op declares an FGradient."""
        return callable(self.gradient)

    def parse_attrs(self, kwargs):
        """Validate keyword parameters once; fill defaults; reject unknown or missing ones."""
        attrs = Attrs(self._defaults)
        if kwargs:
            param_map = self._param_map
            for key, value in kwargs.items():
                p = param_map.get(key)
                if p is None:
                    raise op_error(self.name, f"unknown parameter {key!r}; "
                                   f"expected one of {sorted(param_map)}")
                attrs[key] = p.parse(self.name, value)
        if len(attrs) != len(self.params):
            missing = [p.name for p in self.params if p.name not in attrs]
            raise op_error(self.name, f"missing required parameter(s) {missing}")
        return attrs

    def __repr__(self):
        return f"<OpDef {self.name}>"


REGISTRY = {}


def register(op):
    """Add ``op`` (and its aliases) to the registry; a duplicate name is a programming error."""
    names = (op.name,) + op.aliases
    for name in names:          # check every name first: a clash registers nothing
        if name in REGISTRY or names.count(name) > 1:
            raise ValueError(f"operator {name!r} registered twice")
    for name in names:
        REGISTRY[name] = op
    return op


def get_op(name):
    """The ``OpDef`` registered under ``name`` (or an alias); MXNetError if unknown."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise MXNetError(f"unknown operator {name!r}") from None


_PREFIXES = (("_random_", "random"), ("_contrib_", "contrib"), ("_linalg_", "linalg"),
             ("_sample_", "random"))


def namespace_of(name):
    """Where a registered name appears: ('random', 'randint') for ``_random_randint``."""
    for prefix, ns in _PREFIXES:
        if name.startswith(prefix):
            return ns, name[len(prefix):]
    if name.startswith("_"):
        return "_internal", name
    return "", name


def list_ops():
    """Every registered op: a list of ``(name, namespace, differentiable)``, names sorted."""
    return [(name, namespace_of(name)[0], REGISTRY[name].differentiable)
            for name in sorted(REGISTRY)]
