# cython: language_level=3
"""Kernels of the sorting, sequence and small-linear-algebra operators
(``mxlite/ops/sorting.py``, ``sequence.py``, ``la.py``).

* ``argsort``: a *stable* sort along one axis (NumPy's radix/tim sort); descending order is
  the stable ascending sort of the reversed axis, reversed back, so ties keep their original
  order in both directions (MXNet's order) and NaN sorts above every number.
* ``gather`` / ``scatter`` / ``scatter_add``: element moves along an axis through int64
  positions (``take_along_axis`` and its adjoint); gather/scatter move bytes (any dtype of
  1, 2, 4 or 8 bytes), scatter_add adds float32/float64.
* ``cumsum``: a running sum along an axis, one accumulator per (outer, inner) position.
* ``seq_*``: SequenceMask/Last/Reverse on the (T, B, R) or (B, T, R) layout, moving rows of
  R elements; lengths are int64 and validated here (the count of bad ones is returned).
* ``khatri_rao_step`` and ``smooth_l1``: element-wise float loops.
* ``potrf``, ``potri``, ``trsm``, ``trmm``, ``inverse``, ``det``, ``slogdet``, ...: batched
  dense linear algebra, the only place the ``_linalg_*`` operators touch array data: stacks
  of small matrices (n <= ``LA_SMALL_MAX``) in compiled loops (la_small.pxi,
  mx_la_small.h), others through ``numpy.linalg`` (LAPACK).
* ``greedy_match``: contrib.bipartite_matching's greedy matching, an item per iteration,
  items across threads (matching.pxi, included at the end).
* ``uniform_histogram``: _histogram's counts in equal bins, chunks across threads
  (histogram.pxi).

Every public function checks dtypes and sizes before touching a pointer; sizes and indices
are int64 (``idx_t``).
"""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t
from libc.string cimport memcpy
from .common cimport idx_t

cdef extern from "mx_index.h" nogil:
    double mx_smooth_l1(double v, double sigma2)     # shared with the CUDA kernel

cnp.import_array()

ctypedef fused flt_t:
    float
    double

ctypedef fused num_t:
    float
    double
    int8_t
    uint8_t
    int32_t
    int64_t

_I64 = np.dtype(np.int64)


def _check(bint ok, str what):
    if not ok:
        raise ValueError(what)


cdef inline void _move(char* d, const char* s, idx_t isz) noexcept nogil:
    """Copy one element of ``isz`` bytes."""
    if isz == 4:
        (<uint32_t*>d)[0] = (<const uint32_t*>s)[0]
    elif isz == 8:
        (<uint64_t*>d)[0] = (<const uint64_t*>s)[0]
    elif isz == 2:
        (<uint16_t*>d)[0] = (<const uint16_t*>s)[0]
    elif isz == 1:
        d[0] = s[0]
    else:
        memcpy(d, s, isz)


def _bytes(cnp.ndarray a, str name):
    _check(cnp.PyArray_IS_C_CONTIGUOUS(a), f"{name} must be C-contiguous")
    return <idx_t>a.itemsize


# ---- sorting -------------------------------------------------------------------------------
def argsort(x, int axis, bint ascending):
    """int64 positions that sort ``x`` along ``axis`` (stable; see the module docstring).
    Integers sort descending as ``~x`` ascending (``~`` reverses the order of every integer
    type and of bool): one stable sort, without the reversed copies."""
    if ascending:
        pos = np.argsort(x, axis=axis, kind="stable")
    elif x.dtype.kind in "biu":
        pos = np.argsort(~x, axis=axis, kind="stable")
    else:
        rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
        pos = (x.shape[axis] - 1) - np.flip(rev, axis)
    return pos if pos.flags.c_contiguous else pos.copy()


def sort_values(x, int axis, bint ascending, out):
    """out = x sorted along ``axis`` (descending: the ascending sort reversed, so NaN, which
    sorts last ascending, comes first). Integers of 1 or 2 bytes take NumPy's stable sort,
    a radix sort (the same values; its quicksort was 5-20x slower on int8 rows)."""
    _check(out.shape == x.shape and out.dtype == x.dtype, "sort_values: out mismatch")
    s = np.sort(x, axis=axis, kind="stable" if x.dtype.kind in "biu" and x.itemsize <= 2
                else None)
    out[...] = s if ascending else np.flip(s, axis)


