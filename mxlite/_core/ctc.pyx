# cython: language_level=3
"""Kernel of the connectionist temporal classification loss (``CTCLoss``, ``mxlite/ops/ctc.py``):
the loss of each sequence and its gradient in the activations, softmax minus the label
posteriors (Graves et al. 2006), the sequences shared among threads.

Data is (T, N, A) float32 or float64; ``label`` (N, L) int64 holds each sequence's classes
with the positions past its label length already the blank; every length is int64. One
sequence of data length ``tn`` and label length ``ln`` runs over the S = 2 ln + 1 states of
its extended label (blank, l1, blank, l2, ..., blank), in double precision:

1. ``_forward``: each step's softmax, written to ``grad`` (the first term of the gradient;
   rows past ``tn`` are zeroed), the log emissions of the blank and of the labels (kept for
   the fallback below), and the alpha recursion on emissions rescaled by the step's best
   state (ratios of softmax values: no ``exp`` per state), alpha normalised at every step;
   log p is the sum of the logs of the scales and of the best emissions.
2. ``_backward``: beta' (the continuations after a step, its emission left out), normalised
   per step; the state occupancies alpha beta', normalised over the states (they sum to p
   at every step), are subtracted from ``grad`` at their classes.
3. ``_log_space``: a label that fits in its data (one step per class plus one between equal
   neighbours) whose rescaled recursion still underflowed (every state of a step at 0: log
   emissions ~708 nats apart) is computed again with the alpha and beta recursions in log
   space, from the kept log emissions, so the loss stays finite and exact.

A label that does not fit gets an infinite loss and a zero gradient. The work of a sequence
reads its data rows before it writes its gradient rows, so ``grad`` may be ``data`` itself
(the operator's in-place form). Scratch is one block per thread (``scratch_size``), made by
the caller, so a failed allocation is a Python MemoryError, never a crash.
"""
import numpy as np

from cython.parallel cimport prange, threadid
from libc.math cimport exp, log, log1p, INFINITY
from libc.stdint cimport int64_t

from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

ctypedef fused real:
    float
    double

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static long long mx_ctc_max_threads(void) { return omp_get_max_threads(); }
    #else
    static long long mx_ctc_max_threads(void) { return 1; }
    #endif
    """
    long long mx_ctc_max_threads() nogil   # 1 where the build has no OpenMP (macOS)


cdef struct Seq:
    # one sequence's sizes, labels and scratch (doubles)
    idx_t steps          # T: rows of data
    idx_t stride         # N * A: elements from one step's row of a sequence to the next
    idx_t a              # alphabet size
    idx_t blank          # the blank's class
    idx_t tn             # data length
    idx_t ln             # label length
    idx_t s              # states: 2 ln + 1
    const int64_t* label  # the ln classes
    double* skipw        # (S,) 1 where a state may be entered from two states back, else 0
    double* row          # (A,) a step's softmax, then its posteriors
    double* e            # (T, ln + 1) log emissions: the blank's, then each label's
    double* q            # (T, S) emissions over the step's best (rescaled path)
    double* alpha        # (T, S)
    double* beta         # (3, S): beta' of two steps, a step's occupancies


cdef inline bint _skip(const Seq* w, idx_t s) noexcept nogil:
    """Whether state s may be entered from s - 2 (a label unlike the one two states back)."""
    return s % 2 == 1 and s >= 3 and w.label[(s - 1) // 2] != w.label[(s - 3) // 2]


cdef inline double _log_emission(const Seq* w, idx_t t, idx_t s) noexcept nogil:
    return w.e[t * (w.ln + 1) + (0 if s % 2 == 0 else 1 + (s - 1) // 2)]


cdef inline double _lse3(double a, double b, double c) noexcept nogil:
    """log(e^a + e^b + e^c); -inf when all three are."""
    cdef double m = a
    if b > m:
        m = b
    if c > m:
        m = c
    if m == -INFINITY:
        return m
    return m + log(exp(a - m) + exp(b - m) + exp(c - m))


cdef inline double _sum(const double* x, idx_t n) noexcept nogil:
    """x[0] + ... + x[n-1] in four running sums (the adds pipeline; one chain waits on each)."""
    cdef double a0 = 0, a1 = 0, a2 = 0, a3 = 0
    cdef idx_t i = 0
    while i + 4 <= n:
        a0 += x[i]
        a1 += x[i + 1]
        a2 += x[i + 2]
        a3 += x[i + 3]
        i += 4
    while i < n:
        a0 += x[i]
        i += 1
    return (a0 + a1) + (a2 + a3)


cdef inline void _scale(double* x, idx_t n, double f) noexcept nogil:
    cdef idx_t i
    for i in range(n):
        x[i] *= f


cdef bint _fits(const Seq* w) noexcept nogil:
    """Whether the label fits in the data: one step per class, one more between equals."""
    cdef idx_t j, need = w.ln
    for j in range(1, w.ln):
        need += w.label[j] == w.label[j - 1]
    return need <= w.tn


cdef double _softmax_row(const real* x, real* g, Seq* w, idx_t t) noexcept nogil:
    """g = softmax(x) (one step); w.row = exp(x - max x); the step's log emissions kept in
    w.e. Returns the softmax's log normaliser."""
    cdef idx_t k, j, a = w.a
    cdef double m = x[0], z = 0, inv, logz
    cdef double* row = w.row
    cdef double* e = w.e + t * (w.ln + 1)
    for k in range(1, a):
        if x[k] > m:
            m = x[k]
    for k in range(a):
        row[k] = exp(<double>x[k] - m)
        z += row[k]
    inv = 1.0 / z
    logz = m + log(z)
    e[0] = <double>x[w.blank] - logz
    for j in range(w.ln):
        e[1 + j] = <double>x[w.label[j]] - logz
    for k in range(a):                       # last: g may be x (in place)
        g[k] = <real>(row[k] * inv)
    return logz


