"""Tolerances per dtype and the array comparisons of ``mx.test_utils`` (MXNet's names).

Every comparison is computed with NumPy on host copies, so a faulty mxlite operator cannot
make its own check pass.
"""
import numbers

import numpy as np

from ..base import BFLOAT16, MXNetError
from ..ndarray import NDArray

# MXNet 1.9.1's default tolerances; integers and booleans compare exactly.
_RTOLS = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOLS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}
_EXACT = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)
# Finite-difference steps are powers of two, so ``x + eps`` drops no bits of eps.
_NUMERIC_EPS = {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
                np.dtype(np.float64): 2.0 ** -14}
if BFLOAT16 is not None:
    # MXNet had none for bfloat16: float16's, scaled by the 8x coarser spacing (2**-8 against
    # 2**-11 relative) -- about 20 half-spacings for rtol, as float16's 1e-2 is; the step is
    # 16 spacings at 1, as float16's
    _RTOLS[BFLOAT16], _ATOLS[BFLOAT16], _NUMERIC_EPS[BFLOAT16] = 4e-2, 1e-1, 2.0 ** -3


def _with_exact(table):
    out = dict(table)
    out.update({np.dtype(t): 0 for t in _EXACT})
    return out


def default_rtols():
    """The default relative tolerance of each dtype (a new dict on each call)."""
    return _with_exact(_RTOLS)


def default_atols():
    """The default absolute tolerance of each dtype (a new dict on each call)."""
    return _with_exact(_ATOLS)


def default_numeric_eps():
    """The default finite-difference step of each floating dtype (a new dict on each call)."""
    return dict(_NUMERIC_EPS)


def effective_dtype(dat):
    """The dtype whose tolerances apply to ``dat`` (an NDArray or NumPy array): its dtype.

    MXNet returns float16 for float32 data on an Ampere GPU because cuBLAS/cuDNN there round
    float32 inputs to TF32; mxlite's kernels compute float32 in float32 on every device, so
    no such widening is needed.
    """
    return np.dtype(dat.dtype)


def _tol_for(dtype, table, what):
    if dtype in table:
        return table[dtype]
    if dtype.kind in "biu":
        return 0
    raise MXNetError(f"test_utils: no default {what} for dtype {dtype.name}; pass {what} "
                     "explicitly (a number or a dict of dtype -> number)")


def get_tolerance(dat, tol, default_tol):
    """The tolerance for comparing ``dat``: ``tol`` if a number, else ``tol[dtype]`` (a dict)
    when it has ``dat``'s dtype, else ``default_tol[dtype]``."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    if tol and dtype in tol:
        return tol[dtype]
    return _tol_for(dtype, default_tol, "tolerance")


def _as_data(x):
    """``x`` as something with a dtype: numbers and lists become NumPy arrays."""
    return x if hasattr(x, "dtype") else np.asarray(x)


def get_tols(x, y, rtol, atol):
    """``(rtol, atol)`` for comparing ``x`` with ``y``: the looser of the two dtypes' values
    when a tolerance is None or a dict."""
    x, y = _as_data(x), _as_data(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return _tol_for(np.dtype(dtype), default_atols(), "atol") if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return _tol_for(np.dtype(dtype), default_rtols(), "rtol") if rtol is None else rtol


def get_etol(etol=None):
    """``etol`` (the fraction of elements allowed to mismatch), 0 when None."""
    return 0 if etol is None else etol


def _host(x):
    """``x`` as a NumPy array (NDArrays are copied to the host)."""
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def same(a, b):
    """True when ``a`` and ``b`` (NumPy arrays or NDArrays) have the same shape and values."""
    return np.array_equal(_host(a), _host(b))


def checkShapes(a, b):  # pylint: disable=invalid-name
    """Raise AssertionError when ``a`` and ``b`` differ in shape."""
    if np.shape(a) != np.shape(b):
        raise AssertionError(f"shapes differ: a.shape = {np.shape(a)}, b.shape = {np.shape(b)}")


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """``np.allclose(a, b)`` with MXNet's float64 defaults (rtol 1e-5, atol 1e-20) when a
    tolerance is None; ``use_broadcast=False`` requires equal shapes."""
    a, b = _host(a), _host(b)
    if not use_broadcast:
        checkShapes(a, b)
    rtol = get_tolerance(a, rtol, default_rtols()) if isinstance(rtol, dict) else get_rtol(rtol)
    atol = get_tolerance(a, atol, default_atols()) if isinstance(atol, dict) else get_atol(atol)
    try:
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:   # shapes that do not broadcast
        return False


def _violations(a, b, rtol, atol, equal_nan):
    """Per element ``|a - b| / (atol + rtol |b|)`` in float64 (> 1 violates); equal values
    (infinities included) and, with ``equal_nan``, NaN pairs give 0; other NaNs give inf."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))
        ratio = diff / (atol + rtol * np.abs(b64) + 1e-20)
    both_nan = np.isnan(a64) & np.isnan(b64)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return np.where(both_nan, 0.0 if equal_nan else np.inf, ratio)


