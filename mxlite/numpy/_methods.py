"""``mx.np.ndarray``'s operators and NumPy methods, each the ``mx.np`` function of that
name (``a + b`` is ``np.add(a, b)``, ``a.sum(axis=0)`` is ``np.sum(a, axis=0)``), so the
promotion and NumPy results of the functions hold for the methods too."""
import functools

from . import _front

# dunder stem -> (np function, reflected)
_ARITHMETIC = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
               "mod": "mod", "pow": "power", "floordiv": "floor_divide",
               "matmul": "matmul"}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "gt": "greater", "ge": "greater_equal",
                "lt": "less", "le": "less_equal"}
# ``&``, ``|``, ``^``: NumPy's bitwise functions; while those are not defined, the logical
# ones serve boolean operands and integers are refused (never a silent logical result)
_BITWISE = {"and": ("bitwise_and", "logical_and"), "or": ("bitwise_or", "logical_or"),
            "xor": ("bitwise_xor", "logical_xor")}

# legacy NDArray methods that ``mx.np.ndarray`` does not have (MXNet's np arrays raise
# AttributeError for them): inherited, they would return legacy arrays with legacy
# semantics; use the ``mx.np``/``mx.npx`` functions instead
_LEGACY_ONLY = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "argmax_channel",
    "broadcast_axes", "cbrt", "ceil", "cos", "cosh", "degrees", "depth_to_space", "diag",
    "exp", "expm1", "fix", "floor", "log", "log10", "log1p", "log2", "log_softmax", "norm",
    "one_hot", "ones_like", "pad", "pick", "radians", "rcbrt", "reciprocal", "relu",
    "reshape_like", "rint", "rsqrt", "shape_array", "sigmoid", "sign", "sin", "sinh",
    "size_array", "slice", "slice_axis", "slice_like", "softmax", "softmin",
    "space_to_depth", "split", "split_v2", "sqrt", "square", "tan", "tanh", "topk", "trunc",
    "zeros_like")

# method name -> np function (called with the array first)
_METHODS = ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any", "std",
            "var", "cumsum", "cumprod", "clip", "sort", "argsort", "take", "repeat", "tile",
            "swapaxes", "nonzero", "round", "dot", "ptp", "trace", "diagonal", "flip",
            "squeeze", "expand_dims", "moveaxis", "rollaxis", "nansum", "nanprod",
            "broadcast_to")


_OPERAND_TYPES = None


def _operand_ok(other):
    global _OPERAND_TYPES
    if _OPERAND_TYPES is None:
        import numbers

        import numpy as onp

        from ..ndarray.ndarray import NDArray
        from ..symbol.symbol import Symbol
        _OPERAND_TYPES = (NDArray, Symbol, numbers.Number, onp.generic, list, tuple,
                          onp.ndarray)
    return isinstance(other, _OPERAND_TYPES)


def _dunder(fn, reflected=False, inplace=False):
    if inplace:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            # a Symbol is not written in place: ``x += 1`` rebinds x to a new node
            return fn(self, other, out=None if _front.is_symbolic([self]) else self)
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


def _binary_dunder(name, fn, reflected=False):
    """``a <op> b`` straight onto the ufunc machinery (``_ufuncs.binary``: no keyword
    handling) when ``name`` is one of its binary ufuncs, else ``_dunder(fn)``."""
    from . import _ufuncs
    if name not in _ufuncs._BINARY or hasattr(fn, "deferred_path"):
        return _dunder(fn, reflected)       # (an np Symbol's may defer: symbol/_deferred.py)
    binary = _ufuncs.binary
    if reflected:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return binary(name, other, self)
    else:
        def method(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return binary(name, self, other)
    return method


def _method(fn):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return method


class _Hidden:
    """A class attribute that reads as missing (``hasattr`` is False): a legacy method
    ``mx.np.ndarray`` does not offer."""

    def __init__(self, name):
        self._name = name

    def __get__(self, obj, objtype=None):
        raise AttributeError(f"mxnet.numpy.ndarray object has no attribute {self._name!r} "
                             f"(a legacy NDArray method; use mx.np.{self._name} or "
                             "mx.npx)")


def _bool_only(fn, name, bitwise):
    """``fn`` (a logical function) for boolean operands; integers are refused until
    ``bitwise`` exists (``&`` of integers is bit-wise, never logical)."""
    import numpy as onp

    from ..base import op_error
    from . import _front

    def is_bool(x):
        if isinstance(x, (bool, onp.bool_)):
            return True
        dt = None if isinstance(x, (int, float)) else _front.dtype_of(x)
        return dt is None or dt == onp.bool_

    def function(x1, x2, out=None):
        if not (is_bool(x1) and is_bool(x2)):
            raise op_error(name, f"operator of non-boolean operands needs {bitwise}, which "
                           "is not available")
        return fn(x1, x2, out=out)
    return function


def _broadcast_like(self, other):
    """This array broadcast to ``other``'s shape (NumPy's rules)."""
    from ._manipulation import broadcast_to
    return broadcast_to(self, tuple(other.shape))


def install(cls, functions):
    """Set the operators and methods of ``cls`` (np ndarray or np Symbol) from the np
    ``functions`` (a module's globals)."""
    for stem, name in _ARITHMETIC.items():
        fn = functions[name]
        setattr(cls, f"__{stem}__", _binary_dunder(name, fn))
        setattr(cls, f"__r{stem}__", _binary_dunder(name, fn, reflected=True))
        setattr(cls, f"__i{stem}__", _dunder(fn, inplace=True))
    for stem, name in _COMPARISONS.items():
        setattr(cls, f"__{stem}__", _dunder(functions[name]))
    for stem, (bitwise, logical) in _BITWISE.items():
        fn = functions.get(bitwise) or _bool_only(functions[logical], f"__{stem}__", bitwise)
        setattr(cls, f"__{stem}__", _dunder(fn))
        setattr(cls, f"__r{stem}__", _dunder(fn, reflected=True))
        setattr(cls, f"__i{stem}__", _dunder(fn, inplace=True))
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
    from ..ndarray.ndarray import NDArray
    if issubclass(cls, NDArray):
        cls.broadcast_like = _broadcast_like
        for name in _LEGACY_ONLY:
            if name not in vars(cls):
                setattr(cls, name, _Hidden(name))
