"""The private helpers shared by mx.np's element-wise math modules (``_binary_math``,
``_unary_math``, ``_rounding``, ``_diagonals``, ``_array_compare``, ``_nan_reductions``,
``_unravel``): operands as np arrays (numbers kept as numbers), promotion and casts, binary
operands checked and promoted, element-wise selection and the ``out=`` write."""
import numbers

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type, scalar_result_type, true_divide_type
from ._indexing import where
from ._ufuncs import less, logical_or, true_divide


def _is_number(x):
    return isinstance(x, (numbers.Number, _onp.generic)) and not isinstance(x, NDArray)


def _operand(x, like=None):
    """``x`` as an np array or Symbol (numbers stay numbers; a list of integers or booleans
    keeps NumPy's dtype, other lists take the default float, as ``mx.np.array``)."""
    if _is_number(x) or isinstance(x, NDArray) or _front.is_symbolic([x]):
        return x
    from .multiarray import to_array
    host = _onp.asarray(x)
    return to_array(x, like=like, dtype=host.dtype if host.dtype.kind in "biu" else None)


def _dtype_of(x):
    """The dtype of an array (or of a Symbol while a block is traced); None for a number
    or an unknown dtype."""
    return None if _is_number(x) else _front.dtype_of(x)


def _promoted(x1, x2):
    """The result dtype of two operands (arrays, Symbols or numbers; None where a dtype
    is not known)."""
    d1, d2 = _dtype_of(x1), _dtype_of(x2)
    if d1 is not None and d2 is not None:
        return result_type(d1, d2)
    if d1 is not None and _is_number(x2):
        return scalar_result_type(d1, _number(x2))
    if d2 is not None and _is_number(x1):
        return scalar_result_type(d2, _number(x1))
    return None


def _number(v):
    return v.item() if isinstance(v, _onp.generic) else v


def _cast(x, dtype):
    """Array ``x`` in ``dtype`` (a recorded cast when it differs); numbers and Symbols as
    they are."""
    if dtype is None or _is_number(x) or _dtype_of(x) == dtype:
        return x
    return _front.call("cast", [x], dtype=dtype)


def _binary_operands(name, x1, x2, float_only=False):
    """Both operands promoted to one dtype (the default float for integers when
    ``float_only``); numbers become 0-d arrays of that dtype beside an array."""
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    dt = _promoted(x1, x2)
    if dt is not None and float_only:
        dt = true_divide_type(dt)
    x1, x2 = _cast(x1, dt), _cast(x2, dt)
    x1, x2 = _as_array(x1, x2, dt), _as_array(x2, x1, dt)
    s1, s2 = _front.shape_of(x1), _front.shape_of(x2)
    if s1 is not None and s2 is not None and s1 != s2 and -1 not in s1 + s2:
        # one shape for both, so every later selection is element to element
        from ._manipulation import broadcast_to
        try:
            shape = _onp.broadcast_shapes(s1, s2)
        except ValueError:
            raise op_error(name, f"operands could not be broadcast together with shapes "
                           f"{s1} {s2}") from None
        x1 = x1 if s1 == shape else broadcast_to(x1, shape)
        x2 = x2 if s2 == shape else broadcast_to(x2, shape)
    return x1, x2, dt


def _select(condition, x, y):
    """``where(condition, x, y)`` for operands of one shape (numbers become operands of the
    other's dtype), on arrays and on Symbols."""
    x = _as_array(x, y, _dtype_of(y)) if _is_number(x) else x
    y = _as_array(y, x, _dtype_of(x)) if _is_number(y) else y
    shapes = [_front.shape_of(v) for v in (condition, x, y)]
    if shapes[0] is not None and shapes[0] == shapes[1] == shapes[2] and \
            _dtype_of(x) == _dtype_of(y) is not None:
        return _front.call("where", [condition, x, y])      # the operator, directly
    if not _front.is_symbolic([condition, x, y]):
        return where(condition, x, y)
    return _front.call("where", [_cast(condition, _dtype_of(x)), x, y])


def _as_array(x, like, dtype):
    """A number ``x`` as an operand beside ``like``: an array of ``like``'s shape and
    ``dtype`` filled with ``x`` (beside a Symbol: ``x`` added to ``zeros_like``)."""
    if not _is_number(x):
        return x
    if isinstance(like, NDArray):
        return _front.call("_full", [], shape=tuple(like.shape), val=_number(x),
                           dtype=dtype or default_float(), ctx=like._ctx)
    return _front.call("_plus_scalar", [_front.call("zeros_like", [like])], scalar=_number(x))


def _finish(y, out):
    """``y``, or ``y`` written into ``out`` (cast to ``out``'s dtype)."""
    if out is None:
        return y
    if not isinstance(out, NDArray):
        raise op_error("mx.np", f"out= must be an mx.np.ndarray, got {type(out).__name__}")
    return _front.call("cast", [y], out=out, dtype=out.dtype)


def _both_numbers(x1, x2):
    return _is_number(x1) and _is_number(x2)


def _negative_sign(x):
    """Booleans: where ``x`` has its sign bit set, ``-0.0`` included (the sign of a NaN is
    read as positive; ``signbit`` reads it exactly)."""
    neg = less(x, 0)
    dt = _dtype_of(x)
    if dt is not None and dt.kind in "biu":
        return neg
    return logical_or(neg, less(true_divide(1, x), 0))      # 1 / -0.0 is -inf