cdef bint _alpha_step(Seq* w, idx_t t, double* logp) noexcept nogil:
    """Alpha of step t from step t - 1 (the first states at t = 0) on the emissions rescaled
    by the step's best; alpha normalised. False when the step underflowed (all zero)."""
    cdef idx_t s, k, S = w.s
    cdef double best = 0, shift = -INFINITY, c = 0, v, inv
    cdef double* q = w.q + t * S
    cdef double* cur = w.alpha + t * S
    cdef const double* prev = w.alpha + (t - 1) * S
    cdef const double* e = w.e + t * (w.ln + 1)
    for k in range(w.ln + 1):                  # the best state's emission: 1 after rescaling
        if e[k] > shift:
            shift = e[k]
    best = w.row[w.blank]
    for k in range(w.ln):
        if w.row[w.label[k]] > best:
            best = w.row[w.label[k]]
    if not best > 0:
        return False
    inv = 1.0 / best
    v = w.row[w.blank] * inv
    for k in range(w.ln):                      # states 2k + 1: the labels; the rest blanks
        q[2 * k] = v
        q[2 * k + 1] = w.row[w.label[k]] * inv
    q[S - 1] = v
    if t == 0:
        for s in range(S):
            cur[s] = q[s] if s < 2 else 0.0
    else:
        cur[0] = prev[0] * q[0]
        if S > 1:
            cur[1] = (prev[1] + prev[0]) * q[1]
        for s in range(2, S):               # branch-free: the skip is a 0/1 factor
            cur[s] = (prev[s] + prev[s - 1] + w.skipw[s] * prev[s - 2]) * q[s]
    c = _sum(cur, S)
    if not c > 0:
        return False
    _scale(cur, S, 1.0 / c)
    logp[0] += log(c) + shift
    return True


cdef double _forward(const real* x, real* g, Seq* w) noexcept nogil:
    """Step 1 of the module docstring: log p, or -inf when the rescaled recursion reached
    no final state (an infeasible label, or an underflow)."""
    cdef idx_t t, k
    cdef bint alive = True
    cdef double logp = 0, total
    cdef const double* last
    for t in range(w.tn):
        _softmax_row(x + t * w.stride, g + t * w.stride, w, t)
        if alive:
            alive = _alpha_step(w, t, &logp)
    for t in range(w.tn, w.steps):
        for k in range(w.a):
            g[t * w.stride + k] = 0
    if not alive:
        return -INFINITY
    last = w.alpha + (w.tn - 1) * w.s
    total = last[w.s - 1] + (last[w.s - 2] if w.s > 1 else 0.0)
    return logp + log(total) if total > 0 else -INFINITY


