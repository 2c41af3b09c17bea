"""contrib.hawkesll and the per-mark recurrence of its gradient (``_hawkesll_scan``): ONNX
Loops over the time axis, every sample of the batch at once, in float64 (mxlite's
recursions run in float64 whatever the inputs' dtype).

Each step reads one column of the (N, T) inputs; a point counts where its index is below
``valid_length`` (mxlite's ``j < valid_length``); a mark's value of the (N, K) state is read
with GatherElements and written back with a Where on the mark's one-hot row. A mark outside
[0, K) at a counted point is a runtime error of GatherElements (mxlite's MXNetError).
"""
import numpy as np

from ..table import translates
from .loop import loop

_F64 = np.dtype(np.float64)


def _c(ctx, value):
    return ctx.const(np.asarray(value, _F64))


def _wide(ctx, node, ins, positions):
    """The inputs at ``positions`` in float64."""
    return [ins[i] if ctx.dtype(node.inputs[i]) == _F64 else ctx.cast(ins[i], _F64)
            for i in positions]


class _Steps:
    """The per-point pieces shared by both loops: the counted-point mask (N, T), the marks
    as int64 (N, T), the marks' positions (1, K)."""

    def __init__(self, ctx, node, marks, length, t, k):
        self.ctx = ctx
        length = ctx.cast(length, _F64)
        steps = ctx.const(np.arange(t, dtype=np.float64).reshape(1, t), base="steps")
        self.mask = ctx.node("Less", [steps, ctx.node("Unsqueeze", [length,
                                                                     ctx.int64s([1])])])
        self.marks = ctx.cast(marks, np.int64)
        self.columns = ctx.const(np.arange(k, dtype=np.int64).reshape(1, k), base="marks")

    def at(self, j):
        """(counted (N, 1), mark (N, 1), one-hot of the counted mark (N, K)) at step
        ``j`` (an int64 (1,) index): the mark is 0 where the point does not count (its
        padding is never read)."""
        ctx = self.ctx
        active = ctx.node("Gather", [self.mask, j], axis=1)
        mark = ctx.node("Where", [active, ctx.node("Gather", [self.marks, j], axis=1),
                                  ctx.const(np.asarray(0, np.int64))])
        hot = ctx.node("And", [ctx.node("Equal", [self.columns, mark]), active])
        return active, mark, hot


def _zeros_like(ctx, x):
    """float64 zeros of ``x``'s shape (not ``x * 0``: NaN or inf in x stays out)."""
    value = ctx.helper.make_tensor("value", ctx.onnx.TensorProto.DOUBLE, [1], [0.0])
    return ctx.node("ConstantOfShape", [ctx.node("Shape", [x])], value=value)


def _column(ctx, x, j):
    return ctx.node("Gather", [x, j], axis=1)


def _write(ctx, node, value, index, out):
    ctx.node("Cast", [value], [out], to=ctx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, index))))


@translates("_contrib_hawkesll", onnx_ops=["Loop", "Cast", "Less", "Unsqueeze", "Where",
                                           "CumSum", "Gather", "GatherElements", "Equal",
                                           "And", "Sub", "Mul", "Add", "Neg", "Exp", "Log",
                                           "Squeeze", "ReduceSum", "ConstantOfShape", "Shape"],
            notes="a Loop over the time axis in float64 (as mxlite's recursion)")
