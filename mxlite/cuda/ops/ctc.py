"""GPU compute of CTCLoss (mxlite/ops/ctc.py).

The CPU runs the compiled per-sequence recursions of mxlite/_core/ctc.pyx. On the GPU the
same algorithm is written against the device namespace and the array methods NumPy and CuPy
share (plus the exp, log and log_softmax kernels of the registered operators): the forward
and backward recursions over the extended label (a blank around every label, S = 2L + 1
states) run on probabilities rescaled at every step, in float64, vectorised over the batch
and the states and looped over time only, in blocks of sequences (bounded scratch). Each
step's emissions are scaled by their best state's; a sequence whose label fits but whose
emissions still underflow (log-probability gaps over ~708 nats within a step) is computed
again in log space (float64), so the loss stays finite and exact. The labels and lengths,
small (N, L) and (N,) arrays, are checked on the host first (``_lengths``)."""
from ...ops.ctc import _NEG, _blank, _host_lengths, _lengths, _weights
from ...ops.registry import get_op
from . import attach

_BLOCK = 1 << 22    # scratch elements of one block of sequences (bounded whatever N is)


def _extended(xp, label, ln, blank):
    """The extended labels (N, S): blank, l1, blank, l2, ..., blank; the skip mask (a
    transition s-2 -> s is allowed onto a label that differs from the one two back); the
    masks of the first and the last states."""
    n, L = label.shape
    s = 2 * L + 1
    ext = xp.empty((n, s), "int64")
    ext[:] = blank
    ext[:, 1::2] = label
    skip = xp.zeros((n, s), "bool")
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    pos = xp.arange(s, dtype="int64")[None, :]
    last = (pos == 2 * ln[:, None]) | (pos == 2 * ln[:, None] - 1)
    first = (pos == 0) | ((pos == 1) & (ln[:, None] > 0))
    return ext, skip, first, last


# ---- the compute ------------------------------------------------------------------------------
def _kernels(rctx, *names):
    """``fn(x, out)`` running each registered element-wise op's kernel on this device (the
    op looked up once, not per time step)."""
    def bind(op):
        run = op.compute[rctx.kernels]
        return lambda x, out: run(rctx, [x], [out], op.default_attrs) or out
    return [bind(get_op(name)) for name in names]


def _blocks(n, per_item):
    """Slices of ``n`` sequences, each holding about ``_BLOCK`` scratch elements or one."""
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _ctc_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    data = ins[0]
    t, n, a = data.shape
    label, tn, ln = _lengths(rctx, ins, attrs, data.shape)
    per = t * (2 * a + 4 * label.shape[1] + 4) + 2 * label.shape[1] * a
    for b in _blocks(n, per):
        # the block is read (log_softmax) before its gradient is written: out= may be data
        args = (label[b], tn[b], ln[b], _blank(attrs, a))
        block = xp.ascontiguousarray(data[:, b])
        loss, grad = _block(rctx, block, *args)
        redo = _underflowed(xp.to_host(loss), *args)
        if len(redo):        # a label that fits, whose emissions underflowed: log space
            idx = xp.from_host(redo)
            sub = tuple(v[redo] for v in args[:3]) + args[3:]
            redo_loss, redo_grad = _log_block(     # in float64, as the rescaled path
                rctx, xp.ascontiguousarray(block[:, idx].astype("float64")), *sub)
            loss[idx], grad[:, idx] = redo_loss, redo_grad
        outs[0][b] = loss
        outs[1][:, b] = grad


def _underflowed(loss, label, tn, ln, blank):
    """Host indices of the sequences given an infinite loss whose label fits in their data
    length (a label needs one step per class plus one between equal neighbours)."""
    inside = ((label * 0 + 1).cumsum(axis=1) - 1) < ln[:, None]
    repeats = ((label[:, 1:] == label[:, :-1]) & inside[:, 1:]).sum(axis=1)
    return ((loss == float("inf")) & (ln + repeats <= tn)).nonzero()[0]


