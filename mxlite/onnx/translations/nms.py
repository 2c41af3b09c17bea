"""Non-maximum suppression of boxes: box_nms and MultiBoxDetection.

Both sort the candidate boxes with TopK (ties keep the lower position first, as mxlite's
stable sort) and suppress greedily in an ONNX Loop over the sorted boxes (a static trip
count, the number of boxes): step ``i`` computes the IoU of box ``i`` with every box and,
where box ``i`` is still alive, drops the later boxes it overlaps. The survivors are then
moved to the front with a second TopK over their positions."""
import numpy as np

from ..table import translates
from .detection import _corners_and_area, _overlap
from .greedy import (LOOP_OPS, arithmetic, batch_offsets, columns, compare_dtype,
                     front_first, param, sort_desc, suppress_first, take_rows, unary)


def _nms_iou_hits(ctx, cols, fmt, dtype, thresh, ids):
    """suppresses(at) of box_nms: the IoU of box ``at`` with every box above ``thresh``
    (of the same class id where ``ids`` is given)."""
    (l, t, r, b), area = _corners_and_area(ctx, cols, fmt, dtype)
    zero = ctx.const(np.asarray(0, dtype))
    cmp = compare_dtype(dtype)

    def suppresses(at):
        li, ti, ri, bi, ai = (ctx.node("Gather", [c, at], axis=1) for c in (l, t, r, b, area))
        inter = ctx.node("Mul", [_overlap(ctx, l, r, li, ri, zero),
                                 _overlap(ctx, t, b, ti, bi, zero)])
        iou = ctx.node("Div", [inter, ctx.node("Sub", [ctx.node("Add", [ai, area]), inter])])
        if cmp != dtype:
            iou = ctx.cast(iou, cmp)
        hit = ctx.node("Greater", [iou, thresh])
        if ids is not None:
            hit = ctx.node("And", [hit, ctx.node("Equal", [
                ids, ctx.node("Gather", [ids, at], axis=1)])])
        return hit
    return suppresses


def _convert(ctx, cols, to, dtype):
    """Coordinate columns rewritten into format ``to`` (mxlite's ``_convert_format``)."""
    c0, c1, c2, c3 = cols
    two = ctx.const(np.asarray(2, dtype))
    if to == "center":
        return [ctx.node("Div", [ctx.node("Add", [c0, c2]), two]),
                ctx.node("Div", [ctx.node("Add", [c1, c3]), two]),
                ctx.node("Sub", [c2, c0]), ctx.node("Sub", [c3, c1])]
    hw, hh = ctx.node("Div", [c2, two]), ctx.node("Div", [c3, two])
    return [ctx.node("Sub", [c0, hw]), ctx.node("Sub", [c1, hh]), ctx.node("Add", [c0, hw]),
            ctx.node("Add", [c1, hh])]


def _passthrough(ctx, ins, outs, record_shape):
    """box_nms with topk=0: data unchanged, the record each row's flat index."""
    ctx.node("Identity", [ins[0]], outs[:1])
    rows = ctx.node("ReduceProd", [ctx.node("Slice", [ctx.node("Shape", [ins[0]]),
                                                      ctx.int64s([0]), ctx.int64s([-1])])],
                    keepdims=0)
    index = ctx.node("Range", [ctx.const(np.int64(0)), rows, ctx.const(np.int64(1))])
    ctx.node("Reshape", [index, record_shape], outs[1:2], allowzero=1)


@translates("_contrib_box_nms",
            onnx_ops=LOOP_OPS + ["Shape", "Slice", "Concat", "Reshape", "Squeeze", "Cast",
                                  "Equal", "Where", "TopK", "GatherElements", "GatherND",
                                  "Less", "Add", "Sub", "Mul", "Div", "Min", "Max",
                                  "GreaterOrEqual", "Range", "ReduceProd"],
            opset=18, notes="greedy suppression in a Loop over the boxes; float16 computes "
                            "in float32, rounded to float16 after each operation (mxlite's "
                            "float16 arithmetic)")
