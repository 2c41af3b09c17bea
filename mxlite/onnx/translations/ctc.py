"""Connectionist temporal classification: CTCLoss (the loss and its hidden gradient
output), ``_ctc_loss_grad``, and the recursions of its gradient graph, ``_ctc_alpha`` and
``_ctc_wrec``, each recursion over time an ONNX Scan whose body works on every sequence of
the batch at once. Everything runs in float64 (mxlite's kernels compute in double) and is
cast to the operator's dtype at the end.

CTCLoss: the extended labels (a blank around every label, S = 2 L + 1 states; the label
positions from each label length on read as blanks), the log emissions of the states
gathered from log_softmax(data), the alpha recursion forward and beta backward in log space
(log 0 a finite -1e30, as mxlite's graph form, so differences of unreachable states stay
finite), each frozen from its sequence's data length on. The loss is -log p, ``inf`` where
no path fits the label; the gradient softmax minus the state occupancies summed onto their
classes, zero from the data length on and for a label that does not fit.
"""
import numpy as np

from ..table import translates

NEG = -1e30
F64 = np.float64


def _export():
    # export.py imports this package while it loads: its helpers are looked up at run time
    from .. import export
    return export


def _f64(ctx, value, entry):
    return value if ctx.dtype(entry) == F64 else ctx.cast(value, F64)


def _shift(ctx, x, k, fill, size):
    """The (N, S) array ``x`` moved ``k`` states later (k > 0: out[s] = x[s - k]) or earlier
    (k < 0: out[s] = x[s + |k|]), ``fill`` coming in (a scalar of x's dtype)."""
    pads = [0, k, 0, 0] if k > 0 else [0, 0, 0, -k]
    padded = ctx.node("Pad", [x, ctx.int64s(pads, base="pads"), fill])
    begin = 0 if k > 0 else -k
    return ctx.node("Slice", [padded, ctx.int64s([begin]), ctx.int64s([begin + size]),
                              ctx.int64s([1], base="axes")])


def _lse3(ctx, a, b, c):
    """log(e^a + e^b + e^c) (terms at -1e30 contribute nothing)."""
    m = ctx.node("Max", [a, b, c])
    total = ctx.node("Sum", [ctx.node("Exp", [ctx.node("Sub", [v, m])]) for v in (a, b, c)])
    return ctx.node("Add", [m, ctx.node("Log", [total])])


def _scan(ctx, name, states, sequences, step, reverse=False):
    """An ONNX Scan over axis 0 of ``sequences`` (value names, float64 unless given as
    (name, dtype)) carrying ``states`` (float64); ``step(scope, states, items)`` writes the
    body into ``scope`` and returns (new states, per-step outputs), all float64. Returns the
    final states then the stacked outputs (in the order of the steps)."""
    sub = _export().Subgraph(ctx, name)
    st = [sub.input(f"{name}_state", F64, None) for _ in states]
    items = []
    for seq in sequences:
        dtype = seq[1] if isinstance(seq, tuple) else F64
        items.append(sub.input(f"{name}_item", dtype, None))
    new, per_step = step(sub.scope, st, items)
    for v in list(new) + list(per_step):
        sub.output(v, F64, None)
    n_out = len(states) + len(per_step)
    outs = [ctx.fresh(name) for _ in range(n_out)]
    direction = [1 if reverse else 0]
    ctx.node("Scan", list(states) + [s[0] if isinstance(s, tuple) else s for s in sequences],
             outs, body=sub.proto(), num_scan_inputs=len(sequences),
             scan_input_directions=direction * len(sequences),
             scan_output_directions=direction * len(per_step))
    return outs


