"""Greedy matching of score matrices: bipartite_matching, and MultiBoxTarget (SSD's
training targets), whose first stage is that matching of anchors to objects.

The matching is an ONNX Loop of min(N, M) steps (or topk): each step takes the best
remaining score of every item (ArgMax/ArgMin: the first in row-major order on ties), matches
its row and column where the score passes the threshold, and takes that row and column out
(set to the worst score); an item whose best fails is done, as mxlite's."""
import numpy as np

from ..table import translates
from .detection import _overlap
from .nms import columns, loop, param


def _filled(ctx, like, k, value, dtype):
    """A (B, k) tensor of ``value`` (``dtype``), B the first axis of ``like``."""
    size = ctx.node("Concat", [ctx.node("Slice", [ctx.node("Shape", [like]), ctx.int64s([0]),
                                                  ctx.int64s([1])]), ctx.int64s([k])], axis=0)
    fill = ctx.onnx.numpy_helper.from_array(np.asarray([value], dtype), "fill")
    return ctx.node("ConstantOfShape", [size], value=fill)


def greedy_match(ctx, scores, dtype, n, m, thresh, ascend, limit):
    """(rows (B, N), cols (B, M)) int64 of the greedy matching of ``scores`` (B, N * M) of
    ``dtype`` (one ArgMax takes), without NaN: the column matched to each row and the row matched to
    each column, -1 where none; ``thresh`` the bound a score must pass (strictly), at most
    ``limit`` matches."""
    worst = ctx.const(np.asarray(np.inf if ascend else -np.inf, dtype))
    row_at = ctx.const(np.arange(n, dtype=np.int64)[None, :], base="row")
    col_at = ctx.const(np.arange(m, dtype=np.int64)[None, :], base="col")
    width = ctx.const(np.int64(m))

    def body(step, values):
        work, rows, cols, active = values
        k = ctx.node("ArgMin" if ascend else "ArgMax", [work], axis=1, keepdims=1,
                     select_last_index=0)
        best = ctx.node("GatherElements", [work, k], axis=1)
        # a taken row or column holds the worst score, which never passes
        active = ctx.node("And", [active, ctx.node("Less" if ascend else "Greater",
                                                   [best, thresh])])
        r, c = ctx.node("Div", [k, width]), ctx.node("Mod", [k, width])
        hit_r = ctx.node("And", [ctx.node("Equal", [row_at, r]), active])
        hit_c = ctx.node("And", [ctx.node("Equal", [col_at, c]), active])
        taken = ctx.node("Or", [ctx.node("Unsqueeze", [hit_r, ctx.int64s([2])]),
                                ctx.node("Unsqueeze", [hit_c, ctx.int64s([1])])])
        taken = ctx.node("Reshape", [taken, ctx.int64s([0, n * m])])
        return [ctx.node("Where", [taken, worst, work]), ctx.node("Where", [hit_r, c, rows]),
                ctx.node("Where", [hit_c, r, cols]), active]
    state = [scores, _filled(ctx, scores, n, -1, np.int64), _filled(ctx, scores, m, -1,
                                                                    np.int64),
             _filled(ctx, scores, 1, True, np.bool_)]
    out = loop(ctx, limit, state, [dtype, np.int64, np.int64, np.bool_], body)
    return out[1], out[2]


@translates("_contrib_bipartite_matching",
            onnx_ops=["Loop", "Reshape", "IsNaN", "Where", "Cast", "ArgMax", "ArgMin",
                      "GatherElements", "Greater", "Less", "Div", "Mod", "Equal", "And", "Or",
                      "Unsqueeze", "Shape", "Slice", "Concat", "ConstantOfShape"],
            opset=13, notes="float16 compares in float32 (exact); a Loop of one step per match")
def _bipartite_matching(ctx, node, ins, outs):
    a = node.attrs
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    n, m = shape[-2:]
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    scores = ctx.node("Reshape", [ins[0] if work == dtype else ctx.cast(ins[0], work),
                                  ctx.int64s([-1, n * m])])
    worst = ctx.const(np.asarray(np.inf if a.is_ascend else -np.inf, work))
    scores = ctx.node("Where", [ctx.node("IsNaN", [scores]), worst, scores])   # never match
    # the threshold as mxlite holds it: float32, rounded to the data's dtype
    thresh = ctx.const(np.asarray(dtype.type(np.float32(a.threshold)), work))
    limit = min(n, m) if a.topk <= 0 else min(n, m, a.topk)
    rows, cols = greedy_match(ctx, scores, work, n, m, thresh, a.is_ascend, limit)
    lead = ctx.node("Slice", [ctx.node("Shape", [ins[0]]), ctx.int64s([0]), ctx.int64s([-2])])
    for marks, k, out in ((rows, n, outs[0]), (cols, m, outs[1])):
        size = ctx.node("Concat", [lead, ctx.int64s([k])], axis=0)
        ctx.node("Reshape", [ctx.cast(marks, dtype), size], [out])