def _box_nms(ctx, node, ins, outs):
    a = node.attrs
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    if dtype not in (np.float16, np.float32, np.float64):
        raise ctx.unsupported(node, f"dtype {dtype}")
    n, w = shape[-2:]
    data_shape = ctx.node("Shape", [ins[0]])
    record_shape = ctx.node("Concat", [ctx.node("Slice", [data_shape, ctx.int64s([0]),
                                                          ctx.int64s([-1])]),
                                       ctx.int64s([1])], axis=0)
    if a.topk == 0 or n == 0:            # mxlite: topk 0 passes the boxes through
        _passthrough(ctx, ins, outs, record_shape)
        return
    cmp = compare_dtype(dtype)                   # float16 data compares in float32
    work, actx = arithmetic(ctx, dtype)
    data = ctx.node("Reshape", [ins[0] if work == dtype else ctx.cast(ins[0], work),
                                ctx.int64s([-1, n, w])])

    def column(x, k):
        col = columns(ctx, x, k, 1)[0]
        return col if cmp == work else ctx.cast(col, cmp)
    score = columns(ctx, data, a.score_index, 1)[0]
    valid = ctx.node("Greater", [column(data, a.score_index), param(ctx, a.valid_thresh, cmp)])
    if a.id_index >= 0:
        background = ctx.node("Equal", [column(data, a.id_index),
                                        param(ctx, a.background_id, cmp)])
        valid = ctx.node("And", [valid, ctx.node("Not", [background])])
    key = ctx.node("Where", [valid, score, ctx.const(np.asarray(-np.inf, work))])
    order = sort_desc(ctx, key, n)
    ranked = take_rows(ctx, data, order)
    alive = ctx.node("GatherElements", [valid, order], axis=1)
    if 0 < a.topk < n:
        alive = ctx.node("And", [alive, ctx.node("Less", [
            ctx.const(np.arange(n, dtype=np.int64)[None, :]), ctx.const(np.int64(a.topk))])])
    thresh = param(ctx, a.overlap_thresh, cmp)

    def hits(top):
        ids = None
        if a.id_index >= 0 and not a.force_suppress:     # mxlite truncates the ids
            ids = ctx.cast(columns(ctx, top, a.id_index, 1)[0], np.int64)
        return _nms_iou_hits(actx, columns(ctx, top, a.coord_start, 4), a.in_format, work,
                             thresh, ids)
    alive = suppress_first(ctx, alive, n, a.topk if 0 < a.topk < n else n, ranked, hits)
    front = front_first(ctx, alive, n)
    kept = ctx.node("GatherElements", [alive, front], axis=1)
    rows = take_rows(ctx, ranked, front)
    if a.in_format != a.out_format:
        cs = a.coord_start
        parts = columns(ctx, rows, 0, w)
        parts[cs:cs + 4] = _convert(actx, parts[cs:cs + 4], a.out_format, work)
        rows = ctx.node("Concat", [ctx.node("Unsqueeze", [p, ctx.int64s([2])])
                                   for p in parts], axis=2)
    out = ctx.node("Where", [ctx.node("Unsqueeze", [kept, ctx.int64s([2])]), rows,
                             ctx.const(np.asarray(-1, work))])
    ctx.node("Reshape", [out if work == dtype else ctx.cast(out, dtype), data_shape], outs[:1],
             allowzero=1)
    source = ctx.node("Add", [ctx.node("GatherElements", [order, front], axis=1),
                              batch_offsets(ctx, data, n)])
    record = ctx.node("Where", [kept, source, ctx.const(np.int64(-1))])
    ctx.node("Reshape", [record, record_shape], outs[1:2], allowzero=1)


# ---- MultiBoxDetection --------------------------------------------------------------------
def _best_class(ctx, cls, c, dtype):
    """(score, class id) (B, N) of the best foreground class of each anchor: the first
    strictly above -1 on ties (mxlite's scan), score -1 and id 0 where none is."""
    if c == 1:                                 # no foreground class
        size = ctx.node("Gather", [ctx.node("Shape", [cls]), ctx.int64s([0, 2])], axis=0)
        fill = ctx.helper.make_tensor("fill", ctx.helper.np_dtype_to_tensor_dtype(dtype),
                                      [1], [-1.0])
        zero = ctx.helper.make_tensor("fill", ctx.onnx.TensorProto.INT64, [1], [0])
        return (ctx.node("ConstantOfShape", [size], value=fill),
                ctx.node("ConstantOfShape", [size], value=zero))
    minus_one = ctx.const(np.asarray(-1, dtype))
    fg = ctx.node("Slice", [cls, ctx.int64s([1]), ctx.int64s([c]), ctx.int64s([1])])
    top = ctx.node("ReduceMax", [fg, ctx.int64s([1])], keepdims=0)
    at = ctx.node("ArgMax", [fg], axis=1, keepdims=0, select_last_index=0)
    better = ctx.node("Greater", [top, minus_one])
    return (ctx.node("Where", [better, top, minus_one]),
            ctx.node("Where", [better, ctx.node("Add", [at, ctx.const(np.int64(1))]),
                               ctx.const(np.int64(0))]))