def _hawkesll(ctx, node, ins, outs):
    t = ctx.shape(node.inputs[4])[1]
    k = ctx.shape(node.inputs[0])[1]
    lda, alpha, beta, state, lags, max_time = _wide(ctx, node, ins, (0, 1, 2, 3, 4, 7))
    steps = _Steps(ctx, node, ins[5], ins[6], t, k)
    # each point's time; padding lags are never read (NaN included)
    times = ctx.node("CumSum", [ctx.node("Where", [steps.mask, lags, _c(ctx, 0.0)]),
                                ctx.const(np.asarray(1, np.int64))])
    alpha_row = ctx.node("Unsqueeze", [alpha, ctx.int64s([0])])
    beta_row = ctx.node("Unsqueeze", [beta, ctx.int64s([0])])
    double = ctx.onnx.TensorProto.DOUBLE

    def body(iteration, values):
        ll, s, last = values
        j = ctx.node("Reshape", [iteration, ctx.int64s([1])])
        active, mark, hot = steps.at(j)
        rate = ctx.node("GatherElements", [lda, mark], axis=1)
        b = ctx.node("Gather", [beta, mark])
        sc = ctx.node("GatherElements", [s, mark], axis=1)
        now = _column(ctx, times, j)
        d = ctx.node("Sub", [now, ctx.node("GatherElements", [last, mark], axis=1)])
        decay = ctx.node("Exp", [ctx.node("Neg", [ctx.node("Mul", [b, d])])])
        excite = ctx.node("Mul", [ctx.node("Gather", [alpha, mark]), sc])
        lam = ctx.node("Add", [rate, ctx.node("Mul", [ctx.node("Mul", [b, excite]), decay])])
        lam = ctx.node("Where", [active, lam, _c(ctx, 1.0)])
        gain = ctx.node("Sub", [ctx.node("Sub", [ctx.node("Log", [lam]),
                                                 ctx.node("Mul", [rate, d])]),
                                ctx.node("Mul", [excite, ctx.node("Sub", [_c(ctx, 1.0),
                                                                          decay])])])
        # a Where, not a product with 0: an overflow of a point that does not count stays out
        gain = ctx.node("Where", [active, gain, _c(ctx, 0.0)])
        ll = ctx.node("Add", [ll, ctx.node("Squeeze", [gain, ctx.int64s([1])])])
        s = ctx.node("Where", [hot, ctx.node("Add", [_c(ctx, 1.0), ctx.node("Mul", [
            sc, decay])]), s])
        last = ctx.node("Where", [hot, now, last])
        return None, [ll, s, last], []
    zeros_n, zeros_nk = (_zeros_like(ctx, x) for x in (max_time, state))
    ll, s, last = loop(ctx, [(zeros_n, double), (state, double), (zeros_nk, double)], body,
                       trips=ctx.const(np.asarray(t, np.int64)))
    # the compensators after each mark's last point, and the states decayed to max_time
    span = ctx.node("Sub", [ctx.node("Unsqueeze", [max_time, ctx.int64s([1])]), last])
    decay = ctx.node("Exp", [ctx.node("Neg", [ctx.node("Mul", [beta_row, span])])])
    comp = ctx.node("Add", [ctx.node("Mul", [lda, span]), ctx.node("Mul", [
        ctx.node("Mul", [alpha_row, s]), ctx.node("Sub", [_c(ctx, 1.0), decay])])])
    ll = ctx.node("Sub", [ll, ctx.node("ReduceSum", [comp, ctx.int64s([1])], keepdims=0)])
    _write(ctx, node, ll, 0, outs[0])
    _write(ctx, node, ctx.node("Mul", [s, decay]), 1, outs[1])


@translates("_hawkesll_scan", onnx_ops=["Loop", "Cast", "Less", "Unsqueeze", "Where",
                                        "Gather", "GatherElements", "Equal", "And", "Mul",
                                        "Add", "Sub", "Slice", "Squeeze", "Transpose"],
            notes="a Loop over the time axis in float64 (as mxlite's recurrence)")
def _hawkesll_scan(ctx, node, ins, outs):
    t = ctx.shape(node.inputs[0])[1]
    k = ctx.shape(node.inputs[2])[1]
    a, b, init = _wide(ctx, node, ins, (0, 1, 2))
    steps = _Steps(ctx, node, ins[3], ins[4], t, k)
    double = ctx.onnx.TensorProto.DOUBLE
    reverse = bool(node.attrs.reverse)

    def body(iteration, values):
        (z,) = values
        if reverse:
            iteration = ctx.node("Sub", [ctx.const(np.asarray(t - 1, np.int64)), iteration])
        j = ctx.node("Reshape", [iteration, ctx.int64s([1])])
        active, mark, hot = steps.at(j)
        zc = ctx.node("GatherElements", [z, mark], axis=1)
        new = ctx.node("Add", [ctx.node("Mul", [_column(ctx, a, j), zc]), _column(ctx, b, j)])
        pre = ctx.node("Where", [active, zc, _c(ctx, 0.0)])
        return None, [ctx.node("Where", [hot, new, z])], [pre]
    final, pre = loop(ctx, [(init, double)], body, trips=ctx.const(np.asarray(t, np.int64)),
                      scanned=[double])
    # pre: (T, N, 1), in the order of the visits
    if reverse:
        pre = ctx.node("Slice", [pre, ctx.int64s([-1]), ctx.int64s([np.iinfo(np.int64).min]),
                                 ctx.int64s([0]), ctx.int64s([-1])])
    pre = ctx.node("Transpose", [ctx.node("Squeeze", [pre, ctx.int64s([2])])], perm=[1, 0])
    _write(ctx, node, pre, 0, outs[0])
    _write(ctx, node, final, 1, outs[1])
