"""``mxnet.numpy_dispatch_protocol``: the names of the NumPy functions and ufuncs whose calls
on ``mx.np`` arrays MXNet 1.9.1 dispatched to ``mx.np`` (``_NUMPY_ARRAY_FUNCTION_LIST``,
``_NUMPY_ARRAY_UFUNC_LIST``), and the decorators its tests use.

In mxlite the dispatch itself is not table-driven: ``mxlite.numpy._interop`` sends every
NumPy function or ufunc that ``mx.np`` has a function for to that function, and the rest to
NumPy on host copies. These lists only record which names MXNet 1.9.1 dispatched (some, such
as ``sometrue``, ``product`` and ``round_``, no longer exist in NumPy 2). ``dispatched(name)``
says where mxlite sends a name now.
"""
import numpy as _onp

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol", "dispatched"]

_NUMPY_ARRAY_FUNCTION_LIST = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort",
    "sort", "append", "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy",
    "cumsum", "diag", "diagonal", "diagflat", "dot", "expand_dims", "fix", "flip", "flipud",
    "fliplr", "inner", "insert", "max", "amax", "mean", "min", "amin", "nonzero", "ones_like",
    "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel", "repeat", "reshape",
    "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index",
    "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack", "hstack", "dstack",
    "zeros_like", "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve",
    "linalg.tensorinv", "linalg.tensorsolve", "linalg.pinv", "linalg.eigvals", "linalg.eig",
    "linalg.eigvalsh", "linalg.eigh", "shape", "trace", "tril", "meshgrid", "outer", "einsum",
    "polyval", "shares_memory", "may_share_memory", "quantile", "percentile", "diff",
    "ediff1d", "resize", "where", "full_like", "bincount", "empty_like", "nan_to_num", "isnan",
    "isfinite", "isposinf", "isneginf", "isinf", "pad",
]

_NUMPY_ARRAY_UFUNC_LIST = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "subtract",
    "multiply", "true_divide", "negative", "power", "mod", "matmul", "absolute", "rint",
    "sign", "exp", "log", "log2", "log10", "expm1", "sqrt", "square", "cbrt", "reciprocal",
    "invert", "bitwise_not", "remainder", "sin", "cos", "tan", "sinh", "cosh", "tanh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "maximum", "minimum",
    "ceil", "trunc", "floor", "bitwise_and", "bitwise_xor", "bitwise_or", "logical_not",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
]


def with_array_function_protocol(func):
    """Decorate a function that needs NumPy's ``__array_function__`` protocol (NumPy >=
    1.17, always the case for mxlite, so ``func`` is returned as it is)."""
    return func


def with_array_ufunc_protocol(func):
    """Decorate a function that needs NumPy's ``__array_ufunc__`` protocol (NumPy >= 1.15,
    always the case for mxlite, so ``func`` is returned as it is)."""
    return func


def dispatched(name):
    """The ``mx.np`` function that a NumPy call ``numpy.<name>`` (``'linalg.norm'``) on
    ``mx.np`` arrays runs now, or None when it runs NumPy on host copies (also when NumPy
    has no such name)."""
    from .numpy._interop import counterpart
    target = _onp
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return counterpart(target)