cdef void _subtract_posteriors(real* g, Seq* w, const double* gamma,
                               double scale) noexcept nogil:
    """g[class of s] -= gamma[s] * scale over the states of one step, summed per class in
    double (the blank's states are the even ones; no label is the blank), rounded once."""
    cdef idx_t j, k
    cdef double* row = w.row
    cdef double blank = 0
    for j in range(w.ln + 1):
        blank += gamma[2 * j]
    g[w.blank] = <real>(<double>g[w.blank] - blank * scale)
    for j in range(w.ln):
        row[w.label[j]] = 0
    for j in range(w.ln):
        row[w.label[j]] += gamma[2 * j + 1]
    for j in range(w.ln):                     # each class once (a repeated label: its sum)
        k = w.label[j]
        if row[k] != 0:
            g[k] = <real>(<double>g[k] - row[k] * scale)
            row[k] = 0


cdef void _backward(real* g, Seq* w) noexcept nogil:
    """Step 2 of the module docstring (after a successful ``_forward``)."""
    cdef idx_t t, s, S = w.s
    cdef double* cur = w.beta
    cdef double* nxt = w.beta + S
    cdef double* gamma = w.beta + 2 * S
    cdef double* tmp
    cdef const double* q
    cdef double z, v
    for s in range(S):
        cur[s] = 1.0 if s >= S - 2 else 0.0
    t = w.tn - 1
    while t >= 0:
        if t < w.tn - 1:
            q = w.q + (t + 1) * S
            for s in range(S):                # the next step's beta' times its emissions
                gamma[s] = nxt[s] * q[s]
            for s in range(S - 2):            # branch-free: the skip is a 0/1 factor
                cur[s] = gamma[s] + gamma[s + 1] + w.skipw[s + 2] * gamma[s + 2]
            if S > 1:
                cur[S - 2] = gamma[S - 2] + gamma[S - 1]
            cur[S - 1] = gamma[S - 1]
            z = _sum(cur, S)
            if z > 0:
                _scale(cur, S, 1.0 / z)
        for s in range(S):
            gamma[s] = w.alpha[t * S + s] * cur[s]
        z = _sum(gamma, S)
        if z > 0:
            _subtract_posteriors(g + t * w.stride, w, gamma, 1.0 / z)
        tmp = cur
        cur = nxt
        nxt = tmp
        t -= 1


cdef double _log_space(real* g, Seq* w) noexcept nogil:
    """Step 3 of the module docstring: log p (-inf for an infeasible label), the posteriors
    subtracted from g."""
    cdef idx_t t, s, S = w.s
    cdef double* la = w.alpha
    cdef double* cur = w.beta
    cdef double* nxt = w.beta + S
    cdef double* tmp
    cdef double logp, a, b, c
    for t in range(w.tn):
        for s in range(S):
            if t == 0:
                a = 0.0 if s < 2 else -INFINITY
            else:
                a = la[(t - 1) * S + s]
                b = la[(t - 1) * S + s - 1] if s >= 1 else -INFINITY
                c = la[(t - 1) * S + s - 2] if _skip(w, s) else -INFINITY
                a = _lse3(a, b, c)
            la[t * S + s] = a + _log_emission(w, t, s)
    a = la[(w.tn - 1) * S + S - 1]
    b = la[(w.tn - 1) * S + S - 2] if S > 1 else -INFINITY
    logp = _lse3(a, b, -INFINITY)
    if not logp > -INFINITY:
        return logp
    t = w.tn - 1
    while t >= 0:
        for s in range(S):                    # beta with its emission: log sum of paths on
            if t == w.tn - 1:
                a = 0.0 if s >= S - 2 else -INFINITY
            else:
                a = nxt[s]
                b = nxt[s + 1] if s + 1 < S else -INFINITY
                c = nxt[s + 2] if s + 2 < S and _skip(w, s + 2) else -INFINITY
                a = _lse3(a, b, c)
            cur[s] = a + _log_emission(w, t, s)
        for s in range(S):                    # gamma, into the alpha row (not read again)
            la[t * S + s] = exp(la[t * S + s] + cur[s] - _log_emission(w, t, s) - logp)
        _subtract_posteriors(g + t * w.stride, w, la + t * S, 1.0)
        tmp = cur
        cur = nxt
        nxt = tmp
        t -= 1
    return logp


