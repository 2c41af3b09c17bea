"""``mx.np``'s functions about dtypes, memory and text, and the host-run fallbacks.

* ``result_type`` / ``promote_types``: mxlite's promotion (``_dtypes``), so they name the
  dtype ``mx.np``'s operators actually give (``int32`` with ``float32`` is ``float32``).
* ``min_scalar_type``, ``packbits``, ``unpackbits``, ``genfromtxt``: NumPy on the host
  (bits and text are not differentiable); results are np arrays on the input's context.
* ``may_share_memory`` / ``shares_memory``: whether two arrays' device buffers overlap.
* ``set_printoptions``: NumPy's print options, which ``mx.np.ndarray``'s text uses.
* ``npv``, ``pv``, ``ppmt``, ``mirr``, ``rate``: NumPy 2 removed its financial functions;
  they run ``numpy_financial`` on the host when it is installed, else raise MXNetError.
"""
import numpy as _onp

from ..base import op_error
from ..device import namespace_for
from ..ndarray.ndarray import NDArray
from ._dtypes import result_type as _promote, scalar_result_type
from ._gather import dtype_of, host, is_symbol, numpy_errors, refuse_symbols

__all__ = ["may_share_memory", "shares_memory", "promote_types", "result_type",
           "min_scalar_type", "packbits", "unpackbits", "set_printoptions", "genfromtxt",
           "npv", "pv", "ppmt", "mirr", "rate"]


def _make(values, ctx=None):
    from .multiarray import array
    values = _onp.asarray(values)
    return array(values, dtype=values.dtype, ctx=ctx)


# ---- memory -------------------------------------------------------------------------------
def _buffers(fn, a, b):
    if not (isinstance(a, NDArray) and isinstance(b, NDArray)):
        raise op_error(fn, f"a and b must be mx.np arrays, got {type(a).__name__} and "
                       f"{type(b).__name__}")
    return a._data, b._data


def may_share_memory(a, b, max_work=None):
    """Whether the buffers of arrays ``a`` and ``b`` may overlap (their memory bounds
    intersect; no false negatives). Arrays on different devices never do."""
    da, db = _buffers("may_share_memory", a, b)
    if a._ctx != b._ctx:
        return False
    return bool(namespace_for(a._ctx).may_share_memory(da, db))


def shares_memory(a, b, max_work=None):
    """Whether arrays ``a`` and ``b`` share an element of memory: exact for host
    (CPU) arrays; on other devices the bounds check of ``may_share_memory``."""
    da, db = _buffers("shares_memory", a, b)
    if a._ctx != b._ctx:
        return False
    if isinstance(da, _onp.ndarray) and isinstance(db, _onp.ndarray):
        return bool(_onp.shares_memory(da, db))
    return may_share_memory(a, b)


# ---- dtypes -------------------------------------------------------------------------------
def _as_dtype(fn, t):
    with numpy_errors(fn):
        return _onp.dtype(t)


def promote_types(type1, type2):
    """The dtype an ``mx.np`` operation on arrays of ``type1`` and ``type2`` gives
    (mxlite's promotion: an integer or boolean with a float gives that float)."""
    return _promote(_as_dtype("promote_types", type1), _as_dtype("promote_types", type2))


def result_type(*arrays_and_dtypes):
    """The dtype ``mx.np``'s promotion gives its arguments together: arrays (or Symbols of
    a traced block) and dtypes promote as ``promote_types``; Python numbers keep an array's dtype unless their kind
    is wider (a float with integers: the default float; an int with booleans: int64).

    >>> mx.np.result_type(mx.np.zeros(2, dtype="int32"), "float16")
    dtype('float16')
    >>> mx.np.promote_types("int32", "float32")     # NumPy: float64
    dtype('float32')"""
    if not arrays_and_dtypes:
        raise op_error("result_type", "at least one array or dtype is required")
    dtypes, numbers = [], []
    for x in arrays_and_dtypes:
        if isinstance(x, _onp.ndarray):
            dtypes.append(x.dtype)
        elif isinstance(x, NDArray) or is_symbol(x):
            dtypes.append(dtype_of("result_type", x))
        elif isinstance(x, (bool, int, float, complex, _onp.generic)):
            numbers.append(x)
        elif isinstance(x, (list, tuple)):
            from ._gather import as_source
            dtypes.append(as_source(x).dtype)
        else:
            dtypes.append(_as_dtype("result_type", x))
    if not dtypes:
        from ._gather import common_dtype
        return common_dtype(numbers)
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = _promote(dt, d)
    for v in numbers:
        dt = scalar_result_type(dt, v.item() if isinstance(v, _onp.generic) else v)
    return _onp.dtype(dt)


