# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels of contrib.hawkesll (``mxlite/ops/hawkes.py``): the forward recursion of the
log-likelihood and ``_hawkesll_scan`` (the per-mark linear recurrence its gradient is made
of), one pass per sample over its points, the samples shared among threads.

The caller hands over a block of samples: the (B, T) point arrays C-contiguous in float32
or float64 (float16 is widened to float32 by the caller, exactly), the marks as int64, the
number of points each sample counts (``steps``, int64, in [0, T]) and every per-sample or
per-mark array in float64; the results come back in float64 buffers, which the caller casts
to the output dtype. Everything is computed in double, every index is int64 (a block may
start past 2**31 points). The marks of the counted points must lie in [0, K): the caller
checks them (``first_bad_mark``) before any kernel runs, so the kernels never read outside
a row of K values. A sample reads only its own counted points (padding, NaN included, is
never read) and writes only its own output rows, so the samples run in any order.
"""
from cython.parallel cimport prange
from libc.math cimport exp, log
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

ctypedef fused real:
    float
    double

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
cdef void _loglik_one(const real* lags, const int64_t* marks, idx_t steps, idx_t k,
                      const double* lda, const double* alpha, const double* beta,
                      double* s, double* last, double max_time, double* ll) noexcept nogil:
    """One sample: ``s`` (K) holds its state on entry and ``s_k(max_time)`` on return,
    ``last`` (K) is scratch (the time of each mark's last point), ``ll`` its
    log-likelihood. A point of mark c at time t adds log(lda_c + alpha_c beta_c s_c e) -
    lda_c d - alpha_c s_c (1 - e), with d = t - last_c and e = exp(-beta_c d); then
    s_c = 1 + s_c e; the compensators from each mark's last point to max_time close it."""
    cdef idx_t j, c
    cdef double t = 0.0, total = 0.0, comp = 0.0, d, e, excite, rate, b
    for c in range(k):
        last[c] = 0.0
    for j in range(steps):
        c = marks[j]
        t = t + <double>lags[j]
        rate, b = lda[c], beta[c]
        d = t - last[c]
        e = exp(-(b * d))
        excite = alpha[c] * s[c]
        total += log(rate + b * excite * e) - rate * d - excite * (1.0 - e)
        s[c] = 1.0 + s[c] * e
        last[c] = t
    for c in range(k):
        d = max_time - last[c]
        e = exp(-(beta[c] * d))
        comp += lda[c] * d + alpha[c] * s[c] * (1.0 - e)
        s[c] = s[c] * e
    ll[0] = total - comp


def loglik(const real[:, ::1] lags, const int64_t[:, ::1] marks, const int64_t[::1] steps,
           const double[:, ::1] lda, const double[::1] alpha, const double[::1] beta,
           double[:, ::1] state, const double[::1] max_time, double[:, ::1] last,
           double[::1] ll):
    """The log-likelihoods ``ll`` (B,) of a block of samples; ``state`` (B, K) is read as
    the initial states and overwritten with the states at max_time; ``last`` (B, K) is
    scratch. See the module docstring for the inputs."""
    cdef idx_t n = lags.shape[0], t = lags.shape[1], k = lda.shape[1], i
    cdef mx_region reg
    _check(marks.shape[0] == n and marks.shape[1] == t and steps.shape[0] == n
           and lda.shape[0] == n and state.shape[0] == n and state.shape[1] == k
           and last.shape[0] == n and last.shape[1] == k and max_time.shape[0] == n
           and ll.shape[0] == n and alpha.shape[0] == k and beta.shape[0] == k and k >= 1,
           "the block's arrays must agree in shape")
    for i in range(n):
        _check(0 <= steps[i] <= t, f"steps[{i}] = {steps[i]} outside [0, {t}]")
    if n == 0:
        return
    cdef const real* x = &lags[0, 0] if t > 0 else NULL      # no point is read when T = 0
    cdef const int64_t* m = &marks[0, 0] if t > 0 else NULL
    if _threaded(n, n * t):
        with nogil:
            mx_region_begin(&reg)
            for i in prange(n, schedule="guided"):
                mx_region_mark(&reg)
                _loglik_one(x + i * t, m + i * t, steps[i], k, &lda[i, 0], &alpha[0],
                            &beta[0], &state[i, 0], &last[i, 0], max_time[i], &ll[i])
            mx_region_end(&reg)
    else:
        with nogil:
            for i in range(n):
                _loglik_one(x + i * t, m + i * t, steps[i], k, &lda[i, 0], &alpha[0],
                            &beta[0], &state[i, 0], &last[i, 0], max_time[i], &ll[i])


# ---- _hawkesll_scan --------------------------------------------------------------------------
cdef void _scan_one(const real* a, const real* b, const int64_t* marks, idx_t steps,
                    idx_t t, bint reverse, double* z, double* pre) noexcept nogil:
    """One sample: ``z`` (K) holds init on entry and final on return; at each counted
    point (from the last back with ``reverse``) pre[j] = z[c], z[c] = a[j] z[c] + b[j];
    pre is 0 past the counted points."""
    cdef idx_t j, q, c
    cdef double zc
    for q in range(steps):
        j = steps - 1 - q if reverse else q
        c = marks[j]
        zc = z[c]
        pre[j] = zc
        z[c] = <double>a[j] * zc + <double>b[j]
    for j in range(steps, t):
        pre[j] = 0.0


def scan(const real[:, ::1] a, const real[:, ::1] b, const int64_t[:, ::1] marks,
         const int64_t[::1] steps, bint reverse, double[:, ::1] z, double[:, ::1] pre):
    """``_hawkesll_scan`` of a block of samples: ``z`` (B, K) is read as init and
    overwritten with final, ``pre`` (B, T) is written. ``pre`` must not share memory with
    ``a`` or ``b`` (the caller's buffer)."""
    cdef idx_t n = a.shape[0], t = a.shape[1], i
    cdef mx_region reg
    _check(b.shape[0] == n and b.shape[1] == t and marks.shape[0] == n
           and marks.shape[1] == t and steps.shape[0] == n and z.shape[0] == n
           and z.shape[1] >= 1 and pre.shape[0] == n and pre.shape[1] == t,
           "the block's arrays must agree in shape")
    for i in range(n):
        _check(0 <= steps[i] <= t, f"steps[{i}] = {steps[i]} outside [0, {t}]")
    if n == 0 or t == 0:
        return
    cdef const real* pa = &a[0, 0]
    cdef const real* pb = &b[0, 0]
    cdef const int64_t* m = &marks[0, 0]
    cdef double* out = &pre[0, 0]
    if _threaded(n, n * t):
        with nogil:
            mx_region_begin(&reg)
            for i in prange(n, schedule="guided"):
                mx_region_mark(&reg)
                _scan_one(pa + i * t, pb + i * t, m + i * t, steps[i], t, reverse,
                          &z[i, 0], out + i * t)
            mx_region_end(&reg)
    else:
        with nogil:
            for i in range(n):
                _scan_one(pa + i * t, pb + i * t, m + i * t, steps[i], t, reverse,
                          &z[i, 0], out + i * t)
