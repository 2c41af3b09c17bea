"""Region proposals of Faster R-CNN's RPN: Proposal (one image) and MultiProposal (a batch).

The anchors of every cell are constants (they depend on the parameters and the map's static
size only), as are the parts of the decoding that read the anchors alone; the deltas decode
in mxlite's arithmetic (the sub-expressions it evaluates in float64 are cast to float64 and
back). TopK takes the rpn_pre_nms_top_n best (ties by position), greedy NMS is a Loop over
them, and the output repeats the kept boxes cyclically, as mxlite pads."""
import numpy as np

from ...ops.proposal import _anchor_table
from ..table import translates
from .greedy import (batch_offsets, columns, front_first, greedy_suppress, param,
                     sort_desc, take_rows, unary)

F64 = np.dtype(np.float64)


def _anchor_constants(attrs, height, width, work):
    """The anchors of every proposal (proposal order: cell-major, anchor last) as four
    (1, K) ``work`` arrays, the cell row and column of each (1, K) int64, and, for the
    decoding, the anchors' widths, heights and centers (``work``, mxlite's arithmetic)."""
    table = _anchor_table(attrs).astype(work)
    a = table.shape[0]
    hh, ww, aa = np.meshgrid(np.arange(height), np.arange(width), np.arange(a), indexing="ij")
    hh, ww, aa = hh.reshape(1, -1), ww.reshape(1, -1), aa.reshape(1, -1)
    stride = attrs.feature_stride
    dx, dy = (ww * stride).astype(work), (hh * stride).astype(work)
    boxes = [table[aa, 0] + dx, table[aa, 1] + dy, table[aa, 2] + dx, table[aa, 3] + dy]
    one = work.type(1)
    w, h = boxes[2] - boxes[0] + one, boxes[3] - boxes[1] + one
    cx = (boxes[0].astype(F64) + 0.5 * (w.astype(F64) - 1.0)).astype(work)
    cy = (boxes[1].astype(F64) + 0.5 * (h.astype(F64) - 1.0)).astype(work)
    return boxes, (hh, ww), (w, h, cx, cy)


def _decode(ctx, deltas, boxes, sizes, attrs, work):
    """The four (B, K) corners of the proposals before clipping."""
    if attrs.iou_loss:                         # deltas move the corners
        return [ctx.node("Add", [ctx.const(b), d]) for b, d in zip(boxes, deltas)]
    w, h, cx, cy = (ctx.const(x) for x in sizes)
    px = ctx.cast(ctx.node("Add", [ctx.node("Mul", [deltas[0], w]), cx]), F64)
    py = ctx.cast(ctx.node("Add", [ctx.node("Mul", [deltas[1], h]), cy]), F64)
    half, one = ctx.const(np.float64(0.5)), ctx.const(np.float64(1.0))

    def half_extent(d, size):
        wide = ctx.cast(ctx.node("Mul", [unary(ctx, "Exp", d, work), size]), F64)
        return ctx.node("Mul", [half, ctx.node("Sub", [wide, one])])
    hw, hh = half_extent(deltas[2], w), half_extent(deltas[3], h)
    return [ctx.cast(ctx.node(op, [p, e]), work)
            for op, p, e in (("Sub", px, hw), ("Sub", py, hh), ("Add", px, hw),
                             ("Add", py, hh))]


def _nms_hits(ctx, cols, thresh, work):
    """suppresses(at) of the proposals' NMS: overlap (pixel convention, ``+ 1``) with box
    ``at`` above ``thresh``."""
    x1, y1, x2, y2 = cols
    one, zero = ctx.const(np.asarray(1, work)), ctx.const(np.asarray(0, work))
    area = ctx.node("Mul", [ctx.node("Add", [ctx.node("Sub", [x2, x1]), one]),
                            ctx.node("Add", [ctx.node("Sub", [y2, y1]), one])])

    def side(lo, hi, lo_i, hi_i):
        return ctx.node("Max", [ctx.node("Add", [ctx.node("Sub", [
            ctx.node("Min", [hi, hi_i]), ctx.node("Max", [lo, lo_i])]), one]), zero])

    def suppresses(at):
        i = [ctx.node("Gather", [c, at], axis=1) for c in (x1, y1, x2, y2, area)]
        inter = ctx.node("Mul", [side(x1, x2, i[0], i[2]), side(y1, y2, i[1], i[3])])
        union = ctx.node("Sub", [ctx.node("Add", [i[4], area]), inter])
        return ctx.node("Greater", [ctx.node("Div", [inter, union]), thresh])
    return suppresses


@translates("_contrib_Proposal", "_contrib_MultiProposal",
            onnx_ops=["Slice", "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Cast", "Add",
                      "Sub", "Mul", "Div", "Exp", "Min", "Max", "Less", "GreaterOrEqual",
                      "Greater", "Or", "And", "Not", "Where", "IsNaN", "TopK",
                      "GatherElements", "GatherND", "Gather", "Loop", "ReduceSum", "Mod",
                      "Range", "Shape", "Expand", "Concat", "Identity", "ReduceMin",
                      "ReduceMax", "ConstantOfShape"],
            opset=18, notes="float16 computes in float32, as mxlite; a NaN score ranks as "
                            "-inf (last in mxlite); an image larger than the map covers is "
                            "not checked (an error in mxlite)")
