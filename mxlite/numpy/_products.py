"""NumPy's products (``dot``, ``matmul``, ``inner``, ``outer``, ``vdot``, ``tensordot``,
``kron``) over the registered ``dot``/``batch_dot`` operators, so they are differentiable
to any order; operands of different dtypes are promoted first."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.shape_utils import normalize_axis
from . import _front
from ._dtypes import result_type
from .multiarray import asarray

__all__ = ["dot", "matmul", "inner", "outer", "vdot", "tensordot", "kron"]


def _pair(a, b):
    a = a if isinstance(a, NDArray) else asarray(a)
    b = b if isinstance(b, NDArray) else asarray(b, ctx=a._ctx)
    dt = result_type(a.dtype, b.dtype)
    return a.astype(dt, copy=False), b.astype(dt, copy=False)


def _reshape(a, shape):
    from ._manipulation import reshape
    return reshape(a, shape)


def tensordot(a, b, axes=2):
    """Sum of products over ``axes`` (an int: the last ``axes`` of ``a`` with the first of
    ``b``; or two sequences of axes)."""
    a, b = _pair(a, b)
    if isinstance(axes, (int, _onp.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise op_error("tensordot", f"axes={n} is out of range for shapes "
                           f"{tuple(a.shape)} and {tuple(b.shape)}")
        a_axes, b_axes = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
        a_axes = [normalize_axis("tensordot", i, a.ndim) for i in a_axes]
        b_axes = [normalize_axis("tensordot", i, b.ndim) for i in b_axes]
    if len(a_axes) != len(b_axes) or any(a.shape[i] != b.shape[j]
                                          for i, j in zip(a_axes, b_axes)):
        raise op_error("tensordot", f"shape-mismatch for sum: axes {a_axes} of "
                       f"{tuple(a.shape)} and {b_axes} of {tuple(b.shape)}")
    a_free = [i for i in range(a.ndim) if i not in a_axes]
    b_free = [i for i in range(b.ndim) if i not in b_axes]
    from ._manipulation import transpose
    k = 1
    for i in a_axes:
        k *= a.shape[i]
    m = 1
    for i in a_free:
        m *= a.shape[i]
    n = 1
    for i in b_free:
        n *= b.shape[i]
    at = _reshape(transpose(a, tuple(a_free + a_axes)), (m, k))
    bt = _reshape(transpose(b, tuple(b_axes + b_free)), (k, n))
    y = _front.call("dot", [at, bt])
    return _reshape(y, tuple(a.shape[i] for i in a_free) + tuple(b.shape[i] for i in b_free))


def dot(a, b, out=None):
    """NumPy's ``dot``: scalars multiply, 1-d by 1-d is the inner product, 2-d by 2-d the
    matrix product, N-d by 1-d sums over the last axis, N-d by M-d (M>=2) sums the last
    axis of ``a`` with the second-to-last of ``b``."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from ._ufuncs import multiply
        y = multiply(a, b)
    elif b.ndim == 1:
        y = tensordot(a, b, ([a.ndim - 1], [0]))
    else:
        y = tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))
    return y if out is None else _front.call("_copy", [y], out=out)


def matmul(a, b, out=None):
    """NumPy's ``matmul``: matrix products over the last two axes, the leading axes
    broadcast (``batch_dot``); 1-d operands are promoted to a row / a column."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise op_error("matmul", "matmul does not take 0-d operands (use multiply)")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = _reshape(a, (1, a.shape[0]))
    if vb:
        b = _reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise op_error("matmul", f"operands of shapes {tuple(a.shape)} and {tuple(b.shape)} "
                       f"do not align: {a.shape[-1]} != {b.shape[-2]}")
    if a.ndim == 2 and b.ndim == 2:
        y = _front.call("dot", [a, b])
    else:
        batch = _onp.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        from ._manipulation import broadcast_to
        a = broadcast_to(a, batch + tuple(a.shape[-2:]))
        b = broadcast_to(b, batch + tuple(b.shape[-2:]))
        nb = 1
        for d in batch:
            nb *= d
        y = _front.call("batch_dot", [_reshape(a, (nb,) + tuple(a.shape[-2:])),
                                      _reshape(b, (nb,) + tuple(b.shape[-2:]))])
        y = _reshape(y, batch + tuple(y.shape[-2:]))
    if va and vb:
        y = _reshape(y, tuple(y.shape[:-2]))
    elif va:
        y = _reshape(y, tuple(y.shape[:-2]) + (y.shape[-1],))
    elif vb:
        y = _reshape(y, tuple(y.shape[:-1]))
    return y if out is None else _front.call("_copy", [y], out=out)


def inner(a, b):
    """Sum of products over the last axes of ``a`` and ``b``."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from ._ufuncs import multiply
        return multiply(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a, b):
    """The outer product of the flattened ``a`` and ``b``."""
    a, b = _pair(a, b)
    from ._ufuncs import multiply
    return multiply(_reshape(a, (-1, 1)), _reshape(b, (1, -1)))


def vdot(a, b):
    """The dot product of the flattened ``a`` and ``b`` (a 0-d array)."""
    a, b = _pair(a, b)
    if a.size != b.size:
        raise op_error("vdot", f"operands have {a.size} and {b.size} elements")
    return tensordot(_reshape(a, (-1,)), _reshape(b, (-1,)), 1)


def kron(a, b):
    """The Kronecker product: blocks of ``b`` scaled by each element of ``a``."""
    a, b = _pair(a, b)
    nd = max(a.ndim, b.ndim)
    a = _reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = _reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    inter_a = tuple(v for d in a.shape for v in (d, 1))
    inter_b = tuple(v for d in b.shape for v in (1, d))
    from ._ufuncs import multiply
    y = multiply(_reshape(a, inter_a), _reshape(b, inter_b))
    return _reshape(y, tuple(x * z for x, z in zip(a.shape, b.shape)))
