"""The private helpers shared by mx.np's statistics modules (``_quantiles``,
``_histograms``, ``_signal``, ``_polynomials``, ``_covariance``): operands as np arrays or
Symbols, constants on the operands' context (or as Symbol nodes), the float dtype of a
result, host round trips with NumPy's errors as MXNetErrors, and the refusal of Symbols by
the functions that read values."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float
from .multiarray import array, asarray, ndarray, to_ctx


def _arr(a):
    """``a`` as an np array (legacy NDArrays viewed as np arrays, recorded as identities;
    Symbols as they are)."""
    return a if isinstance(a, ndarray) or _is_sym(a) else asarray(a)


_SYMBOLIC = "symbolic"      # the "context" of operands that must be Symbols


def _is_sym(x):
    from ..symbol.symbol import Symbol
    return isinstance(x, Symbol)


def _where(*xs):
    """Where new constants go: ``_SYMBOLIC`` when an operand is a Symbol, else the
    operands' context."""
    return _SYMBOLIC if any(_is_sym(x) for x in xs) else _ctx(*xs)


def _sym_const(values, dtype):
    """Host ``values`` as a constant Symbol (``_full`` nodes joined)."""
    values = _onp.asarray(values)
    with _front.symbolic_creation():
        parts = [_front.call("_full", [], shape=(1,), val=v.item(), dtype=dtype)
                 for v in values.reshape(-1)]
        if not parts:
            return _front.call("_zeros", [], shape=values.shape, dtype=dtype)
        y = parts[0] if len(parts) == 1 else _front.call("concat", parts, dim=0,
                                                          num_args=len(parts))
        return _front.call("reshape", [y], shape=values.shape)


def _in(v, dtype, ctx):
    """An operand as an np array (or Symbol) of ``dtype``: arrays and Symbols cast
    (recorded), anything else a new constant on ``ctx`` (``_SYMBOLIC``: a Symbol)."""
    if _is_sym(v):
        return v if _front.dtype_of(v) == dtype else _front.call("cast", [v], dtype=dtype)
    if ctx is _SYMBOLIC:
        return _sym_const(_host(v), dtype)
    return _arr(v).astype(dtype, copy=False) if isinstance(v, NDArray) else \
        _const(v, dtype, ctx)


def _no_symbol(fn, *xs):
    _front.needs_values(fn, *xs)


def _host(x):
    """``x`` as a NumPy array (arrays copied to the host, lists, also of arrays, converted
    as NumPy does)."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)) and any(isinstance(v, NDArray) for v in x):
        return _onp.asarray([_host(v) for v in x])
    return _onp.asarray(x)


def _ctx(*xs):
    for x in xs:
        if isinstance(x, NDArray):
            return x._ctx
    return to_ctx(None)


def _float_of(*dtypes):
    """The widest float among ``dtypes`` (None entries skipped), else the default float."""
    floats = [_onp.dtype(d) for d in dtypes if d is not None and _onp.dtype(d).kind == "f"]
    if not floats:
        return default_float()
    return max(floats, key=lambda d: d.itemsize)


def _dtype_of(x):
    """The dtype ``x`` has (an array) or gets from mx.np (a list or number: None, that is
    'no float preference')."""
    if isinstance(x, (NDArray, _onp.ndarray)):
        return _onp.dtype(x.dtype)
    if _is_sym(x):
        return _front.dtype_of(x)
    return None


def _const(value, dtype, ctx):
    """A host value as an (unrecorded) np array of ``dtype`` on ``ctx``."""
    return array(_onp.asarray(value), dtype=dtype, ctx=ctx)


def _numpy(fn, func, *args, **kwargs):
    """``func(*args, **kwargs)`` with NumPy's errors turned into MXNetErrors naming ``fn``."""
    try:
        return func(*args, **kwargs)
    except (ValueError, TypeError, IndexError, ZeroDivisionError,
            _onp.linalg.LinAlgError) as err:
        raise op_error(fn, str(err)) from None


def _from_host(fn, value, ctx, float_dtype):
    """A host result as an np array on ``ctx``: floats in ``float_dtype``, integers as
    they are, complex results refused unless real (mxlite arrays are real)."""
    value = _onp.asarray(value)
    if value.dtype.kind == "c":
        if _onp.any(value.imag != 0):
            raise op_error(fn, "the result is complex, and mxlite arrays are real")
        value = value.real
    dt = float_dtype if value.dtype.kind == "f" else value.dtype
    return array(value, dtype=dt, ctx=ctx)


def _slice(a, axis, begin, end):
    """``a[begin:end]`` along ``axis`` (recorded; works on Symbols)."""
    return _front.call("slice_axis", [a], axis=axis, begin=begin, end=end)


def _ufuncs():
    from . import _ufuncs as u
    return u


def _shape(fn, x):
    """The shape of an array, or of a Symbol while a block is traced, else MXNetError."""
    shape = _front.shape_of(x) if _is_sym(x) else tuple(_arr(x).shape)
    if shape is None or any(d < 0 for d in shape):
        raise op_error(fn, "needs the shape of its input, which this Symbol does not know "
                       "(symbols know it while a Gluon block is traced on arrays)")
    return tuple(shape)
