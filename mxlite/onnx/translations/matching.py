"""Greedy matching of score matrices: bipartite_matching, and MultiBoxTarget (SSD's
training targets), whose first stage is that matching of anchors to objects.

The matching is an ONNX Loop of min(N, M) steps (or topk): each step takes the best
remaining score of every item (ArgMax/ArgMin: the first in row-major order on ties), matches
its row and column where the score passes the threshold, and takes that row and column out
(set to the worst score); an item whose best fails is done, as mxlite's."""
import numpy as np

from ..table import translates
from .detection import _overlap
from .greedy import columns, filled, loop, param, unary


def greedy_match(ctx, scores, dtype, n, m, thresh, ascend, limit):
    """(rows (B, N), cols (B, M)) int64 of the greedy matching of ``scores`` (B, N * M) of
    ``dtype`` (one ArgMax takes), without NaN: the column matched to each row and the row
    matched to each column, -1 where none; ``thresh`` the bound a score must pass
    (strictly), at most ``limit`` matches."""
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
    state = [scores, filled(ctx, scores, n, -1, np.int64), filled(ctx, scores, m, -1,
                                                                    np.int64),
             filled(ctx, scores, 1, True, np.bool_)]

    def more(step, new):                     # stop once every item is done
        count = ctx.node("ReduceSum", [ctx.cast(new[3], np.int64)], keepdims=0)
        return ctx.node("Greater", [count, ctx.const(np.int64(0))])
    out = loop(ctx, limit, state, [dtype, np.int64, np.int64, np.bool_], body, more)
    return out[1], out[2]


@translates("_contrib_bipartite_matching",
            onnx_ops=["Loop", "Reshape", "IsNaN", "Where", "Cast", "ArgMax", "ArgMin",
                      "GatherElements", "Greater", "Less", "Div", "Mod", "Equal", "And", "Or",
                      "Unsqueeze", "Shape", "Slice", "Concat", "ConstantOfShape", "Identity",
                      "ReduceSum"],
            notes="float16 compares in float32 (exact); a Loop of one step per match")
def _bipartite_matching(ctx, node, ins, outs):
    a = node.attrs
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    n, m = shape[-2:]
    lead = ctx.node("Slice", [ctx.node("Shape", [ins[0]]), ctx.int64s([0]), ctx.int64s([-2])])
    if n == 0 or m == 0:                       # nothing to match: every marker -1
        fill = ctx.onnx.numpy_helper.from_array(np.asarray([-1], dtype), "fill")
        for k, out in ((n, outs[0]), (m, outs[1])):
            ctx.node("ConstantOfShape", [ctx.node("Concat", [lead, ctx.int64s([k])], axis=0)],
                     [out], value=fill)
        return
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    scores = ctx.node("Reshape", [ins[0] if work == dtype else ctx.cast(ins[0], work),
                                  ctx.int64s([-1, n * m])])
    worst = ctx.const(np.asarray(np.inf if a.is_ascend else -np.inf, work))
    scores = ctx.node("Where", [ctx.node("IsNaN", [scores]), worst, scores])   # never match
    # the threshold as mxlite holds it: float32, rounded to the data's dtype
    thresh = ctx.const(np.asarray(dtype.type(np.float32(a.threshold)), work))
    limit = min(n, m) if a.topk <= 0 else min(n, m, a.topk)
    rows, cols = greedy_match(ctx, scores, work, n, m, thresh, a.is_ascend, limit)
    for marks, k, out in ((rows, n, outs[0]), (cols, m, outs[1])):
        size = ctx.node("Concat", [lead, ctx.int64s([k])], axis=0)
        ctx.node("Reshape", [ctx.cast(marks, dtype), size], [out], allowzero=1)


# ---- MultiBoxTarget -----------------------------------------------------------------------
def _iou_matrix(ctx, anchors, labels, dtype):
    """IoU (B, N, M) of the anchors (1, N, 4) with the label boxes (B, M, W) (columns 1..4),
    mxlite's order of operations; 0 where the union is 0."""
    al, at, ar, ab = (ctx.node("Unsqueeze", [c, ctx.int64s([2])])
                      for c in columns(ctx, anchors, 0, 4))              # (1, N, 1)
    gl, gt, gr, gb = (ctx.node("Unsqueeze", [c, ctx.int64s([1])])
                      for c in columns(ctx, labels, 1, 4))               # (B, 1, M)
    zero = ctx.const(np.asarray(0, dtype))
    inter = ctx.node("Mul", [_overlap(ctx, al, ar, gl, gr, zero),
                             _overlap(ctx, at, ab, gt, gb, zero)])
    union = ctx.node("Sub", [ctx.node("Add", [
        ctx.node("Mul", [ctx.node("Sub", [ar, al]), ctx.node("Sub", [ab, at])]),
        ctx.node("Mul", [ctx.node("Sub", [gr, gl]), ctx.node("Sub", [gb, gt])])]), inter])
    empty = ctx.node("Equal", [union, zero])
    iou = ctx.node("Div", [inter, ctx.node("Add", [union, ctx.cast(empty, dtype)])])
    return ctx.node("Mul", [iou, ctx.cast(ctx.node("Not", [empty]), dtype)])