def topk_positions(x, int axis, idx_t k, bint ascending):
    """int64 positions of the first k elements of the stable order along ``axis`` (the shape
    of x with k along axis): what ``argsort(x)[:k]`` gives, without sorting the whole axis.

    The k-th value v is found by partition; the elements strictly before v in the order, and
    the first elements (lowest positions) equal to v, are the top k: the same set the stable
    sort picks. Only those k are then sorted. Inputs with NaN, small axes, a large k or
    axes of up to 2**16 1- or 2-byte integers (a radix sort: linear, and faster than the
    partition and its mask passes) take the full stable sort.
    """
    n = x.shape[axis]
    radix = x.dtype.kind in "biu" and x.itemsize <= 2 and n <= 2 ** 16
    if k >= n or n <= 64 or 8 * k > n or radix or (x.dtype.kind == "f" and np.isnan(x).any()):
        pos = argsort(x, axis, ascending)
        if k < n:
            pos = np.moveaxis(np.moveaxis(pos, axis, x.ndim - 1)[..., :k], x.ndim - 1, axis)
        return pos if pos.flags.c_contiguous else pos.copy()
    last = x.ndim - 1
    xm = np.moveaxis(x, axis, last)
    kth = (k - 1) if ascending else (n - k)
    v = np.partition(xm, kth, axis=last)[..., kth:kth + 1]
    better = (xm < v) if ascending else (xm > v)
    equal = xm == v
    need = k - better.sum(axis=last, keepdims=True)
    if (equal.sum(axis=last, keepdims=True) <= need).all():    # no surplus ties at v
        chosen = better | equal
    else:                                   # keep the first ``need`` ties of every row
        chosen = better | (equal & (np.cumsum(equal, axis=last) <= need))
    cand = np.nonzero(chosen)[last].reshape(xm.shape[:last] + (k,))   # increasing positions
    order = argsort(np.take_along_axis(xm, cand, axis=last), last, ascending)
    pos = np.moveaxis(np.take_along_axis(cand, order, axis=last), last, axis)
    return pos if pos.flags.c_contiguous else pos.copy()


cdef inline idx_t _moves(char* o, const char* s, const int64_t* p, idx_t outer, idx_t n,
                         idx_t inner, idx_t k, idx_t isz, bint to_pos) noexcept nogil:
    """The loop of ``_move_along``; called with a constant ``to_pos`` so that each call site
    compiles to its own loop, without a test per element."""
    cdef idx_t a, j, i, q, t, far, bad = 0
    for a in range(outer):
        for j in range(k):
            for i in range(inner):
                t = (a * k + j) * inner + i
                q = p[t]
                if q < 0 or q >= n:
                    bad += 1
                    continue
                far = ((a * n + q) * inner + i) * isz
                if to_pos:
                    _move(o + far, s + t * isz, isz)
                else:
                    _move(o + t * isz, s + far, isz)
    return bad


cdef idx_t _move_along(cnp.ndarray src, cnp.ndarray pos, cnp.ndarray out, idx_t outer,
                       idx_t n, idx_t inner, idx_t k, bint to_pos, str op,
                       str src_name) except -1:
    """gather (``to_pos`` false: out[o, j, i] = src[o, pos[o, j, i], i]) or scatter (true:
    out[o, pos[o, j, i], i] = src[o, j, i]); checks the arrays first, skips the positions
    outside [0, n) and returns their count."""
    cdef idx_t isz = _bytes(src, src_name)
    if not (out.dtype == src.dtype and _bytes(out, "out") == isz):
        raise ValueError(f"{op}: dtype mismatch")
    if not (pos.dtype == _I64 and cnp.PyArray_IS_C_CONTIGUOUS(pos)):
        raise ValueError(f"{op}: pos must be int64")
    big, small = (out, src) if to_pos else (src, out)      # (outer, n, inner), (outer, k, inner)
    if not (big.size == outer * n * inner and pos.size == outer * k * inner
            and small.size == pos.size):
        raise ValueError(f"{op}: size mismatch")
    cdef const char* s = <const char*>cnp.PyArray_DATA(src)
    cdef char* o = <char*>cnp.PyArray_DATA(out)
    cdef const int64_t* p = <const int64_t*>cnp.PyArray_DATA(pos)
    cdef idx_t bad
    with nogil:
        if to_pos:
            bad = _moves(o, s, p, outer, n, inner, k, isz, True)
        else:
            bad = _moves(o, s, p, outer, n, inner, k, isz, False)
    return bad