cdef void _sequence(const real* x, real* g, real* loss, Seq* w) noexcept nogil:
    """Loss and gradient of one sequence (x, g: its first element; rows ``stride`` apart)."""
    cdef idx_t t, k
    cdef double logp
    for t in range(w.s):
        w.skipw[t] = 1.0 if _skip(w, t) else 0.0
    logp = _forward(x, g, w)
    if logp > -INFINITY:
        _backward(g, w)
    elif logp == -INFINITY and _fits(w):
        logp = _log_space(g, w)
    if logp == -INFINITY:                    # no path: -log 0, and no gradient
        for t in range(w.tn):
            for k in range(w.a):
                g[t * w.stride + k] = 0
    loss[0] = <real>(-logp)


def scratch_size(idx_t steps, idx_t alphabet, idx_t label_width):
    """Doubles of scratch one thread needs for sequences of ``steps`` and labels of up to
    ``label_width`` classes."""
    cdef idx_t s = 2 * label_width + 1
    return alphabet + steps * (label_width + 1 + 2 * s) + 4 * s


def max_threads():
    """Threads an OpenMP loop may use (the first dimension of the scratch)."""
    return mx_ctc_max_threads()


def _check(bint ok, what):
    if not ok:
        raise ValueError(f"ctc_loss: {what}")


cdef idx_t _bad_sequence(const int64_t[:, ::1] label, const int64_t[::1] label_lengths,
                         const int64_t[::1] data_lengths, idx_t T, idx_t A) noexcept nogil:
    """The first sequence with a length or a label value out of range, or -1."""
    cdef idx_t n, j
    for n in range(label.shape[0]):
        if not (0 <= label_lengths[n] <= label.shape[1] and 1 <= data_lengths[n] <= T):
            return n
        for j in range(label.shape[1]):
            if not 0 <= label[n, j] < A:
                return n
    return -1


def ctc_loss(const real[:, :, ::1] data, const int64_t[:, ::1] label,
             const int64_t[::1] label_lengths, const int64_t[::1] data_lengths, idx_t blank,
             real[::1] loss, real[:, :, ::1] grad, double[:, ::1] scratch):
    """loss[n] = -log p(label n | data[:, n]) and grad = d loss / d data (T, N, A), every
    sequence's steps past its data length zero (see the module docstring). ``grad`` may be
    ``data``. ``scratch`` is (threads, scratch_size(T, A, L)); with one row the sequences run
    on the calling thread."""
    cdef idx_t T = data.shape[0], N = data.shape[1], A = data.shape[2], L = label.shape[1]
    cdef idx_t n, bad, threads = scratch.shape[0]
    cdef mx_region reg
    _check(label.shape[0] == N and label_lengths.shape[0] == N and data_lengths.shape[0] == N
           and loss.shape[0] == N, "label, lengths and loss must have one row per sequence")
    _check(grad.shape[0] == T and grad.shape[1] == N and grad.shape[2] == A,
           "grad must have data's shape")
    _check(0 <= blank < A, f"blank {blank} outside the alphabet of {A}")
    _check(L >= 1 and threads >= 1 and scratch.shape[1] >= scratch_size(T, A, L),
           "labels need a column and scratch its size")
    if N == 0 or T == 0:
        return
    bad = _bad_sequence(label, label_lengths, data_lengths, T, A)
    _check(bad < 0, f"sequence {bad}: a length or a label value is out of range")
    cdef const real* x = &data[0, 0, 0]
    cdef real* g = &grad[0, 0, 0]
    cdef real* out = &loss[0]
    cdef const int64_t* lab = &label[0, 0]
    cdef const int64_t* ll = &label_lengths[0]
    cdef const int64_t* dl = &data_lengths[0]
    cdef double* work = &scratch[0, 0]
    cdef idx_t per = scratch.shape[1]
    if threads > 1 and N > 1 and T * N * A >= PARALLEL_MIN and not mx_serial(T * N * A):
        with nogil:
            mx_region_begin(&reg)
            for n in prange(N, schedule="dynamic", num_threads=threads):
                mx_region_mark(&reg)
                _run(x, g, out, lab, ll, dl, T, N, A, L, blank, work + threadid() * per, n)
            mx_region_end(&reg)
    else:
        with nogil:
            for n in range(N):
                _run(x, g, out, lab, ll, dl, T, N, A, L, blank, work, n)


