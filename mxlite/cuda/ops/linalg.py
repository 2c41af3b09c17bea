"""GPU compute functions of the matrix products (``mxlite/ops/linalg.py``) and the
``_linalg_*`` operators, ``_la_trian_mask`` and ``khatri_rao`` (``mxlite/ops/la.py``).

dot, batch_dot, gemm, gemm2 and syrk are written against ``rctx.xp.matmul`` (cuBLAS through
CuPy on a GPU) and run unchanged. The factorisations and solvers go through the array
library's ``linalg`` (cuSOLVER through CuPy; NumPy's LAPACK under the emulator), batched over
the leading axes as on the CPU. CuPy reports a failed factorisation only when asked
(``cupyx.errstate(linalg='raise')``, which synchronizes): a non-positive-definite matrix
for potrf, or a singular one for potri/trsm/inverse, then raises the CPU's MXNetError.
Triangles and diagonals are views and masks moved by mxlite's kernels.
"""
import contextlib

import numpy as np

from ...base import op_error
from ...ops.common import compute_dtype, write_back
from . import attach, device_generic
from .gather import CTYPE
from ..kernels import kernel

device_generic("dot", "batch_dot", "_linalg_gemm", "_linalg_gemm2", "_linalg_syrk")

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _linalg_errors(lib):
    """A context in which the library raises ``numpy.linalg.LinAlgError`` on a failed
    factorisation (NumPy always does; CuPy when asked)."""
    if lib is np:
        return contextlib.nullcontext()
    import cupyx
    return cupyx.errstate(linalg="raise")


def _solve(op, why, fn, lib, *args):
    """``fn(*args)``; a failed factorisation is the CPU's MXNetError for ``op``."""
    try:
        with _linalg_errors(lib):
            return fn(*args)
    except np.linalg.LinAlgError:
        raise op_error(op, why) from None


def _mT(lib, a):
    return lib.swapaxes(a, -1, -2)


def _triangle(xp, a, lower):
    """The triangle of ``a`` that LAPACK reads, the other one zeroed (a new array)."""
    out = xp.empty(a.shape, a.dtype)
    _trian_mask(xp, a, out, lower, 1.0)
    return out


# ---- _la_trian_mask ------------------------------------------------------------------------
_TRIAN = {dt: kernel("linalg", f"mxlite_trian_mask_{dt.name}", f"""
extern "C" __global__ void mxlite_trian_mask_{dt.name}(const {CTYPE[dt]}* a, {CTYPE[dt]}* out,
                                                mx_idx rows, mx_idx cols, long long lower,
                                                double diag, mx_idx total) {{
    MX_GRID_LOOP(k, total) {{
        mx_idx c = k % cols, r = (k / cols) % rows;
        {CTYPE[dt]} v = a[k];
        bool keep = lower ? c <= r : c >= r;
        out[k] = !keep ? ({CTYPE[dt]})0 : (r == c ? v * ({CTYPE[dt]})diag : v);
    }}
}}
""") for dt in _FLOATS}


def _trian_mask(xp, a, out, lower, diag):
    """out = the lower (upper) triangle of the matrices of ``a``, the diagonal times ``diag``
    (cast to the dtype first, as NumPy's scalar arithmetic does)."""
    if out.size:
        xp.launch(_TRIAN[out.dtype], out.size, a, out, np.int64(a.shape[-2]),
                  np.int64(a.shape[-1]),
                  np.int64(bool(lower)), np.float64(diag), np.int64(out.size))


def _la_trian_mask(rctx, ins, outs, attrs):
    _trian_mask(rctx.xp, ins[0], outs[0], attrs.lower, attrs.diag)


# ---- diagonals: strided views ---------------------------------------------------------------
def _diagonal_view(xp, a, offset, length):
    """The view of diagonal ``offset`` of the trailing square matrices of ``a``."""
    corner = a[..., max(-offset, 0):, max(offset, 0):]
    return xp.as_strided(corner, a.shape[:-2] + (length,),
                         a.strides[:-2] + (a.strides[-2] + a.strides[-1],), writeable=True)