def gather(cnp.ndarray data, cnp.ndarray pos, cnp.ndarray out, idx_t outer, idx_t n,
           idx_t inner, idx_t k):
    """out[o, j, i] = data[o, pos[o, j, i], i]; returns how many positions were outside
    [0, n) (their outputs are left unwritten)."""
    return _move_along(data, pos, out, outer, n, inner, k, False, "gather", "data")


def scatter(cnp.ndarray src, cnp.ndarray pos, cnp.ndarray out, idx_t outer, idx_t n,
            idx_t inner, idx_t k):
    """out[o, pos[o, j, i], i] = src[o, j, i] (the caller fills out first); returns the
    number of positions outside [0, n), which are skipped."""
    return _move_along(src, pos, out, outer, n, inner, k, True, "scatter", "src")


def scatter_add(const num_t[::1] src, const int64_t[::1] pos, num_t[::1] out, idx_t outer,
                idx_t n, idx_t inner, idx_t k):
    """out[o, pos[o, j, i], i] += src[o, j, i] (duplicates accumulate; the caller zeroes out;
    integers wrap, as in NumPy); returns the number of positions outside [0, n), which are
    skipped."""
    _check(out.shape[0] == outer * n * inner and pos.shape[0] == outer * k * inner
           and src.shape[0] == pos.shape[0], "scatter_add: size mismatch")
    cdef idx_t a, j, i, q, t, bad = 0
    with nogil:
        for a in range(outer):
            for j in range(k):
                for i in range(inner):
                    t = (a * k + j) * inner + i
                    q = pos[t]
                    if q < 0 or q >= n:
                        bad += 1
                        continue
                    out[(a * n + q) * inner + i] += src[t]
    return bad


ctypedef fused sketch_t:
    float
    double


cdef void _bucket_row(const sketch_t* x, const int64_t* idx, const sketch_t* sign,
                      sketch_t* y, idx_t d) noexcept nogil:
    cdef idx_t i
    cdef sketch_t v
    for i in range(d):
        v = x[i] * sign[i]
        y[idx[i]] = y[idx[i]] + v


def bucket_add(const sketch_t[:, ::1] src, const int64_t[::1] idx, const sketch_t[::1] sign,
               sketch_t[:, ::1] out):
    """out[r, idx[i]] += src[r, i] * sign[i] (the product rounded, then added), i in order
    within each row r (contrib.count_sketch: NumPy's unbuffered ``add.at``, value for value);
    rows across threads, each writing its own output row, so any thread count gives the same
    sums. ``idx`` must lie in [0, out.shape[1]); the caller zeroes ``out``."""
    cdef idx_t r, rows = src.shape[0], d = src.shape[1], width = out.shape[1], i
    _check(idx.shape[0] == d and sign.shape[0] == d and out.shape[0] == rows,
           f"bucket_add: need idx and sign of {d} and out of {rows} rows, got "
           f"{idx.shape[0]}, {sign.shape[0]} and {out.shape[0]}")
    for i in range(d):
        if not 0 <= idx[i] < width:
            raise ValueError(f"bucket_add: idx {idx[i]} outside [0, {width})")
    if rows == 0 or d == 0:
        return
    if rows > 1 and rows * d >= PARALLEL_MIN:
        for r in prange(rows, nogil=True, schedule="static"):
            _bucket_row(&src[r, 0], &idx[0], &sign[0], &out[r, 0], d)
    else:
        with nogil:
            for r in range(rows):
                _bucket_row(&src[r, 0], &idx[0], &sign[0], &out[r, 0], d)