# ---- CTCLoss and _ctc_loss_grad -----------------------------------------------------------
def _setup(ctx, node, ins):
    """(log softmax (T, N, A), extended labels (N, S) int64, the skip masks (N, S) bool (a
    state entered from two states back; the state two on entered from it), label lengths
    (N,) int64, valid steps (T, N or 1, 1) bool), all from the node's inputs."""
    a = node.attrs
    alpha = ctx.shape(node.inputs[0])[2]
    width = ctx.shape(node.inputs[1])[1]
    s = 2 * width + 1
    blank = 0 if a.blank_label == "first" else alpha - 1
    names = ["data", "label"] + (["data_lengths"] if a.use_data_lengths else []) + \
        (["label_lengths"] if a.use_label_lengths else [])
    by = dict(zip(names, zip(ins, node.inputs)))
    lp = ctx.node("LogSoftmax", [_f64(ctx, *by["data"])], axis=2)
    lab = ctx.cast(by["label"][0], np.int64)
    if a.use_label_lengths:
        ln = ctx.cast(by["label_lengths"][0], np.int64)
    else:       # a label ends at its first padding value
        pad = ctx.const(np.int64(0 if a.blank_label == "first" else -1), base="pad")
        ispad = ctx.cast(ctx.node("Equal", [lab, pad]), np.int32)
        first = ctx.node("ArgMax", [ispad], axis=1, keepdims=0)
        anyp = ctx.cast(ctx.node("ReduceMax", [ispad, ctx.int64s([1], base="axes")],
                                 keepdims=0), np.int64)
        ln = ctx.node("Add", [first, ctx.node("Mul", [ctx.node(
            "Sub", [ctx.int64s([1], base="one"), anyp]), ctx.int64s([width], base="width")])])
    col = ctx.node("Unsqueeze", [ln, ctx.int64s([1], base="axes")])              # (N, 1)
    inside = ctx.node("Less", [ctx.const(np.arange(width, dtype=np.int64)[None], base="pos"),
                               col])
    blanks = ctx.node("Add", [ctx.node("Mul", [lab, ctx.const(np.int64(0))]),
                              ctx.const(np.int64(blank), base="blank")])
    used = ctx.node("Where", [inside, lab, blanks])
    pairs = ctx.node("Concat", [ctx.node("Unsqueeze", [v, ctx.int64s([2], base="axes")])
                                for v in (blanks, used)], axis=2)
    ext = ctx.node("Concat", [ctx.node("Reshape", [pairs, ctx.int64s([0, 2 * width])]),
                              ctx.node("Slice", [blanks, ctx.int64s([0]), ctx.int64s([1]),
                                                 ctx.int64s([1], base="axes")])], axis=1)
    odd = (np.arange(s + 2) % 2 == 1) & (np.arange(s + 2) >= 3)
    fill = ctx.const(np.int64(-1), base="fill")
    two_back = _shift(ctx, ext, 2, fill, s)
    skip = ctx.node("And", [ctx.node("Not", [ctx.node("Equal", [ext, two_back])]),
                            ctx.const(odd[None, :s], base="odd")])
    # skip two states on: whether state s + 2 may be entered from s (the beta recursion's)
    two_on = _shift(ctx, ext, -2, fill, s)
    skip_on = ctx.node("And", [ctx.node("Not", [ctx.node("Equal", [ext, two_on])]),
                               ctx.const(odd[None, 2:], base="odd")])
    steps = ctx.node("Range", [ctx.const(np.int64(0)), ctx.node("Squeeze", [ctx.node(
        "Slice", [ctx.node("Shape", [ins[0]]), ctx.int64s([0]), ctx.int64s([1])])]),
        ctx.const(np.int64(1))])
    steps = ctx.node("Reshape", [steps, ctx.int64s([-1, 1, 1])])
    if a.use_data_lengths:
        tn = ctx.node("Reshape", [ctx.cast(by["data_lengths"][0], np.int64),
                                  ctx.int64s([1, -1, 1])])
        valid = ctx.node("Less", [steps, tn])
    else:
        valid = ctx.node("GreaterOrEqual", [steps, ctx.const(np.int64(0))])     # every step
    return lp, ext, (skip, skip_on), ln, valid, s


def _emissions(ctx, lp, ext):
    """(T, N, S): each state's log emission, lp gathered at its class."""
    shape = ctx.node("Concat", [ctx.node("Slice", [ctx.node("Shape", [lp]), ctx.int64s([0]),
                                                   ctx.int64s([1])]),
                                ctx.node("Shape", [ext])], axis=0)
    index = ctx.node("Expand", [ctx.node("Unsqueeze", [ext, ctx.int64s([0], base="axes")]),
                                shape])
    return ctx.node("GatherElements", [lp, index], axis=2)


def _log_recursion(ctx, name, init, e, valid, skip, s, reverse):
    """The alpha (forward) or beta (``reverse``: over the steps backwards, the states
    entered from later ones) recursion in log space (``skip``: both masks): x_t = e_t +
    lse(x_prev[s], x_prev[s -/+ 1], skip x_prev[s -/+ 2]); a step where ``valid`` is false
    keeps x_prev. Returns (the final state, every step's x (T, N, S))."""
    neg = ctx.const(np.float64(NEG), base="neg")
    k = -1 if reverse else 1
    skip_in = skip[1] if reverse else skip[0]

    def step(scope, states, items):
        prev, (e_t, ok) = states[0], items
        near = _shift(scope, prev, k, neg, s)
        far = scope.node("Where", [skip_in, _shift(scope, prev, 2 * k, neg, s), neg])
        new = scope.node("Add", [e_t, _lse3(scope, prev, near, far)])
        x = scope.node("Where", [ok, new, prev])
        return [x], [x]
    return _scan(ctx, name, [init], [e, (valid, np.bool_)], step, reverse)


