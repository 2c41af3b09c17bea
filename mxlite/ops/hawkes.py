"""contrib.hawkesll: the log-likelihood of a multivariate Hawkes process with exponential kernels.

The model (MXNet 1.9.1's ``_contrib_hawkesll``). Each sample ``i`` of the batch is a
sequence of points: point ``j`` arrives ``lags[i, j]`` after point ``j - 1`` (the first
after time 0) and carries the mark ``marks[i, j]`` in ``[0, K)``; only the first
``valid_length[i]`` points count. Mark ``k`` has the conditional intensity

    lambda_k(t) = lda[i, k] + alpha[k] * beta[k] * s_k(t),
    s_k(t) = state[i, k] * exp(-beta[k] t)
             + sum over the earlier points j of mark k of exp(-beta[k] (t - t_j)),

and the log-likelihood of the observation on ``(0, max_time[i]]`` is

    sum_j log lambda_{c_j}(t_j) - sum_k integral_0^max_time lambda_k(t) dt,

where the integral (the compensator) is ``lda[i, k] * max_time + alpha[k] * (state[i, k] +
n_k - s_k(max_time))`` with ``n_k`` the number of points of mark ``k``. The second output is
``s_k(max_time)``, the state to start the next window with (the exponential memory).

On the CPU the compute is compiled (``mxlite/_core/hawkes.pyx``): one pass per sample over
its points in float64, the samples shared among OpenMP threads, every array read in its own
dtype (no converted copy: no scratch beyond a few (N, K) values); every mark and length is
checked before anything is written. Other devices (``rctx.xp`` not NumPy) run the recursion
vectorised over blocks of samples and looped over the time axis, in float64 (scratch:
about 6 values per point of a block of samples, at least one sample, whatever the batch):
each step costs about 16 us of Python and NumPy calls plus its share of the batch. The
gradient is a graph of registered operators: the per-mark recursions it needs are the
internal ``_hawkesll_scan`` (a linear recurrence per mark, forward or backward in time),
whose own gradient is the same scan run the other way, so gradients of any order follow;
the graph holds the marks one-hot, (N, T, K).

Where MXNet differs (docs/differences.rst): MXNet computes ``expf``/``logf`` (float
precision) also for float64; it gives no gradient for ``state`` (zeros), ``lags`` or
``max_time`` (asking for the last two is an error there) and ignores the head gradient of
``out_state``; it reads past the end of a row when ``valid_length`` exceeds T and outside ``lda``/``alpha``
for a mark outside ``[0, K)`` (both errors here); marks of any integer dtype are accepted
(MXNet: int32 only), and valid_length of any real dtype.
"""
import numpy as np

from ..base import FLOAT_DTYPES, is_bfloat16, op_error
from .._core import hawkes as _kernel
from .registry import OpDef, Param, get_op, register

_OP = "hawkesll"
_SCAN = "_hawkesll_scan"
_BLOCK = 1 << 22        # scratch elements of one block of samples
_WORK = "float64"       # the recursions run in float64 whatever the inputs' dtype


# ---- shapes and dtypes ------------------------------------------------------------------------
def _check_ndims(op, names, shapes, ndims):
    for name, shape, nd in zip(names, shapes, ndims):
        if len(shape) != nd:
            raise op_error(op, f"{name} must be {nd}-D, got shape {tuple(shape)}")


def _check_equal(op, name, shape, want):
    if tuple(shape) != tuple(want):
        raise op_error(op, f"{name} must have shape {tuple(want)}, got {tuple(shape)}")


_NAMES = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _hawkes_shape(shapes, attrs):
    _check_ndims(_OP, _NAMES, shapes, (2, 1, 1, 2, 2, 2, 1, 1))
    n, t = shapes[4]
    k = shapes[0][1]
    if k < 1:
        raise op_error(_OP, f"lda {tuple(shapes[0])} must have at least one mark (K >= 1)")
    want = ((n, k), (k,), (k,), (n, k), (n, t), (n, t), (n,), (n,))
    for name, shape, w in zip(_NAMES, shapes, want):
        _check_equal(_OP, name, shape, w)
    return [(n,), (n, k)]