# ---- cumsum --------------------------------------------------------------------------------
def cumsum(const num_t[::1] x, num_t[::1] out, idx_t outer, idx_t n, idx_t inner):
    """out[o, j, i] = sum_{j' <= j} x[o, j', i], summed left to right in the output's type
    (integers wrap, as in NumPy)."""
    _check(x.shape[0] == outer * n * inner and out.shape[0] == x.shape[0],
           "cumsum: size mismatch")
    cdef idx_t a, j, i, base
    cdef num_t acc
    with nogil:
        for a in range(outer):
            base = a * n * inner
            if n == 0:
                continue
            if inner == 1:              # one running sum in a register (the same additions)
                acc = x[base]
                out[base] = acc
                for j in range(1, n):
                    acc = acc + x[base + j]
                    out[base + j] = acc
                continue
            for i in range(inner):
                out[base + i] = x[base + i]
            for j in range(1, n):
                for i in range(inner):
                    out[base + j * inner + i] = (out[base + (j - 1) * inner + i]
                                                 + x[base + j * inner + i])


# ---- sequence operators --------------------------------------------------------------------
cdef inline idx_t _row(idx_t t, idx_t b, idx_t T, idx_t B, int axis) noexcept nogil:
    """Index of the row (of R elements) at time t, batch b: (T, B, R) or (B, T, R)."""
    return t * B + b if axis == 0 else b * T + t


def _seq_check(cnp.ndarray data, cnp.ndarray lengths, idx_t T, idx_t B, idx_t R):
    _check(cnp.PyArray_IS_C_CONTIGUOUS(data) and data.size == T * B * R,
           "sequence kernel: data size mismatch")
    _check(lengths.dtype == _I64 and cnp.PyArray_IS_C_CONTIGUOUS(lengths)
           and lengths.size == B, "sequence kernel: lengths must be int64 of size B")


def seq_count_bad(cnp.ndarray lengths, idx_t lo, idx_t hi):
    """The number of lengths outside [lo, hi] and the first such position (-1 if none)."""
    _check(lengths.dtype == _I64 and cnp.PyArray_IS_C_CONTIGUOUS(lengths), "lengths: int64")
    cdef const int64_t* L = <const int64_t*>cnp.PyArray_DATA(lengths)
    cdef idx_t b, bad = 0, first = -1
    for b in range(lengths.size):
        if L[b] < lo or L[b] > hi:
            bad += 1
            if first < 0:
                first = b
    return bad, first


def seq_mask(cnp.ndarray out, cnp.ndarray lengths, cnp.ndarray value, idx_t T, idx_t B,
             idx_t R, int axis):
    """Set every row at t >= lengths[b] of ``out`` (already a copy of data) to ``value``
    (a 0-d array of out's dtype)."""
    _seq_check(out, lengths, T, B, R)
    cdef idx_t isz = out.itemsize
    _check(value.dtype == out.dtype and value.size == 1, "seq_mask: value dtype")
    cdef char* o = <char*>cnp.PyArray_DATA(out)
    cdef const char* v = <const char*>cnp.PyArray_DATA(value)
    cdef const int64_t* L = <const int64_t*>cnp.PyArray_DATA(lengths)
    cdef idx_t b, t, r, start, row
    with nogil:
        for b in range(B):
            start = L[b] if L[b] > 0 else 0
            for t in range(start, T):
                row = _row(t, b, T, B, axis) * R
                for r in range(R):
                    _move(o + (row + r) * isz, v, isz)


cdef _last_rows(cnp.ndarray rows, cnp.ndarray lengths, cnp.ndarray last, idx_t T, idx_t B,
                idx_t R, int axis, bint to_rows):
    """Moves row (lengths[b] - 1, b) of ``rows`` (T*B rows of R) to ``last[b]`` (to_rows
    false), or ``last[b]`` to that row (to_rows true). The caller has checked the arrays."""
    cdef idx_t isz = rows.itemsize
    cdef char* r = <char*>cnp.PyArray_DATA(rows)
    cdef char* l = <char*>cnp.PyArray_DATA(last)
    cdef const int64_t* L = <const int64_t*>cnp.PyArray_DATA(lengths)
    cdef idx_t b, row
    with nogil:
        for b in range(B):
            row = _row(L[b] - 1, b, T, B, axis)
            if to_rows:
                memcpy(r + row * R * isz, l + b * R * isz, R * isz)
            else:
                memcpy(l + b * R * isz, r + row * R * isz, R * isz)


