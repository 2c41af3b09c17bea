"""Connectionist temporal classification: CTCLoss / ctc_loss.

The loss of a batch of activation sequences ``data`` (T, N, alphabet), softmax applied
inside, against padded label sequences ``label`` (N, L) (Graves et al. 2006). On the CPU the
forward and backward recursions over the extended label (a blank around every label, S =
2L + 1 states) run compiled, one sequence per thread (mxlite/_core/ctc.pyx: alpha and beta
on rescaled probabilities in double precision, and in log space for a sequence whose
emissions underflow them); the GPU runs the same algorithm vectorised over the batch
(mxlite/cuda/ops/ctc.py).

Like MXNet's, the operator has a second, hidden output: the gradient of the loss in the
activations (softmax minus the label posteriors), computed with the loss. The FGradient
scales it by the head gradient. When the backward pass is recorded (``create_graph``) or
built as a graph (``mx.sym``), the gradient is instead the registered op ``_ctc_loss_grad``
(the same kernel, so the same values, bit for bit), whose own FGradient is the Hessian of
the loss times its head gradient written as registered operators: the alpha recursion in
log space as one op, ``_ctc_alpha`` (run forward for alpha and over the reversed steps and
states for beta), whose derivative is the banded linear recursion ``_ctc_wrec``, whose
derivatives are ``_ctc_wrec`` again and products of shifted arrays. So gradients of any
order follow, and the graph does not grow with the sequence length (an earlier graph,
unrolled over time, made mx.sym's backward of 100 steps ~6x the imperative one).

Where MXNet gave a loss of 0 for a label that cannot fit in its sequence (more frames needed
than there are), this gives ``inf`` (``-log 0``) and a zero gradient.
"""
import numpy as np

from ..base import FLOAT_DTYPES, NARROW_FLOATS, op_error
from .._core import ctc as _kernel
from .registry import OpDef, Param, register

_NEG = -1e30        # log(0) as a finite number: exp(_NEG - _NEG) is 1, not NaN
_OP = "CTCLoss"


def _list_inputs(attrs):
    names = ["data", "label"]
    if attrs.use_data_lengths:
        names.append("data_lengths")
    if attrs.use_label_lengths:
        names.append("label_lengths")
    return tuple(names)


def _ctc_shape(shapes, attrs):
    want = len(_list_inputs(attrs))
    if len(shapes) != want:
        raise op_error(_OP, f"expected {want} inputs ({', '.join(_list_inputs(attrs))}), got "
                            f"{len(shapes)}")
    data, label = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 3:
        raise op_error(_OP, f"data must be 3-D (sequence_length, batch_size, alphabet_size), "
                            f"got shape {data}")
    if len(label) != 2 or label[0] != data[1]:
        raise op_error(_OP, f"label must be (batch_size, label_sequence_length) with "
                            f"batch_size {data[1]} of data {data}, got shape {label}")
    if data[2] < 2 or label[1] < 1 or data[0] < 1:
        raise op_error(_OP, f"data {data} needs at least one step and two classes (blank and "
                            f"one label), label {label} at least one position")
    for name, shape in zip(_list_inputs(attrs)[2:], shapes[2:]):
        if tuple(shape) != (data[1],):
            raise op_error(_OP, f"{name} must be a vector of batch_size {data[1]}, got shape "
                                f"{tuple(shape)}")
    return [(data[1],), data]


def _ctc_type(dtypes, attrs):
    dtypes = [np.dtype(d) for d in dtypes]
    if dtypes[0] not in FLOAT_DTYPES or dtypes[0] in NARROW_FLOATS:
        raise op_error(_OP, f"data must be float32 or float64, got {dtypes[0]}")
    for name, dt in zip(_list_inputs(attrs)[1:], dtypes[1:]):
        if dt.kind not in "iuf":
            raise op_error(_OP, f"{name} must hold numbers, got {dt}")
    return [dtypes[0], dtypes[0]]


def _ctc_backward_shape(in_shapes, out_shapes, attrs):
    shapes = list(in_shapes)
    if shapes[0] is None and out_shapes[1] is not None:
        shapes[0] = tuple(out_shapes[1])
    return shapes


# ---- host checks of the labels and lengths (small (N,) and (N, L) arrays) -------------------
def _blank(attrs, alphabet):
    return 0 if attrs.blank_label == "first" else alphabet - 1