def _ctc(ctx, node, ins):
    """(loss, gradient) in float64 (see the module docstring)."""
    lp, ext, skip, ln, valid, s = _setup(ctx, node, ins)
    alphabet = ctx.shape(node.inputs[0])[2]
    e = _emissions(ctx, lp, ext)
    neg = ctx.const(np.float64(NEG), base="neg")
    zero_ns = ctx.node("Mul", [ctx.cast(ext, F64), ctx.const(F64(0))])          # (N, S)
    start = np.full((1, s), NEG)
    start[0, 0] = 0.0       # a step before the first: the recursion then enters states 0, 1
    init = ctx.node("Add", [zero_ns, ctx.const(start, base="start")])
    final, alpha = _log_recursion(ctx, "ctc_alpha", init, e, valid, skip, s, False)
    two_ln = ctx.node("Mul", [ln, ctx.int64s([2], base="two")])
    end = ctx.node("Unsqueeze", [two_ln, ctx.int64s([1], base="axes")])         # (N, 1)
    before = ctx.node("Max", [ctx.node("Sub", [end, ctx.int64s([1], base="one")]),
                              ctx.int64s([0], base="zero")])
    a_end = ctx.node("GatherElements", [final, end], axis=1)
    a_before = ctx.node("Where", [ctx.node("Greater", [end, ctx.int64s([0], base="zero")]),
                                  ctx.node("GatherElements", [final, before], axis=1), neg])
    logp = _lse3(ctx, a_end, a_before, ctx.node("Add", [ctx.node("Mul", [a_end, ctx.const(
        F64(0))]), neg]))                                                        # (N, 1)
    feasible = ctx.node("Greater", [logp, ctx.const(F64(NEG / 2))])
    loss = ctx.node("Where", [feasible, ctx.node("Neg", [logp]), ctx.const(F64(np.inf))])
    loss = ctx.node("Reshape", [loss, ctx.int64s([-1])])
    # beta: from a virtual step after the last, log 1 at the final blank state only
    pos = ctx.const(np.arange(s, dtype=np.int64)[None], base="states")
    last = ctx.node("Where", [ctx.node("Equal", [pos, end]), ctx.node("Add", [zero_ns, ctx.const(
        F64(0))]), ctx.node("Add", [zero_ns, neg])])
    _, beta = _log_recursion(ctx, "ctc_beta", last, e, valid, skip, s, True)
    keep = ctx.node("And", [valid, ctx.node("Unsqueeze", [feasible, ctx.int64s([0],
                                                                                base="axes")])])
    logp3 = ctx.node("Unsqueeze", [logp, ctx.int64s([0], base="axes")])         # (1, N, 1)
    occupancy = ctx.node("Sub", [ctx.node("Sub", [ctx.node("Add", [alpha, beta]), e]), logp3])
    gamma = ctx.node("Exp", [ctx.node("Where", [keep, occupancy, neg])])         # (T, N, S)
    classes = ctx.const(np.arange(alphabet, dtype=np.int64)[None, None], base="classes")
    onehot = ctx.cast(ctx.node("Equal", [ctx.node("Unsqueeze", [ext, ctx.int64s(
        [2], base="axes")]), classes]), F64)                                     # (N, S, A)
    post = ctx.node("Transpose", [ctx.node("MatMul", [ctx.node(
        "Transpose", [gamma], perm=[1, 0, 2]), onehot])], perm=[1, 0, 2])        # (T, N, A)
    grad = ctx.node("Sub", [ctx.node("Exp", [lp]), post])
    grad = ctx.node("Where", [keep, grad, ctx.const(F64(0))])
    return loss, grad


_OPS = ["LogSoftmax", "Exp", "Log", "Scan", "GatherElements", "MatMul", "Where", "Pad", "Slice",
        "Concat", "Reshape", "Unsqueeze", "Equal", "Less", "Greater", "And", "Not", "ArgMax",
        "ReduceMax", "Range", "Max", "Sum", "Cast", "Transpose", "Expand", "GreaterOrEqual"]
_NOTES = ("alpha and beta in log space as ONNX Scans over time, batched, in float64; "
          "data_lengths, label_lengths, padded labels and both blank_label values")


@translates("CTCLoss", onnx_ops=_OPS, opset=18,
            notes=_NOTES + "; the hidden gradient output too")
def _ctc_loss(ctx, node, ins, outs):
    loss, grad = _ctc(ctx, node, ins)
    dtype = ctx.dtype((node, 0))
    ctx.node("Cast", [loss], [outs[0]], to=ctx.helper.np_dtype_to_tensor_dtype(dtype))
    if len(outs) > 1:
        ctx.node("Cast", [grad], [outs[1]], to=ctx.helper.np_dtype_to_tensor_dtype(dtype))


@translates("_ctc_loss_grad", onnx_ops=_OPS, opset=18,
            notes=_NOTES + "; CTCLoss's gradient output")