def _encode(ctx, anchors, boxes, variances, dtype):
    """SSD's regression targets (four (B, N) columns) of ``boxes`` from ``anchors``."""
    half = ctx.const(np.asarray(0.5, dtype))

    def centers(c):
        w, h = ctx.node("Sub", [c[2], c[0]]), ctx.node("Sub", [c[3], c[1]])
        return (ctx.node("Mul", [ctx.node("Add", [c[0], c[2]]), half]),
                ctx.node("Mul", [ctx.node("Add", [c[1], c[3]]), half]), w, h)
    ax, ay, aw, ah = centers(anchors)
    gx, gy, gw, gh = centers(boxes)
    v = [param(ctx, x, dtype) for x in variances]
    return [ctx.node("Div", [ctx.node("Div", [ctx.node("Sub", [gx, ax]), aw]), v[0]]),
            ctx.node("Div", [ctx.node("Div", [ctx.node("Sub", [gy, ay]), ah]), v[1]]),
            ctx.node("Div", [unary(ctx, "Log", ctx.node("Div", [gw, aw]), dtype), v[2]]),
            ctx.node("Div", [unary(ctx, "Log", ctx.node("Div", [gh, ah]), dtype), v[3]])]


def _background(ctx, cls, work):
    """softmax(cls, axis=1)[:, 0] (B, N) of the class predictions (B, C, N)."""
    top = ctx.node("ReduceMax", [cls, ctx.int64s([1])], keepdims=1)
    total = ctx.node("ReduceSum", [unary(ctx, "Exp", ctx.node("Sub", [cls, top]), work),
                                   ctx.int64s([1])], keepdims=1)
    first = ctx.node("Slice", [cls, ctx.int64s([0]), ctx.int64s([1]), ctx.int64s([1])])
    prob = ctx.node("Div", [unary(ctx, "Exp", ctx.node("Sub", [first, top]), work), total])
    return ctx.node("Squeeze", [prob, ctx.int64s([1])])


def _hard_negatives(ctx, cls, positive, best, n, attrs, dtype):
    """(B, N) bool: the anchors that are not positive, overlap every object less than
    negative_mining_thresh and give the background the lowest probability (anchor order
    on ties), ``ratio`` x positives of them (at least minimum_negative_samples, at most
    those that are not positive)."""
    count_p = ctx.node("ReduceSum", [ctx.cast(positive, np.int64), ctx.int64s([1])],
                       keepdims=1)                                             # (B, 1)
    product = ctx.node("Mul", [ctx.cast(count_p, np.float32),
                               ctx.const(np.float32(attrs.negative_mining_ratio))])
    anchors = ctx.const(np.int64(n))
    want = ctx.node("Where", [ctx.node("Less", [product, ctx.const(np.float32(n))]),
                              ctx.cast(ctx.node("Min", [product, ctx.const(np.float32(n))]),
                                       np.int64), anchors])
    want = ctx.node("Max", [want, ctx.const(np.int64(attrs.minimum_negative_samples))])
    count = ctx.node("Min", [want, ctx.node("Sub", [anchors, count_p])])
    cand = ctx.node("And", [ctx.node("Not", [positive]), ctx.node("Less", [
        best, param(ctx, attrs.negative_mining_thresh, dtype)])])
    key = ctx.node("Where", [cand, _background(ctx, cls, dtype), ctx.const(np.asarray(np.inf,
                                                                             dtype))])
    order = ctx.node("TopK", [key, ctx.int64s([n])], [ctx.fresh("v"), ctx.fresh("order")],
                     axis=1, largest=0, sorted=1)[1]
    position = ctx.const(np.arange(n, dtype=np.int64)[None, :], base="position")
    rank = ctx.node("ScatterElements", [order, order, ctx.node("Expand", [
        position, ctx.node("Shape", [order])])], axis=1)          # the place of each anchor
    return ctx.node("And", [cand, ctx.node("Less", [rank, count])])


@translates("_contrib_MultiBoxTarget",
            onnx_ops=["Loop", "Cast", "Slice", "Squeeze", "Unsqueeze", "Sub", "Add", "Mul",
                      "Div", "Min", "Max", "Equal", "Not", "And", "Or", "Less", "Greater",
                      "CumSum", "ReduceMax", "ReduceSum", "ArgMax", "IsInf", "IsNaN",
                      "Where", "Reshape", "GatherElements", "GatherND", "Mod", "Exp", "Log",
                      "TopK", "ScatterElements", "Concat", "Shape", "ConstantOfShape",
                      "Expand", "Identity"],
            opset=18, notes="float16 computes in float32, as mxlite; labels are read up to "
                            "the first row of class -1 without checking that the padding "
                            "row is -1 throughout (an error in mxlite)")