def _lengths(rctx, ins, attrs, shape):
    """(label, data lengths, label lengths) as host integer arrays, checked: a bad length or
    label value is a clear error, never an out-of-range read."""
    xp = rctx.xp
    t, n, a = shape
    label = xp.to_host(ins[1]).astype("int64")
    if (xp.to_host(ins[1]) != label).any():
        raise op_error(_OP, "label must hold integers")
    pad = 0 if attrs.blank_label == "first" else -1
    k = 2
    if attrs.use_data_lengths:
        tn = xp.to_host(ins[k]).astype("int64")
        k += 1
        if (tn < 1).any() or (tn > t).any():
            raise op_error(_OP, f"data_lengths must lie in [1, {t}] (sequence_length), got "
                                f"{tn.tolist()}")
    else:
        tn = label[:, 0] * 0 + t
    if attrs.use_label_lengths:
        ln = xp.to_host(ins[k]).astype("int64")
        if (ln < 0).any() or (ln > label.shape[1]).any():
            raise op_error(_OP, f"label_lengths must lie in [0, {label.shape[1]}], got "
                                f"{ln.tolist()}")
    else:
        ispad = label == pad
        ln = ispad.argmax(axis=1) + (1 - ispad.max(axis=1)) * label.shape[1]
    used = label.copy()
    positions = (label * 0 + 1).cumsum(axis=1) - 1
    inside = positions < ln[:, None]
    blank = _blank(attrs, a)
    lo, hi = (1, a - 1) if blank == 0 else (0, a - 2)
    bad = inside & ((label < lo) | (label > hi))
    if bad.any():
        raise op_error(_OP, f"label values must lie in [{lo}, {hi}] (blank_label="
                            f"'{attrs.blank_label}', alphabet_size {a}); got "
                            f"{label[bad].tolist()}")
    used[~inside] = blank
    return used, tn, ln


# ---- the compute --------------------------------------------------------------------------
def _ctc_compute(rctx, ins, outs, attrs):
    """The loss and its gradient by the compiled recursions (mxlite/_core/ctc.pyx), one
    sequence per thread; the data is read before the gradient is written, sequence by
    sequence, so ``out=[loss, data]`` works in place."""
    xp = rctx.xp
    data = xp.ascontiguousarray(ins[0])
    t, n, a = data.shape
    label, tn, ln = _lengths(rctx, ins, attrs, data.shape)
    scratch = xp.empty((_kernel.max_threads(), _kernel.scratch_size(t, a, label.shape[1])),
                       "float64")
    _kernel.ctc_loss(data, label, ln, tn, _blank(attrs, a), outs[0], outs[1], scratch)


# ---- the recursions of the gradient graph: _ctc_alpha and _ctc_wrec ------------------------
def _rec_dtype(name, dtypes, n_inputs):
    dtypes = [np.dtype(d) for d in dtypes]
    if len(dtypes) != n_inputs:
        raise op_error(name, f"expected {n_inputs} inputs, got {len(dtypes)}")
    if dtypes[0] not in FLOAT_DTYPES or dtypes[0] in NARROW_FLOATS:
        raise op_error(name, f"inputs must be float32 or float64, got {dtypes[0]}")
    for dt in dtypes[1:]:
        if dt.kind not in "iuf":
            raise op_error(name, f"inputs must hold numbers, got {dt}")
    return [dtypes[0]]


def _alpha_shape(shapes, attrs):
    if len(shapes) != 4:
        raise op_error("_ctc_alpha", f"expected 4 inputs (data, skip, first, data_lengths), "
                                     f"got {len(shapes)}")
    e, skip, first, lengths = (tuple(s) for s in shapes)
    if len(e) != 3 or skip != (e[0], e[2]) or first != skip or lengths != (e[0],):
        raise op_error("_ctc_alpha", f"data must be (N, T, S), skip and first (N, S), "
                                     f"data_lengths (N,); got {e}, {skip}, {first}, {lengths}")
    return [e]


def _host_lengths(rctx, name, lengths, t):
    """Step counts as a host int64 array, checked: integers in [0, t]."""
    host = rctx.xp.to_host(lengths)
    out = host.astype("int64")
    if (host != out).any() or (out < 0).any() or (out > t).any():
        raise op_error(name, f"data_lengths must be integers in [0, {t}], got {host.tolist()}")
    return out