def _decoded(ctx, loc, anchor, n, attrs, dtype, work):
    """The four (B, N) corner columns of the boxes decoded from ``loc`` (B, 4 N) against
    ``anchor`` (1, N, 4), clipped to [0, 1] with ``clip`` (mxlite's order of operations;
    ``dtype`` the data's, ``work`` the one its values are carried in)."""
    two = ctx.const(np.asarray(2, work))
    a0, a1, a2, a3 = columns(ctx, anchor, 0, 4)                          # (1, N)
    aw, ah = ctx.node("Sub", [a2, a0]), ctx.node("Sub", [a3, a1])
    ax = ctx.node("Div", [ctx.node("Add", [a0, a2]), two])
    ay = ctx.node("Div", [ctx.node("Add", [a1, a3]), two])
    p = columns(ctx, ctx.node("Reshape", [loc, ctx.int64s([0, n, 4])]), 0, 4)
    v = [param(ctx, x, dtype, work) for x in attrs.variances]
    ox = ctx.node("Add", [ctx.node("Mul", [ctx.node("Mul", [p[0], v[0]]), aw]), ax])
    oy = ctx.node("Add", [ctx.node("Mul", [ctx.node("Mul", [p[1], v[1]]), ah]), ay])
    ow = ctx.node("Div", [ctx.node("Mul", [unary(ctx, "Exp", ctx.node("Mul", [p[2], v[2]]), work),
                                           aw]), two])
    oh = ctx.node("Div", [ctx.node("Mul", [unary(ctx, "Exp", ctx.node("Mul", [p[3], v[3]]), work),
                                           ah]), two])
    cols = [ctx.node("Sub", [ox, ow]), ctx.node("Sub", [oy, oh]), ctx.node("Add", [ox, ow]),
            ctx.node("Add", [oy, oh])]
    if attrs.clip:
        lo, hi = ctx.const(np.asarray(0, work)), ctx.const(np.asarray(1, work))
        cols = [ctx.node("Clip", [col, lo, hi]) for col in cols]
    return cols


def _detection_hits(ctx, cols, classes, thresh, force, dtype):
    """suppresses(at) of MultiBoxDetection: IoU (0 where the union is not positive) of box
    ``at`` with every box reaching ``thresh``, of the same class unless ``force``."""
    l, t, r, b = cols
    zero = ctx.const(np.asarray(0, dtype))
    area = ctx.node("Mul", [ctx.node("Sub", [r, l]), ctx.node("Sub", [b, t])])

    def suppresses(at):
        li, ti, ri, bi, ai = (ctx.node("Gather", [x, at], axis=1) for x in (l, t, r, b, area))
        inter = ctx.node("Mul", [_overlap(ctx, l, r, li, ri, zero),
                                 _overlap(ctx, t, b, ti, bi, zero)])
        union = ctx.node("Sub", [ctx.node("Add", [ai, area]), inter])
        positive = ctx.node("Greater", [union, zero])
        safe = ctx.node("Add", [union, ctx.cast(ctx.node("Not", [positive]), dtype)])
        iou = ctx.node("Mul", [ctx.node("Div", [inter, safe]), ctx.cast(positive, dtype)])
        hit = ctx.node("GreaterOrEqual", [iou, thresh])
        if not force:
            hit = ctx.node("And", [hit, ctx.node("Equal", [
                classes, ctx.node("Gather", [classes, at], axis=1)])])
        return hit
    return suppresses