cdef void _run(const real* x, real* g, real* loss, const int64_t* label,
               const int64_t* label_lengths, const int64_t* data_lengths, idx_t T, idx_t N,
               idx_t A, idx_t L, idx_t blank, double* scratch, idx_t n) noexcept nogil:
    """Sequence n with one thread's scratch."""
    cdef Seq w
    cdef idx_t S = 2 * L + 1
    w.steps, w.stride, w.a, w.blank = T, N * A, A, blank
    w.tn, w.ln = data_lengths[n], label_lengths[n]
    w.s = 2 * w.ln + 1
    w.label = label + n * L
    w.row = scratch
    w.e = w.row + A
    w.q = w.e + T * (L + 1)
    w.alpha = w.q + T * S
    w.beta = w.alpha + T * S
    w.skipw = w.beta + 3 * S
    _sequence(x + n * A, g + n * A, loss + n, &w)


# ---- the recursions of CTCLoss's gradient graph (ops _ctc_alpha and _ctc_wrec) ------------
# Both take (N, T, S) arrays, one sequence per thread, double precision inside.

cdef inline double _lse3_neg(double a, double b, double c, double neg) noexcept nogil:
    """log(e^a + e^b + e^c) with the terms at ``neg`` (log 0) left out: one exp per other
    term and no log where a single term remains (half the states have no skip)."""
    cdef double m, r = 0
    if a >= b and a >= c:
        m = a
        if b > neg:
            r += exp(b - m)
        if c > neg:
            r += exp(c - m)
    elif b >= c:
        m = b
        if a > neg:
            r += exp(a - m)
        if c > neg:
            r += exp(c - m)
    else:
        m = c
        if a > neg:
            r += exp(a - m)
        if b > neg:
            r += exp(b - m)
    if m <= neg:
        return neg
    return m + log1p(r) if r > 0 else m


cdef void _log_alpha_seq(const real* e, const real* skip, const real* first, idx_t tn,
                         idx_t T, idx_t S, double neg, real* out) noexcept nogil:
    """out[t, s] = e[t, s] + log(sum of exp(out[t-1, k]) over the ways into s: s, s - 1,
    s - 2 where skip[s]); out[0, s] = e[0, s] where first[s]; ``neg`` (a finite log 0, so
    differences of unreachable states stay finite) elsewhere and from step tn on."""
    cdef idx_t t, s
    cdef double a, b, c
    cdef const real* prev
    for s in range(S):
        out[s] = <real>(<double>e[s] if first[s] != 0 else neg)
    for t in range(1, tn):
        prev = out + (t - 1) * S
        for s in range(S):
            a = prev[s]
            b = prev[s - 1] if s >= 1 else neg
            c = prev[s - 2] if s >= 2 and skip[s] != 0 else neg
            out[t * S + s] = <real>(_lse3_neg(a, b, c, neg) + e[t * S + s])
    for t in range(tn, T):
        for s in range(S):
            out[t * S + s] = <real>neg