def _check_index_types(op, marks, length):
    """marks hold integers (MXNet: int32; any integer dtype here), valid_length numbers."""
    if np.dtype(marks).kind not in "iu":
        raise op_error(op, f"marks must have an integer dtype, got {np.dtype(marks)}")
    if np.dtype(length).kind not in "iuf":
        raise op_error(op, f"valid_length must hold numbers, got {np.dtype(length)}")


def _check_floats(op, names, dtypes):
    """The named inputs share one float dtype; it is returned."""
    dtypes = [np.dtype(d) for d in dtypes]
    for name, dt in zip(names, dtypes):
        if dt not in FLOAT_DTYPES or is_bfloat16(dt):     # (the kernels read float16 bits)
            raise op_error(op, f"{name} must be float16, float32 or float64, got {dt}")
    if len(set(dtypes)) > 1:
        raise op_error(op, f"{', '.join(names)} must share a dtype, got "
                           f"{[str(d) for d in dtypes]}")
    return dtypes[0]


def _hawkes_type(dtypes, attrs):
    floats = [0, 1, 2, 3, 4, 7]
    dt = _check_floats(_OP, [_NAMES[i] for i in floats], [dtypes[i] for i in floats])
    _check_index_types(_OP, dtypes[5], dtypes[6])
    return [dt, dt]


# ---- host checks and the shared pieces of the compute -------------------------------------------
def _steps(rctx, op, length, t):
    """Host int64 (N,): the points each sample counts, MXNet's ``j < valid_length``
    (a fractional length counts its partial point), checked to lie in [0, T]."""
    v = rctx.xp.to_host(length).astype(_WORK)
    bad = ~((v >= 0) & (v <= t))            # NaN fails both
    if bad.any():
        raise op_error(op, f"valid_length must lie in [0, {t}] (the sequence length T), got "
                           f"{v[bad][:5].tolist()}")
    steps = v.astype("int64")
    return steps + (steps < v)