def _multibox_target(ctx, node, ins, outs):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    anchor, label, cls = (x if ctx.dtype(e) == work else ctx.cast(x, work)
                          for x, e in zip(ins, node.inputs))
    n = ctx.shape(node.inputs[0])[1]
    m = ctx.shape(node.inputs[1])[1]
    anchor = ctx.node("Reshape", [anchor, ctx.int64s([1, n, 4])])
    # the objects: the labels before the first row of class -1
    pad = ctx.node("Equal", [columns(ctx, label, 0, 1)[0], ctx.const(np.asarray(-1, work))])
    objects = ctx.node("Not", [ctx.node("Greater", [ctx.node("CumSum", [
        ctx.cast(pad, np.int64), ctx.const(np.int64(1))]), ctx.const(np.int64(0))])])
    iou = _iou_matrix(ctx, anchor, label, work)                         # (B, N, M)
    obj = ctx.node("Unsqueeze", [objects, ctx.int64s([1])])              # (B, 1, M)
    minus_inf = ctx.const(np.asarray(-np.inf, work))
    usable = ctx.node("And", [obj, ctx.node("Greater", [iou, ctx.const(np.asarray(-1,
                                                                                  work))])])
    masked = ctx.node("Where", [usable, iou, minus_inf])
    best = ctx.node("ReduceMax", [masked, ctx.int64s([2])], keepdims=0)
    best_col = ctx.node("ArgMax", [masked], axis=2, keepdims=0, select_last_index=0)
    best = ctx.node("Where", [ctx.node("IsInf", [best]), ctx.const(np.asarray(-1, work)),
                              best])
    # stage one: greedily the best (anchor, object) pair above 1e-6 (NaN never wins)
    scores = ctx.node("Where", [ctx.node("Or", [ctx.node("Not", [obj]), ctx.node(
        "IsNaN", [iou])]), minus_inf, iou])
    match, _ = greedy_match(ctx, ctx.node("Reshape", [scores, ctx.int64s([0, n * m])]), work,
                            n, m, param(ctx, 1e-6, work), False, min(n, m))
    positive = ctx.node("Greater", [match, ctx.const(np.int64(-1))])
    if a.overlap_threshold > 0:              # stage two: every anchor whose best passes
        extra = ctx.node("And", [ctx.node("Not", [positive]), ctx.node("Greater", [
            best, param(ctx, a.overlap_threshold, work)])])
        match = ctx.node("Where", [extra, best_col, match])
        positive = ctx.node("Or", [positive, extra])
    has_objects = ctx.node("Cast", [ctx.node("ReduceMax", [
        ctx.cast(objects, np.int64), ctx.int64s([1])], keepdims=1)],
        to=ctx.onnx.TensorProto.BOOL)                                         # (B, 1)
    if a.negative_mining_ratio > 0:
        negative = _hard_negatives(ctx, cls, positive, best, n, a, work)
    else:
        negative = ctx.node("Not", [positive])
    negative = ctx.node("And", [negative, has_objects])
    gt = ctx.node("GatherND", [label, ctx.node("Unsqueeze", [
        ctx.node("Max", [match, ctx.const(np.int64(0))]), ctx.int64s([-1])])], batch_dims=1)
    gt_cols = columns(ctx, gt, 0, 5)
    cls_target = ctx.node("Where", [positive, ctx.node("Add", [
        gt_cols[0], ctx.const(np.asarray(1, work))]), ctx.node("Where", [
            negative, ctx.const(np.asarray(0, work)), param(ctx, a.ignore_label, work)])])
    zero = ctx.const(np.asarray(0, work))
    loc = _encode(ctx, columns(ctx, anchor, 0, 4), gt_cols[1:], a.variances, work)
    loc = ctx.node("Concat", [ctx.node("Unsqueeze", [ctx.node("Where", [positive, c, zero]),
                                                     ctx.int64s([2])]) for c in loc], axis=2)
    mask = ctx.node("Expand", [ctx.node("Unsqueeze", [ctx.cast(positive, work),
                                                      ctx.int64s([2])]),
                               ctx.int64s([1, 1, 4])])
    for value, out in ((loc, outs[0]), (mask, outs[1])):
        flat = ctx.node("Reshape", [value, ctx.int64s([0, 4 * n])])
        ctx.node("Identity" if work == dtype else "Cast", [flat], [out],
                 to=None if work == dtype else ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
    ctx.node("Identity" if work == dtype else "Cast", [cls_target], outs[2:3],
             to=None if work == dtype else ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