def log_alpha(const real[:, :, ::1] e, const real[:, ::1] skip, const real[:, ::1] first,
              const int64_t[::1] lengths, double neg, real[:, :, ::1] out):
    """The log-space alpha recursion of each sequence (``_log_alpha_seq``): e, out (N, T, S);
    skip, first (N, S) 0/1; lengths (N,) in [0, T]."""
    cdef idx_t N = e.shape[0], T = e.shape[1], S = e.shape[2], n
    cdef mx_region reg
    _check(skip.shape[0] == N and skip.shape[1] == S and first.shape[0] == N
           and first.shape[1] == S and lengths.shape[0] == N, "masks must be (N, S)")
    _check(out.shape[0] == N and out.shape[1] == T and out.shape[2] == S,
           "out must have e's shape")
    for n in range(N):
        _check(0 <= lengths[n] <= T, f"length {lengths[n]} outside [0, {T}]")
    if N == 0 or T == 0 or S == 0:
        return
    cdef const real* pe = &e[0, 0, 0]
    cdef const real* pk = &skip[0, 0]
    cdef const real* pf = &first[0, 0]
    cdef real* po = &out[0, 0, 0]
    if N > 1 and N * T * S >= PARALLEL_MIN and not mx_serial(N * T * S):
        with nogil:
            mx_region_begin(&reg)
            for n in prange(N, schedule="dynamic"):
                mx_region_mark(&reg)
                _log_alpha_seq(pe + n * T * S, pk + n * S, pf + n * S, lengths[n], T, S,
                               neg, po + n * T * S)
            mx_region_end(&reg)
    else:
        with nogil:
            for n in range(N):
                _log_alpha_seq(pe + n * T * S, pk + n * S, pf + n * S, lengths[n], T, S,
                               neg, po + n * T * S)


cdef void _wrec_seq(const real* w0, const real* w1, const real* w2, const real* g, idx_t T,
                    idx_t S, bint reverse, real* out) noexcept nogil:
    """Forward: out[t, s] = g[t, s] + w0[t, s] out[t-1, s] + w1[t, s] out[t-1, s-1]
    + w2[t, s] out[t-1, s-2]. Reverse (its transpose): out[t, s] = g[t, s]
    + w0[t+1, s] out[t+1, s] + w1[t+1, s+1] out[t+1, s+1] + w2[t+1, s+2] out[t+1, s+2].
    Terms outside the (T, S) grid are left out."""
    cdef idx_t t, s, i, j
    cdef double v
    for i in range(T):
        t = T - 1 - i if reverse else i
        for s in range(S):
            v = g[t * S + s]
            if not reverse and t >= 1:
                j = t * S + s
                v += w0[j] * <double>out[j - S]
                if s >= 1:
                    v += w1[j] * <double>out[j - S - 1]
                if s >= 2:
                    v += w2[j] * <double>out[j - S - 2]
            elif reverse and t + 1 < T:
                j = (t + 1) * S + s
                v += w0[j] * <double>out[j]
                if s + 1 < S:
                    v += w1[j + 1] * <double>out[j + 1]
                if s + 2 < S:
                    v += w2[j + 2] * <double>out[j + 2]
            out[t * S + s] = <real>v


def wrec(const real[:, :, ::1] w0, const real[:, :, ::1] w1, const real[:, :, ::1] w2,
         const real[:, :, ::1] g, bint reverse, real[:, :, ::1] out):
    """The banded linear recursion of each sequence (``_wrec_seq``); all (N, T, S)."""
    cdef idx_t N = g.shape[0], T = g.shape[1], S = g.shape[2], n, k
    cdef mx_region reg
    for k in range(3):
        _check(tuple((w0, w1, w2)[k].shape[:3]) == (N, T, S), "weights must have g's shape")
    _check(out.shape[0] == N and out.shape[1] == T and out.shape[2] == S,
           "out must have g's shape")
    if N == 0 or T == 0 or S == 0:
        return
    cdef const real* p0 = &w0[0, 0, 0]
    cdef const real* p1 = &w1[0, 0, 0]
    cdef const real* p2 = &w2[0, 0, 0]
    cdef const real* pg = &g[0, 0, 0]
    cdef real* po = &out[0, 0, 0]
    cdef idx_t m = T * S
    if N > 1 and N * m >= PARALLEL_MIN and not mx_serial(N * m):
        with nogil:
            mx_region_begin(&reg)
            for n in prange(N, schedule="static"):
                mx_region_mark(&reg)
                _wrec_seq(p0 + n * m, p1 + n * m, p2 + n * m, pg + n * m, T, S, reverse,
                          po + n * m)
            mx_region_end(&reg)
    else:
        with nogil:
            for n in range(N):
                _wrec_seq(p0 + n * m, p1 + n * m, p2 + n * m, pg + n * m, T, S, reverse,
                          po + n * m)