def _extractdiag(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.strided_copy(_diagonal_view(rctx.xp, ins[0], attrs.offset, out.shape[-1]), out)


def _makediag(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.fill_zero(out)
    rctx.xp.strided_copy(ins[0], _diagonal_view(rctx.xp, out, attrs.offset, ins[0].shape[-1]))


# ---- factorisations, solvers, determinants -------------------------------------------------
def _potrf(rctx, ins, outs, attrs):
    """Only the triangle ``lower`` selects is read: the symmetric matrix is rebuilt from it
    (cuSOLVER and LAPACK then agree whatever triangle they read)."""
    xp, out = rctx.xp, outs[0]
    if out.size == 0:
        return
    lib = xp.lib
    a = ins[0] if attrs.lower else xp.ascontiguousarray(_mT(lib, ins[0]))
    low = _triangle(xp, a, True)
    strict = _triangle(xp, a, True)
    _trian_mask(xp, a, strict, True, 0.0)
    sym = low + _mT(lib, strict)
    L = _solve("potrf", "the matrix is not positive definite", lib.linalg.cholesky, lib, sym)
    L = _triangle(xp, xp.ascontiguousarray(L), True)      # zeros above, whatever the library
    xp.copyto(out, L if attrs.lower else _mT(lib, L))


def _inv(op, lib, a, what):
    return _solve(op, f"{what} is singular", lib.linalg.inv, lib, a)


def _potri(rctx, ins, outs, attrs):
    xp, out = rctx.xp, outs[0]
    if out.size == 0:
        return
    lib = xp.lib
    ti = _inv("potri", lib, _triangle(xp, ins[0], attrs.lower), "the triangular factor")
    prod = xp.empty(out.shape, out.dtype)
    pair = (_mT(lib, ti), ti) if attrs.lower else (ti, _mT(lib, ti))
    xp.matmul(*(xp.ascontiguousarray(m) for m in pair), prod)
    xp.copyto(out, prod)


def _op_triangle(xp, a, attrs):
    t = _triangle(xp, a, attrs.lower)
    return _mT(xp.lib, t) if attrs.transpose else t


def _trsm(rctx, ins, outs, attrs):
    xp, out = rctx.xp, outs[0]
    if out.size == 0:
        return
    lib = xp.lib
    t = _op_triangle(xp, ins[0], attrs)
    rhs = ins[1] * attrs.alpha
    if attrs.rightside:                     # X T = R  <=>  T^T X^T = R^T
        x = _mT(lib, _solve("trsm", "the triangular matrix is singular", lib.linalg.solve,
                            lib, _mT(lib, t), _mT(lib, rhs)))
    else:
        x = _solve("trsm", "the triangular matrix is singular", lib.linalg.solve, lib, t, rhs)
    xp.copyto(out, xp.ascontiguousarray(x))


def _trmm(rctx, ins, outs, attrs):
    xp, out = rctx.xp, outs[0]
    if out.size == 0:
        return
    t, b = _op_triangle(xp, ins[0], attrs), ins[1]
    pair = (b, t) if attrs.rightside else (t, b)
    xp.matmul(*(xp.ascontiguousarray(m) for m in pair), out)
    if attrs.alpha != 1.0:
        out *= attrs.alpha


def _inverse(rctx, ins, outs, attrs):
    if outs[0].size:
        rctx.xp.copyto(outs[0], _inv("inverse", rctx.xp.lib, ins[0], "the matrix"))


def _det(rctx, ins, outs, attrs):
    lib = rctx.xp.lib
    rctx.xp.cast_into(outs[0], lib.linalg.det(ins[0]).reshape(outs[0].shape))


def _slogdet(rctx, ins, outs, attrs):
    sign, logabs = rctx.xp.lib.linalg.slogdet(ins[0])
    rctx.xp.cast_into(outs[0], sign.reshape(outs[0].shape))
    rctx.xp.cast_into(outs[1], logabs.reshape(outs[1].shape))


def _sumlogdiag(rctx, ins, outs, attrs):
    lib, a = rctx.xp.lib, ins[0]
    diag = _diagonal_view(rctx.xp, a, 0, a.shape[-1])
    rctx.xp.cast_into(outs[0], lib.log(diag).sum(-1).reshape(outs[0].shape))


# ---- khatri_rao ----------------------------------------------------------------------------
_KR = {dt: kernel("linalg", f"mxlite_khatri_rao_step_{dt.name}", f"""
extern "C" __global__ void mxlite_khatri_rao_step_{dt.name}(const {CTYPE[dt]}* acc,
                                                            const {CTYPE[dt]}* m,
                                                            {CTYPE[dt]}* out, mx_idx mrows,
                                                            mx_idx k, mx_idx total) {{
    MX_GRID_LOOP(e, total) {{
        mx_idx c = e % k, row = e / k, r = row / mrows, j = row % mrows;
        out[e] = acc[r * k + c] * m[j * k + c];
    }}
}}
""") for dt in _FLOATS}


def _khatri_rao(rctx, ins, outs, attrs):
    xp, out = rctx.xp, outs[0]
    work = compute_dtype(out.dtype)
    mats = [xp.ascontiguousarray(m, work) for m in ins]
    k = out.shape[1]
    acc = mats[0]
    for m in mats[1:]:
        nxt = xp.empty((acc.shape[0] * m.shape[0], k), work)
        xp.launch(_KR[work], nxt.size, acc, m, nxt, np.int64(m.shape[0]), np.int64(k),
                  np.int64(nxt.size))
        acc = nxt
    write_back(xp, acc, out)


for _name, _fn in (("_la_trian_mask", _la_trian_mask), ("_linalg_extractdiag", _extractdiag),
                   ("_linalg_makediag", _makediag), ("_linalg_potrf", _potrf),
                   ("_linalg_potri", _potri), ("_linalg_trsm", _trsm),
                   ("_linalg_trmm", _trmm), ("_linalg_inverse", _inverse),
                   ("_linalg_det", _det), ("_linalg_slogdet", _slogdet),
                   ("_linalg_sumlogdiag", _sumlogdiag), ("khatri_rao", _khatri_rao)):
    attach(_name, _fn)
