"""Errors and dtype rules shared by every layer of mxlite, and the names of MXNet's
``mxnet.base`` that Python code uses (``py_str``, ``_as_list``, ``integer_types``,
``numeric_types``, ``string_types``, ``mx_real_t``, ``data_dir``, ``NotImplementedForSymbol``).

mxlite has no C library: MXNet's ``_LIB``, ``check_call``, handle types and ``ctypes`` aliases
(``mx_uint``, ``c_str``...) are not here, since nothing in mxlite can take them.
"""
import math
import os

import numpy as np

__all__ = ["MXNetError", "NotImplementedForSymbol", "normalize_dtype", "DTYPES", "FLOAT_DTYPES",
           "INT_DTYPES", "op_error", "register_class", "as_number", "exact_value",
           "dtype_range", "py_str", "integer_types", "numeric_types", "string_types",
           "mx_real_t", "data_dir", "data_dir_default"]


class MXNetError(ValueError):
    """Raised for every bad argument: the message names the operator, the argument and the shapes."""


class NotImplementedForSymbol(MXNetError):
    """An NDArray-only operation (a truth value, ``asnumpy``, ``backward``...) asked of a
    Symbol, which is a graph and has no values. ``function`` is the name of what was called,
    ``alias`` the Python operator behind it (``'bool'``) or None."""

    def __init__(self, function, alias=None, *args):
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.arg_types = [type(a).__name__ for a in args]
        super().__init__(str(self))

    def __str__(self):
        what = f"Symbol.{self.function}"
        if self.alias:
            what += f" (operator {self.alias!r})"
        if self.arg_types:
            what += f" with arguments ({', '.join(self.arg_types)})"
        return f"{what}: not available for a Symbol (a graph, not a value); only for NDArray"


# ---- MXNet's mxnet.base names -----------------------------------------------------------------
integer_types = (int, np.integer)           # what counts as an integer argument
numeric_types = (float, int, np.generic)    # what counts as a scalar operand
string_types = (str,)
mx_real_t = np.float32                      # MXNet's default real type


def py_str(x):
    """``x`` (UTF-8 ``bytes``, as MXNet's C API returned them) as ``str``; a ``str`` is
    returned as it is."""
    return x if isinstance(x, str) else bytes(x).decode("utf-8")


def _as_list(obj):
    """``obj`` itself if it is a list or tuple, else ``[obj]`` (MXNet's helper for arguments
    that take one item or several)."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def data_dir_default():
    """Where downloads go without ``MXNET_HOME``: ``%APPDATA%/mxnet`` on Windows,
    ``~/.mxnet`` elsewhere (MXNet's choice)."""
    if os.name == "nt":
        return os.path.join(os.environ.get("APPDATA", os.path.expanduser("~")), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir():
    """The data directory (``MXNET_HOME``, else ``data_dir_default()``), read each call."""
    return os.environ.get("MXNET_HOME", data_dir_default())


def op_error(op_name, message):
    """Build the MXNetError for operator ``op_name`` (``"op: message"``)."""
    return MXNetError(f"{op_name}: {message}")


def register_class(registry, klass, what):
    """Add class ``klass`` to ``registry`` under its lower-case name (the body of the
    ``register`` class decorators of optimizers and key-value stores); a name already
    taken is overridden with a warning. ``what`` names the decorator in errors."""
    if not isinstance(klass, type):
        raise MXNetError(f"{what}: expected a class, got {klass!r}")
    name = klass.__name__.lower()
    if name in registry:
        import warnings
        old = registry[name]
        warnings.warn(f"{what}: {klass.__module__}.{klass.__name__} overrides "
                      f"{old.__module__}.{old.__name__}", stacklevel=3)
    registry[name] = klass
    return klass


# The dtypes an NDArray may hold, MXNet's names.
DTYPES = {name: np.dtype(name) for name in
          ("float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool")}
FLOAT_DTYPES = frozenset(DTYPES[n] for n in ("float16", "float32", "float64"))
INT_DTYPES = frozenset(DTYPES[n] for n in ("int8", "uint8", "int32", "int64"))
_ALLOWED = frozenset(DTYPES.values())


def normalize_dtype(dtype, op_name="dtype", default="float32"):
    """Return the ``numpy.dtype`` for ``dtype`` (a name, a NumPy dtype or type), or raise MXNetError."""
    if dtype is None:
        dtype = default
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in _ALLOWED:
        raise op_error(op_name, f"unsupported dtype {dtype!r}; expected one of {sorted(DTYPES)}")
    return dt


# ---- exact scalar values ---------------------------------------------------------------------
def as_number(op, name, value):
    """``value`` as a Python ``int`` (kept exact, however large) or ``float``.

    Accepts Python and NumPy integers, floats and bools (as 0/1) and 0-d NumPy arrays of them;
    anything else (strings, complex numbers, None, sequences) is an MXNetError naming ``op``
    and the argument.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise op_error(op, f"{name} must be a real number (int or float), got {value!r} "
                   f"of type {type(value).__name__}")


def _range_of(dt):
    if dt == np.bool_:
        return 0, 1
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(info.min), int(info.max)
    info = np.finfo(dt)
    return float(info.min), float(info.max)


_RANGES = {dt: _range_of(dt) for dt in _ALLOWED}


def dtype_range(dtype):
    """``(lowest, highest)`` finite value of ``dtype``: Python ints for integer dtypes and bool
    (0, 1), floats for float dtypes."""
    r = _RANGES.get(dtype)
    return r if r is not None else _range_of(np.dtype(dtype))


def exact_value(op, name, value, dtype):
    """``value`` (see ``as_number``) as a NumPy scalar of ``dtype``, or an MXNetError.

    Integer dtypes take only integers inside their range: NaN, infinity, a fraction or an
    out-of-range value is an error, never truncated, clamped or wrapped. bool takes the truth
    value of any number (non-zero is True), as NumPy and MXNet do. Float dtypes take any value,
    rounded to the nearest representable one, except a finite value too large for the dtype
    (it would become infinity).
    """
    v = as_number(op, name, value)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.bool_(v != 0)
    if dt.kind in "iu":
        if isinstance(v, float):
            if not math.isfinite(v):
                raise op_error(op, f"{name}={v} cannot be stored in {dt} (not a finite number)")
            if not v.is_integer():
                raise op_error(op, f"{name}={v} is not an integer; {dt} holds integers only")
            v = int(v)
        lo, hi = dtype_range(dt)
        if not lo <= v <= hi:
            raise op_error(op, f"{name}={v} is outside the range of {dt} [{lo}, {hi}]")
        return dt.type(v)
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    with np.errstate(over="ignore"):
        out = dt.type(f)
    if math.isinf(out) and not (isinstance(v, float) and math.isinf(v)):
        lo, hi = dtype_range(dt)
        raise op_error(op, f"{name}={v} is outside the range of {dt} [{lo:g}, {hi:g}] "
                       f"(it would become infinity)")
    return out