def _step(x, skip, forward):
    """x[s] + x[s -/+ 1] + skip[s] x[s -/+ 2]: the three ways into a state (forward) or out
    of it (backward), with the skip transition's 0/1 mask."""
    out = x.copy()
    if forward:
        out[:, 1:] += x[:, :-1]
        out[:, 2:] += x[:, :-2] * skip[:, 2:]
    else:
        out[:, :-1] += x[:, 1:]
        out[:, :-2] += x[:, 2:] * skip[:, :-2]
    return out


def _normalise(x):
    """x / sum(x) per sequence (a zero row stays zero); the sums, 1 for a zero row."""
    total = x.sum(axis=1)
    total += total == 0
    x /= total[:, None]
    return total


def _block(rctx, data, label, tn, ln, blank):
    """(loss (N,), gradient (T, N, A)) of a block of sequences.

    The recursions run on probabilities rescaled at every step (Graves et al. 2006, sec.
    4.1) in float64: alpha over all T steps (read at each sequence's last step, log p the
    log of that sum plus the logs of the scales), beta' (the continuations after a step,
    its emission left out) started at each sequence's last step. The state occupancies are
    alpha * beta' normalised over the states at each step (they sum to one)."""
    xp = rctx.xp
    t, n, a = data.shape
    f64 = "float64"
    ext, skip, first, last = _extended(xp, xp.from_host(label), xp.from_host(ln), blank)
    skip_in = skip.astype(f64)
    skip_out = xp.zeros(skip_in.shape, f64)
    skip_out[:, :-2] = skip_in[:, 2:]            # s -> s + 2 allowed where s + 2 may skip
    lp = _log_softmax(rctx, data)
    rows = xp.arange(n, dtype="int64")
    (exp, log) = _kernels(rctx, "exp", "log")
    prob = xp.ascontiguousarray(lp[:, rows[:, None], ext].astype(f64))   # (T, N, S)
    shift = prob.max(axis=2)                      # each step's best state emits 1: only
    prob -= shift[:, :, None]                     # gaps over ~708 nats underflow to 0
    exp(prob, prob)
    valid = xp.from_host(_arange_host(tn, t)[:, None] < tn[None, :])        # (T, N)
    alpha = xp.empty(prob.shape, f64)
    scales = xp.empty((t, n), f64)
    alpha[0] = prob[0] * first
    scales[0] = _normalise(alpha[0])
    for i in range(1, t):
        alpha[i] = _step(alpha[i - 1], skip_in, True) * prob[i]
        scales[i] = _normalise(alpha[i])
    ends = xp.from_host(tn - 1)
    total = (alpha[ends, rows] * last).sum(axis=1)
    feasible = total > 0
    total += ~feasible
    logp = (log(total, total) + log(scales, scales).cumsum(axis=0)[ends, rows]
            + (shift * valid).sum(axis=0))
    loss = -logp
    loss[~feasible] = float("inf")
    beta = xp.empty(prob.shape, f64)
    beta[t - 1] = last * xp.from_host(tn == t)[:, None]
    _normalise(beta[t - 1])
    for i in range(t - 2, -1, -1):
        beta[i] = _step(beta[i + 1] * prob[i + 1], skip_out, False)
        ending = (tn == i + 1).nonzero()[0]
        if len(ending):                           # these sequences end at step i
            idx = xp.from_host(ending)
            beta[i, idx] = last[idx]
        _normalise(beta[i])
    alpha *= beta                                 # zero after a sequence's end
    total = alpha.sum(axis=2, keepdims=True)
    total += total == 0
    alpha /= total
    alpha *= feasible[None, :, None]
    return loss.astype(data.dtype), _gradient(rctx, lp, alpha.astype(data.dtype),
                                              (ext, valid, feasible))


def _log_softmax(rctx, data):
    op = get_op("log_softmax")
    out = rctx.xp.empty(data.shape, data.dtype)
    op.compute[rctx.kernels](rctx, [data], [out], op.parse_attrs({"axis": -1}))
    return out


