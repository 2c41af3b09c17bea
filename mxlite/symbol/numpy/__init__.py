"""``mx.sym.np``: ``mx.np``'s functions building graph nodes, and the np Symbol class.

Every ``mx.np`` function already builds a node when an input is a Symbol (the np invoke
strategy, ``mxlite.numpy._front``); the functions here are the same ones run so that those
without array inputs (``zeros``, ``arange``, ...) build nodes too. ``_Symbol`` is the Symbol
a block traced under ``npx.set_np()`` sees: NumPy indexing (``x[:, -1]`` slices; an int
picks an output only of a multi-output symbol), NumPy operators and methods
(``x.reshape(-1)``, ``x.T``, ``x + 1`` with promotion where dtypes are known).
"""
import functools as _functools
import sys as _sys
import types as _types

from ... import numpy as _mx_np
from ...numpy import _front
from ...numpy._methods import install as _install
from ...ops.indexing import canonical_key as _canonical_key
from ...base import MXNetError
from ..symbol import Symbol
from .._deferred import deferrable

__all__ = ["_Symbol"]


class _Symbol(Symbol):
    """A Symbol with ``mx.np``'s operators and methods (module docstring)."""

    __slots__ = ()

    def __getitem__(self, key):
        if isinstance(key, (int, str)) and len(self._outputs) > 1:
            return _front.as_np(Symbol.__getitem__(self, key))
        if isinstance(key, slice) and len(self._outputs) > 1:
            return _front.as_np(Symbol.__getitem__(self, key))
        return self._index(key)

    def _index(self, key):
        """NumPy indexing of this (single-output) symbol."""
        from ...numpy.multiarray import _index_key
        return _front.call("_getitem", [self],
                           key=_canonical_key(_index_key(key), (), numpy=True))

    def __iter__(self):
        return (_Symbol([e]) for e in self._outputs)

    # ---- what the symbol is known to be while a block is traced (mxlite.numpy._front) ----
    def _meta(self, what):
        if len(self._outputs) != 1:
            raise MXNetError(f"{what} of a group of {len(self._outputs)} symbols")
        shape, dtype = _front.symbol_meta(self)
        value = shape if what == "shape" else dtype
        if value is None:
            raise MXNetError(f"the {what} of symbol {self.name!r} is not known here (a "
                             "symbol knows it while a Gluon block is traced on arrays)")
        return value

    @property
    def shape(self):
        """The output's shape while a block is traced (-1: a dimension not known yet)."""
        return self._meta("shape")

    @property
    def dtype(self):
        """The output's dtype while a block is traced."""
        return self._meta("dtype")

    @property
    def ndim(self):
        """The output's number of axes while a block is traced."""
        return len(self._meta("shape"))

    @property
    def size(self):
        """The output's number of elements while a block is traced."""
        n = 1
        for d in self._meta("shape"):
            if d < 0:
                raise MXNetError(f"the size of symbol {self.name!r} is not known here")
            n *= d
        return n

    def as_nd_ndarray(self):
        """The same graph as a legacy Symbol."""
        return Symbol(self._outputs)

    def as_np_ndarray(self):
        """This symbol."""
        return self

    @property
    def T(self):
        """The transpose (reversed axes)."""
        return self.transpose()

    def reshape(self, *shape, order="C", **kwargs):
        """NumPy's reshape (one -1 inferred)."""
        if "newshape" in kwargs:
            shape = (kwargs.pop("newshape"),)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _mx_np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _mx_np.transpose(self, axes or None)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        from ...numpy._dtypes import as_dtype
        return _front.call("cast", [self], dtype=as_dtype(dtype, "astype"))

    def squeeze(self, axis=None):
        return _mx_np.squeeze(self, axis)

    def flatten(self, order="C"):
        return _mx_np.reshape(self, (-1,))


def _legacy_as_np(self):
    """``Symbol.as_np_ndarray``: the same graph as an ``mx.sym.np`` symbol."""
    return _Symbol(self._outputs)


def _legacy_as_nd(self):
    """``Symbol.as_nd_ndarray``: this symbol."""
    return self


# the class's own np methods defer on unknown inputs too (as the installed ones below)
for _name in ("_index", "reshape", "transpose", "astype", "squeeze", "flatten"):
    setattr(_Symbol, _name, deferrable(vars(_Symbol)[_name], f"ndarray.{_name}"))
Symbol.as_np_ndarray = _legacy_as_np
Symbol.as_nd_ndarray = _legacy_as_nd
# the np Symbol's operators and methods record a deferred call on unknown inputs, as
# mx.sym.np's functions do (mxlite.symbol.numpy._deferred)
_install(_Symbol, {k: deferrable(v, f"numpy.{k}") if callable(v) and not isinstance(v, type)
                   else v for k, v in vars(_mx_np).items()})
_front.set_classes(symbol_cls=_Symbol)


def _symbolic(fn):
    @_functools.wraps(fn)
    def function(*args, **kwargs):
        with _front.symbolic_creation():
            return fn(*args, **kwargs)
    return function


def symbolic_namespace(source, name):
    """A module holding ``source``'s public functions run symbolically (sub-namespaces
    ``linalg``/``random`` likewise)."""
    module = _types.ModuleType(name, source.__doc__)
    names = list(getattr(source, "__all__", [n for n in dir(source) if not n.startswith("_")]))
    for key in names:
        value = getattr(source, key, None)
        if isinstance(value, _types.ModuleType) and key in ("linalg", "random", "image"):
            value = symbolic_namespace(value, f"{name}.{key}")
            _sys.modules[f"{name}.{key}"] = value
        elif callable(value) and not isinstance(value, type) and \
                getattr(value, "__module__", "").startswith("mxlite.num"):
            value = deferrable(_symbolic(value), f"{name[len('mxlite.symbol.'):]}.{key}")
        setattr(module, key, value)
    module.__all__ = names
    return module


for _key in _mx_np.__all__:
    _value = getattr(_mx_np, _key)
    if _key in ("linalg", "random"):
        _sub = symbolic_namespace(_value, f"{__name__}.{_key}")
        _sys.modules[f"{__name__}.{_key}"] = _sub
        globals()[_key] = _sub
    elif callable(_value) and not isinstance(_value, type) and \
            getattr(_value, "__module__", "").startswith("mxlite.numpy"):
        globals()[_key] = deferrable(_symbolic(_value), f"numpy.{_key}")
    else:
        globals()[_key] = _value
    __all__.append(_key)
del _key, _value
