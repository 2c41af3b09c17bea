"""``mx.np.linalg.eig`` and ``eigvals``: eigenvalues of non-symmetric matrices, computed
on the host by NumPy (LAPACK's geev), as MXNet's were: no registered operator covers them.
In a graph (a Symbol input) the same host computation runs as the custom operator
``_np_linalg_eig`` when the graph runs. Real eigenvalues only (MXNet's rule); not
differentiable.
"""
import numpy as onp

from ..base import op_error
from ..operator import CustomOp, CustomOpProp, register as custom_register
from ._front import call
from ._linalg_core import matrices, shape_of, symbolic

__all__ = ["eig", "eigvals"]

_EIG_OP = "_np_linalg_eig"      # the custom op of eig/eigvals on Symbols


def _real_eig(fn, data, vectors, dtype):
    """numpy.linalg.eig (or eigvals) of host matrices, real parts in ``dtype``: a complex
    eigenvalue is an MXNetError (MXNet's rule)."""
    w, v = onp.linalg.eig(data) if vectors else (onp.linalg.eigvals(data), None)
    if onp.iscomplexobj(w):
        scale = max(1.0, float(onp.abs(w).max(initial=0.0)))
        if (onp.abs(w.imag) > 100 * onp.finfo(dtype).eps * scale).any():
            raise op_error(fn, "a matrix has complex eigenvalues; only real ones are "
                               "supported (MXNet's rule)")
        w, v = w.real, None if v is None else v.real
    return [w.astype(dtype)] + ([v.astype(dtype)] if vectors else [])


class _EigOp(CustomOp):
    """The host computation of ``eig``/``eigvals`` inside a graph (no gradient)."""

    def __init__(self, vectors):
        super().__init__()
        self.vectors = vectors

    def forward(self, is_train, req, in_data, out_data, aux):
        data = in_data[0].asnumpy()
        fn = "eig" if self.vectors else "eigvals"
        for out, r, value in zip(out_data, req, _real_eig(fn, data, self.vectors,
                                                           onp.dtype(out_data[0].dtype))):
            self.assign(out, r, value)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise op_error("eig" if self.vectors else "eigvals", "is not differentiable "
                       "(computed on the host by NumPy)")


@custom_register(_EIG_OP)
class _EigProp(CustomOpProp):
    """``Custom(op_type='_np_linalg_eig', vectors=...)``: outputs w (..., n) and, with
    ``vectors``, v (..., n, n); integer input gives float64."""

    def __init__(self, vectors="True"):
        super().__init__(need_top_grad=False)
        self.vectors = str(vectors) in ("True", "1", "true")

    def list_outputs(self):
        return ["w", "v"] if self.vectors else ["w"]

    def infer_shape(self, in_shape):
        s = tuple(in_shape[0])
        return [s], [s[:-1], s][:len(self.list_outputs())], []

    def infer_type(self, in_type):
        t = onp.dtype(in_type[0])
        out = t if t.kind == "f" and t.itemsize >= 4 else onp.dtype(onp.float64)
        return [in_type[0]], [out] * len(self.list_outputs()), []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _EigOp(self.vectors)


def _host_eig(fn, a, vectors):
    """eig/eigvals: on the host for arrays, through the ``_np_linalg_eig`` custom op (also
    on the host, at run time) for Symbols."""
    if symbolic(a):
        shape = shape_of(a)
        if shape is not None and (len(shape) < 2 or shape[-1] != shape[-2]):
            raise op_error(fn, f"a must hold square matrices, got shape {shape}")
        out = call("Custom", [a], op_type=_EIG_OP, vectors=vectors)
        return (out[0], out[1]) if vectors else out
    a = matrices(fn, a, square=True)
    from .multiarray import array
    values = [array(x, ctx=a.context) for x in _real_eig(fn, a.asnumpy(), vectors,
                                                          onp.dtype(a.dtype))]
    return tuple(values) if vectors else values[0]


def eig(a):
    """``(w, v)``: the eigenvalues and right eigenvectors (columns of v, unit norm) of every
    square matrix, for matrices whose eigenvalues are real (MXNet's rule; complex ones are
    an MXNetError). Computed on the host by NumPy (LAPACK's geev; in a graph, by the custom
    op ``_np_linalg_eig``), not differentiable: no registered op covers non-symmetric
    matrices.

    >>> from mxlite import np
    >>> w, v = np.linalg.eig(np.array([[2.0, 1.0], [0.0, 3.0]]))
    >>> w.tolist()
    [2.0, 3.0]
    """
    return _host_eig("eig", a, True)


def eigvals(a):
    """The eigenvalues of every square matrix (``eig``'s w; host-computed, real ones only,
    not differentiable).

    >>> from mxlite import np
    >>> np.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]])).tolist()
    [2.0, 3.0]
    """
    return _host_eig("eigvals", a, False)