def _proposal(ctx, node, ins, outs):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    cls, bbox, info = (x if ctx.dtype(e) == work else ctx.cast(x, work)
                       for x, e in zip(ins, node.inputs))
    _, c2, height, width = ctx.shape(node.inputs[0])
    anchors = c2 // 2
    k = anchors * height * width
    pre = min(a.rpn_pre_nms_top_n, k) if a.rpn_pre_nms_top_n > 0 else k
    post = a.rpn_post_nms_top_n
    boxes, (hh, ww), sizes = _anchor_constants(a, height, width, work)
    # scores and deltas in proposal order: cell (row, column) major, anchor last
    score = ctx.node("Slice", [cls, ctx.int64s([anchors]), ctx.int64s([c2]), ctx.int64s([1])])
    score = ctx.node("Reshape", [ctx.node("Transpose", [score], perm=[0, 2, 3, 1]),
                                 ctx.int64s([0, k])])
    deltas = ctx.node("Reshape", [bbox, ctx.int64s([0, anchors, 4, height, width])])
    deltas = ctx.node("Reshape", [ctx.node("Transpose", [deltas], perm=[0, 3, 4, 1, 2]),
                                  ctx.int64s([0, k, 4])])
    pred = _decode(ctx, columns(ctx, deltas, 0, 4), boxes, sizes, a, work)
    im_h, im_w, scale = columns(ctx, ctx.node("Unsqueeze", [info, ctx.int64s([1])]), 0, 3)
    one, zero = ctx.const(np.asarray(1, work)), ctx.const(np.asarray(0, work))
    limits = (ctx.node("Sub", [im_w, one]), ctx.node("Sub", [im_h, one]))      # (B, 1)
    pred = [ctx.node("Max", [ctx.node("Min", [p, limits[j % 2]]), zero])
            for j, p in enumerate(pred)]
    # cells outside the image (im_info's size over the stride, truncated) score -1
    stride = ctx.const(np.asarray(a.feature_stride, work))
    rows, cols = (ctx.cast(ctx.node("Div", [v, stride]), np.int64) for v in (im_h, im_w))
    out_of_image = ctx.node("Or", [ctx.node("GreaterOrEqual", [ctx.const(hh), rows]),
                                   ctx.node("GreaterOrEqual", [ctx.const(ww), cols])])
    # boxes under rpn_min_size x scale score -1, widened by that size first (mxlite's rule)
    min_size = ctx.node("Mul", [ctx.const(np.asarray(a.rpn_min_size, work)), scale])
    small = ctx.node("Or", [
        ctx.node("Less", [ctx.node("Add", [ctx.node("Sub", [pred[2], pred[0]]), one]),
                          min_size]),
        ctx.node("Less", [ctx.node("Add", [ctx.node("Sub", [pred[3], pred[1]]), one]),
                          min_size])])
    half = ctx.node("Div", [min_size, ctx.const(np.asarray(2, work))])
    pred = [ctx.node("Where", [small, ctx.node("Sub" if j < 2 else "Add", [p, half]), p])
            for j, p in enumerate(pred)]
    minus_one = ctx.const(np.asarray(-1, work))
    score = ctx.node("Where", [ctx.node("Or", [out_of_image, small]), minus_one, score])
    # the pre best (ties by position), greedy NMS, the first min(post, pre) survivors
    key = ctx.node("Where", [ctx.node("IsNaN", [score]), ctx.const(np.asarray(-np.inf, work)),
                             score])
    order = sort_desc(ctx, key, pre)
    boxes4 = ctx.node("Concat", [ctx.node("Unsqueeze", [p, ctx.int64s([2])]) for p in pred],
                      axis=2)
    top_boxes = take_rows(ctx, boxes4, order)                                # (B, pre, 4)
    top_scores = ctx.node("GatherElements", [score, order], axis=1)
    alive = ctx.node("Expand", [ctx.const(np.ones((1, pre), np.bool_)),
                                ctx.node("Shape", [order])])
    limit = min(post, pre)                   # the loop stops once every image kept this many
    alive = greedy_suppress(ctx, alive, pre, _nms_hits(
        ctx, columns(ctx, top_boxes, 0, 4), param(ctx, a.threshold, work), work), limit)
    front = front_first(ctx, alive, pre)
    kept = ctx.node("Min", [ctx.node("ReduceSum", [ctx.cast(alive, np.int64),
                                                   ctx.int64s([1])], keepdims=1),
                            ctx.const(np.int64(limit))])                     # (B, 1)
    # post rows: the kept boxes in order, repeated cyclically (mxlite's padding)
    cycle = ctx.node("Mod", [ctx.const(np.arange(post, dtype=np.int64)[None, :]), kept])
    pick = ctx.node("GatherElements", [front, cycle], axis=1)                 # (B, post)
    picked = take_rows(ctx, top_boxes, pick)                                 # (B, post, 4)
    image = ctx.cast(batch_offsets(ctx, info, 1), work)                      # (B, 1)
    image = ctx.node("Expand", [ctx.node("Unsqueeze", [image, ctx.int64s([2])]),
                                ctx.node("Concat", [ctx.node("Shape", [pick]),
                                                    ctx.int64s([1])], axis=0)])
    result = ctx.node("Reshape", [ctx.node("Concat", [image, picked], axis=2),
                                  ctx.int64s([-1, 5])])
    scores = ctx.node("Reshape", [ctx.node("GatherElements", [top_scores, pick], axis=1),
                                  ctx.int64s([-1, 1])])
    for value, out in ((result, outs[0]), (scores, outs[1])):
        if work == dtype:
            ctx.node("Identity", [value], [out])
        else:
            ctx.node("Cast", [value], [out],
                     to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
