# Included by sorting.pyx: the compiled small-matrix kernels (mx_la_small.h) under potrf,
# potri, trsm, inverse, det and slogdet, for stacks of n x n matrices with n <= the size
# where they beat LAPACK's per-call cost (LA_SMALL_MAX). Each function returns None, having
# touched nothing, when its arrays are not C-contiguous native float32/float64 of one dtype
# (numpy.linalg then runs instead), and otherwise -1 or the index of the first matrix that
# failed (singular, not positive definite), the stack computed up to it.
#
# Accuracy (against a long-double reference): float32 results are those of a float64
# computation rounded once, as numpy.linalg's (it computes float32 in float64 too); float64
# det/slogdet are more accurate than numpy.linalg's (a product of the pivots, not a sum of
# their logarithms), potri and trsm are (a triangular inverse / substitution instead of a
# pivoted LU of the triangle), potrf is as accurate (dot products in four partial sums).
# A float64 inverse stays with LAPACK, whose error is a little smaller than this LU's.

cdef extern from "mx_la_small.h" nogil:
    int64_t MX_LA_NMAX
    int64_t mx_la_inverse(const void* a, void* out, int64_t dbl, int64_t count, int64_t n)
    int64_t mx_la_det(const void* a, void* out, int64_t dbl, int64_t count, int64_t n)
    int64_t mx_la_slogdet(const void* a, void* sign_out, void* log_out, int64_t dbl, int64_t count,
                       int64_t n)
    int64_t mx_la_potrf(const void* a, void* out, int64_t dbl, int64_t count, int64_t n,
                        int64_t lower)
    int64_t mx_la_potri(const void* a, void* out, int64_t dbl, int64_t count, int64_t n,
                        int64_t lower)
    int64_t mx_la_trsm(const void* a, const void* b, void* out, int64_t dbl, int64_t count,
                       int64_t r, int64_t c, int64_t transpose, int64_t rightside, int64_t lower,
                       double alpha)

LA_SMALL_MAX = 32        # largest n the compiled kernels take (measured: faster up to here)


cdef bint _la_arrays(arrays, dtype):
    for x in arrays:
        if not isinstance(x, np.ndarray) or x.dtype != dtype or not x.flags.c_contiguous:
            return False
    return True


cdef int64_t _la_small_dtype(a, arrays, idx_t n):
    """1 (float64) or 0 (float32) when the compiled kernels take ``arrays`` (``a`` first,
    stacks of n x n with n <= LA_SMALL_MAX), else -1."""
    if not isinstance(a, np.ndarray) or a.ndim < 2 or n > LA_SMALL_MAX or n > MX_LA_NMAX:
        return -1
    if a.dtype != np.float64 and a.dtype != np.float32:
        return -1
    if not _la_arrays(arrays, a.dtype):
        return -1
    return 1 if a.dtype == np.float64 else 0


def _la_count(a, idx_t per):
    return a.size // per if per else 0


def small_square(name, a, *outs):
    """Run the compiled kernel ``name`` (inverse, det, slogdet, potrf_lower, potrf_upper,
    potri_lower, potri_upper) on the stack ``a`` into ``outs``: None when it does not
    apply, else -1 or the index of the first matrix that failed."""
    cdef idx_t n = a.shape[a.ndim - 1] if isinstance(a, np.ndarray) and a.ndim >= 2 else 0
    cdef int64_t dbl = _la_small_dtype(a, (a,) + outs, n)
    if dbl < 0 or a.shape[a.ndim - 2] != n or (dbl == 1 and name == "inverse"):
        return None         # float64 inverse: LAPACK's blocked updates round a little less
    cdef idx_t count = _la_count(a, n * n), bad = -1
    for o in outs:
        if o.size != (count if name in ("det", "slogdet") else a.size):
            raise ValueError(f"small_square: output of size {o.size} for a stack of shape "
                             f"{a.shape}")
    cdef const void* pa = cnp.PyArray_DATA(a)
    cdef void* p0 = cnp.PyArray_DATA(outs[0])
    cdef void* p1 = cnp.PyArray_DATA(outs[1]) if len(outs) > 1 else NULL
    cdef int64_t nn = n
    cdef int64_t kind = ("inverse", "det", "slogdet", "potrf_lower", "potrf_upper", "potri_lower",
                     "potri_upper").index(name)
    if kind == 2 and p1 == NULL:
        raise ValueError("small_square: slogdet needs two outputs")
    with nogil:
        if kind == 0:
            bad = mx_la_inverse(pa, p0, dbl, count, nn)
        elif kind == 1:
            bad = mx_la_det(pa, p0, dbl, count, nn)
        elif kind == 2:
            bad = mx_la_slogdet(pa, p0, p1, dbl, count, nn)
        elif kind <= 4:
            bad = mx_la_potrf(pa, p0, dbl, count, nn, kind == 3)
        else:
            bad = mx_la_potri(pa, p0, dbl, count, nn, kind == 5)
    return bad


def small_trsm(a, b, out, bint transpose, bint rightside, bint lower, double alpha):
    """trsm through the compiled kernel: None when it does not apply, else -1 or the
    index of the first matrix whose triangle is singular."""
    cdef idx_t n = a.shape[a.ndim - 1] if isinstance(a, np.ndarray) and a.ndim >= 2 else 0
    cdef int64_t dbl = _la_small_dtype(a, (a, b, out), n)
    if dbl < 0 or a.shape[a.ndim - 2] != n or b.ndim < 2 or out.shape != b.shape:
        return None
    cdef idx_t r = b.shape[b.ndim - 2], c = b.shape[b.ndim - 1]
    cdef idx_t count = _la_count(a, n * n), bad = -1
    if (c if rightside else r) != n or b.size != count * r * c:
        raise ValueError(f"small_trsm: B of shape {b.shape} does not fit A of shape {a.shape}")
    cdef const void* pa = cnp.PyArray_DATA(a)
    cdef const void* pb = cnp.PyArray_DATA(b)
    cdef void* po = cnp.PyArray_DATA(out)
    with nogil:
        bad = mx_la_trsm(pa, pb, po, dbl, count, r, c, transpose, rightside, lower, alpha)
    return bad