def _alpha_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    e = xp.ascontiguousarray(ins[0])
    skip, first = (xp.ascontiguousarray(m.astype(e.dtype)) for m in ins[1:3])
    lengths = _host_lengths(rctx, "_ctc_alpha", ins[3], e.shape[1])
    _kernel.log_alpha(e, skip, first, lengths, _NEG, outs[0])


def _shift_axis(F, x, axis, k, fill, size):
    """x moved k places along ``axis`` (of length ``size``): later (k > 0) or earlier,
    ``fill`` coming in."""
    pad = F.slice_axis(F.zeros_like(x), axis=axis, begin=0, end=abs(k)) + fill
    if k > 0:
        return F.concat(pad, F.slice_axis(x, axis=axis, begin=0, end=size - k), dim=axis)
    return F.concat(F.slice_axis(x, axis=axis, begin=-k, end=size), pad, dim=axis)


def _alpha_grad(F, node, ograds):
    """alpha[t, s] = e[t, s] + lse_k alpha[t-1, s-k] (k = 0, 1, 2 where allowed): see
    ``_alpha_vjp``. No gradient in the masks and lengths."""
    e, skip, first, lengths = node.inputs
    return [_alpha_vjp(F, e, node.outputs[0], skip, first, lengths, ograds[0],
                       tuple(node.input_shapes[0]), node.input_dtypes[0], node.context),
            None, None, None]


def _alpha_vjp(F, e, alpha, skip, first, lengths, g, shape, dt, ctx):
    """The VJP in e of alpha = _ctc_alpha(e, skip, first, lengths) with head gradient g:
    d alpha[t, s] / d alpha[t-1, s-k] = exp(alpha[t-1, s-k] - alpha[t, s] + e[t, s]) (the
    softmax weights of the lse, in [0, 1]) and d alpha[t, s] / d e[t, s] = 1 (at t = 0: the
    first states' mask; none from step ``lengths`` on), so the VJP is the transposed linear
    recursion over those weights, ``_ctc_wrec(..., reverse=True)`` (itself differentiable,
    and so is the weights' dependence on alpha and e)."""
    n, t, s = shape
    steps = F.reshape(F.arange(start=0, stop=t, dtype=dt, ctx=ctx), shape=(1, t, 1))
    valid = F.broadcast_lesser(steps, F.reshape(F.cast(lengths, dtype=dt), shape=(n, 1, 1)))
    later = F._internal._greater_scalar(steps, scalar=0)               # t >= 1
    prev = _shift_axis(F, alpha, 1, 1, _NEG, t)                        # alpha[t-1]
    into = alpha - e                                                   # lse of the ways in
    gate = F.broadcast_mul(valid, later)
    skip_gate = F.broadcast_mul(gate, F.reshape(F.cast(skip, dtype=dt), shape=(n, 1, s)))

    def weight(back, mask):
        # exp(back - into) where mask, else 0: the exponent is masked first (at step
        # lengths, alpha is log 0 and back is not: exp would overflow)
        return F.exp(_graph_mix(mask, back - into, _NEG))

    w0 = weight(prev, gate)
    w1 = weight(_shift_axis(F, prev, 2, 1, _NEG, s), gate)
    w2 = weight(_shift_axis(F, prev, 2, 2, _NEG, s), skip_gate)
    lam = F._internal._ctc_wrec(w0, w1, w2, F.broadcast_mul(g, valid), reverse=True)
    at0 = F.broadcast_mul(1 - later, F.reshape(F.cast(first, dtype=dt), shape=(n, 1, s)))
    return F.broadcast_mul(lam, F.broadcast_mul(valid, F.broadcast_add(later, at0)))


def _wrec_shape(shapes, attrs):
    shapes = [tuple(s) for s in shapes]
    if len(shapes) != 4 or len(shapes[0]) != 3 or any(s != shapes[0] for s in shapes):
        raise op_error("_ctc_wrec", f"w0, w1, w2 and data must be four (N, T, S) arrays of "
                                    f"one shape, got {shapes}")
    return [shapes[0]]


