"""Matrix products: dot and batch_dot through the BLAS that NumPy links.

Calls whose row count exceeds the 32-bit BLAS integer width are split into row blocks, so
a 32-bit BLAS never sees an overflowing dimension.
"""
import numpy as np

from ..base import op_error
from .common import compute_dtype, run_in, write_back
from .registry import OpDef, Param, register

BLAS_MAX = 2 ** 31 - 1

_TRANSPOSE = (Param("transpose_a", "bool", False, "use the transpose of lhs"),
              Param("transpose_b", "bool", False, "use the transpose of rhs"),
              Param("forward_stype", "any", None, "unused; dense storage only"))


def _dot_shape(shapes, attrs):
    a, b = shapes
    if len(a) == 0 or len(b) == 0:
        raise op_error("dot", f"inputs must have at least one dimension, got {a} and {b}")
    # lhs contracts its last axis (first when transposed); rhs its first (last when transposed)
    ka, keep_a = (a[0], a[1:]) if attrs.transpose_a else (a[-1], a[:-1])
    kb, keep_b = (b[-1], b[:-1]) if attrs.transpose_b else (b[0], b[1:])
    if ka != kb:
        raise op_error("dot", f"shapes {a} and {b} are not aligned (transpose_a="
                       f"{attrs.transpose_a}, transpose_b={attrs.transpose_b}): {ka} != {kb}")
    return [tuple(keep_a) + tuple(keep_b) or (1,)]


def _matmul_dtype(name):
    def infer_type(dtypes, attrs):
        a, b = dtypes
        if a != b:
            raise op_error(name, f"lhs and rhs must share a dtype, got {a} and {b}")
        if a == np.bool_:
            raise op_error(name, "is not defined for bool arrays")
        return [a]
    return infer_type


def _blocked_matmul(a, b, out):
    """out = a @ b for 2-D arrays, in row blocks that a 32-bit BLAS can take."""
    if a.shape[0] <= BLAS_MAX:
        np.matmul(a, b, out=out)
        return
    for start in range(0, a.shape[0], BLAS_MAX):
        np.matmul(a[start:start + BLAS_MAX], b, out=out[start:start + BLAS_MAX])


def _dot_compute(ins, outs, attrs):
    out = outs[0]
    work = compute_dtype(out.dtype)
    a, b = run_in(work, ins)
    a2 = a.reshape(a.shape[0], -1).T if attrs.transpose_a else a.reshape(-1, a.shape[-1])
    b2 = b.reshape(-1, b.shape[-1]).T if attrs.transpose_b else b.reshape(b.shape[0], -1)
    target = np.empty((a2.shape[0], b2.shape[1]), work)
    _blocked_matmul(a2, b2, target)
    write_back(target.reshape(out.shape), out)


def _dot_grad(F, node, ograds):
    """C = op_a(A) op_b(B):  dA = G op_b(B)^T,  dB = op_a(A)^T G, written as dots of the 2-D
    views MXNet's dot uses (so each gradient is again a dot, differentiable to any order)."""
    ta, tb = node.attrs.transpose_a, node.attrs.transpose_b
    a_shape, b_shape = node.input_shapes
    a2 = (a_shape[0], -1) if ta else (-1, a_shape[-1])
    b2 = (-1, b_shape[-1]) if tb else (b_shape[0], -1)
    A, B = (F.reshape(x, shape=s) for x, s in zip(node.inputs, (a2, b2)))
    g = ograds[0]
    G = F.reshape(g, shape=(A.shape[1] if ta else A.shape[0], -1))
    da = db = None
    if node.wants[0]:
        da = (F.dot(B, G, transpose_a=tb, transpose_b=True) if ta
              else F.dot(G, B, transpose_b=not tb))
        da = F.reshape(da, shape=a_shape)
    if node.wants[1]:
        db = (F.dot(G, A, transpose_a=True, transpose_b=ta) if tb
              else F.dot(A, G, transpose_a=not ta))
        db = F.reshape(db, shape=b_shape)
    return [da, db]


register(OpDef(
    "dot", inputs=("lhs", "rhs"), params=_TRANSPOSE, infer_shape=_dot_shape,
    infer_type=_matmul_dtype("dot"), compute={"cpu": _dot_compute}, gradient=_dot_grad,
    doc="Dot product (MXNet semantics): for N-d inputs, contract the last axis of lhs with the "
        "first axis of rhs; output shape lhs.shape[:-1] + rhs.shape[1:]. 1-D . 1-D gives shape (1,). "
        "transpose_a/transpose_b treat the inputs as 2-D matrices (first axis vs the rest) and "
        "transpose them."))


def _batch_dot_shape(shapes, attrs):
    a, b = shapes
    if len(a) != 3 or len(b) != 3:
        raise op_error("batch_dot", f"inputs must be 3-D (batch, rows, cols), got {a} and {b}")
    if a[0] != b[0]:
        raise op_error("batch_dot", f"batch sizes differ: {a} and {b}")
    m, ka = (a[2], a[1]) if attrs.transpose_a else (a[1], a[2])
    kb, n = (b[2], b[1]) if attrs.transpose_b else (b[1], b[2])
    if ka != kb:
        raise op_error("batch_dot", f"shapes {a} and {b} are not aligned: {ka} != {kb}")
    return [(a[0], m, n)]


def _batch_dot_compute(ins, outs, attrs):
    out = outs[0]
    work = compute_dtype(out.dtype)
    a, b = run_in(work, ins)
    if attrs.transpose_a:
        a = a.transpose(0, 2, 1)
    if attrs.transpose_b:
        b = b.transpose(0, 2, 1)
    target = out if out.dtype == work else np.empty(out.shape, work)
    if a.shape[1] <= BLAS_MAX:
        np.matmul(a, b, out=target)
    else:
        for i in range(a.shape[0]):
            _blocked_matmul(a[i], b[i], target[i])
    write_back(target, out)


def _batch_dot_grad(F, node, ograds):
    """Per batch, C = op_a(A) op_b(B): dA = G op_b(B)^T, dB = op_a(A)^T G (as batch_dots)."""
    ta, tb = node.attrs.transpose_a, node.attrs.transpose_b
    A, B = node.inputs
    G = ograds[0]
    da = db = None
    if node.wants[0]:
        da = (F.batch_dot(B, G, transpose_a=tb, transpose_b=True) if ta
              else F.batch_dot(G, B, transpose_b=not tb))
    if node.wants[1]:
        db = (F.batch_dot(G, A, transpose_a=True, transpose_b=ta) if tb
              else F.batch_dot(A, G, transpose_a=not ta))
    return [da, db]


register(OpDef(
    "batch_dot", inputs=("lhs", "rhs"), params=_TRANSPOSE,
    infer_shape=_batch_dot_shape, infer_type=_matmul_dtype("batch_dot"),
    compute={"cpu": _batch_dot_compute}, gradient=_batch_dot_grad,
    doc="Batched matrix product of 3-D arrays: out[i] = op(lhs[i]) @ op(rhs[i])."))
