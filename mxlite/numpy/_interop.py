"""NumPy's dispatch protocols on ``mx.np.ndarray``: official NumPy functions called on
mxlite arrays (``numpy.sum(x)``, ``numpy.linalg.norm(x)``, ``numpy.add(x, y)``).

``__array_function__`` (NEP 18) and ``__array_ufunc__`` (NEP 13) route such a call to the
``mx.np`` function of the same name (``numpy.linalg.X`` to ``mx.np.linalg.X``,
``numpy.fft.X`` to ``mx.np.fft.X``), looked up when the call is made, so functions added
to ``mx.np`` later are picked up. The result is an ``mx.np.ndarray`` on the inputs' device,
recorded by ``autograd`` like any ``mx.np`` call.

Where ``mx.np`` has no such function, or its function does not take the arguments given
(a ufunc's ``where=``, ``dtype=`` or ``casting=``; a keyword ``mx.np``'s signature lacks), or
the call mixes ``mx.np`` arrays with official NumPy arrays, NumPy itself runs on the data
on the host (a CPU array as a read-only view of its buffer, so ``numpy.shares_memory`` sees
the real layout; other devices' arrays as copies) and the array results come back as new
``mx.np.ndarray`` on the inputs' device (MXNet 1.9.1's "fallback"): integers, NumPy
scalars, dtypes and other non-array
results come back as they are, and an array of a dtype mxlite arrays cannot hold
(complex, strings, objects, ``uint16``, ...) comes back as the NumPy array. An ``out=``
array and the arrays NumPy's in-place functions write (``copyto``, ``put``, ``place``,
``putmask``, ``fill_diagonal``, ``put_along_axis``) receive the values. A fallback is not
differentiable, so inside ``autograd.record()`` it raises ``MXNetError`` (a ValueError)
instead of cutting the gradient silently.

Ufunc methods other than a plain call (``numpy.add.reduce``, ``accumulate``, ``outer``,
``reduceat``, ``at``) are not handled (NumPy raises TypeError), as in MXNet 1.9.1; the
``mx.np`` reductions (``sum``, ``cumsum``, ...) do those jobs. A call whose arguments include
an array type of another library that overrides these protocols is left to that library
(``NotImplemented``).
"""
import inspect
import sys
import threading

import numpy as _onp

from .. import autograd
from ..base import DTYPES, op_error
from ..device import namespace_for
from ..ndarray.ndarray import NDArray
from .multiarray import array, ndarray

__all__ = ["counterpart"]

# NumPy module of a dispatched function -> attribute path of mx.np's counterpart module
_SUBMODULES = {"numpy": (), "numpy.linalg": ("linalg",), "numpy.fft": ("fft",)}
# NumPy functions that write into a positional argument: name -> its index
_MUTATES = {"copyto": 0, "put": 0, "place": 0, "putmask": 0, "fill_diagonal": 0,
            "put_along_axis": 0}
# ufunc keywords and the values that ask for nothing beyond a plain element-wise call
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                   "subok": True, "signature": None}
_HOLDABLE = frozenset(DTYPES.values())
_PLAIN = frozenset((ndarray, _onp.ndarray, int, float, bool, complex, type(None)))
_active = threading.local()       # the NumPy functions being dispatched on this thread
_signatures = {}
_bindings = {}                    # (fn, #args, keyword names) -> binds


def counterpart(func):
    """The ``mx.np`` function that stands for NumPy function or ufunc ``func`` (looked up
    now by module and name), or None when ``mx.np`` has none. An ``mx.np`` name bound to
    NumPy's own object (a host-run function) does not count: calling it would dispatch
    back here."""
    path = ()
    if not isinstance(func, _onp.ufunc):
        path = _SUBMODULES.get(getattr(func, "__module__", None))
        if path is None:
            return None
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return None
    target = sys.modules[__package__]
    for part in path + (name,):
        target = getattr(target, part, None)
        if target is None:
            return None
    if not callable(target) or target is func or isinstance(target, (type, _onp.ufunc)) or \
            str(getattr(target, "__module__", "")).split(".")[0] == "numpy":
        return None
    return target