def _ctc_loss_grad(ctx, node, ins, outs):
    _, grad = _ctc(ctx, node, ins)
    ctx.node("Cast", [grad], [outs[0]],
             to=ctx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))


# ---- the recursions of the gradient graph -------------------------------------------------
@translates("_ctc_alpha", onnx_ops=["Scan", "Transpose", "Where", "Pad", "Slice", "Max", "Sum",
                                    "Exp", "Log", "Range", "Less", "Equal", "Cast"], opset=18,
            notes="the log-space recursion as an ONNX Scan over the steps, batched, float64")
def _ctc_alpha(ctx, node, ins, outs):
    """out[0] = e[0] where first, out[t] = e[t] + lse(out[t-1] at s, s-1, s-2 where skip);
    -1e30 elsewhere and from step data_lengths on."""
    _, t, s = ctx.shape(node.inputs[0])
    e = ctx.node("Transpose", [_f64(ctx, ins[0], node.inputs[0])], perm=[1, 0, 2])  # (T,N,S)
    nonzero = [ctx.node("Not", [ctx.node("Equal", [x, ctx.cast(ctx.const(F64(0)),
                                                                ctx.dtype(entry))])])
               for x, entry in zip(ins[1:3], node.inputs[1:3])]
    skip, first = nonzero
    steps = ctx.const(np.arange(t, dtype=np.int64).reshape(t, 1, 1), base="steps")
    lengths = ctx.node("Reshape", [ctx.cast(ins[3], np.int64), ctx.int64s([1, -1, 1])])
    valid = ctx.node("Less", [steps, lengths])                                   # (T, N, 1)
    at0 = ctx.const((np.arange(t) == 0).reshape(t, 1, 1), base="first_step")
    neg = ctx.const(F64(NEG), base="neg")
    init = ctx.node("Add", [ctx.node("Mul", [ctx.node("Gather", [e, ctx.const(np.int64(0))],
                                                      axis=0), ctx.const(F64(0))]), neg])

    def step(scope, states, items):
        prev, (e_t, ok, zero) = states[0], items
        near = _shift(scope, prev, 1, neg, s)
        far = scope.node("Where", [skip, _shift(scope, prev, 2, neg, s), neg])
        rec = scope.node("Add", [e_t, _lse3(scope, prev, near, far)])
        begin = scope.node("Where", [first, e_t, neg])
        x = scope.node("Where", [ok, scope.node("Where", [zero, begin, rec]), neg])
        return [x], [x]
    _, every = _scan(ctx, "ctc_log_alpha", [init],
                     [e, (valid, np.bool_), (at0, np.bool_)], step)
    out = ctx.node("Transpose", [every], perm=[1, 0, 2])
    ctx.node("Cast", [out], [outs[0]],
             to=ctx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))


@translates("_ctc_wrec", onnx_ops=["Scan", "Transpose", "Mul", "Add", "Pad", "Slice", "Cast"],
            opset=18, notes="the banded linear recursion as an ONNX Scan over the steps "
                            "(backwards with reverse), batched, float64")
def _ctc_wrec(ctx, node, ins, outs):
    """Forward: out[t] = g[t] + w0[t] out[t-1] + w1[t] out[t-1] at s-1 + w2[t] out[t-1] at
    s-2. Reverse: out[t] = g[t] + (w0 out)[t+1] + (w1 out)[t+1] at s+1 + (w2 out)[t+1] at
    s+2, the three products carried from the step after."""
    s = ctx.shape(node.inputs[3])[2]
    seq = [ctx.node("Transpose", [_f64(ctx, x, entry)], perm=[1, 0, 2])
           for x, entry in zip(ins, node.inputs)]                                # (T, N, S)
    zero = ctx.const(F64(0))
    init = ctx.node("Mul", [ctx.node("Gather", [seq[3], ctx.const(np.int64(0))], axis=0), zero])
    reverse = bool(node.attrs.reverse)

    def step(scope, states, items):
        w0, w1, w2, g = items
        if not reverse:
            prev = states[0]
            x = scope.node("Sum", [g, scope.node("Mul", [w0, prev]),
                                   scope.node("Mul", [w1, _shift(scope, prev, 1, zero, s)]),
                                   scope.node("Mul", [w2, _shift(scope, prev, 2, zero, s)])])
            return [x], [x]
        p0, p1, p2 = states
        x = scope.node("Sum", [g, p0, _shift(scope, p1, -1, zero, s),
                               _shift(scope, p2, -2, zero, s)])
        return [scope.node("Mul", [w, x]) for w in (w0, w1, w2)], [x]
    states = [init] * (3 if reverse else 1)
    result = _scan(ctx, "ctc_wrec", states, seq, step, reverse)
    out = ctx.node("Transpose", [result[-1]], perm=[1, 0, 2])
    ctx.node("Cast", [out], [outs[0]],
             to=ctx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))
