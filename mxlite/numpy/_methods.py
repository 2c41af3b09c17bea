"""``mx.np.ndarray``'s operators and NumPy methods, each the ``mx.np`` function of that
name (``a + b`` is ``np.add(a, b)``, ``a.sum(axis=0)`` is ``np.sum(a, axis=0)``), so the
promotion and NumPy results of the functions hold for the methods too."""
import functools

# dunder stem -> (np function, reflected)
_ARITHMETIC = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
               "mod": "mod", "pow": "power", "floordiv": "floor_divide",
               "matmul": "matmul"}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "gt": "greater", "ge": "greater_equal",
                "lt": "less", "le": "less_equal"}
_BITWISE = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}

# method name -> np function (called with the array first)
_METHODS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any", "std",
            "var", "cumsum", "cumprod", "clip", "sort", "argsort", "take", "repeat", "tile",
            "swapaxes", "nonzero", "round", "dot", "ptp", "trace", "diagonal", "flip",
            "squeeze", "expand_dims", "moveaxis", "rollaxis", "nansum", "nanprod")


def _operand_ok(other):
    import numbers

    import numpy as onp

    from ..ndarray.ndarray import NDArray
    from ..symbol.symbol import Symbol
    return isinstance(other, (NDArray, Symbol, numbers.Number, onp.generic, list, tuple,
                              onp.ndarray))


def _dunder(fn, reflected=False, inplace=False):
    if inplace:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return fn(self, other, out=self)
    elif reflected:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return fn(other, self)
    else:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return fn(self, other)
    return method


def _method(fn):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return method


def install(cls, functions):
    """Set the operators and methods of ``cls`` (np ndarray or np Symbol) from the np
    ``functions`` (a module's globals)."""
    for stem, name in _ARITHMETIC.items():
        fn = functions[name]
        setattr(cls, f"__{stem}__", _dunder(fn))
        setattr(cls, f"__r{stem}__", _dunder(fn, reflected=True))
        setattr(cls, f"__i{stem}__", _dunder(fn, inplace=True))
    for stem, name in _COMPARISONS.items():
        setattr(cls, f"__{stem}__", _dunder(functions[name]))
    for stem, name in _BITWISE.items():
        fn = functions[name]
        setattr(cls, f"__{stem}__", _dunder(fn))
        setattr(cls, f"__r{stem}__", _dunder(fn, reflected=True))
    cls.__div__, cls.__rdiv__, cls.__idiv__ = cls.__truediv__, cls.__rtruediv__, \
        cls.__itruediv__
    cls.__neg__ = lambda self: functions["negative"](self)
    cls.__abs__ = lambda self: functions["absolute"](self)
    cls.__pos__ = lambda self: self
    cls.__invert__ = lambda self: functions["invert"](self)
    cls.__hash__ = object.__hash__
    for name in _METHODS:
        if name in functions:
            setattr(cls, name, _method(functions[name]))