def _gradient(rctx, lp, gamma, info):
    """softmax - posteriors (T, N, A): the state occupancies ``gamma`` (T, N, S) gathered
    onto the classes of their labels; zero after a sequence's end and for an infeasible
    label."""
    xp = rctx.xp
    ext, valid, feasible = info
    t, n, a = lp.shape
    (exp,) = _kernels(rctx, "exp")
    onehot = xp.zeros((n, ext.shape[1], a), lp.dtype)
    onehot[xp.arange(n, dtype="int64")[:, None], xp.arange(ext.shape[1], dtype="int64")[None],
           ext] = 1
    post = xp.empty((n, t, a), lp.dtype)
    xp.matmul(xp.ascontiguousarray(gamma.transpose(1, 0, 2)), onehot, post)
    soft = exp(lp, xp.empty(lp.shape, lp.dtype))
    soft *= (valid & feasible[None, :]).astype(lp.dtype)[:, :, None]
    soft -= post.transpose(1, 0, 2)
    return soft


def _arange_host(like, t):
    """0 .. t-1 as a host int64 array (built from ``like``, a host array, without NumPy
    calls: array methods only)."""
    return (like[:1] * 0 + 1).repeat(t).cumsum() - 1


# ---- the log-space fallback -----------------------------------------------------------------
def _kernel(rctx, name, x, **params):
    """``name(x)`` with the registered operator's kernel on this device."""
    op = get_op(name)
    attrs = op.parse_attrs(params) if params else op.default_attrs
    out = rctx.xp.empty(x.shape, x.dtype)
    op.compute[rctx.kernels](rctx, [x], [out], attrs)
    return out


def _where(mask, a, b):
    """``a`` where mask else ``b`` (mask boolean, broadcast), by arithmetic."""
    m = mask.astype(a.dtype)
    return a * m + b * (1 - m)


def _lse3(rctx, a, b, c):
    m = a.copy()
    m[b > m] = b[b > m]
    m[c > m] = c[c > m]
    return m + _kernel(rctx, "log", _kernel(rctx, "exp", a - m) + _kernel(rctx, "exp", b - m)
                       + _kernel(rctx, "exp", c - m))


def _shift(xp, a, k, fill):
    """``a`` moved ``k`` states right (k > 0) or left (k < 0) along axis 1, ``fill`` in."""
    out = xp.empty(a.shape, a.dtype)
    if k > 0:
        out[:, :k] = fill
        out[:, k:] = a[:, :-k]
    else:
        out[:, k:] = fill
        out[:, :k] = a[:, -k:]
    return out




def _log_block(rctx, data, label, tn, ln, blank):
    """(loss (N,), gradient (T, N, A)) of sequences in log space (alpha frozen after each
    sequence's end): the fallback for emissions too small for the rescaled recursions."""
    xp = rctx.xp
    t, n, a = data.shape
    ext, skip, first, last = _extended(xp, xp.from_host(label), xp.from_host(ln), blank)
    tn_d = xp.from_host(tn)
    lp = _kernel(rctx, "log_softmax", data, axis=-1)
    rows = xp.arange(n, dtype="int64")[:, None]
    e = lp[:, rows, ext]                                        # (T, N, S)
    neg = xp.zeros((1,), data.dtype) + _NEG
    alpha = xp.empty(e.shape, data.dtype)
    alpha[0] = _where(first, e[0], neg)
    for i in range(1, t):
        prev = alpha[i - 1]
        two = _where(skip, _shift(xp, prev, 2, _NEG), neg)
        new = _lse3(rctx, prev, _shift(xp, prev, 1, _NEG), two) + e[i]
        alpha[i] = _where((tn_d > i)[:, None], new, prev)      # frozen after the data length
    fin = _where(last, alpha[t - 1], neg)
    top = fin.max(axis=1, keepdims=True)
    logp = (top + _kernel(rctx, "log", _kernel(rctx, "exp", fin - top).sum(
        axis=1, keepdims=True)))[:, 0]
    feasible = logp > _NEG / 2
    loss = -logp
    loss[~feasible] = float("inf")
    grad = _log_gradient(rctx, lp, e, alpha, (ext, skip, last, tn_d), _where(feasible, logp, neg * 0),
                     feasible)
    return loss, grad