def _find_max_violation(a, b, rtol, atol):
    """``(index, value)`` of the largest violation ratio of ``a`` against ``b``."""
    v = _violations(np.asarray(a), np.asarray(b), rtol, atol, False)
    idx = np.unravel_index(int(np.argmax(v)), v.shape) if v.size else ()
    return idx, (float(v[idx]) if v.size else 0.0)


def locationError(a, b, index, names, maxError=False):  # pylint: disable=invalid-name
    """A one-line description of the elements of ``a`` and ``b`` at ``index``."""
    kind = "maximum error" if maxError else "error"
    return (f"Location of {kind}: {tuple(int(i) for i in index)}, "
            f"{names[0]}={float(a[index]):.8f}, {names[1]}={float(b[index]):.8f}")


def _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches):
    """The AssertionError text: worst violation, share of violating elements, the first few."""
    v = _violations(a, b, rtol, atol, equal_nan)
    bad = np.flatnonzero(v.ravel() > 1)
    order = bad[np.argsort(-v.ravel()[bad], kind="stable")]
    worst = np.unravel_index(int(order[0]), v.shape) if v.ndim else ()
    lines = [f"Error {float(v[worst]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
             f"(mismatch {100.0 * len(bad) / max(a.size, 1):f}% of {a.size} elements).",
             locationError(a, b, worst, names, maxError=True)]
    shown = order[:max(int(mismatches[0]), 0)] if v.ndim else []
    for rank, flat in enumerate(shown, 1):
        idx = np.unravel_index(int(flat), v.shape)
        lines.append(f"{rank:3d}: Error {float(v[idx]):f}  {locationError(a, b, idx, names)}")
    with np.printoptions(threshold=8, edgeitems=2, suppress=True):
        lines += [f" {names[0]}: {a!r}", f" {names[1]}: {b!r}"]
    return "\n".join(lines)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert ``|a - b| <= atol + rtol * |b|`` element-wise (NDArrays or NumPy arrays).

    A tolerance left None (or a dict lacking the dtype) takes the looser default of the two
    dtypes (``default_rtols()``/``default_atols()``: float16 1e-2/1e-1, float32 1e-4/1e-3,
    float64 1e-5/1e-20, integers exact). Boolean arrays must be equal. The AssertionError
    names the worst element (``names`` label the two arrays), the share of violating
    elements and up to ``mismatches[0]`` of them, worst first (``mismatches[1]``, MXNet's
    cap on its search, is accepted; the share here is always exact).
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _host(a), _host(b)
    if not use_broadcast:
        checkShapes(a, b)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise AssertionError(f"{names[0]} of shape {a.shape} and {names[1]} of shape "
                             f"{b.shape} do not broadcast") from None
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b, err_msg=f"{names[0]} != {names[1]}")
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """``assert_almost_equal`` with NumPy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """``assert_almost_equal`` that lets a fraction ``etol`` of the elements mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.broadcast_arrays(_host(a), _host(b))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1.0 - np.count_nonzero(close) / max(close.size, 1) > etol:
        raise AssertionError(f"more than etol={etol} of the elements mismatch:\n" +
                             _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """``assert_almost_equal`` ignoring every element where either array is NaN."""
    a, b = np.broadcast_arrays(np.array(_host(a)), np.array(_host(b)))
    a, b = a.copy(), b.copy()
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """``assert_almost_equal`` over two (nested) tuples of arrays; None on either side skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        if not isinstance(t2, tuple) or len(t1) != len(t2):
            raise AssertionError(f"compare_ndarray_tuple: {t1!r} and {t2!r} differ in "
                                 "structure")
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (None, an int or a sequence) one axis at a time with
    ``numpy_reduce_func`` (e.g. ``np.sum``), keeping the reduced axes as 1 if ``keepdims``."""
    axes = range(dat.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    axes = sorted({a % dat.ndim for a in axes}, reverse=True)
    ret = dat
    for ax in axes:
        ret = numpy_reduce_func(ret, axis=ax)
    if keepdims:
        ret = np.reshape(ret, tuple(1 if i in axes else d for i, d in enumerate(dat.shape)))
    return ret


def collapse_sum_like(a, shape):
    """Sum the NumPy array ``a`` down to ``shape`` (a shape that broadcasts to ``a.shape``):
    the reverse of broadcasting, as a broadcast operand's gradient is. The result has
    NumPy's sum dtype (booleans and narrow integers count in int64), as MXNet's."""
    shape = tuple(shape)
    lead = a.ndim - len(shape)
    if lead < 0 or any(s not in (1, d) for s, d in zip(shape, a.shape[lead:])):
        raise MXNetError(f"collapse_sum_like: shape {shape} does not broadcast to {a.shape}")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    return np.sum(a, axis=axes).reshape(shape)


def same_array(array1, array2):
    """True when the NDArrays ``array1`` and ``array2`` share memory: a change written to
    ``array1`` shows in ``array2``. ``array1``'s values are restored exactly afterwards (MXNet
    adds and subtracts 1, which rounds small floating values)."""
    saved = array1.asnumpy()
    before = array2.asnumpy()
    array1[()] = (saved == 0).astype(saved.dtype)   # every element changes, NaN and inf too
    try:
        return bool(saved.size) and not np.array_equal(before, array2.asnumpy(), equal_nan=True)
    finally:
        array1[()] = saved
