"""Matrix products: dot and batch_dot through the BLAS that NumPy links.

Calls whose row count exceeds the 32-bit BLAS integer width are split into row blocks, so
a 32-bit BLAS never sees an overflowing dimension.
"""
import numpy as np

from ..base import op_error
from . import onednn
from .common import compute_dtype, run_in, write_back
from .registry import OpDef, Param, register
from .shape_partial import partial_rule
from .shape_utils import size_of

BLAS_MAX = 2 ** 31 - 1

_TRANSPOSE = (Param("transpose_a", "bool", False, "use the transpose of lhs"),
              Param("transpose_b", "bool", False, "use the transpose of rhs"),
              Param("forward_stype", "str", None, "unused; dense storage only",
                    choices=("default", "csr", "row_sparse")))


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


@partial_rule
def _dot_backward_shape(in_shapes, out_shapes, attrs):
    """Partial shapes: the contracted dimension known on one side gives it to the other,
    and a known output gives the kept dimensions (``dot(x, w)`` with x ``(4, 7)`` and w of
    unknown first dimension makes w ``(7, ...)``, as a deferred Gluon parameter needs)."""
    a, b = in_shapes
    if a is None or b is None or not a or not b:
        return [a, b]
    ia = 0 if attrs.transpose_a else len(a) - 1
    ib = len(b) - 1 if attrs.transpose_b else 0
    k = a[ia] if a[ia] is not None else b[ib]
    a = a[:ia] + (k,) + a[ia + 1:]
    b = b[:ib] + (k,) + b[ib + 1:]
    out = out_shapes[0] if out_shapes else None
    keep_a = [i for i in range(len(a)) if i != ia]
    keep_b = [i for i in range(len(b)) if i != ib]
    if out is not None and len(out) == len(keep_a) + len(keep_b):
        a, b = list(a), list(b)
        for j, i in enumerate(keep_a):
            a[i] = a[i] if a[i] is not None else out[j]
        for j, i in enumerate(keep_b):
            b[i] = b[i] if b[i] is not None else out[len(keep_a) + j]
        a, b = tuple(a), tuple(b)
    return [a, b]


def _matmul_dtype(name):
    def infer_type(dtypes, attrs):
        a, b = dtypes
        if a != b:
            raise op_error(name, f"lhs and rhs must share a dtype, got {a} and {b}")
        if a == np.bool_:
            raise op_error(name, "is not defined for bool arrays")
        return [a]
    return infer_type


def _blocked_matmul(xp, a, b, out):
    """out = a @ b for 2-D arrays, or batched 3-D ones: oneDNN's matmul where ``onednn``
    allows it (float32 on the CPU: it shares the OpenMP threads of the other oneDNN
    kernels, where BLAS's own thread pool would keep spinning beside them), else BLAS, a
    2-D product in row blocks that a 32-bit BLAS can take."""
    if onednn.run(xp, "matmul", (a, b, out), contiguous=False):
        return
    if compute_dtype(out.dtype) != out.dtype:       # bfloat16 that oneDNN refused
        wide = xp.empty(out.shape, compute_dtype(out.dtype))
        _blocked_matmul(xp, a.astype(wide.dtype), b.astype(wide.dtype), wide)
        xp.cast_into(out, wide)
        return
    if a.ndim == 3 or a.shape[0] <= BLAS_MAX:
        xp.matmul(a, b, out)
        return
    for start in range(0, a.shape[0], BLAS_MAX):
        xp.matmul(a[start:start + BLAS_MAX], b, out[start:start + BLAS_MAX])


def _dot_2d(a_shape, b_shape, ta, tb):
    """The 2-D shapes MXNet's dot reads its inputs as, before the transposes: lhs is
    (a[0], rest) when transposed, else (rest, a[-1]); rhs is (rest, b[-1]) when transposed,
    else (b[0], rest). Sizes are explicit (no -1), so zero-size inputs reshape too."""
    ra = (a_shape[0], size_of(a_shape[1:])) if ta else (size_of(a_shape[:-1]), a_shape[-1])
    rb = (size_of(b_shape[:-1]), b_shape[-1]) if tb else (b_shape[0], size_of(b_shape[1:]))
    return ra, rb


def _dot_compute(rctx, ins, outs, attrs):
    out = outs[0]
    work = onednn.work_dtype(rctx.xp, out.dtype)   # bfloat16 stays so on oneDNN
    a, b = run_in(work, ins)
    ra, rb = _dot_2d(a.shape, b.shape, attrs.transpose_a, attrs.transpose_b)
    a2, b2 = a.reshape(ra), b.reshape(rb)
    if attrs.transpose_a:
        a2 = a2.T
    if attrs.transpose_b:
        b2 = b2.T
    xp = rctx.xp
    shape2 = (a2.shape[0], b2.shape[1])
    # the product goes straight into out (C-contiguous, so the 2-D reshape is a view)
    target = out.reshape(shape2) if out.dtype == work else xp.empty(shape2, work)
    _blocked_matmul(xp, a2, b2, target)      # an inner size of 0 gives zeros
    if out.dtype != work:
        write_back(xp, target.reshape(out.shape), out)