def _wrec_type(dtypes, attrs):
    out = _rec_dtype("_ctc_wrec", dtypes, 4)
    if len({np.dtype(d) for d in dtypes}) != 1:
        raise op_error("_ctc_wrec", f"w0, w1, w2 and data must have one dtype, got "
                                    f"{[str(np.dtype(d)) for d in dtypes]}")
    return out


def _wrec_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    g = xp.ascontiguousarray(ins[3])
    w0, w1, w2 = (_weights(xp, w, outs[0], attrs.reverse) for w in ins[:3])
    _kernel.wrec(w0, w1, w2, g, attrs.reverse, outs[0])


def _weights(xp, w, out, reverse):
    """w as a contiguous array; a copy when the reverse recursion writes over it (it reads
    the weights of the step after the one it writes)."""
    if reverse and xp.may_share_memory(w, out):
        return w.copy()
    return xp.ascontiguousarray(w)


def _wrec_grad(F, node, ograds):
    """z = (I - M)^-1 g with M the banded weights (strictly earlier steps; later ones when
    reverse), so g's gradient is lam = (I - M)^-T zbar, the recursion in the other
    direction, and w_k's is lam times z one step and k states back (forward) or
    lam one step and k states back times z (reverse)."""
    w0, w1, w2, g = node.inputs
    (z,), (zbar,) = node.outputs, ograds
    _, t, s = tuple(node.input_shapes[3])
    rev = node.attrs.reverse
    lam = F._internal._ctc_wrec(w0, w1, w2, zbar, reverse=not rev)
    lead, trail = (z, lam) if not rev else (lam, z)      # lead: the factor one step back
    back = _shift_axis(F, lead, 1, 1, 0.0, t)
    grads = [trail * back, trail * _shift_axis(F, back, 2, 1, 0.0, s),
             trail * _shift_axis(F, back, 2, 2, 0.0, s)]
    return grads + [lam]


register(OpDef(
    "_ctc_alpha", inputs=("data", "skip", "first", "data_lengths"),
    infer_shape=_alpha_shape, infer_type=lambda d, a: _rec_dtype("_ctc_alpha", d, 4),
    compute={"cpu": _alpha_compute}, gradient=_alpha_grad, grad_needs=("inputs", "outputs"),
    in_place=True,      # out[t, s] reads data[t, s] and out[t - 1] only: out= may be data
    doc="""CTCLoss's alpha recursion in log space, one sequence per row (internal: a node of
CTCLoss's gradient graph). ``data`` (N, T, S) holds log emissions of the S states,
``skip`` (N, S) 1 where a state may be entered from two states back, ``first`` (N, S) 1 for
the states a path may start in, ``data_lengths`` (N,) each sequence's steps. out[n, 0, s] =
data[n, 0, s] where first, out[n, t, s] = data[n, t, s] + log(exp out[n, t-1, s] +
exp out[n, t-1, s-1] + skip exp out[n, t-1, s-2]); -1e30 (log 0, finite) elsewhere and
from step data_lengths on. Differentiable in ``data`` to any order.

>>> e = mx.nd.zeros((1, 2, 3), dtype="float64")
>>> mx.nd._internal._ctc_alpha(e, mx.nd.array([[0, 0, 0]]), mx.nd.array([[1, 1, 0]]),
...                            mx.nd.array([2]))[0, 1].asnumpy().round(4).tolist()
[0.0, 0.6931, 0.0]
"""))

register(OpDef(
    "_ctc_wrec", inputs=("w0", "w1", "w2", "data"),
    params=(Param("reverse", "bool", False, "run from the last step back (the transposed "
                  "recursion)"),),
    infer_shape=_wrec_shape, infer_type=_wrec_type,
    compute={"cpu": _wrec_compute}, gradient=_wrec_grad, grad_needs=("inputs", "outputs"),
    in_place=True,      # out[t, s] reads data[t, s] and the finished neighbouring step
    doc="""A banded linear recursion over (N, T, S) arrays (internal: the derivative of
``_ctc_alpha``). Forward: out[t, s] = data[t, s] + w0[t, s] out[t-1, s] + w1[t, s]
out[t-1, s-1] + w2[t, s] out[t-1, s-2]; with ``reverse`` its transpose, out[t, s] =
data[t, s] + w0[t+1, s] out[t+1, s] + w1[t+1, s+1] out[t+1, s+1] + w2[t+1, s+2]
out[t+1, s+2]; terms off the grid left out. Linear in data, its gradients are the
recursion in the other direction and products of shifted arrays: differentiable to any
order.

>>> w = mx.nd.ones((1, 3, 1))
>>> mx.nd._internal._ctc_wrec(w, w * 0, w * 0, w).asnumpy().ravel().tolist()
[1.0, 2.0, 3.0]
"""))


