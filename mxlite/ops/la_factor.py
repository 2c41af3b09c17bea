"""More of mx.nd.linalg: extracttrian and maketrian (a triangle of square matrices as a
vector, and back).

A triangle is chosen as MXNet's: ``offset = k > 0`` the elements on and above diagonal k,
``k < 0`` those on and below diagonal k, ``k = 0`` the lower (``lower=True``) or upper
triangle; its elements are stored in row-major order. The two ops are each other's adjoint,
so each one's gradient is the other (differentiable to any order). The positions are
computed on the device (``rctx.xp.arange``, comparisons, boolean selection) and the batch
is moved in blocks of matrices, so the scratch memory stays bounded.
"""
import math

import numpy as np

from ..base import op_error
from .la import _float_type
from .registry import OpDef, Param, register
from .shape_utils import size_of

_BLOCK = 1 << 22          # elements of one block of matrices (scratch memory per block)


def _in_triangle(i, j, offset, lower):
    """Element (i, j) (arrays) is in the triangle ``offset``/``lower`` selects."""
    if offset > 0 or (offset == 0 and not lower):
        return (j - i) >= offset
    return (i - j) >= -offset


def _positions(xp, n, attrs):
    """Flat row-major positions of the triangle's elements in an n x n matrix (int64, on
    the device)."""
    a = xp.arange(n * n, np.int64)
    return a[_in_triangle(a // n, a % n, attrs.offset, attrs.lower)]


def _count(n, offset):
    """How many elements the triangle of an n x n matrix with this offset holds."""
    m = n - abs(offset)
    return m * (m + 1) // 2 if m > 0 else 0


def _batches(count, per_item):
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(count, s + step)) for s in range(0, count, step)]


# ---- extracttrian ------------------------------------------------------------------------------
def _extract_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 2 or a[-1] != a[-2]:
        raise op_error("extracttrian", f"A must hold square matrices on its last two axes, "
                       f"got shape {a}")
    n = a[-1]
    if n and abs(attrs.offset) >= n:
        raise op_error("extracttrian", f"offset={attrs.offset} is outside matrices of shape "
                       f"{a[-2:]}")
    return [a[:-2] + (_count(n, attrs.offset),)]


def _extract_compute(rctx, ins, outs, attrs):
    a, out = ins[0], outs[0]
    n = a.shape[-1]
    count = size_of(a.shape[:-2])
    flat_a, flat_o = a.reshape(count, n * n), out.reshape(count, out.shape[-1])
    pos = _positions(rctx.xp, n, attrs)
    for b in _batches(count, n * n):
        rctx.xp.copyto(flat_o[b], flat_a[b][:, pos])


register(OpDef(
    "_linalg_extracttrian", inputs=("A",), aliases=("linalg_extracttrian",),
    params=(Param("offset", "int", 0, "the diagonal the triangle starts at: 0 main, > 0 "
                  "above (an upper triangle), < 0 below (a lower triangle)"),
            Param("lower", "bool", True, "the lower (True) or upper triangle when offset=0")),
    infer_shape=_extract_shape, infer_type=_float_type("extracttrian"),
    compute={"cpu": _extract_compute},
    gradient=lambda F, node, og: [F.linalg.maketrian(og[0], offset=node.attrs.offset,
                                                     lower=node.attrs.lower)],
    doc="""The triangle of every square matrix of A as a vector (row-major):
``(..., n, n) -> (..., m (m + 1) / 2)`` with ``m = n - |offset|``. ``offset > 0`` takes the
elements on and above diagonal ``offset``, ``offset < 0`` those on and below it, ``offset = 0``
the lower or upper triangle (``lower``). Its adjoint, and gradient, is maketrian.

>>> mx.nd.linalg.extracttrian(mx.nd.array([[1, 2], [3, 4]])).asnumpy().tolist()
[1.0, 3.0, 4.0]
"""))


# ---- maketrian ---------------------------------------------------------------------------------
def _side(op, length, offset):
    """n of the n x n matrices whose triangle (this offset) holds ``length`` elements."""
    m = (math.isqrt(8 * length + 1) - 1) // 2
    if m < 1 or m * (m + 1) // 2 != length:
        raise op_error(op, f"A's last axis ({length}) is not the size of a triangle "
                       f"(m (m + 1) / 2 for some m >= 1)")
    return m + abs(offset)


def _make_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 1:
        raise op_error("maketrian", "A must have at least 1 dimension (triangles as vectors), "
                       "got shape ()")
    n = _side("maketrian", a[-1], attrs.offset)
    return [a[:-1] + (n, n)]


def _make_compute(rctx, ins, outs, attrs):
    a, out = ins[0], outs[0]
    n = out.shape[-1]
    count = size_of(a.shape[:-1])
    flat_a, flat_o = a.reshape(count, a.shape[-1]), out.reshape(count, n * n)
    out.fill(0)
    pos = _positions(rctx.xp, n, attrs)
    for b in _batches(count, n * n):
        block = flat_o[b]
        block[:, pos] = flat_a[b]


register(OpDef(
    "_linalg_maketrian", inputs=("A",), aliases=("linalg_maketrian",),
    params=(Param("offset", "int", 0, "the diagonal the triangle starts at: 0 main, > 0 "
                  "above (an upper triangle), < 0 below (a lower triangle)"),
            Param("lower", "bool", True, "the lower (True) or upper triangle when offset=0")),
    infer_shape=_make_shape, infer_type=_float_type("maketrian"),
    compute={"cpu": _make_compute},
    gradient=lambda F, node, og: [F.linalg.extracttrian(og[0], offset=node.attrs.offset,
                                                        lower=node.attrs.lower)],
    doc="""Square matrices with the vectors of A (row-major) in the triangle extracttrian
reads, zeros elsewhere: ``(..., m (m + 1) / 2) -> (..., n, n)`` with ``n = m + |offset|``.
Its adjoint, and gradient, is extracttrian.

>>> mx.nd.linalg.maketrian(mx.nd.array([1, 2, 3]), offset=1).asnumpy().tolist()
[[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
"""))