def _finish(ctx, value, dtype, out):
    """``value`` (float32 or ``dtype``) written to ``out`` in ``dtype``."""
    if dtype != np.float16:
        return ctx.node("Identity", [value], [out])
    return ctx.node("Cast", [value], [out], to=ctx.helper.np_dtype_to_tensor_dtype(dtype))


def _rows(ctx, cols):
    """(B, N, k) rows of k (B, N) columns."""
    return ctx.node("Concat", [ctx.node("Unsqueeze", [c, ctx.int64s([2])]) for c in cols],
                    axis=2)


@translates("_contrib_MultiBoxDetection",
            onnx_ops=LOOP_OPS + ["Slice", "ReduceMax", "ArgMax", "Where", "Add", "Sub",
                                  "Mul", "Div", "Exp", "Clip", "Less", "Cast", "Reshape",
                                  "Squeeze", "Concat", "TopK", "GatherElements", "GatherND",
                                  "Equal", "GreaterOrEqual", "Min", "Max", "Or", "Shape",
                                  "ConstantOfShape"],
            opset=18, notes="greedy suppression in a Loop over the anchors; float16 "
                            "computes in float32, rounded to float16 after each operation "
                            "(mxlite's float16 arithmetic)")
def _multibox_detection(ctx, node, ins, outs):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    if dtype not in (np.float16, np.float32, np.float64):
        raise ctx.unsupported(node, f"dtype {dtype}")
    _, c, n = ctx.shape(node.inputs[0])
    work, actx = arithmetic(ctx, dtype)
    cls, loc, anchor = (x if work == dtype else ctx.cast(x, work) for x in ins)
    best, ids = _best_class(ctx, cls, c, work)
    valid = ctx.node("And", [ctx.node("Greater", [ids, ctx.const(np.int64(0))]), ctx.node(
        "Not", [ctx.node("Less", [best, param(ctx, a.threshold, dtype, work)])])])
    classes = ctx.node("Sub", [ctx.cast(ctx.node("Where", [valid, ids, ctx.const(
        np.int64(0))]), work), ctx.const(np.asarray(1, work))])
    boxes = _decoded(actx, loc, anchor, n, a, dtype, work)
    rows = _rows(ctx, [classes, best] + boxes)
    minus_one = ctx.const(np.asarray(-1, work))
    front = front_first(ctx, valid, n)                  # the valid rows in anchor order
    present = ctx.node("GatherElements", [valid, front], axis=1)
    packed = take_rows(ctx, rows, front)
    if not 0 < a.nms_threshold <= 1:
        _finish(ctx, ctx.node("Where", [ctx.node("Unsqueeze", [present, ctx.int64s([2])]),
                                        packed, minus_one]), dtype, outs[0])
        return
    order = sort_desc(ctx, ctx.node("Where", [valid, best, ctx.const(
        np.asarray(-np.inf, work))]), n)
    alive = ctx.node("GatherElements", [valid, order], axis=1)
    if 0 < a.nms_topk < n:
        alive = ctx.node("And", [alive, ctx.node("Less", [
            ctx.const(np.arange(n, dtype=np.int64)[None, :]), ctx.const(np.int64(a.nms_topk))])])
    ranked = take_rows(ctx, rows, order)
    first = alive                                       # the rows NMS ranks (nms_topk)
    thresh = param(ctx, a.nms_threshold, dtype, work)

    def hits(top):
        cols = columns(ctx, top, 0, 6)
        return _detection_hits(actx, cols[2:], cols[0], thresh, a.force_suppress, work)
    alive = suppress_first(ctx, alive, n, a.nms_topk if 0 < a.nms_topk < n else n, ranked,
                           hits)
    # NMS ranks the first nms_topk rows; suppressed ones keep their values with class -1
    values = ctx.const(np.arange(6) > 0, base="values")       # every column but the class
    ranked = ctx.node("Where", [ctx.node("Or", [ctx.node("Unsqueeze", [
        alive, ctx.int64s([2])]), values]), ranked, minus_one])
    # past nms_topk: the valid rows at those positions in anchor order, class -1
    out = ctx.node("Where", [ctx.node("And", [ctx.node("Unsqueeze", [
        present, ctx.int64s([2])]), values]), packed, minus_one])
    _finish(ctx, ctx.node("Where", [ctx.node("Unsqueeze", [first, ctx.int64s([2])]), ranked,
                                    out]), dtype, outs[0])
