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
           "NARROW_FLOATS", "BFLOAT16", "dtype_kind", "is_bfloat16", "bfloat16_source",
           "promote_types", "TYPE_FLAGS", "UNSUPPORTED_TYPE_FLAGS", "INT_DTYPES", "op_error",
           "register_class", "as_number", "exact_value", "dtype_range", "py_str", "integer_types",
           "numeric_types", "string_types", "mx_real_t", "data_dir", "data_dir_default"]


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
# NumPy has no bfloat16: the ml_dtypes package registers one (the dtype JAX and TensorFlow
# use; casts to it round to nearest even, keep NaN and infinity). Its kind is 'V', not 'f':
# code that asks whether a dtype is a float asks ``in FLOAT_DTYPES``, never ``.kind``.
try:
    import ml_dtypes
except ImportError:         # bfloat16 then is an unsupported dtype, as int16 is
    ml_dtypes = None
BFLOAT16 = None if ml_dtypes is None else np.dtype(ml_dtypes.bfloat16)
if BFLOAT16 is not None:
    DTYPES["bfloat16"] = BFLOAT16
FLOAT_DTYPES = frozenset(DTYPES[n] for n in ("float16", "bfloat16", "float32", "float64")
                         if n in DTYPES)
# the floats that are stored, not computed in: kernels run in float32 and round once
NARROW_FLOATS = frozenset(DTYPES[n] for n in ("float16", "bfloat16") if n in DTYPES)
INT_DTYPES = frozenset(DTYPES[n] for n in ("int8", "uint8", "int32", "int64"))
_ALLOWED = frozenset(DTYPES.values())


def is_bfloat16(dtype):
    """True for ml_dtypes' bfloat16 (``dtype == BFLOAT16`` alone would be True for float64
    when ml_dtypes is missing: NumPy reads ``None`` as float64)."""
    return BFLOAT16 is not None and dtype == BFLOAT16


def dtype_kind(dtype):
    """NumPy's kind letter of ``dtype`` ('f', 'i', 'u', 'b'), with 'f' for bfloat16 (whose
    NumPy kind is 'V'): the question "is this a float?" asked the same way for every float."""
    dt = np.dtype(dtype)
    return "f" if dt in NARROW_FLOATS else dt.kind


def promote_types(a, b):
    """NumPy's type promotion, completed for bfloat16 where ml_dtypes gives none: with
    float16 it is float32 (neither holds the other's values), with int32 or int64 float64
    (as NumPy gives float16 with them)."""
    try:
        return np.promote_types(a, b)
    except TypeError:           # numpy's DTypePromotionError
        a, b = np.dtype(a), np.dtype(b)
        if not (is_bfloat16(a) or is_bfloat16(b)):
            raise
        other = b if is_bfloat16(a) else a
        return np.dtype(np.float32) if other == np.float16 else np.dtype(np.float64)


# MXNet's type flags (mshadow's TypeFlag): what .params files and ``__dtype__`` attributes
# store for each dtype mxlite holds, and the names of those it does not hold
TYPE_FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
              "int64": 6, "bool": 7, "bfloat16": 12}
UNSUPPORTED_TYPE_FLAGS = {8: "int16", 9: "uint16", 10: "uint32", 11: "uint64"}
if "bfloat16" not in DTYPES:
    UNSUPPORTED_TYPE_FLAGS[TYPE_FLAGS.pop("bfloat16")] = "bfloat16 (install ml_dtypes)"


# MXNet 1.9.1's Python side named its bfloat16 by this structured dtype (2 bytes, no values)
_MXNET_BFLOAT16 = np.dtype([("bfloat16", np.uint16)])


def normalize_dtype(dtype, op_name="dtype", default="float32"):
    """Return the ``numpy.dtype`` for ``dtype`` (a name, a NumPy dtype or type), or raise MXNetError."""
    if dtype is None:
        dtype = default
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt == _MXNET_BFLOAT16 and BFLOAT16 is not None:      # (float64 == None is True)
        dt = BFLOAT16           # the stand-in MXNet's Python code used for its bfloat16
    if dt not in _ALLOWED:
        raise op_error(op_name, f"unsupported dtype {dtype!r}; expected one of {sorted(DTYPES)}")
    return dt


def bfloat16_source(src):
    """``src`` in a dtype whose cast to bfloat16 rounds once: float64 and int64 become
    float32 rounded *to odd*, other dtypes are returned as they are.

    ml_dtypes converts a double to bfloat16 through float32, rounding twice: 1 + 2**-8 +
    2**-40 becomes the float32 tie 1 + 2**-8, then 1.0, where a single rounding gives
    1 + 2**-7. Rounding to odd first (truncate toward zero, then set the last bit when
    anything was cut off) keeps the information a later round-to-nearest-even needs, since
    float32 carries more than two bits beyond bfloat16's eight (Boldo and Melquiond, 2008).
    int64 beyond 2**53 is first rounded to float64 (a second rounding for those alone)."""
    if src.dtype.itemsize < 8 or src.dtype.kind not in "fiu":
        return src
    wide = src.astype(np.float64, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        near = wide.astype(np.float32)                      # to nearest even
        toward_zero = np.where(np.abs(near) > np.abs(wide),
                               np.nextafter(near, np.float32(0)), near)
        bits = toward_zero.view(np.uint32)
        inexact = toward_zero != wide                       # (NaN stays NaN with its bit set)
    return np.where(inexact, bits | np.uint32(1), bits).view(np.float32)


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
    info = ml_dtypes.finfo(dt) if dt.kind == "V" else np.finfo(dt)
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