# ---- the gradient as a graph of registered operators ----------------------------------------
def _imperative_first_order(F):
    """True when the backward runs now and is not recorded: the hidden gradient output
    (computed with the loss) is the answer, and no higher order will be asked of it."""
    from .. import ndarray      # ops/ is below ndarray/: looked up at run time
    from ..ndarray.ndarray import tape_state
    return F is ndarray and not tape_state.recording


def _graph_mix(m, a, b):
    return m * a + (1 - m) * b


def _graph_setup(F, node):
    """Extended labels, masks (0/1 in data's dtype) and lengths as graph nodes."""
    attrs, (t, n, a) = node.attrs, tuple(node.input_shapes[0])
    L = tuple(node.input_shapes[1])[1]
    s = 2 * L + 1
    dt = node.input_dtypes[0]
    names = _list_inputs(attrs)
    inputs = dict(zip(names, node.inputs))
    lab = F.cast(inputs["label"], dtype=dt)
    blank = _blank(attrs, a)
    pad = 0 if attrs.blank_label == "first" else -1
    if "label_lengths" in inputs:
        ln = F.cast(inputs["label_lengths"], dtype=dt)
    else:
        ispad = F._internal._equal_scalar(lab, scalar=pad)
        ln = F.cast(F.argmax(ispad, axis=1), dtype=dt) + (1 - F.max(ispad, axis=1)) * L
    if blank != 0:
        lab = lab + F._internal._lesser_scalar(lab, scalar=0) * a   # padding -1 -> blank
    bl = F.zeros_like(lab) + blank
    ext = F.concat(F.reshape(F.stack(bl, lab, axis=2), shape=(n, 2 * L)),
                   F.slice_axis(bl, axis=1, begin=0, end=1), dim=1)
    e2, e0 = F.slice_axis(ext, axis=1, begin=2, end=s), F.slice_axis(ext, axis=1, begin=0,
                                                                     end=s - 2)
    skip = F.broadcast_not_equal(e2, e0) * F._internal._not_equal_scalar(e2, scalar=blank)
    skip = F.concat(F.slice_axis(F.zeros_like(ext), axis=1, begin=0, end=2), skip, dim=1)
    pos = F.reshape(F.arange(start=0, stop=s, dtype=dt, ctx=node.context), shape=(1, s))
    ln2 = F.reshape(ln, shape=(n, 1)) * 2
    last = F.broadcast_equal(pos, ln2) + F.broadcast_equal(pos, ln2 - 1)
    first = F.broadcast_equal(pos, F.zeros_like(ln2)) + F.broadcast_equal(
        pos, F.ones_like(ln2)) * F._internal._greater_scalar(ln2, scalar=0)
    onehot = F.one_hot(ext, depth=a, dtype=dt)                    # (N, S, A)
    tn = F.cast(inputs["data_lengths"], dtype=dt) if "data_lengths" in inputs else None
    return ext, skip, first, last, onehot, tn


def _graph_reverse(F, x, lengths):
    """x (N, T, S) with each sequence's first ``lengths`` steps and its states in reverse
    order (the steps from ``lengths`` on stay)."""
    steps = F.SequenceReverse(F.transpose(x, axes=(1, 0, 2)), lengths, use_sequence_length=True)
    return F.transpose(F.reverse(steps, axis=2), axes=(1, 0, 2))