def min_scalar_type(a):
    """The smallest dtype that holds ``a`` (a number, or an array's values), as NumPy's
    (computed on the host)."""
    refuse_symbols("min_scalar_type", a)
    with numpy_errors("min_scalar_type"):
        return _onp.min_scalar_type(host(a) if isinstance(a, NDArray) else a)


# ---- bits ---------------------------------------------------------------------------------
def packbits(a, axis=None, bitorder="big"):
    """The elements of an integer or boolean array as bits (non-zero: 1) packed into
    uint8, along ``axis`` (flattened if None); computed on the host."""
    refuse_symbols("packbits", a)
    h = host(a)
    with numpy_errors("packbits"):
        out = _onp.packbits(h, axis=axis, bitorder=bitorder)
    return _make(out, getattr(a, "_ctx", None))


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as a uint8 array of 0 and 1, along ``axis`` (flattened if
    None), the first ``count`` of them; computed on the host."""
    refuse_symbols("unpackbits", a)
    h = host(a)
    with numpy_errors("unpackbits"):
        out = _onp.unpackbits(h, axis=axis, count=count, bitorder=bitorder)
    return _make(out, getattr(a, "_ctx", None))


# ---- text ---------------------------------------------------------------------------------
def set_printoptions(precision=None, threshold=None, **kwargs):
    """Set how arrays print (``precision``, ``threshold`` and NumPy's other print options:
    ``mx.np.ndarray``'s ``repr`` and ``str`` are NumPy's text of the data)."""
    with numpy_errors("set_printoptions"):
        _onp.set_printoptions(precision=precision, threshold=threshold, **kwargs)


def genfromtxt(*args, ctx=None, **kwargs):
    """An np array (on ``ctx``) of the table NumPy's ``genfromtxt`` reads from a file
    or lines of text, keeping NumPy's dtype (float64 by default); read on the host.
    Structured (record) dtypes are refused."""
    with numpy_errors("genfromtxt"):
        out = _onp.genfromtxt(*args, **kwargs)
    if out.dtype.names is not None or out.dtype.kind not in "biuf":
        raise op_error("genfromtxt", f"the table has dtype {out.dtype}; mx.np arrays hold "
                       "numbers only (give a numeric dtype)")
    return _make(out, ctx)


# ---- financial (numpy_financial) ----------------------------------------------------------
_FINANCIAL = {
    "npv": "net present value of cash flows ``values`` at ``rate``",
    "pv": "present value of a series of payments",
    "ppmt": "payment on the principal of a loan in a period",
    "mirr": "modified internal rate of return of cash flows",
    "rate": "interest rate per period of an annuity",
}


def _financial(name, what):
    def fn(*args, **kwargs):
        try:
            import numpy_financial as npf
        except ImportError:
            raise op_error(name, "NumPy 2 removed its financial functions; install the "
                           "numpy_financial package to use mx.np." + name) from None
        args = [host(a) if isinstance(a, NDArray) else a for a in args]
        kwargs = {k: host(v) if isinstance(v, NDArray) else v for k, v in kwargs.items()}
        with numpy_errors(name):
            out = getattr(npf, name)(*args, **kwargs)
        return _make(out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {what} (``numpy_financial.{name}``, run on the host; an MXNetError "
                  "when numpy_financial is not installed, as NumPy 2 no longer has it).")
    return fn


npv, pv, ppmt, mirr, rate = (_financial(name, what) for name, what in _FINANCIAL.items())
