# Included by sorting.pyx: the greedy bipartite matching of contrib.bipartite_matching
# (mxlite/ops/detection.py), one score matrix per item, items across OpenMP threads.
#
# The NumPy path it replaces took every item of a block one step at a time (an argmax over
# the block, then fancy-indexed writes): ~10 passes over the block per matched pair. Here
# an item is matched whole in a scratch copy of its scores (one per thread), with the same
# choices: each step the best remaining score (the first of equal ones in row-major order;
# NaN never matches), matched while it passes the threshold and its row and column are free;
# the first step that fails ends the item. An item's result depends on its scores alone, so
# any thread count gives the same markers.
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc

from .common cimport PARALLEL_MIN

ctypedef fused score_t:
    float
    double


cdef void _match_item(const score_t* h, score_t* work, int64_t* rows, int64_t* cols, idx_t n,
                      idx_t m, double thresh, bint ascend, idx_t limit) noexcept nogil:
    """Match one (n, m) score matrix ``h`` into its markers ``rows`` (n) and ``cols`` (m),
    -1 where unmatched, using ``work`` (n * m) as scratch."""
    cdef idx_t i, k, best, r, c, nm = n * m, step
    cdef score_t worst = <score_t>INFINITY if ascend else <score_t>-INFINITY
    cdef score_t v, bv, s
    for i in range(nm):
        v = h[i]
        work[i] = worst if v != v else v
    for step in range(limit):
        best = 0
        bv = work[0]
        for k in range(1, nm):            # the first best: strictly better replaces it
            v = work[k]
            if (v < bv) if ascend else (v > bv):
                best = k
                bv = v
        r = best // m
        c = best % m
        s = h[best]
        if not ((s < thresh) if ascend else (s > thresh)) or rows[r] != -1 or cols[c] != -1:
            return
        rows[r] = c
        cols[c] = r
        for k in range(m):
            work[r * m + k] = worst
        for k in range(n):
            work[k * m + c] = worst


cdef bint _match_drive(const score_t* h, int64_t* rows, int64_t* cols, idx_t b, idx_t n,
                       idx_t m, double thresh, bint ascend, idx_t limit) noexcept nogil:
    """Every item; True when a thread's scratch could not be allocated."""
    cdef idx_t j
    cdef score_t* work = NULL
    cdef int failed = 0
    cdef int* fail = &failed
    if b > 1 and b * n * m >= PARALLEL_MIN:
        with parallel():
            work = <score_t*>malloc(n * m * sizeof(score_t))
            for j in prange(b, schedule="static"):
                if work == NULL:
                    fail[0] = 1
                else:
                    _match_item(h + j * n * m, work, rows + j * n, cols + j * m, n, m, thresh,
                                ascend, limit)
            free(work)
    else:
        work = <score_t*>malloc(n * m * sizeof(score_t))
        if work == NULL:
            return True
        for j in range(b):
            _match_item(h + j * n * m, work, rows + j * n, cols + j * m, n, m, thresh, ascend,
                        limit)
        free(work)
    return failed != 0


def greedy_match(cnp.ndarray scores, cnp.ndarray rows, cnp.ndarray cols, double thresh,
                 bint ascend, idx_t limit):
    """The greedy matching of each (N, M) matrix of ``scores`` (B, N, M; float32 or float64,
    C-contiguous) into the int64 markers ``rows`` (B, N) and ``cols`` (B, M), which must hold
    -1: up to ``limit`` steps, each matching the best remaining score (the smallest with
    ``ascend``) while it is above ``thresh`` (below, with ``ascend``). Bad arguments raise
    ValueError."""
    if scores.ndim != 3 or scores.dtype not in (np.float32, np.float64) \
            or not cnp.PyArray_IS_C_CONTIGUOUS(scores):
        raise ValueError(f"greedy_match: scores must be a C-contiguous (B, N, M) float32 or "
                         f"float64 array, got {scores.dtype} of shape "
                         f"{(<object>scores).shape}")
    cdef idx_t b = scores.shape[0], n = scores.shape[1], m = scores.shape[2]
    for name, a, shape in (("rows", rows, (b, n)), ("cols", cols, (b, m))):
        if a.dtype != np.int64 or (<object>a).shape != shape \
                or not cnp.PyArray_IS_C_CONTIGUOUS(a) or not a.flags.writeable:
            raise ValueError(f"greedy_match: {name} must be a writeable C-contiguous int64 "
                             f"array of shape {shape}, got {a.dtype} of shape "
                             f"{(<object>a).shape}")
    if limit < 0 or limit > min(n, m):
        raise ValueError(f"greedy_match: limit must be in [0, {min(n, m)}], got {limit}")
    if b == 0 or n == 0 or m == 0 or limit == 0:
        return
    cdef int64_t* r = <int64_t*>cnp.PyArray_DATA(rows)
    cdef int64_t* c = <int64_t*>cnp.PyArray_DATA(cols)
    cdef bint rc
    if scores.dtype == np.float32:
        with nogil:
            rc = _match_drive(<const float*>cnp.PyArray_DATA(scores), r, c, b, n, m, thresh,
                              ascend, limit)
    else:
        with nogil:
            rc = _match_drive(<const double*>cnp.PyArray_DATA(scores), r, c, b, n, m, thresh,
                              ascend, limit)
    if rc:
        raise MemoryError(f"greedy_match: no scratch of {n * m} scores per thread")