def seq_last(cnp.ndarray data, cnp.ndarray lengths, cnp.ndarray out, idx_t T, idx_t B,
             idx_t R, int axis):
    """out[b, r] = data[row(lengths[b] - 1, b), r]; lengths must lie in [1, T]."""
    _seq_check(data, lengths, T, B, R)
    _bytes(data, "data")
    _check(out.dtype == data.dtype and out.size == B * R and cnp.PyArray_IS_C_CONTIGUOUS(out),
           "seq_last: out mismatch")
    _check(seq_count_bad(lengths, 1, T)[0] == 0, "seq_last: lengths out of range")
    _last_rows(data, lengths, out, T, B, R, axis, False)


def seq_last_scatter(cnp.ndarray grad, cnp.ndarray lengths, cnp.ndarray out, idx_t T, idx_t B,
                     idx_t R, int axis):
    """The adjoint of seq_last: out (zeroed by the caller) gets grad[b] at row
    (lengths[b] - 1, b)."""
    _seq_check(out, lengths, T, B, R)
    _bytes(grad, "grad")
    _check(out.dtype == grad.dtype and grad.size == B * R, "seq_last_scatter: grad mismatch")
    _check(seq_count_bad(lengths, 1, T)[0] == 0, "seq_last_scatter: lengths out of range")
    _last_rows(out, lengths, grad, T, B, R, axis, True)


def seq_reverse(cnp.ndarray data, cnp.ndarray lengths, cnp.ndarray out, idx_t T, idx_t B,
                idx_t R, int axis):
    """Row (t, b) of out is row (lengths[b] - 1 - t, b) of data for t < lengths[b], else row
    (t, b); lengths must lie in [0, T]."""
    _seq_check(data, lengths, T, B, R)
    cdef idx_t isz = _bytes(data, "data")
    _check(out.dtype == data.dtype and out.size == data.size
           and cnp.PyArray_IS_C_CONTIGUOUS(out), "seq_reverse: out mismatch")
    _check(seq_count_bad(lengths, 0, T)[0] == 0, "seq_reverse: lengths out of range")
    cdef const char* d = <const char*>cnp.PyArray_DATA(data)
    cdef char* o = <char*>cnp.PyArray_DATA(out)
    cdef const int64_t* L = <const int64_t*>cnp.PyArray_DATA(lengths)
    cdef idx_t b, t, src
    with nogil:
        for b in range(B):
            for t in range(T):
                src = L[b] - 1 - t if t < L[b] else t
                memcpy(o + _row(t, b, T, B, axis) * R * isz,
                       d + _row(src, b, T, B, axis) * R * isz, R * isz)


# ---- khatri_rao, smooth_l1 -----------------------------------------------------------------
def khatri_rao_step(const flt_t[::1] acc, idx_t rows, const flt_t[::1] m, idx_t mrows,
                    flt_t[::1] out, idx_t k):
    """out[r * mrows + j, c] = acc[r, c] * m[j, c] (one column-wise Kronecker step)."""
    _check(acc.shape[0] == rows * k and m.shape[0] == mrows * k
           and out.shape[0] == rows * mrows * k, "khatri_rao_step: size mismatch")
    cdef idx_t r, j, c, base
    with nogil:
        for r in range(rows):
            for j in range(mrows):
                base = (r * mrows + j) * k
                for c in range(k):
                    out[base + c] = acc[r * k + c] * m[j * k + c]


def smooth_l1(const flt_t[::1] x, flt_t[::1] out, double sigma2):
    """out = 0.5 * sigma2 * x**2 where sigma2 * |x| < 1, else |x| - 0.5 / sigma2."""
    _check(x.shape[0] == out.shape[0], "smooth_l1: size mismatch")
    cdef idx_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = <flt_t>mx_smooth_l1(x[i], sigma2)


# ---- dense linear algebra (numpy.linalg / LAPACK), batched over leading axes -----------------
# Inputs have their matrix axes last. Results are written into the preallocated ``out``;
# a failure (singular or non-positive-definite matrix) raises ValueError with the reason.
def _tri(a, bint lower):
    """The triangle of ``a`` that LAPACK/BLAS reads (the other one zeroed)."""
    return np.tril(a) if lower else np.triu(a)


def _mT(a):
    return np.swapaxes(a, -1, -2)