def _ctc_hvp(F, node, ograds):
    """The gradient of _ctc_loss_grad: d <V, G> / d data for G = d loss / d data and the
    head gradient V (the Hessian of the loss times V), as registered operators.

    With lp = log_softmax(data), e the log emissions of the states (lp gathered onto the
    extended labels), alpha = _ctc_alpha(e), beta the same recursion over the reversed steps
    and states (R: an involution, so its own transpose), log p the log-sum of the final
    states of alpha at the last step, and the occupancies gamma = exp(alpha + beta - e -
    log p), G = softmax (rows in the data length) - gamma gathered onto the classes. With
    U = V gathered onto the states and Gam = U gamma:
    d <U, gamma> / d e = A'(Gam - sum(Gam) d log p / d alpha) + R A_r'(R Gam) - Gam, where
    A' is alpha's VJP (``_alpha_vjp``) and d log p / d alpha = exp(alpha - log p) at the
    final states of the last step; then lp's gradient is V softmax - the states' gradient
    scattered onto the classes, and data's the log_softmax VJP of that."""
    (t, n, a), s = tuple(node.input_shapes[0]), 2 * tuple(node.input_shapes[1])[1] + 1
    dt, ctx = node.input_dtypes[0], node.context
    ext, skip, first, last, onehot, tn = _graph_setup(F, node)
    if tn is None:
        tn = F.sum(F.zeros_like(first), axis=1) + t
    lp = F.log_softmax(node.inputs[0], axis=-1)
    soft = F.exp(lp)
    e = F.batch_dot(F.transpose(lp, axes=(1, 0, 2)), onehot, transpose_b=True)   # (N, T, S)
    alpha = F._internal._ctc_alpha(e, skip, first, tn)
    skip_r = F.reverse(_shift_axis(F, skip, 1, -2, 0.0, s), axis=1)   # s -> s + 2, reversed
    last_r = F.reverse(last, axis=1)
    e_r = _graph_reverse(F, e, tn)
    alpha_r = F._internal._ctc_alpha(e_r, skip_r, last_r, tn)
    beta = _graph_reverse(F, alpha_r, tn)
    steps = F.reshape(F.arange(start=0, stop=t, dtype=dt, ctx=ctx), shape=(1, t, 1))
    tn3 = F.reshape(tn, shape=(n, 1, 1))
    end = F.broadcast_equal(steps, tn3 - 1)                 # (N, T, 1): the last step
    fin = _graph_mix(last, F.sum(F.broadcast_mul(alpha, end), axis=1), _NEG)
    top = F.BlockGrad(F.max(fin, axis=1, keepdims=True))
    logp = top + F.log(F.sum(F.exp(F.broadcast_sub(fin, top)), axis=1, keepdims=True))
    feasible = F.reshape(F.BlockGrad(F._internal._greater_scalar(logp, scalar=_NEG / 2)),
                         shape=(n, 1, 1))
    logp = F.broadcast_mul(F.reshape(logp, shape=(n, 1, 1)), feasible)
    gam = F.broadcast_mul(F.exp(F.broadcast_sub(alpha + beta - e, logp)), feasible)
    v = ograds[0]
    big = F.batch_dot(F.transpose(v, axes=(1, 0, 2)), onehot, transpose_b=True) * gam
    at_end = F.broadcast_mul(F.reshape(last, shape=(n, 1, s)), end)
    dlogp = F.exp(_graph_mix(at_end, F.broadcast_sub(alpha, logp), _NEG))   # masked, then exp
    abar = big - F.broadcast_mul(F.sum(big, axis=(1, 2), keepdims=True), dlogp)
    shape = (n, t, s)
    ebar = (_alpha_vjp(F, e, alpha, skip, first, tn, abar, shape, dt, ctx)
            + _graph_reverse(F, _alpha_vjp(F, e_r, alpha_r, skip_r, last_r, tn,
                                           _graph_reverse(F, big, tn), shape, dt, ctx), tn)
            - big)
    valid = F.transpose(F.broadcast_mul(F.broadcast_lesser(steps, tn3), feasible),
                        axes=(1, 0, 2))                     # (T, N, 1)
    lpbar = (F.broadcast_mul(v, valid) * soft
             - F.transpose(F.batch_dot(ebar, onehot), axes=(1, 0, 2)))
    grad = lpbar - F.broadcast_mul(soft, F.sum(lpbar, axis=2, keepdims=True))
    return [grad] + [None] * (len(node.inputs) - 1)