def _log_gradient(rctx, lp, e, alpha, masks, logp, feasible):
    """softmax - posteriors (T, N, A): the beta recursion, then the state occupancies
    gamma = exp(alpha + beta - e - log p) gathered onto the classes of their labels."""
    xp = rctx.xp
    ext, skip, last, tn = masks
    t, n, a = lp.shape
    neg = xp.zeros((1,), lp.dtype) + _NEG
    beta = xp.empty(e.shape, lp.dtype)
    skip2 = _shift(xp, skip, -2, False)
    for i in range(t - 1, -1, -1):
        end = (tn == i + 1)[:, None]
        start = _where(last, e[i], neg)
        if i == t - 1:
            beta[i] = _where(end, start, neg)
            continue
        nxt = beta[i + 1]
        two = _where(skip2, _shift(xp, nxt, -2, _NEG), neg)
        rec = _lse3(rctx, nxt, _shift(xp, nxt, -1, _NEG), two) + e[i]
        beta[i] = _where(end, start, _where((tn > i + 1)[:, None], rec, neg))
    gamma = _kernel(rctx, "exp", alpha + beta - e - logp[None, :, None])
    gamma *= feasible.astype(lp.dtype)[None, :, None]
    onehot = xp.zeros((n, ext.shape[1], a), lp.dtype)
    onehot[xp.arange(n, dtype="int64")[:, None], xp.arange(ext.shape[1], dtype="int64")[None],
           ext] = 1
    post = xp.empty((n, t, a), lp.dtype)
    xp.matmul(xp.ascontiguousarray(gamma.transpose(1, 0, 2)), onehot, post)
    valid = (xp.arange(t, dtype="int64")[:, None] < tn[None, :]) & feasible[None, :]
    soft = _kernel(rctx, "exp", lp) * valid.astype(lp.dtype)[:, :, None]
    return soft - post.transpose(1, 0, 2)


# ---- the recursions of the gradient graph, looped over time --------------------------------
def _alpha_compute(rctx, ins, outs, attrs):
    """_ctc_alpha (see its doc): the log-space recursion over the steps, all sequences and
    states at once."""
    xp = rctx.xp
    e, out = ins[0], outs[0]
    n, t, s = e.shape
    skip, first = (m != 0 for m in ins[1:3])
    lengths = _host_lengths(rctx, "_ctc_alpha", ins[3], t)
    neg = xp.zeros((1,), e.dtype) + _NEG
    out[:, 0] = _where(first, e[:, 0], neg)
    for i in range(1, t):
        prev = out[:, i - 1]
        two = _where(skip, _shift(xp, prev, 2, _NEG), neg)
        out[:, i] = _lse3(rctx, prev, _shift(xp, prev, 1, _NEG), two) + e[:, i]
    ended = xp.from_host((_arange_host(lengths, t)[None, :] >= lengths[:, None]))
    out[...] = _where(ended[:, :, None], neg, out)


def _wrec_compute(rctx, ins, outs, attrs):
    """_ctc_wrec (see its doc): the banded linear recursion over the steps, all sequences
    and states at once."""
    out = outs[0]
    g = rctx.xp.ascontiguousarray(ins[3])
    w0, w1, w2 = (_weights(rctx.xp, w, out, attrs.reverse) for w in ins[:3])
    t = g.shape[1]
    order = range(t - 1, -1, -1) if attrs.reverse else range(t)
    done = None
    for i in order:
        row = g[:, i].copy()
        if done is not None:
            j = done if attrs.reverse else i        # the step whose weights link i and done
            row += w0[:, j] * out[:, done]
            if attrs.reverse:
                row[:, :-1] += w1[:, j, 1:] * out[:, done, 1:]
                row[:, :-2] += w2[:, j, 2:] * out[:, done, 2:]
            else:
                row[:, 1:] += w1[:, j, 1:] * out[:, done, :-1]
                row[:, 2:] += w2[:, j, 2:] * out[:, done, :-2]
        out[:, i] = row
        done = i


def _loss_grad_compute(rctx, ins, outs, attrs):
    """_ctc_loss_grad: CTCLoss's compute, its loss dropped."""
    loss = rctx.xp.empty((ins[0].shape[1],), ins[0].dtype)
    _ctc_compute(rctx, ins, [loss, outs[0]], attrs)


attach("CTCLoss", _ctc_compute)
attach("_ctc_loss_grad", _loss_grad_compute)
attach("_ctc_alpha", _alpha_compute)
attach("_ctc_wrec", _wrec_compute)
