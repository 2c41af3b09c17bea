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
built as a graph (``mx.sym``), it adds ``G - BlockGrad(G)`` (exactly zero) where ``G`` is
the same gradient written as a graph of registered operators (the alpha and beta
recursions in log space, unrolled over time): the values stay the kernel's, bit for bit,
and the derivatives are the graph's, so gradients of any order follow.

Where MXNet gave a loss of 0 for a label that cannot fit in its sequence (more frames needed
than there are), this gives ``inf`` (``-log 0``) and a zero gradient.
"""
import numpy as np

from ..base import FLOAT_DTYPES, op_error
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
    if dtypes[0] not in FLOAT_DTYPES or str(dtypes[0]) == "float16":
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


# ---- the gradient as a graph of registered operators ----------------------------------------
def _imperative_first_order(F):
    """True when the backward runs now and is not recorded: the hidden gradient output
    (computed with the loss) is the answer, and no higher order will be asked of it."""
    from .. import ndarray      # ops/ is below ndarray/: looked up at run time
    from ..ndarray.ndarray import tape_state
    return F is ndarray and not tape_state.recording


def _graph_lse3(F, a, b, c):
    m = F.BlockGrad(F.broadcast_maximum(F.broadcast_maximum(a, b), c))
    return m + F.log(F.exp(a - m) + F.exp(b - m) + F.exp(c - m))


def _graph_shift(F, x, k, s):
    """x (N, S) moved k states right (k > 0) or left, _NEG coming in."""
    fill = F.slice_axis(F.zeros_like(x), axis=1, begin=0, end=abs(k)) + _NEG
    if k > 0:
        return F.concat(fill, F.slice_axis(x, axis=1, begin=0, end=s - k), dim=1)
    return F.concat(F.slice_axis(x, axis=1, begin=-k, end=s), fill, dim=1)


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


def _graph_step_mask(F, tn, n, test, i):
    """(N, 1) 0/1: the sequences for which ``tn test i`` (None: no data lengths)."""
    return F.reshape(getattr(F._internal, test)(tn, scalar=i), shape=(n, 1))


def _ctc_graph_gradient(F, node):
    """softmax - posteriors as registered operators (the recursions unrolled over time)."""
    (t, n, a), s = tuple(node.input_shapes[0]), 2 * tuple(node.input_shapes[1])[1] + 1
    ext, skip, first, last, onehot, tn = _graph_setup(F, node)
    lp = F.log_softmax(node.inputs[0], axis=-1)
    e = F.batch_dot(F.transpose(lp, axes=(1, 0, 2)), onehot, transpose_b=True)   # (N, T, S)
    es = [F.reshape(F.slice_axis(e, axis=1, begin=i, end=i + 1), shape=(n, s))
          for i in range(t)]
    alphas = [_graph_mix(first, es[0], _NEG)]
    for i in range(1, t):
        prev = alphas[-1]
        new = _graph_lse3(F, prev, _graph_shift(F, prev, 1, s),
                          _graph_mix(skip, _graph_shift(F, prev, 2, s), _NEG)) + es[i]
        alphas.append(new if tn is None else
                      _graph_mix(_graph_step_mask(F, tn, n, "_greater_scalar", i), new, prev))
    fin = _graph_mix(last, alphas[-1], _NEG)
    top = F.BlockGrad(F.max(fin, axis=1, keepdims=True))
    logp = top + F.log(F.sum(F.exp(F.broadcast_sub(fin, top)), axis=1, keepdims=True))
    feasible = F.BlockGrad(F._internal._greater_scalar(logp, scalar=_NEG / 2))
    logp = logp * feasible
    skip2 = F.concat(
        F.slice_axis(skip, axis=1, begin=2, end=s),
        F.slice_axis(F.zeros_like(skip), axis=1, begin=0, end=2), dim=1)
    betas = [None] * t
    for i in range(t - 1, -1, -1):
        start = _graph_mix(last, es[i], _NEG)
        end = (_graph_step_mask(F, tn, n, "_equal_scalar", i + 1) if tn is not None
               else float(i == t - 1))
        if i == t - 1:
            betas[i] = _graph_mix(end, start, _NEG)
            continue
        nxt = betas[i + 1]
        rec = _graph_lse3(F, nxt, _graph_shift(F, nxt, -1, s),
                          _graph_mix(skip2, _graph_shift(F, nxt, -2, s), _NEG)) + es[i]
        later = (_graph_step_mask(F, tn, n, "_greater_scalar", i + 1) if tn is not None
                 else 1.0)
        betas[i] = _graph_mix(end, start, _graph_mix(later, rec, _NEG))
    gam = [F.broadcast_mul(F.exp(F.broadcast_sub(al + be - ei, logp)), feasible)
           for al, be, ei in zip(alphas, betas, es)]
    post = F.batch_dot(F.stack(*gam, axis=1), onehot)               # (N, T, A)
    soft = F.exp(lp)
    valid = F.reshape(feasible, shape=(1, n, 1))
    if tn is not None:
        steps = F.reshape(F.arange(start=0, stop=t, dtype=node.input_dtypes[0],
                                    ctx=node.context), shape=(t, 1))
        valid = F.broadcast_mul(F.reshape(F.broadcast_lesser(steps, F.reshape(
            tn, shape=(1, n))), shape=(t, n, 1)), valid)
    return F.broadcast_mul(soft, valid) - F.transpose(post, axes=(1, 0, 2))


def _ctc_grad(F, node, ograds):
    """d loss / d data, scaled per sequence by the head gradient of the loss (the hidden
    gradient output takes no head gradient: MXNet's rule); no gradient in labels or
    lengths. The values are the hidden output's; recorded or symbolic, the graph of
    registered ops carries the derivatives (see the module docstring)."""
    g = F.reshape(ograds[0], shape=(1, -1, 1))
    grad = F.BlockGrad(node.outputs[1])           # the kernel's values, on every path
    if not _imperative_first_order(F):
        # plus zero, whose derivatives are those of the graph: gradients of any order
        graph = _ctc_graph_gradient(F, node)
        grad = grad + (graph - F.BlockGrad(graph))
    return [F.broadcast_mul(grad, g)] + [None] * (len(node.inputs) - 1)


register(OpDef(
    "CTCLoss", aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    inputs=("data", "label", "data_lengths", "label_lengths"),
    params=(Param("use_data_lengths", "bool", False,
                  "whether data_lengths gives each sequence's length (else every sequence "
                  "has sequence_length steps)"),
            Param("use_label_lengths", "bool", False,
                  "whether label_lengths gives each label's length (else a label ends at "
                  "its first padding value: 0 with blank_label 'first', -1 with 'last')"),
            Param("blank_label", "str", "first", "the blank's class: 'first' (0) or 'last' "
                  "(alphabet_size - 1)", choices=("first", "last"))),
    list_inputs=_list_inputs, infer_shape=_ctc_shape, backward_shape=_ctc_backward_shape,
    infer_type=_ctc_type, compute={"cpu": _ctc_compute}, gradient=_ctc_grad,
    grad_needs=("inputs", "outputs"), num_outputs=2, num_visible_outputs=1,
    in_place=True,      # a block of sequences is read (log_softmax) before its grad is written
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