def _row_blocks(n, t, k):
    """Slices of the batch whose scratch (about 6 T + 2 K + 16 values a sample: the block's
    columns transposed in float64, the per-mark values) fits one block."""
    step = max(1, _BLOCK // (6 * t + 2 * k + 16))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _unary(rctx, name, x):
    """``name(x)`` with the registered element-wise operator's kernel on this device."""
    op = get_op(name)
    out = rctx.xp.empty(x.shape, x.dtype)
    op.compute[rctx.kernels](rctx, [x], [out], op.default_attrs)
    return out


class _Block:
    """One block of samples, its columns transposed so that a step's values are contiguous:
    ``longest`` (L) the most points a sample of the block counts, ``active`` (L, B) whether
    each point counts, ``flat`` (L, B) the position of (sample, its point's mark) in a
    flattened (B, K) array (mark 0 where the point does not count). The marks are checked
    to lie in [0, K) where they count: never an out-of-range read."""

    def __init__(self, op, xp, rows, steps, marks, k):
        self.rows = rows
        self.size = rows.stop - rows.start
        host = steps[rows]
        self.longest = int(host.max()) if self.size else 0
        self.active = xp.arange(self.longest, "int64")[:, None] < xp.from_host(host)[None, :]
        c = xp.ascontiguousarray(marks[rows, :self.longest].T).astype("int64") * self.active
        bad = (c < 0) | (c >= k)
        if bool(bad.any()):
            j, i = divmod(int(xp.to_host(bad.reshape(-1)).argmax()), self.size)
            raise op_error(op, f"marks must lie in [0, {k}) (K, the columns of lda/state) "
                               f"within valid_length; marks[{rows.start + i}, {j}] is "
                               f"{int(xp.to_host(c[j, i:i + 1])[0])}")
        self.marks = c
        self.flat = c + xp.arange(self.size, "int64")[None, :] * k

    def columns(self, xp, x):
        """x[rows, :L] transposed to (L, B) in float64 (read before anything is written)."""
        return xp.ascontiguousarray(x[self.rows, :self.longest].T, dtype=_WORK)


# ---- the compiled path (host arrays): mxlite/_core/hawkes.pyx ---------------------------------
def _check_marks(op, marks, steps, k, t):
    """Every counted mark in [0, K), checked over the whole batch before anything is
    written; the message names the first bad point as the NumPy path's does (block by block,
    the smallest point index first)."""
    for rows in _row_blocks(marks.shape[0], t, k):
        found = _kernel.first_bad_mark(marks[rows], steps[rows], k)
        if found is not None:
            i, j = found
            raise op_error(op, f"marks must lie in [0, {k}) (K, the columns of lda/state) "
                               f"within valid_length; marks[{rows.start + i}, {j}] is "
                               f"{int(marks[rows.start + i, j])}")


def _hawkes_kernel(rctx, ins, outs):
    """The forward by the compiled recursion, one pass per sample, every array read and
    written in its own dtype (scratch: 2 K doubles a thread)."""
    lda, alpha, beta, state, lags, marks, length, max_time = ins
    n, t = lags.shape
    k = lda.shape[1]
    steps = _steps(rctx, _OP, length, t)
    _check_marks(_OP, marks, steps, k, t)
    xp = rctx.xp
    alpha, beta = (xp.ascontiguousarray(v, dtype=_WORK) for v in (alpha, beta))
    ll, out = (x if x.flags.c_contiguous else xp.empty(x.shape, x.dtype) for x in outs)
    _kernel.loglik(*(xp.ascontiguousarray(x) for x in (lags, marks)), steps,
                   xp.ascontiguousarray(lda), alpha, beta, xp.ascontiguousarray(state),
                   xp.ascontiguousarray(max_time), ll, out,
                   xp.empty((_kernel.max_threads(), 2 * k), _WORK))
    for mine, given in zip((ll, out), outs):
        if mine is not given:
            given[...] = mine


def _on_host(rctx):
    """Whether the compiled kernels run: host (NumPy) arrays; another device's namespace
    takes the vectorised path below."""
    return rctx.kernels == "cpu"


# ---- the forward ----------------------------------------------------------------------------
def _hawkes_compute(rctx, ins, outs, attrs):
    if _on_host(rctx):
        _hawkes_kernel(rctx, ins, outs)
    else:
        _hawkes_numpy(rctx, ins, outs)


def _hawkes_numpy(rctx, ins, outs):
    """The forward vectorised over blocks of samples and looped over the points (any array
    namespace: the GPU's, and the reference of the compiled path's tests)."""
    xp = rctx.xp
    lda, alpha, beta, state, lags, marks, length, max_time = ins
    n, t = lags.shape
    k = lda.shape[1]
    steps = _steps(rctx, _OP, length, t)
    alpha, beta = alpha.astype(_WORK), beta.astype(_WORK)
    for rows in _row_blocks(n, t, k):
        block = _Block(_OP, xp, rows, steps, marks, k)
        rates = lda[rows].astype(_WORK)
        ll, s, last = _points(rctx, block, (rates, alpha, beta, state[rows].astype(_WORK),
                                            lags))
        _compensate(rctx, ll, s, last, (rates, alpha, beta, max_time[rows].astype(_WORK)))
        xp.cast_into(outs[0][rows], ll)
        xp.cast_into(outs[1][rows], s)


def _points(rctx, block, arrays):
    """(log-likelihood (B,) without the compensators after each mark's last point, the
    states (B, K) after those points, their times (B, K)) of one block, point by point. A
    point of mark c at time t adds log(lda_c + alpha_c beta_c s_c e) - lda_c d -
    alpha_c s_c (1 - e), where d = t - (the time of mark c's previous point, or 0) and
    e = exp(-beta_c d); then s_c = 1 + s_c e."""
    xp = rctx.xp
    lda, alpha, beta, s, lags = arrays
    off = ~block.active
    times = block.columns(xp, lags)
    times[off] = 0.0                        # padding is never read, NaN included
    times = times.cumsum(axis=0)
    lda_f, s_f = lda.reshape(-1), s.reshape(-1)
    last = xp.zeros(s.shape, _WORK)
    last_f = last.reshape(-1)
    ll = xp.zeros((block.size,), _WORK)
    for j in range(block.longest):
        f, c, skip = block.flat[j], block.marks[j], off[j]
        rate, b, sc = lda_f.take(f), beta.take(c), s_f.take(f)
        d = times[j] - last_f.take(f)
        decay = _unary(rctx, "exp", -(b * d))
        excite = alpha.take(c) * sc
        lam = rate + b * excite * decay
        lam[skip] = 1.0                     # a point that does not count: log 1 = 0
        gain = _unary(rctx, "log", lam) - rate * d - excite * (1.0 - decay)
        gain[skip] = 0.0                    # not a product with 0: an overflow stays out
        ll += gain
        new = 1.0 + sc * decay
        new[skip] = sc[skip]
        s_f[f] = new
        when = times[j].copy()
        when[skip] = last_f.take(f)[skip]
        last_f[f] = when
    return ll, s, last


def _compensate(rctx, ll, s, last, arrays):
    """Subtract each mark's compensator from its last point (``last``, 0 without one) to
    max_time from ``ll`` and decay the states ``s`` to max_time (both in place)."""
    lda, alpha, beta, max_time = arrays
    d = max_time[:, None] - last
    decay = _unary(rctx, "exp", -(beta[None, :] * d))
    ll -= (lda * d + alpha[None, :] * s * (1.0 - decay)).sum(axis=1)
    s *= decay


# ---- _hawkesll_scan: the per-mark linear recurrence the gradient is made of --------------------
_SCAN_NAMES = ("a", "b", "init", "marks", "valid_length")


def _scan_shape(shapes, attrs):
    _check_ndims(_SCAN, _SCAN_NAMES, shapes, (2, 2, 2, 2, 1))
    n, t = shapes[0]
    k = shapes[2][1]
    if k < 1:
        raise op_error(_SCAN, f"init {tuple(shapes[2])} must have at least one mark (K >= 1)")
    for name, shape, want in zip(_SCAN_NAMES[1:], shapes[1:], ((n, t), (n, k), (n, t), (n,))):
        _check_equal(_SCAN, name, shape, want)
    return [(n, t), (n, k)]


def _scan_type(dtypes, attrs):
    dt = _check_floats(_SCAN, _SCAN_NAMES[:3], dtypes[:3])
    _check_index_types(_SCAN, dtypes[3], dtypes[4])
    return [dt, dt]


def _scan_compute(rctx, ins, outs, attrs):
    if _on_host(rctx):
        _scan_kernel(rctx, ins, outs, attrs.reverse)
    else:
        _scan_numpy(rctx, ins, outs, attrs.reverse)


def _scan_kernel(rctx, ins, outs, reverse):
    """The scan by the compiled recurrence, every array in its own dtype. ``pre`` is written
    directly where it is C-contiguous and is a or b itself or apart from them (the kernel
    reads each point before it writes it), else through a buffer; init is copied first, so
    final may be init."""
    a, b, init, marks, length = ins
    pre, final = outs
    n, t = a.shape
    k = init.shape[1]
    steps = _steps(rctx, _SCAN, length, t)
    _check_marks(_SCAN, marks, steps, k, t)
    xp = rctx.xp
    a, b, marks = (xp.ascontiguousarray(x) for x in (a, b, marks))
    z = xp.empty(init.shape, _WORK)         # a copy: final may be init
    xp.cast_into(z, init)
    direct = pre.flags.c_contiguous and pre.flags.writeable and all(
        _same(pre, x) or not xp.may_share_memory(pre, x) for x in (a, b))
    target = pre if direct else xp.empty(pre.shape, pre.dtype)
    _kernel.scan(a, b, marks, steps, reverse, z, target)
    if not direct:
        pre[...] = target
    rctx.xp.cast_into(final, z)


def _same(x, y):
    """Whether x and y are one array's memory, element for element."""
    return (x.dtype == y.dtype and x.shape == y.shape and x.strides == y.strides
            and x.__array_interface__["data"][0] == y.__array_interface__["data"][0])


def _scan_numpy(rctx, ins, outs, reverse):
    """The scan vectorised over blocks of samples and looped over the points (any array
    namespace: the GPU's, and the reference of the compiled path's tests)."""
    xp = rctx.xp
    a, b, init, marks, length = ins
    pre, final = outs
    n, t = a.shape
    k = init.shape[1]
    steps = _steps(rctx, _SCAN, length, t)
    for rows in _row_blocks(n, t, k):
        block = _Block(_SCAN, xp, rows, steps, marks, k)
        # the block's a, b and init are read before pre and final (which may be a, b or
        # init: out= in place) are written
        a_cols, b_cols = block.columns(xp, a), block.columns(xp, b)
        z = init[rows].astype(_WORK)
        z_f = z.reshape(-1)
        pre_cols = xp.zeros((block.longest, block.size), _WORK)
        order = range(block.longest)
        for j in (reversed(order) if reverse else order):
            f, skip = block.flat[j], ~block.active[j]
            zc = z_f.take(f)
            new = a_cols[j] * zc + b_cols[j]
            new[skip] = zc[skip]
            zc[skip] = 0.0
            pre_cols[j] = zc
            z_f[f] = new
        xp.cast_into(pre[rows, :block.longest], pre_cols.T)
        if block.longest < t:
            pre[rows, block.longest:] = 0
        xp.cast_into(final[rows], z)


def _scan_gradient(F, node, ograds):
    """The adjoint of the recurrence is the same recurrence run the other way in time: with
    (lam, g_init) = scan(a, g_pre, g_final, reverse=not reverse), d a = lam * pre,
    d b = lam, d init = g_init (marks and valid_length have none)."""
    a, _, _, marks, length = node.inputs
    lam, g_init = _scan(F, a, ograds[0], ograds[1], marks, length, not node.attrs.reverse)
    return [lam * node.outputs[0], lam, g_init, None, None]


def _scan(F, a, b, init, marks, length, reverse):
    out = F._internal._hawkesll_scan(a, b, init, marks, length, reverse=reverse)
    return out[0], out[1]


register(OpDef(
    _SCAN, inputs=_SCAN_NAMES,
    params=(Param("reverse", "bool", False, "run from each sample's last counted point back "
                  "to its first"),),
    infer_shape=_scan_shape, infer_type=_scan_type, compute={"cpu": _scan_compute},
    gradient=_scan_gradient, grad_needs=("inputs", "outputs"), num_outputs=2,
    output_names=("pre", "final"), in_place=True,
    doc="""A linear recurrence per mark: the primitive of contrib.hawkesll's gradient.

Each sample ``i`` keeps one value ``z[k]`` per mark, starting at ``init[i, k]``. Visiting the
counted points ``j < valid_length[i]`` in order (from the last to the first with
``reverse=True``), with ``c = marks[i, j]``: ``pre[i, j] = z[c]``, then
``z[c] = a[i, j] * z[c] + b[i, j]``. ``final[i]`` is ``z`` after the last visit; ``pre`` is 0
at the points that do not count. ``marks`` must lie in [0, K) where they count,
``valid_length`` in [0, T]. Its gradient is the same scan run the other way.

>>> one = mx.nd.ones((1, 3))
>>> pre, final = mx.nd._internal._hawkesll_scan(one * 0.5, one, mx.nd.zeros((1, 1)),
...                                             mx.nd.zeros((1, 3), dtype='int32'),
...                                             mx.nd.array([3]))
>>> pre.asnumpy().tolist(), final.asnumpy().tolist()
([[0.0, 1.0, 1.5]], [[1.75]])
"""))


# ---- hawkesll's gradient: a graph of registered operators ----------------------------------------
class _Graph:
    """contrib.hawkesll's forward written with registered operators (``F``): the pieces its
    gradient reads. Per point (N, T): ``mask`` (counted), the marks' ``onehot`` (N, T, K),
    ``mu``, ``alpha``, ``beta`` of the point's mark, the time ``t``, the gap ``d`` since the
    previous point of the mark, ``e = exp(-beta d)``, the state ``u`` after that previous
    point (``state`` before the first), the excitation ``s = e u``, the intensity ``lam``
    (1 where the point does not count). Per mark (N, K): the time ``last`` of its last
    point, the state ``after`` it, ``decay = exp(-beta (max_time - last))``, the returned
    state ``out = decay * after`` and the count ``count``."""

    def __init__(self, F, node):
        n, k = node.input_shapes[0]
        t = node.input_shapes[4][1]
        dt = node.input_dtypes[0]
        lda, alpha, beta, state, lags, marks, length, max_time = node.inputs
        self.F, self.k = F, k
        steps = F.expand_dims(F.arange(start=0, stop=t, dtype=dt, ctx=node.context), axis=0)
        self.mask = F.broadcast_lesser(steps, F.expand_dims(F.cast(length, dtype=dt), axis=1))
        self.onehot = F.broadcast_mul(F.one_hot(F.cast(marks, dtype=dt) * self.mask, depth=k,
                                                dtype=dt), F.expand_dims(self.mask, axis=2))
        self.mu = F.sum(F.broadcast_mul(self.onehot, F.expand_dims(lda, axis=1)), axis=2)
        self.alpha, self.beta = self.per_point(alpha), self.per_point(beta)
        # where, not a product with the mask: padding lags are never read, NaN included
        self.t = F.cumsum(F.where(self.mask, lags, F.zeros_like(lags)), axis=1)
        previous, self.last = _scan(F, F.zeros_like(lags), self.t, F.zeros_like(lda),
                                    marks, length, False)
        self.d = self.t - previous
        self.e = F.exp(-(self.beta * self.d))
        self.u, self.after = _scan(F, self.e, F.ones_like(lags), state, marks, length, False)
        self.s = self.e * self.u
        self.lam = self.mu + self.alpha * self.beta * self.s + (1 - self.mask)
        self.span = F.broadcast_sub(F.expand_dims(max_time, axis=1), self.last)
        self.decay = F.exp(-F.broadcast_mul(F.expand_dims(beta, axis=0), self.span))
        self.out = self.decay * self.after
        self.count = F.sum(self.onehot, axis=1)

    def per_point(self, v):
        """v (K,) at each point's mark (0 where the point does not count)."""
        return self.F.sum(self.F.broadcast_mul(self.onehot, self.F.reshape(
            v, shape=(1, 1, self.k))), axis=2)

    def per_mark(self, v):
        """The adjoint of a gather by mark: v (N, T) summed per sample and mark, (N, K)."""
        return self.F.sum(self.F.broadcast_mul(self.onehot, self.F.expand_dims(v, axis=2)),
                          axis=1)

    def loglik(self, lda, alpha, state, max_time):
        """The log-likelihood (N,): the points' log intensities minus the compensators."""
        F = self.F
        comp = F.broadcast_mul(lda, F.expand_dims(max_time, axis=1)) + F.broadcast_mul(
            F.expand_dims(alpha, axis=0), state + self.count - self.out)
        return F.sum(self.mask * F.log(self.lam), axis=1) - F.sum(comp, axis=1)


def _hawkes_gradient(F, node, ograds):
    """Reverse mode through the forward of :class:`_Graph`, with ``g`` the head gradient of
    the log-likelihood and ``G`` that of the returned state:

    - a point: d lam = g / lam; lam = mu + alpha beta s gives d mu, d alpha, d beta and
      d s = d lam alpha beta; s = e u gives d e = d s u and d u = d s e;
    - the returned state enters the likelihood through the compensator, so with
      H = g alpha + G: d decay = H after, d after = H decay; decay = exp(-beta (max_time -
      last)) gives d beta, d max_time and d last; the compensator's other terms give
      d lda -= g max_time, d alpha -= g (state + count - out), d state -= g alpha,
      d max_time -= g sum(lda);
    - (u, after) = scan(e, 1, state): (lam2, d state) = the reverse scan of (d u, d after),
      d e += lam2 u; e = exp(-beta d) gives d beta -= d e e gap and d gap = -d e e beta;
    - gap = t - previous and (previous, last) = scan(0, t, 0): d t = d gap + the reverse
      scan of (-d gap, d last); t = cumsum(lags): d lags is the reverse cumulative sum.

    Per-point gradients of lda, alpha, beta are summed per mark. marks and valid_length have
    none."""
    p = _Graph(F, node)
    lda, alpha, beta, state, lags, marks, length, max_time = node.inputs
    g = F.expand_dims(ograds[0], axis=1)
    alpha_row, beta_row = F.expand_dims(alpha, axis=0), F.expand_dims(beta, axis=0)
    w = F.broadcast_mul(g, p.mask / p.lam)
    g_s = w * p.alpha * p.beta
    hold = F.broadcast_add(F.broadcast_mul(g, alpha_row), ograds[1])
    g_z = hold * p.after * p.decay                       # d of the exponent -beta * span
    g_last = F.broadcast_mul(g_z, beta_row)
    lam2, g_state = _scan(F, p.e, g_s * p.e, hold * p.decay, marks, length, True)
    g_e = (g_s + lam2) * p.u
    g_x = g_e * p.e                                      # d of the exponent -beta * gap
    g_gap = -(g_x * p.beta)
    lam1, _ = _scan(F, F.zeros_like(lags), -g_gap, g_last, marks, length, True)
    g_t = g_gap + lam1
    g_lags = F.reverse(F.cumsum(F.reverse(g_t, axis=1), axis=1), axis=1) * p.mask
    g_lda = p.per_mark(w) - F.broadcast_mul(g, F.expand_dims(max_time, axis=1))
    g_alpha = F.sum(p.per_mark(w * p.beta * p.s) - F.broadcast_mul(
        g, state + p.count - p.out), axis=0)
    g_beta = F.sum(p.per_mark(w * p.alpha * p.s - g_x * p.d) - g_z * p.span, axis=0)
    g_state = g_state - F.broadcast_mul(g, alpha_row)
    g_max = -F.sum(g_last, axis=1) - ograds[0] * F.sum(lda, axis=1)
    return [g_lda, g_alpha, g_beta, g_state, g_lags, None, None, g_max]


register(OpDef(
    "_contrib_hawkesll", inputs=_NAMES,
    infer_shape=_hawkes_shape, infer_type=_hawkes_type, compute={"cpu": _hawkes_compute},
    gradient=_hawkes_gradient, grad_needs=("inputs",), num_outputs=2,
    output_names=("output", "out_state"),
    doc="""The log-likelihood of a marked (multivariate) Hawkes process with exponential
kernels, one value per sample, and the process state at the end of the window.

Inputs: ``lda`` (N, K) the background intensity of each mark, per sample; ``alpha`` (K,)
the branching ratios; ``beta`` (K,) the decay rates; ``state`` (N, K) the memory
``s_k(0)`` carried from past events; ``lags`` (N, T) the inter-arrival times; ``marks``
(N, T) the mark of each point (integers in [0, K)); ``valid_length`` (N,) how many points
of each row count (MXNet's ``j < valid_length``; in [0, T]); ``max_time`` (N,) the end of
the observed window ``(0, max_time]``. The conditional intensity of mark k is
``lda_k + alpha_k beta_k s_k(t)`` with ``s_k(t) = state_k exp(-beta_k t) + sum over earlier
points of mark k of exp(-beta_k (t - t_j))``; the result is the sum of the log intensities
at the points minus the integral of every intensity over the window, and ``out_state`` is
``s_k(max_time)``, the ``state`` of the next window.

Gradients (any order) for lda, alpha, beta, state, lags and max_time, through both outputs
(MXNet gave lda, alpha and beta only, through the log-likelihood only, and computed in
float precision also for float64).

>>> ll, s = mx.nd.contrib.hawkesll(mx.nd.array([[0.5]]), mx.nd.array([0.2]),
...                                mx.nd.array([1.0]), mx.nd.zeros((1, 1)),
...                                mx.nd.array([[1.0]]), mx.nd.zeros((1, 1), dtype='int32'),
...                                mx.nd.array([1]), mx.nd.array([2.0]))
>>> round(float(ll.asscalar()), 6), round(float(s.asscalar()), 6)   # log .5 - 1 - .2 (1 - e^-1)
(-1.819571, 0.367879)
"""))