def _ctc_grad(F, node, ograds):
    """d loss / d data, scaled per sequence by the head gradient of the loss (the hidden
    gradient output takes no head gradient: MXNet's rule); no gradient in labels or
    lengths. Run now and not recorded, it is the hidden output (computed with the loss);
    recorded or symbolic, it is ``_ctc_loss_grad`` (the same kernel, so the same values),
    whose own gradient is a graph of registered operators: gradients of any order."""
    g = F.reshape(ograds[0], shape=(1, -1, 1))
    if _imperative_first_order(F):
        grad = F.BlockGrad(node.outputs[1])
    else:
        grad = F._internal._ctc_loss_grad(*node.inputs, **dict(node.attrs))
    return [F.broadcast_mul(grad, g)] + [None] * (len(node.inputs) - 1)


def _loss_grad_compute(rctx, ins, outs, attrs):
    """_ctc_loss_grad: the CTCLoss kernel, its loss dropped."""
    loss = rctx.xp.empty((ins[0].shape[1],), ins[0].dtype)
    _ctc_compute(rctx, ins, [loss, outs[0]], attrs)


_PARAMS = (Param("use_data_lengths", "bool", False,
                 "whether data_lengths gives each sequence's length (else every sequence "
                 "has sequence_length steps)"),
           Param("use_label_lengths", "bool", False,
                 "whether label_lengths gives each label's length (else a label ends at "
                 "its first padding value: 0 with blank_label 'first', -1 with 'last')"),
           Param("blank_label", "str", "first", "the blank's class: 'first' (0) or 'last' "
                 "(alphabet_size - 1)", choices=("first", "last")))


register(OpDef(
    "_ctc_loss_grad", inputs=("data", "label", "data_lengths", "label_lengths"),
    params=_PARAMS, list_inputs=_list_inputs,
    infer_shape=lambda shapes, attrs: _ctc_shape(shapes, attrs)[1:],
    backward_shape=lambda ins, outs, attrs: _ctc_backward_shape(ins, [None] + list(outs),
                                                                attrs),
    infer_type=lambda dtypes, attrs: _ctc_type(dtypes, attrs)[1:],
    compute={"cpu": _loss_grad_compute}, gradient=_ctc_hvp, grad_needs=("inputs",),
    in_place=True,      # each sequence's data is read before its gradient is written
    doc="""The gradient of CTCLoss's loss in its activations, softmax minus the label
posteriors (internal: CTCLoss's gradient when it is recorded or symbolic). The arguments
and parameters are CTCLoss's; the values are the gradient CTCLoss computes with its loss.
Its own gradient (the Hessian of the loss times the head gradient) is a graph of registered
operators, so gradients of any order follow.

>>> x = mx.nd.zeros((2, 1, 3))
>>> g = mx.nd._internal._ctc_loss_grad(x, mx.nd.array([[1]]))
>>> [round(v, 4) for v in g[:, 0].asnumpy().ravel().tolist()]
[0.0, -0.3333, 0.3333, 0.0, -0.3333, 0.3333]
"""))


register(OpDef(
    "CTCLoss", aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    inputs=("data", "label", "data_lengths", "label_lengths"),
    params=_PARAMS,
    list_inputs=_list_inputs, infer_shape=_ctc_shape, backward_shape=_ctc_backward_shape,
    infer_type=_ctc_type, compute={"cpu": _ctc_compute}, gradient=_ctc_grad,
    grad_needs=("inputs", "outputs"), num_outputs=2, num_visible_outputs=1,
    in_place=True,      # each sequence is read before its gradient is written (both devices)
    output_names=("output", "grad"),
    doc="""Connectionist temporal classification loss, one value per sequence.

``data`` (sequence_length, batch_size, alphabet_size) holds activations (the softmax is
applied inside); ``label`` (batch_size, label_sequence_length) the padded label sequences.
With ``blank_label='first'`` class 0 is the blank, labels are 1 .. alphabet_size-1 and 0
pads; with ``'last'`` class alphabet_size-1 is the blank, labels are 0 .. alphabet_size-2
and -1 pads. ``data_lengths`` / ``label_lengths`` (with ``use_data_lengths`` /
``use_label_lengths``) give each sequence's lengths. A label that cannot fit in its
sequence gives ``inf`` and a zero gradient (MXNet gave 0). The gradient is differentiable
again to any order.

>>> x = mx.nd.zeros((2, 1, 3))                   # two steps, uniform over 3 classes
>>> float(mx.nd.CTCLoss(x, mx.nd.array([[1]])).asscalar())    # paths: 1b, b1, 11
1.098612...
"""))
