# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of contrib.hawkesll (``mxlite/ops/hawkes.py``): the forward recursion of the
log-likelihood and ``_hawkesll_scan`` (the per-mark linear recurrence its gradient is made
of), one pass per sample over its points, the samples shared among OpenMP threads.

The (N, T) point arrays are read in their own dtype, C-contiguous, with no converted copy:
floats float16 (its bits widened exactly), float32 or float64, marks of any integer dtype;
the number of points each sample counts (``steps``) is int64 in [0, T], every per-sample or
per-mark array float64. Everything is computed in double and every index is int64 (a
sample may start past 2**31 points); the scan's ``pre`` is written in its own dtype, rounded
to nearest even as NumPy's casts round, the small outputs into float64 arrays the caller
casts. The marks of the counted points must lie in [0, K): the caller checks them
(``first_bad_mark``) before any kernel runs, so the kernels never read outside a row of K
values. A sample reads only its own counted points (padding, NaN included, is never read)
and writes only its own output rows, so the samples run in any order.
"""
from cython.parallel cimport prange, threadid
from libc.math cimport exp, log
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

ctypedef fused integral:
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t


def _check(bint ok, what):
    if not ok:
        raise ValueError(f"hawkes kernel: {what}")


cdef inline bint _threaded(idx_t samples, idx_t points) noexcept nogil:
    """Whether a block is worth the threads (and the machine not contended)."""
    return samples > 1 and points >= PARALLEL_MIN and not mx_serial(points)


cdef extern from *:
    """
    #include <string.h>
    #include <math.h>
    /* float16 bits <-> double, both exact or rounded to nearest even, as NumPy's casts */
    static inline double hwk_half_to_double(uint16_t h) {
        uint64_t sign = (uint64_t)(h & 0x8000u) << 48, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
        uint64_t bits;
        double v;
        if (e == 0) {                            /* zero or subnormal: m 2^-24 */
            v = (double)m * 5.9604644775390625e-08;
            return sign ? -v : v;
        }
        if (e == 31) bits = sign | 0x7ff0000000000000ull | (m << 42);     /* inf, NaN */
        else bits = sign | ((e - 15 + 1023) << 52) | (m << 42);
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    static inline uint16_t hwk_double_to_half(double x) {
        uint64_t b, m, rem;
        uint16_t sign, h;
        int64_t e;
        double a = fabs(x);
        memcpy(&b, &x, sizeof b);
        sign = (uint16_t)((b >> 48) & 0x8000u);
        if (a != a) return (uint16_t)(sign | 0x7e00u);                    /* NaN */
        if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u);   /* rounds past 65504: inf */
        if (a < 6.103515625e-05)                 /* below 2^-14: subnormal, m 2^-24 */
            return (uint16_t)(sign | (uint16_t)nearbyint(a * 16777216.0));
        memcpy(&b, &a, sizeof b);
        e = (int64_t)(b >> 52) - 1023;           /* -14..15 */
        m = b & 0xfffffffffffffull;
        h = (uint16_t)(((e + 15) << 10) | (int64_t)(m >> 42));
        rem = m & 0x3ffffffffffull;              /* the 42 bits rounded off */
        if (rem > 0x20000000000ull || (rem == 0x20000000000ull && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    """
    double hwk_half_to_double(uint16_t h) noexcept nogil
    uint16_t hwk_double_to_half(double x) noexcept nogil


cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static long long hwk_max_threads(void) { return omp_get_max_threads(); }
    #else
    static long long hwk_max_threads(void) { return 1; }
    #endif
    """
    long long hwk_max_threads() nogil   # 1 where the build has no OpenMP (macOS)


# Kinds of element the kernels read or write in place (no converted copies): floats by
# their itemsize (2: float16), marks by itemsize and signedness.
cdef enum:
    F16 = 2
    F32 = 4
    F64 = 8
    I8 = 1
    I16 = 2
    I32 = 4
    I64 = 8
    U8 = 9
    U16 = 10
    U32 = 12
    U64 = 16

_FLOAT_KINDS = {"float16": F16, "float32": F32, "float64": F64}
_INT_KINDS = {"int8": I8, "int16": I16, "int32": I32, "int64": I64,
              "uint8": U8, "uint16": U16, "uint32": U32, "uint64": U64}


cdef struct Points:
    # an (N, T) C-contiguous array as the kernels see it
    char* data
    idx_t n
    idx_t t
    idx_t row            # bytes from one sample's row to the next
    int kind


cdef Points _points(x, kinds, name) except *:
    """The (N, T) array ``x`` (C-contiguous, a dtype of ``kinds``) as raw rows."""
    cdef Points p
    cdef const unsigned char[:, ::1] raw
    _check(x.ndim == 2 and x.flags.c_contiguous, f"{name} must be 2-D and C-contiguous")
    _check(x.dtype.name in kinds, f"{name} has the unsupported dtype {x.dtype}")
    p.kind = kinds[x.dtype.name]
    p.n, p.t = x.shape[0], x.shape[1]
    p.row = p.t * x.dtype.itemsize
    p.data = NULL
    if p.n > 0 and p.t > 0:
        raw = x.view("uint8")                 # (N, T * itemsize); the caller keeps x alive
        p.data = <char*>&raw[0, 0]
    return p


cdef inline double _load(const char* p, int kind, idx_t j) noexcept nogil:
    """Element j of a row of floats, as double (the branch is the same for a whole call)."""
    if kind == F32:
        return (<const float*>p)[j]
    if kind == F64:
        return (<const double*>p)[j]
    return hwk_half_to_double((<const uint16_t*>p)[j])


cdef inline void _store(char* p, int kind, idx_t j, double v) noexcept nogil:
    """Element j of a row of floats = v, rounded to nearest even as NumPy casts."""
    if kind == F32:
        (<float*>p)[j] = <float>v
    elif kind == F64:
        (<double*>p)[j] = v
    else:
        (<uint16_t*>p)[j] = hwk_double_to_half(v)


cdef inline idx_t _mark(const char* p, int kind, idx_t j) noexcept nogil:
    """Mark j of a row of integers (checked to lie in [0, K) before any kernel runs)."""
    if kind == I32:
        return (<const int32_t*>p)[j]
    if kind == I64:
        return (<const int64_t*>p)[j]
    if kind == I8:
        return (<const int8_t*>p)[j]
    if kind == U8:
        return (<const uint8_t*>p)[j]
    if kind == I16:
        return (<const int16_t*>p)[j]
    if kind == U16:
        return (<const uint16_t*>p)[j]
    if kind == U32:
        return (<const uint32_t*>p)[j]
    return <idx_t>(<const uint64_t*>p)[j]


def _check_steps(const int64_t[::1] steps, idx_t t):
    cdef idx_t i
    for i in range(steps.shape[0]):
        _check(0 <= steps[i] <= t, f"steps[{i}] = {steps[i]} outside [0, {t}]")


# ---- the marks' check ------------------------------------------------------------------------
def first_bad_mark(const integral[:, :] marks, const int64_t[::1] steps, int64_t k):
    """(i, j) of the counted point whose mark lies outside [0, k), the smallest point index
    j first and then the smallest sample i (the order of the NumPy path's message), or
    None. ``marks`` is (B, T) of any integer dtype and any strides."""
    cdef idx_t n = marks.shape[0], i, j, best_j = -1, best_i = -1, stop
    cdef integral c
    _check(steps.shape[0] == n, "steps must have one value per sample")
    with nogil:
        for i in range(n):
            stop = steps[i] if best_j < 0 or steps[i] <= best_j else best_j
            for j in range(stop):
                c = marks[i, j]
                if c < 0 or <uint64_t>c >= <uint64_t>k:
                    best_j, best_i = j, i       # a smaller j than any before (stop above)
                    break
    return None if best_j < 0 else (best_i, best_j)


# ---- the forward -----------------------------------------------------------------------------
cdef struct Sample:
    # the forward's view of one sample: its rows (any float dtype) and its thread's scratch
    const char* lags
    const char* marks
    const char* lda
    const char* state
    char* out_state
    idx_t steps
    double max_time
    double* s            # (K) the state, in double
    double* last         # (K) the time of each mark's last point


cdef double _loglik_one(Sample* w, int fkind, int mkind, idx_t k, const double* alpha,
                        const double* beta) noexcept nogil:
    """One sample's log-likelihood; its state at max_time is written to ``out_state``. A
    point of mark c at time t adds log(lda_c + alpha_c beta_c s_c e) - lda_c d -
    alpha_c s_c (1 - e), with d = t - last_c and e = exp(-beta_c d); then s_c = 1 + s_c e;
    the compensators from each mark's last point to max_time close it."""
    cdef idx_t j, c
    cdef double t = 0.0, total = 0.0, comp = 0.0, d, e, excite, rate, b
    cdef double* s = w.s
    cdef double* last = w.last
    for c in range(k):
        s[c] = _load(w.state, fkind, c)
        last[c] = 0.0
    for j in range(w.steps):
        c = _mark(w.marks, mkind, j)
        t = t + _load(w.lags, fkind, j)
        rate, b = _load(w.lda, fkind, c), beta[c]
        d = t - last[c]
        e = exp(-(b * d))
        excite = alpha[c] * s[c]
        total += log(rate + b * excite * e) - rate * d - excite * (1.0 - e)
        s[c] = 1.0 + s[c] * e
        last[c] = t
    for c in range(k):
        d = w.max_time - last[c]
        e = exp(-(beta[c] * d))
        comp += _load(w.lda, fkind, c) * d + alpha[c] * s[c] * (1.0 - e)
        _store(w.out_state, fkind, c, s[c] * e)
    return total - comp


cdef void _loglik_run(Points* x, Points* m, Points* lda, Points* state, Points* mt,
                      Points* ll, Points* out, const int64_t* steps, const double* alpha,
                      const double* beta, double* scratch, idx_t i) noexcept nogil:
    """Sample i with one thread's scratch (2 K doubles)."""
    cdef Sample w
    cdef idx_t k = lda.t
    w.lags, w.marks = x.data + i * x.row, m.data + i * m.row
    w.lda, w.state = lda.data + i * lda.row, state.data + i * state.row
    w.out_state = out.data + i * out.row
    w.steps, w.max_time = steps[i], _load(mt.data, mt.kind, i)
    w.s, w.last = scratch, scratch + k
    _store(ll.data, ll.kind, i, _loglik_one(&w, x.kind, m.kind, k, alpha, beta))


def loglik(lags, marks, const int64_t[::1] steps, lda, const double[::1] alpha,
           const double[::1] beta, state, max_time, ll, out_state, double[:, ::1] scratch):
    """The log-likelihoods ``ll`` (N,) and the states at max_time ``out_state`` (N, K) of a
    batch, every array C-contiguous and read or written in its own dtype: ``lags``, ``lda``,
    ``state``, ``max_time``, ``ll`` and ``out_state`` one float dtype, ``marks`` (N, T) any
    integer dtype; ``alpha``, ``beta`` (K) float64; ``scratch`` (threads, 2 K) float64, with
    one row the samples run on the calling thread. See the module docstring."""
    cdef Points x = _points(lags, _FLOAT_KINDS, "lags")
    cdef Points m = _points(marks, _INT_KINDS, "marks")
    cdef Points pl = _points(lda, _FLOAT_KINDS, "lda")
    cdef Points ps = _points(state, _FLOAT_KINDS, "state")
    cdef Points po = _points(out_state, _FLOAT_KINDS, "out_state")
    cdef Points pt = _points(max_time.reshape(-1, 1), _FLOAT_KINDS, "max_time")
    cdef Points pll = _points(ll.reshape(1, -1), _FLOAT_KINDS, "ll")
    cdef idx_t n = x.n, t = x.t, k = pl.t, i, threads = scratch.shape[0]
    cdef mx_region reg
    _check(m.n == n and m.t == t and steps.shape[0] == n and pl.n == n and ps.n == n
           and ps.t == k and po.n == n and po.t == k and pt.n == n and pll.t == n
           and alpha.shape[0] == k and beta.shape[0] == k and k >= 1
           and threads >= 1 and scratch.shape[1] >= 2 * k, "the arrays must agree in shape")
    _check(pl.kind == x.kind and ps.kind == x.kind and po.kind == x.kind and pt.kind == x.kind
           and pll.kind == x.kind, "the float arrays must share a dtype")
    _check(out_state.flags.writeable and ll.flags.writeable, "the outputs must be writable")
    _check_steps(steps, t)
    if n == 0:
        return
    if threads > 1 and _threaded(n, n * t):
        with nogil:
            mx_region_begin(&reg)
            for i in prange(n, schedule="guided", num_threads=threads):
                mx_region_mark(&reg)
                _loglik_run(&x, &m, &pl, &ps, &pt, &pll, &po, &steps[0], &alpha[0], &beta[0],
                            &scratch[threadid(), 0], i)
            mx_region_end(&reg)
    else:
        with nogil:
            for i in range(n):
                _loglik_run(&x, &m, &pl, &ps, &pt, &pll, &po, &steps[0], &alpha[0], &beta[0],
                            &scratch[0, 0], i)


def max_threads():
    """Threads a parallel loop may use (the first dimension of the forward's scratch)."""
    return hwk_max_threads()


# ---- _hawkesll_scan --------------------------------------------------------------------------
cdef void _scan_one(const char* a, const char* b, int fkind, const char* marks, int mkind,
                    idx_t steps, idx_t t, bint reverse, double* z, char* pre,
                    int pkind) noexcept nogil:
    """One sample: ``z`` (K) holds init on entry and final on return; at each counted
    point (from the last back with ``reverse``) pre[j] = z[c], z[c] = a[j] z[c] + b[j];
    pre is 0 past the counted points. a[j] and b[j] are read before pre[j] is written, and
    no point is read after its pre is written: pre may be a or b itself."""
    cdef idx_t j, q, c
    cdef double zc, aj, bj
    for q in range(steps):
        j = steps - 1 - q if reverse else q
        c = _mark(marks, mkind, j)
        aj = _load(a, fkind, j)
        bj = _load(b, fkind, j)
        zc = z[c]
        _store(pre, pkind, j, zc)
        z[c] = aj * zc + bj
    for j in range(steps, t):
        _store(pre, pkind, j, 0.0)


def scan(a, b, marks, const int64_t[::1] steps, bint reverse, double[:, ::1] z, pre):
    """``_hawkesll_scan`` of a batch: ``a``, ``b`` (N, T) C-contiguous float16, float32 or
    float64 (one dtype), ``marks`` (N, T) C-contiguous of any integer dtype, all read in
    their own dtype; ``z`` (N, K) float64 is read as init and overwritten with final;
    ``pre`` (N, T) C-contiguous float16/32/64 is written, cast from double. ``pre`` may be
    ``a`` or ``b`` itself (the same memory, dtype and shape), but not overlap them otherwise
    (the caller's rule)."""
    cdef Points pa = _points(a, _FLOAT_KINDS, "a")
    cdef Points pb = _points(b, _FLOAT_KINDS, "b")
    cdef Points m = _points(marks, _INT_KINDS, "marks")
    cdef Points out = _points(pre, _FLOAT_KINDS, "pre")
    cdef idx_t n = pa.n, t = pa.t, i
    cdef mx_region reg
    _check(pb.n == n and pb.t == t and pb.kind == pa.kind and m.n == n and m.t == t
           and out.n == n and out.t == t and steps.shape[0] == n and z.shape[0] == n
           and z.shape[1] >= 1, "the arrays must agree in shape and dtype")
    _check(pre.flags.writeable, "pre must be writable")
    _check_steps(steps, t)
    if n == 0 or t == 0:
        return
    if _threaded(n, n * t):
        with nogil:
            mx_region_begin(&reg)
            for i in prange(n, schedule="guided"):
                mx_region_mark(&reg)
                _scan_one(pa.data + i * pa.row, pb.data + i * pb.row, pa.kind,
                          m.data + i * m.row, m.kind, steps[i], t, reverse, &z[i, 0],
                          out.data + i * out.row, out.kind)
            mx_region_end(&reg)
    else:
        with nogil:
            for i in range(n):
                _scan_one(pa.data + i * pa.row, pb.data + i * pb.row, pa.kind,
                          m.data + i * m.row, m.kind, steps[i], t, reverse, &z[i, 0],
                          out.data + i * out.row, out.kind)