def _dot_grad(F, node, ograds):
    """C = op_a(A) op_b(B):  dA = G op_b(B)^T,  dB = op_a(A)^T G, written as dots of the 2-D
    views MXNet's dot uses (so each gradient is again a dot, differentiable to any order).
    When a size is 0 every gradient is zero (an empty sum, or an empty head gradient)."""
    ta, tb = node.attrs.transpose_a, node.attrs.transpose_b
    a_shape, b_shape = node.input_shapes
    ra, rb = _dot_2d(a_shape, b_shape, ta, tb)
    m, k = (ra[1], ra[0]) if ta else ra
    n = rb[0] if tb else rb[1]
    if m * k * n == 0:
        return [F.zeros_like(x) if want else None for x, want in zip(node.inputs, node.wants)]
    def as_shape(x, have, want):      # a reshape only where the shapes differ (it copies)
        return x if tuple(have) == tuple(want) else F.reshape(x, shape=want)

    A, B = (as_shape(x, s0, s) for x, s0, s in zip(node.inputs, (a_shape, b_shape), (ra, rb)))
    G = as_shape(ograds[0], node.output_shapes[0], (m, n))
    da = db = None
    if node.wants[0]:
        da = (F.dot(B, G, transpose_a=tb, transpose_b=True) if ta
              else F.dot(G, B, transpose_b=not tb))
        da = as_shape(da, ra, a_shape)
    if node.wants[1]:
        db = (F.dot(G, A, transpose_a=True, transpose_b=ta) if tb
              else F.dot(A, G, transpose_a=not ta))
        db = as_shape(db, rb, b_shape)
    return [da, db]


register(OpDef(
    "dot", inputs=("lhs", "rhs"), params=_TRANSPOSE, infer_shape=_dot_shape,
    backward_shape=_dot_backward_shape,
    infer_type=_matmul_dtype("dot"), compute={"cpu": _dot_compute}, gradient=_dot_grad,
    doc="""Dot product (MXNet semantics).

For N-d inputs, contract the last axis of lhs with the first axis of rhs; the output shape is
``lhs.shape[:-1] + rhs.shape[1:]``. 1-D . 1-D gives shape (1,). ``transpose_a`` reads lhs as
the 2-D matrix ``(lhs.shape[0], rest)`` and transposes it, so its first axis is contracted and
its other axes lead the output; ``transpose_b`` reads rhs as ``(rest, rhs.shape[-1])`` and
transposes it, so its last axis is contracted. A contracted size of 0 gives zeros (an empty
sum); other zero sizes give empty results. float16 is multiplied in float32 and rounded once;
integer dtypes multiply exactly and wrap on overflow, as NumPy does (MXNet's CPU dot took float
dtypes only). lhs and rhs must share a dtype; bool is refused.

>>> mx.nd.dot(mx.nd.ones((2, 0)), mx.nd.ones((0, 3))).asnumpy().tolist()
[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
>>> mx.nd.dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((4, 5))).shape
(2, 3, 5)
"""))


def _batch_dot_shape(shapes, attrs):
    a, b = shapes
    if len(a) < 3 or len(a) != len(b):
        raise op_error("batch_dot", f"inputs must have one number (>= 3) of dimensions "
                       f"(batch..., rows, cols), got {a} and {b}")
    if a[:-2] != b[:-2]:
        raise op_error("batch_dot", f"batch sizes differ: {a} and {b}")
    m, ka = (a[-1], a[-2]) if attrs.transpose_a else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if attrs.transpose_b else (b[-2], b[-1])
    if ka != kb:
        raise op_error("batch_dot", f"shapes {a} and {b} are not aligned: {ka} != {kb}")
    return [tuple(a[:-2]) + (m, n)]


def _as_3d(x):
    """``x`` (C-contiguous, >= 3-D) seen as (batch, rows, cols): its leading axes merged."""
    return x if x.ndim == 3 else x.reshape((size_of(x.shape[:-2]),) + x.shape[-2:])


def _batch_dot_compute(rctx, ins, outs, attrs):
    out = _as_3d(outs[0])
    work = onednn.work_dtype(rctx.xp, out.dtype)   # bfloat16 stays so on oneDNN
    a, b = (_as_3d(x) for x in run_in(work, ins))
    if attrs.transpose_a:
        a = a.transpose(0, 2, 1)
    if attrs.transpose_b:
        b = b.transpose(0, 2, 1)
    xp = rctx.xp
    target = out if out.dtype == work else xp.empty(out.shape, work)
    if onednn.run(xp, "matmul", (a, b, target), contiguous=False):
        pass
    elif a.shape[1] <= BLAS_MAX:
        xp.matmul(a, b, target)
    else:
        for i in range(a.shape[0]):
            _blocked_matmul(xp, a[i], b[i], target[i])
    write_back(xp, target, out)


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
    doc="""Batched matrix product: ``out[i] = op(lhs[i]) @ op(rhs[i])`` over the batch axes.

The inputs have one number (>= 3) of dimensions; all but the last two are batch axes, equal
in both (MXNet's rule: they do not broadcast). ``op`` transposes the last two axes when
``transpose_a`` / ``transpose_b`` is set. A contracted
size of 0 gives zeros; a batch, row or column size of 0 gives an empty result. Dtypes as for
``dot``.

>>> mx.nd.batch_dot(mx.nd.ones((2, 3, 0)), mx.nd.ones((2, 0, 4))).asnumpy().tolist()[0]
[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
"""))
