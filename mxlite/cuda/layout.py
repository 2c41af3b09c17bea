"""Iteration layouts for strided and broadcast operands (``struct mx_layout`` of mx_cuda.h).

``layout(shape, *strides)`` merges dimensions that are contiguous for every operand, drops
unit dimensions, and returns a NumPy record passed to a kernel by value: the kernel finds
operand k's element at flat index i with ``mx_offset(l, k, i)``.
"""
import numpy as np

from ..base import MXNetError

__all__ = ["MAX_DIMS", "LAYOUT", "layout", "element_strides"]

MAX_DIMS = 16          # MX_MAX_DIMS of mx_cuda.h
LAYOUT = np.dtype([("ndim", "<i8"), ("shape", "<i8", (MAX_DIMS,)),
                   ("stride", "<i8", (3, MAX_DIMS))])


def element_strides(a):
    """``a``'s strides in elements (byte strides divided by the item size)."""
    size = a.dtype.itemsize
    if any(s % size for s in a.strides):
        raise MXNetError(f"CUDA kernels: strides {a.strides} are not multiples of the item "
                         f"size {size}")
    return tuple(s // size for s in a.strides)


def merge(shape, strides):
    """(shape, per-operand strides) with unit axes dropped and mergeable axes merged."""
    dims = [(n, [s[d] for s in strides]) for d, n in enumerate(shape) if n != 1]
    merged = []
    for n, st in dims:
        if merged:
            pn, pst = merged[-1]
            if all(p == q * n for p, q in zip(pst, st)):
                merged[-1] = (pn * n, st)
                continue
        merged.append((n, st))
    return [n for n, _ in merged], [[st[k] for _, st in merged] for k in range(len(strides))]


def layout(shape, *strides):
    """The ``mx_layout`` record of an iteration space ``shape`` over up to three operands
    with the given element strides (one tuple per operand, each of ``len(shape)``)."""
    if len(strides) > 3:
        raise MXNetError("CUDA kernels: a layout holds at most 3 operands")
    dims, per_operand = merge(shape, strides)
    if len(dims) > MAX_DIMS:
        raise MXNetError(f"CUDA kernels: {len(dims)} dimensions that cannot be merged "
                         f"(shape {tuple(shape)}); at most {MAX_DIMS} are supported on GPU")
    rec = np.zeros((), LAYOUT)
    rec["ndim"] = len(dims)
    rec["shape"][:len(dims)] = dims
    for k, st in enumerate(per_operand):
        rec["stride"][k, :len(dims)] = st
    return rec[()]
