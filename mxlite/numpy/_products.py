"""NumPy's products (``dot``, ``matmul``, ``inner``, ``outer``, ``vdot``, ``tensordot``,
``kron``) over the registered ``dot``/``batch_dot`` operators, so they are differentiable
to any order; operands of different dtypes are promoted first. Inside a hybridized block
the operands are Symbols whose shapes are known while the block is traced
(``_front.shape_of``); a product needing a shape that is not known is an MXNetError."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.shape_utils import normalize_axis
from . import _front
from ._dtypes import result_type
from .multiarray import asarray

__all__ = ["dot", "matmul", "inner", "outer", "vdot", "tensordot", "kron"]


def _pair(fn, a, b):
    """The operands as np arrays (or Symbols), cast to their promoted dtype."""
    if _front.is_symbolic([a, b]):
        for v in (a, b):
            if not _front.is_symbolic([v]):
                raise op_error(fn, "a symbolic product takes Symbols for both operands, got "
                               f"{type(v).__name__}")
    else:
        a = asarray(a)                      # (a legacy NDArray: a zero-copy np view)
        b = asarray(b) if isinstance(b, NDArray) else asarray(b, ctx=a._ctx)
    da, db = _front.dtype_of(a), _front.dtype_of(b)
    if da is not None and db is not None and da != db:
        dt = result_type(da, db)
        a, b = (v if _front.dtype_of(v) == dt else _front.call("cast", [v], dtype=dt)
                for v in (a, b))
    return a, b


def _shape(fn, a):
    """``a``'s shape (a Symbol's as traced; -1 for a dimension not known)."""
    shape = _front.shape_of(a)
    if shape is None:
        raise op_error(fn, "needs the operands' shapes, which this Symbol does not know "
                       "(call it inside a hybridized block's forward)")
    return tuple(shape)


def _reshape(a, shape):
    from ._manipulation import reshape
    return reshape(a, shape)


def _aligned(m, n):
    """Whether two contracted lengths agree; -1 (a traced Symbol's dimension not known
    yet, a deferred parameter's) agrees with any, the operator checks it when bound."""
    return m == n or m < 0 or n < 0


def _size(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def tensordot(a, b, axes=2):
    """Sum of products over ``axes`` (an int: the last ``axes`` of ``a`` with the first of
    ``b``; or two sequences of axes)."""
    a, b = _pair("tensordot", a, b)
    sa, sb = _shape("tensordot", a), _shape("tensordot", b)
    if isinstance(axes, (int, _onp.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise op_error("tensordot", f"axes={n} is out of range for shapes {sa} and {sb}")
        a_axes, b_axes = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, _onp.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, _onp.integer)) else list(b_axes)
        a_axes = [normalize_axis("tensordot", i, len(sa)) for i in a_axes]
        b_axes = [normalize_axis("tensordot", i, len(sb)) for i in b_axes]
    if len(a_axes) != len(b_axes) or any(not _aligned(sa[i], sb[j])
                                         for i, j in zip(a_axes, b_axes)):
        raise op_error("tensordot", f"shape-mismatch for sum: axes {a_axes} of {sa} and "
                       f"{b_axes} of {sb}")
    a_free = [i for i in range(len(sa)) if i not in a_axes]
    b_free = [i for i in range(len(sb)) if i not in b_axes]
    summed = [max(sa[i], sb[j]) for i, j in zip(a_axes, b_axes)]   # (-1: not known yet)
    if any(d < 0 for d in summed):
        raise op_error("tensordot", f"the summed axes of shapes {sa} and {sb} must be known")
    k = _size(summed)
    # a free dimension not known yet (a traced Symbol's -1) leaves its product to reshape
    m = -1 if any(sa[i] < 0 for i in a_free) else _size(sa[i] for i in a_free)
    n = -1 if any(sb[i] < 0 for i in b_free) else _size(sb[i] for i in b_free)
    from ._manipulation import transpose
    at = a if a_free + a_axes == list(range(len(sa))) else transpose(a, tuple(a_free + a_axes))
    bt = b if b_axes + b_free == list(range(len(sb))) else transpose(b, tuple(b_axes + b_free))
    at = _reshape(at, (m, k))
    bt = _reshape(bt, (k, n))
    y = _front.call("dot", [at, bt])
    return _reshape(y, tuple(sa[i] for i in a_free) + tuple(sb[i] for i in b_free))


def _out(y, out):
    return y if out is None else _front.call("_copy", [y], out=out)


def dot(a, b, out=None):
    """NumPy's ``dot``: scalars multiply, 1-d by 1-d is the inner product, 2-d by 2-d the
    matrix product, N-d by 1-d sums over the last axis, N-d by M-d (M>=2) sums the last
    axis of ``a`` with the second-to-last of ``b``."""
    a, b = _pair("dot", a, b)
    sa, sb = _shape("dot", a), _shape("dot", b)
    if not sa or not sb:
        from ._ufuncs import multiply
        return _out(multiply(a, b), out)
    if not _aligned(sa[-1], sb[0 if len(sb) == 1 else -2]):
        raise op_error("dot", f"shapes {sa} and {sb} not aligned: {sa[-1]} (dim "
                       f"{len(sa) - 1}) != {sb[0 if len(sb) == 1 else -2]}")
    if len(sb) <= 2:
        # the operator takes an N-d a against a 1-d or 2-d b as NumPy does; 1-d by 1-d
        # gives (1,) there, NumPy's 0-d here
        y = _front.call("dot", [a, b])
        if len(sa) == 1 and len(sb) == 1:
            y = _reshape(y, ())
        return _out(y, out)
    return _out(tensordot(a, b, ([len(sa) - 1], [len(sb) - 2])), out)


def matmul(a, b, out=None):
    """NumPy's ``matmul``: matrix products over the last two axes, the leading axes
    broadcast (``batch_dot``); 1-d operands are promoted to a row / a column."""
    a, b = _pair("matmul", a, b)
    sa, sb = _shape("matmul", a), _shape("matmul", b)
    if not sa or not sb:
        raise op_error("matmul", "matmul does not take 0-d operands (use multiply)")
    va, vb = len(sa) == 1, len(sb) == 1
    if va:
        a, sa = _reshape(a, (1, sa[0])), (1, sa[0])
    if vb:
        b, sb = _reshape(b, (sb[0], 1)), (sb[0], 1)
    if not _aligned(sa[-1], sb[-2]):
        raise op_error("matmul", f"operands of shapes {sa} and {sb} do not align: "
                       f"{sa[-1]} != {sb[-2]}")
    if len(sa) == 2 and len(sb) == 2:
        y = _front.call("dot", [a, b])
        lead = ()
    elif len(sb) == 2 and not va:
        # a stack of matrices times one matrix: the operator's N-d by 2-d product
        y = _front.call("dot", [a, b])
        lead = sa[:-2]
    else:
        try:
            lead = tuple(_onp.broadcast_shapes(sa[:-2], sb[:-2]))
        except ValueError:
            raise op_error("matmul", f"batch axes of shapes {sa} and {sb} do not "
                           "broadcast") from None
        from ._manipulation import broadcast_to
        if sa[:-2] != lead:
            a = broadcast_to(a, lead + sa[-2:])
        if sb[:-2] != lead:
            b = broadcast_to(b, lead + sb[-2:])
        nb = _size(lead)
        y = _front.call("batch_dot", [_reshape(a, (nb,) + sa[-2:]),
                                      _reshape(b, (nb,) + sb[-2:])])
        y = _reshape(y, lead + (sa[-2], sb[-1]))
    if va and vb:
        y = _reshape(y, lead)
    elif va:
        y = _reshape(y, lead + (sb[-1],))
    elif vb:
        y = _reshape(y, lead + (sa[-2],))
    return _out(y, out)


def inner(a, b):
    """Sum of products over the last axes of ``a`` and ``b``."""
    a, b = _pair("inner", a, b)
    sa, sb = _shape("inner", a), _shape("inner", b)
    if not sa or not sb:
        from ._ufuncs import multiply
        return multiply(a, b)
    return tensordot(a, b, ([len(sa) - 1], [len(sb) - 1]))


def outer(a, b):
    """The outer product of the flattened ``a`` and ``b``."""
    a, b = _pair("outer", a, b)
    from ._ufuncs import multiply
    return multiply(_reshape(a, (-1, 1)), _reshape(b, (1, -1)))


def vdot(a, b):
    """The dot product of the flattened ``a`` and ``b`` (a 0-d array)."""
    a, b = _pair("vdot", a, b)
    na, nb = _size(_shape("vdot", a)), _size(_shape("vdot", b))
    if na != nb:
        raise op_error("vdot", f"operands have {na} and {nb} elements")
    return tensordot(_reshape(a, (-1,)), _reshape(b, (-1,)), 1)


def kron(a, b):
    """The Kronecker product: blocks of ``b`` scaled by each element of ``a``."""
    a, b = _pair("kron", a, b)
    sa, sb = _shape("kron", a), _shape("kron", b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    inter_a = tuple(v for d in sa for v in (d, 1))
    inter_b = tuple(v for d in sb for v in (1, d))
    from ._ufuncs import multiply
    y = multiply(_reshape(a, inter_a), _reshape(b, inter_b))
    return _reshape(y, tuple(x * z for x, z in zip(sa, sb)))