def _signature(fn):
    """``fn``'s signature (memoised), or None when it has none."""
    if fn not in _signatures:
        try:
            _signatures[fn] = inspect.signature(fn)
        except (TypeError, ValueError):
            _signatures[fn] = None
    return _signatures[fn]


def _binds(fn, args, kwargs):
    """Whether ``fn``'s signature takes ``args`` and ``kwargs`` (memoised by the number of
    positional arguments and the keyword names, which decide it)."""
    key = (fn, len(args), tuple(kwargs))
    known = _bindings.get(key)
    if known is None:
        sig = _signature(fn)
        known = True
        if sig is not None:
            try:
                sig.bind(*args, **kwargs)
            except TypeError:
                known = False
        if len(_bindings) >= 1024:
            _bindings.clear()
        _bindings[key] = known
    return known


def _dispatch(func, fn, args, kwargs):
    """``fn(*args, **kwargs)`` with ``func`` marked as being dispatched on this thread, so an
    ``mx.np`` implementation that calls NumPy's ``func`` on its arrays runs NumPy on the host
    instead of recursing."""
    active = getattr(_active, "funcs", None)
    if active is None:
        active = _active.funcs = set()
    active.add(func)
    try:
        return fn(*args, **kwargs)
    finally:
        active.discard(func)


def _in_dispatch(func):
    return func in getattr(_active, "funcs", ())


def _is_foreign(t):
    """A type other than NumPy's and mxlite's arrays that overrides NumPy's protocols."""
    return not issubclass(t, (ndarray, _onp.ndarray))


# ---- the host fallback ----------------------------------------------------------------------
class _Host:
    """The host side of one fallback call: gives NumPy the data of the mxlite arrays in the
    arguments (remembering their device, and the copies to write back into arrays NumPy
    writes) and brings the results back to the device."""

    def __init__(self, fname, default_ctx):
        self.fname = fname
        self.ctx = None
        self.default_ctx = default_ctx
        self.write_back = []          # (NumPy copy, mxlite array it came from)
        self.own = set()              # ids of NumPy arrays the caller passed to be written

    def to_host(self, obj, write=False):
        """``obj`` with every mxlite array (also inside lists and tuples) as NumPy data: a
        copy to be written back when ``write``, else ``_read_only``."""
        if isinstance(obj, NDArray):
            if self.ctx is None:
                self.ctx = obj._ctx
            elif obj._ctx != self.ctx:
                raise op_error(self.fname, f"the arrays are on different devices ({self.ctx} "
                               f"and {obj._ctx}); move them to one with as_in_ctx")
            if write:
                host = obj.asnumpy()
                self.write_back.append((host, obj))
                return host
            return _read_only(obj)
        if write and isinstance(obj, _onp.ndarray):
            self.own.add(id(obj))
            return obj
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
            return type(obj)(self.to_host(v, write) for v in obj)
        return obj

    def finish(self, result):
        """Write the written host copies into their arrays; the result on the device."""
        for host, target in self.write_back:
            target[...] = host
        ctx = self.ctx if self.ctx is not None else self.default_ctx
        written = {id(host): target for host, target in self.write_back}
        return self._to_device(result, ctx, written)

    def _to_device(self, obj, ctx, written):
        if isinstance(obj, _onp.ndarray) and not isinstance(obj, _onp.generic):
            if id(obj) in written:
                return written[id(obj)]
            if id(obj) in self.own:
                return obj
            if obj.dtype not in _HOLDABLE:
                return obj
            return array(obj, dtype=obj.dtype, ctx=ctx)
        if isinstance(obj, (list, tuple)):
            items = [self._to_device(v, ctx, written) for v in obj]
            return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
        return obj


def _read_only(x):
    """``x``'s data on the host: a read-only view of the buffer itself for a CPU array (no
    copy; ``numpy.shares_memory`` sees the real layout), else a copy."""
    data = namespace_for(x._ctx).to_host(x._data)
    if data is x._data:
        data = data.view()
        data.flags.writeable = False
    return data