def trian_mask(a, out, bint lower, double diag):
    """out = the lower (upper) triangle of a, its diagonal multiplied by ``diag``."""
    t = _tri(a, lower)
    if diag != 1.0:
        k = list(range(min(a.shape[a.ndim - 2], a.shape[a.ndim - 1])))   # non-square too
        t[..., k, k] *= diag
    out[...] = t


def extractdiag(a, out, idx_t offset):
    """out[..., i] = a[..., i, i + offset]."""
    out[...] = np.diagonal(a, offset, axis1=-2, axis2=-1)


def makediag(a, out, idx_t offset):
    """out = zeros with a[..., i] on diagonal ``offset``."""
    out[...] = 0
    rows, cols = np.diag_indices(a.shape[a.ndim - 1])
    out[..., rows + (0 if offset >= 0 else -offset), cols + (offset if offset >= 0 else 0)] = a


def _small(name, a, outs, what):
    """The compiled kernel ``name`` (la_small.pxi) on small matrices: True when it ran,
    False when numpy.linalg must; a failing matrix raises ValueError ``what``."""
    bad = small_square(name, a, *outs)
    if bad is None:
        return False
    if bad >= 0:
        raise ValueError(what)
    return True


def potrf(a, out, bint lower):
    """Cholesky factor of the symmetric matrix whose ``lower`` triangle is stored in a:
    L (lower) with a = L L^T, or U = L^T (upper) with a = U^T U."""
    if _small("potrf_lower" if lower else "potrf_upper", a, (out,),
              "the matrix is not positive definite"):
        return
    try:        # numpy.linalg.cholesky reads only the lower triangle (LAPACK potrf 'L')
        L = np.linalg.cholesky(a if lower else _mT(a))
    except np.linalg.LinAlgError:
        raise ValueError("the matrix is not positive definite") from None
    out[...] = L if lower else _mT(L)


def _inv(a, what):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} is singular") from None


def potri(a, out, bint lower):
    """(L L^T)^{-1} for the factor L in a's lower triangle (U^T U with U upper)."""
    if _small("potri_lower" if lower else "potri_upper", a, (out,),
              "the triangular factor is singular"):
        return
    t = _tri(a, lower)
    ti = _inv(t, "the triangular factor")
    out[...] = (_mT(ti) @ ti) if lower else (ti @ _mT(ti))


def trsm(a, b, out, bint transpose, bint rightside, bint lower, double alpha):
    """Solve op(T) X = alpha B (or X op(T) = alpha B with rightside), T = a's triangle."""
    bad = small_trsm(a, b, out, transpose, rightside, lower, alpha)
    if bad is not None:
        if bad >= 0:
            raise ValueError("the triangular matrix is singular")
        return
    t = _tri(a, lower)
    if transpose:
        t = _mT(t)
    rhs = b * alpha
    try:
        if rightside:            # X T = R  <=>  T^T X^T = R^T
            out[...] = _mT(np.linalg.solve(_mT(t), _mT(rhs)))
        else:
            out[...] = np.linalg.solve(t, rhs)
    except np.linalg.LinAlgError:
        raise ValueError("the triangular matrix is singular") from None


def trmm(a, b, out, bint transpose, bint rightside, bint lower, double alpha):
    """out = alpha op(T) B (or alpha B op(T) with rightside), T = a's triangle."""
    t = _tri(a, lower)
    if transpose:
        t = _mT(t)
    out[...] = alpha * ((b @ t) if rightside else (t @ b))


def inverse(a, out):
    if _small("inverse", a, (out,), "the matrix is singular"):
        return
    out[...] = _inv(a, "the matrix")


def det(a, out):
    if _small("det", a, (out,), ""):
        return
    out[...] = np.linalg.det(a).reshape(out.shape)


def slogdet(a, sign, logabs):
    if _small("slogdet", a, (sign, logabs), ""):
        return
    s, l = np.linalg.slogdet(a)
    sign[...] = s.reshape(sign.shape)
    logabs[...] = l.reshape(logabs.shape)


def sumlogdiag(a, out):
    out[...] = np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1).reshape(out.shape)


# ---- compiled kernels of small matrices (potrf, potri, trsm, inverse, det, slogdet) -------------
include "la_small.pxi"


# ---- contrib.bipartite_matching's greedy matching ----------------------------------------------
include "matching.pxi"


# ---- _histogram's uniform bins ------------------------------------------------------------------
include "histogram.pxi"
