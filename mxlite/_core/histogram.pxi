# Included by sorting.pyx: the counts of _histogram's uniform bins (mxlite/ops/array_ops.py),
# on the CPU.
#
# A value x counts when lo <= x <= hi (NaN never does), in bin (int64)((x - lo) * scale)
# (x == hi, and any rounding past the last bin, in the last bin): the array path's float64
# arithmetic value for value, so the same counts. That path took six passes and two
# temporaries of each block, then a scatter-add; here one pass, chunks across threads,
# each with bin counts of its own summed at the end (integer sums: the same counts for any
# thread count).

from libc.stdint cimport int16_t

ctypedef fused hist_t:
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    int64_t
    float
    double


cdef enum:
    HIST_CHUNK = 1 << 16          # values per parallel work item


cdef void _hist_span(const hist_t* x, idx_t lo_i, idx_t hi_i, int64_t* counts, idx_t bins,
                     double lo, double hi, double scale) noexcept nogil:
    cdef idx_t i, k
    cdef double v
    for i in range(lo_i, hi_i):
        v = <double>x[i]
        if v >= lo and v <= hi:
            k = <idx_t>((v - lo) * scale)
            counts[k if k < bins else bins - 1] += 1


cdef bint _hist_drive(const hist_t* x, idx_t n, int64_t* counts, idx_t bins, double lo,
                      double hi, double scale) noexcept nogil:
    """Counts of ``n`` values into ``counts`` (zeroed by the caller); True when a thread's
    counts could not be allocated."""
    cdef idx_t c, k, chunks = (n + HIST_CHUNK - 1) // HIST_CHUNK
    cdef int64_t* mine = NULL
    cdef int failed = 0
    cdef int* fail = &failed
    if chunks > 1:
        with parallel():
            mine = <int64_t*>calloc(bins, sizeof(int64_t))
            for c in prange(chunks, schedule="static"):
                if mine == NULL:
                    fail[0] = 1
                else:
                    _hist_span(x, c * HIST_CHUNK, min(n, (c + 1) * HIST_CHUNK), mine, bins,
                               lo, hi, scale)
            if mine != NULL:
                with gil:                 # one thread at a time adds its counts
                    for k in range(bins):
                        counts[k] += mine[k]
                free(mine)
    else:
        _hist_span(x, 0, n, counts, bins, lo, hi, scale)
    return failed != 0


def uniform_histogram(data, counts, double lo, double hi):
    """Add the counts of the values of ``data`` (C-contiguous; int8..int64 except uint32 and
    uint64, float32 or float64) in ``counts.size`` equal bins of [lo, hi] (scale ``bins /
    (hi - lo)``, as _histogram computes it) into the int64 ``counts``. Bad arguments raise
    ValueError."""
    kinds = "bBhHilqfd"
    if not isinstance(data, np.ndarray) or data.dtype.char not in kinds \
            or not data.flags.c_contiguous or not data.dtype.isnative:
        raise ValueError(f"uniform_histogram: data must be a C-contiguous int8, uint8, int16, "
                         f"uint16, int32, int64, float32 or float64 array, got "
                         f"{getattr(data, 'dtype', type(data).__name__)}")
    if not isinstance(counts, np.ndarray) or counts.dtype != np.int64 or counts.ndim != 1 \
            or not counts.flags.c_contiguous or not counts.flags.writeable or counts.size == 0:
        raise ValueError("uniform_histogram: counts must be a writeable C-contiguous 1-D int64 "
                         "array of at least one bin")
    if not lo < hi:
        raise ValueError(f"uniform_histogram: need lo < hi, got {lo}, {hi}")
    cdef idx_t n = data.size, bins = counts.size
    cdef double scale = bins / (hi - lo)
    cdef void* x = cnp.PyArray_DATA(data)
    cdef int64_t* c = <int64_t*>cnp.PyArray_DATA(counts)
    cdef char kind = ord(data.dtype.char)
    cdef bint bad
    with nogil:
        if kind == b'b':
            bad = _hist_drive(<const int8_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'B':
            bad = _hist_drive(<const uint8_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'h':
            bad = _hist_drive(<const int16_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'H':
            bad = _hist_drive(<const uint16_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'i':
            bad = _hist_drive(<const int32_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'l' or kind == b'q':
            bad = _hist_drive(<const int64_t*>x, n, c, bins, lo, hi, scale)
        elif kind == b'f':
            bad = _hist_drive(<const float*>x, n, c, bins, lo, hi, scale)
        else:
            bad = _hist_drive(<const double*>x, n, c, bins, lo, hi, scale)
    if bad:
        raise MemoryError(f"uniform_histogram: no {bins} counts per thread")