def _host_call(fname, func, default_ctx, args, kwargs, mutated=None, why=None):
    """Run NumPy's ``func`` on the host data (module docstring); MXNetError under
    ``autograd.record()``."""
    if autograd.is_recording():
        reason = why or f"mx.np has no {fname.split('.', 1)[1]}"
        raise op_error(fname, f"{reason}, so NumPy would run it on host copies of the data, "
                       "which autograd cannot record; call it outside autograd.record() or "
                       "use an mx.np function")
    host = _Host(fname, default_ctx)
    host_args = [host.to_host(a, write=(i == mutated)) for i, a in enumerate(args)]
    host_kwargs = {k: host.to_host(v, write=(k == "out")) for k, v in kwargs.items()}
    return host.finish(func(*host_args, **host_kwargs))


def _numpy_name(func):
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module}.{getattr(func, '__name__', func)}"


# ---- the protocols --------------------------------------------------------------------------
def _array_function(self, func, types, args, kwargs):
    """NEP 18: NumPy function ``func`` called with mxlite arrays among its arguments (module
    docstring)."""
    if any(_is_foreign(t) for t in types):
        return NotImplemented
    fname = _numpy_name(func)
    fn = counterpart(func)
    why = None
    if fn is None:
        pass
    elif not all(issubclass(t, ndarray) for t in types):
        why = "the arguments mix numpy.ndarray with mx.np.ndarray"
    elif _in_dispatch(func):
        why = f"mx.np's {func.__name__} calls NumPy's"
    elif not _binds(fn, args, kwargs):
        why = f"mx.np.{func.__name__} does not take arguments {sorted(kwargs)}" if kwargs \
            else f"mx.np.{func.__name__} does not take {len(args)} positional arguments"
    else:
        if "ctx" not in kwargs and _names_ctx(fn) and not _has_array(args) and \
                not _has_array(kwargs.values()):
            kwargs = dict(kwargs, ctx=self._ctx)       # numpy.zeros(3, like=x): x's device
        return _dispatch(func, fn, args, kwargs)
    return _host_call(fname, func, self._ctx, args, kwargs,
                      mutated=_MUTATES.get(func.__name__), why=why)


def _names_ctx(fn):
    sig = _signature(fn)
    return sig is not None and "ctx" in sig.parameters


def _has_array(args):
    for a in args:
        if isinstance(a, NDArray) or (isinstance(a, (list, tuple)) and _has_array(a)):
            return True
    return False


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NEP 13: NumPy ufunc ``ufunc`` applied with mxlite arrays among its operands (module
    docstring)."""
    outs = kwargs.get("out") or ()
    if outs and all(o is None for o in outs):
        outs = ()
    if _foreign_operand(inputs) or (outs and _foreign_operand(outs)):
        return NotImplemented
    if method != "__call__":
        return NotImplemented
    fname = f"numpy.{ufunc.__name__}"
    fn = counterpart(ufunc)
    extra = sorted(k for k, v in kwargs.items()
                   if k != "out" and not _is_default(k, v)) if kwargs else ()
    call_kwargs = {"out": outs[0]} if outs else {}
    why = None
    if fn is None:
        pass
    elif extra:
        why = f"mx.np.{ufunc.__name__} does not take {', '.join(extra)}"
    elif len(outs) > 1 or (outs and not isinstance(outs[0], ndarray)) or \
            len(kwargs.get("out") or ()) > 1:
        why = f"out= of mx.np.{ufunc.__name__} must be one mx.np.ndarray"
    elif _in_dispatch(ufunc):
        why = f"mx.np's {ufunc.__name__} calls NumPy's"
    elif not _binds(fn, inputs, call_kwargs):
        why = f"mx.np.{ufunc.__name__} does not take {len(inputs)} operands"
    else:
        return _dispatch(ufunc, fn, inputs, call_kwargs)
    return _host_call(fname, ufunc, self._ctx, inputs, kwargs, why=why)


def _foreign_operand(operands):
    """Whether an operand is an array of another library that overrides ufuncs."""
    for x in operands:
        t = type(x)
        if t not in _PLAIN and _is_foreign(t) and hasattr(t, "__array_ufunc__"):
            return True
    return False


def _is_default(key, value):
    if key not in _UFUNC_DEFAULTS:
        return False
    default = _UFUNC_DEFAULTS[key]
    return value is default or (isinstance(value, (bool, str)) and value == default)


ndarray.__array_function__ = _array_function
ndarray.__array_ufunc__ = _array_ufunc
