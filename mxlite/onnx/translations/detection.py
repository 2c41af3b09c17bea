"""Contrib vision and detection operators: box_iou as element-wise arithmetic, ROIPooling
as MaxRoiPool, ROIAlign as RoiAlign (the batch index split off the rois)."""
import numpy as np

from ..table import translates


def _columns(ctx, boxes):
    """The four (n, 1) columns of (..., 4) boxes flattened to (n, 4)."""
    flat = ctx.node("Reshape", [boxes, ctx.int64s([-1, 4])])
    return ctx.node("Split", [flat, ctx.int64s([1, 1, 1, 1], "split")],
                    [ctx.fresh("col") for _ in range(4)], axis=1)


def _corners_and_area(ctx, cols, fmt, dtype):
    """(left, top, right, bottom) and the area (width * height, 0 where either is negative)
    of boxes given as columns in ``fmt`` (mxlite's ``_corners`` / ``_areas``)."""
    c0, c1, c2, c3 = cols
    if fmt == "corner":
        corners = cols
        w, h = ctx.node("Sub", [c2, c0]), ctx.node("Sub", [c3, c1])
    else:
        two = ctx.const(np.asarray(2, dtype))
        hw, hh = ctx.node("Div", [c2, two]), ctx.node("Div", [c3, two])
        corners = [ctx.node("Sub", [c0, hw]), ctx.node("Sub", [c1, hh]),
                   ctx.node("Add", [c0, hw]), ctx.node("Add", [c1, hh])]
        w, h = c2, c3
    zero = ctx.const(np.asarray(0, dtype))
    valid = ctx.node("And", [ctx.node("GreaterOrEqual", [w, zero]),
                             ctx.node("GreaterOrEqual", [h, zero])])
    area = ctx.node("Mul", [ctx.node("Mul", [w, h]), ctx.cast(valid, dtype)])
    return corners, area


def _overlap(ctx, lo_a, hi_a, lo_b, hi_b, zero):
    return ctx.node("Max", [ctx.node("Sub", [ctx.node("Min", [hi_a, hi_b]),
                                             ctx.node("Max", [lo_a, lo_b])]), zero])


@translates("_contrib_box_iou", onnx_ops=["Reshape", "Split", "Transpose", "Sub", "Add",
                                          "Div", "Mul", "Min", "Max", "GreaterOrEqual",
                                          "Greater", "And", "Not", "Cast"])
def _box_iou(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    fmt = node.attrs.format
    (l0, l1, l2, l3), la = _corners_and_area(ctx, _columns(ctx, ins[0]), fmt, dtype)
    # rhs as (1, m) rows: every pair broadcasts to (n, m)
    rcols = [ctx.node("Transpose", [c], perm=[1, 0]) for c in _columns(ctx, ins[1])]
    (r0, r1, r2, r3), ra = _corners_and_area(ctx, rcols, fmt, dtype)
    zero = ctx.const(np.asarray(0, dtype))
    inter = ctx.node("Mul", [_overlap(ctx, l0, l2, r0, r2, zero),
                             _overlap(ctx, l1, l3, r1, r3, zero)])
    union = ctx.node("Sub", [ctx.node("Add", [la, ra]), inter])
    positive = ctx.node("Greater", [inter, zero])
    # 0 where the boxes do not overlap: union + 1 there, so no 0 / 0
    safe = ctx.node("Add", [union, ctx.cast(ctx.node("Not", [positive]), dtype)])
    iou = ctx.node("Mul", [ctx.node("Div", [inter, safe]), ctx.cast(positive, dtype)])
    ctx.node("Reshape", [iou, ctx.int64s(ctx.shape((node, 0)))], outs)


@translates("ROIPooling", onnx_ops=["MaxRoiPool"],
            notes="a batch index outside the batch is undefined in ONNX (an error in mxlite); "
                  "onnxruntime 1.32 runs MaxRoiPool in models of opset 21 or older")
def _roi_pooling(ctx, node, ins, outs):
    a = node.attrs
    ctx.node("MaxRoiPool", ins[:2], outs[:1], pooled_shape=list(a.pooled_size),
             spatial_scale=float(a.spatial_scale))


@translates("_contrib_ROIAlign", onnx_ops=["RoiAlign", "Slice", "Cast"], opset=16,
            notes="aligned=False is RoiAlign's output_half_pixel, aligned=True its "
                  "half_pixel; not position_sensitive; a negative batch index (zeros in "
                  "mxlite) is undefined in ONNX; onnxruntime 1.32 runs RoiAlign in models of "
                  "opset 21 or older")
def _roi_align(ctx, node, ins, outs):
    a = node.attrs
    if a.position_sensitive:
        raise ctx.unsupported(node, "position_sensitive=True")
    rois = ins[1]
    index = ctx.node("Slice", [rois, ctx.int64s([0]), ctx.int64s([1]), ctx.int64s([1])])
    index = ctx.node("Reshape", [ctx.cast(index, np.int64), ctx.int64s([-1])])
    boxes = ctx.node("Slice", [rois, ctx.int64s([1]), ctx.int64s([5]), ctx.int64s([1])])
    ctx.node("RoiAlign", [ins[0], boxes, index], outs[:1], mode="avg",
             output_height=a.pooled_size[0], output_width=a.pooled_size[1],
             sampling_ratio=max(int(a.sample_ratio), 0), spatial_scale=float(a.spatial_scale),
             coordinate_transformation_mode="half_pixel" if a.aligned else
             "output_half_pixel")


@translates("_contrib_MultiBoxPrior", onnx_ops=["Constant"],
            notes="a constant: the anchors depend on data's (static) height and width only")
def _multibox_prior(ctx, node, ins, outs):
    from ... import ndarray as nd
    a = node.attrs
    h, w = ctx.shape(node.inputs[0])[2:]
    dtype = ctx.dtype(node.inputs[0])
    anchors = nd.contrib.MultiBoxPrior(nd.zeros((1, 1, h, w), dtype=dtype), sizes=a.sizes,
                                       ratios=a.ratios, clip=a.clip, steps=a.steps,
                                       offsets=a.offsets).asnumpy()
    ctx.node("Identity", [ctx.const(anchors, base="anchors")], outs[:1])


def _last_columns(ctx, x):
    """The four (..., 1) columns of (..., 4) ``x``."""
    return ctx.node("Split", [x, ctx.int64s([1, 1, 1, 1], "split")],
                    [ctx.fresh("col") for _ in range(4)], axis=-1)


@translates("_contrib_box_decode", onnx_ops=["Split", "Mul", "Add", "Sub", "Min", "Exp",
                                             "Concat", "Cast"])
def _box_decode(ctx, node, ins, outs):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    data, anchors = (x if dtype == work else ctx.cast(x, work) for x in ins[:2])

    def c(v):
        return ctx.const(np.asarray(v, work))
    half = c(0.5)
    a0, a1, a2, a3 = _last_columns(ctx, anchors)
    if a.format == "corner":
        aw, ah = ctx.node("Sub", [a2, a0]), ctx.node("Sub", [a3, a1])
        ax = ctx.node("Add", [a0, ctx.node("Mul", [aw, half])])
        ay = ctx.node("Add", [a1, ctx.node("Mul", [ah, half])])
    else:
        ax, ay, aw, ah = a0, a1, a2, a3
    d = _last_columns(ctx, data)
    stds = [c(np.float32(getattr(a, f"std{k}"))) for k in range(4)]
    ox = ctx.node("Add", [ctx.node("Mul", [ctx.node("Mul", [d[0], stds[0]]), aw]), ax])
    oy = ctx.node("Add", [ctx.node("Mul", [ctx.node("Mul", [d[1], stds[1]]), ah]), ay])
    dw, dh = ctx.node("Mul", [d[2], stds[2]]), ctx.node("Mul", [d[3], stds[3]])
    if a.clip > 0:
        dw, dh = (ctx.node("Min", [v, c(np.float32(a.clip))]) for v in (dw, dh))
    ow = ctx.node("Mul", [ctx.node("Mul", [ctx.node("Exp", [dw]), aw]), half])
    oh = ctx.node("Mul", [ctx.node("Mul", [ctx.node("Exp", [dh]), ah]), half])
    parts = [ctx.node("Sub", [ox, ow]), ctx.node("Sub", [oy, oh]), ctx.node("Add", [ox, ow]),
             ctx.node("Add", [oy, oh])]
    if dtype == work:
        ctx.node("Concat", parts, outs[:1], axis=-1)
    else:
        ctx.node("Cast", [ctx.node("Concat", parts, axis=-1)], outs[:1],
                 to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))


def _box_centers(ctx, cols, dtype):
    """(x, y, width, height) of corner-box columns (mxlite's ``_centers``)."""
    half = ctx.const(np.asarray(0.5, dtype))
    w, h = ctx.node("Sub", [cols[2], cols[0]]), ctx.node("Sub", [cols[3], cols[1]])
    return (ctx.node("Add", [cols[0], ctx.node("Mul", [w, half])]),
            ctx.node("Add", [cols[1], ctx.node("Mul", [h, half])]), w, h)


@translates("_contrib_box_encode", onnx_ops=["Greater", "Cast", "Where", "Unsqueeze", "Expand",
                                             "GatherElements", "Split", "Sub", "Add", "Mul",
                                             "Div", "Log", "Concat"])
def _box_encode(ctx, node, ins, outs):
    samples, matches, anchors, refs, means, stds = ins
    dtype = ctx.dtype(node.inputs[2])
    b, n = ctx.shape(node.inputs[0])
    valid = ctx.node("Greater", [ctx.cast(samples, np.float64),
                                 ctx.const(np.asarray(0.5, np.float64))])
    # matches truncated (MXNet's rule); an anchor that is no positive sample reads ref 0
    index = ctx.node("Where", [valid, ctx.cast(matches, np.int64),
                               ctx.const(np.asarray(0, np.int64))])
    index = ctx.node("Expand", [ctx.node("Unsqueeze", [index, ctx.int64s([-1])]),
                                ctx.int64s([b, n, 4])])
    picked = ctx.node("GatherElements", [refs, index], axis=1)
    rx, ry, rw, rh = _box_centers(ctx, _last_columns(ctx, picked), dtype)
    ax, ay, aw, ah = _box_centers(ctx, _last_columns(ctx, anchors), dtype)
    valid4 = ctx.node("Unsqueeze", [valid, ctx.int64s([-1])])
    one = ctx.const(np.asarray(1, dtype))

    def log_ratio(r, a):           # no log of a ratio that is not used
        return ctx.node("Log", [ctx.node("Where", [valid4, ctx.node("Div", [r, a]), one])])
    raw = ctx.node("Concat", [ctx.node("Div", [ctx.node("Sub", [rx, ax]), aw]),
                              ctx.node("Div", [ctx.node("Sub", [ry, ay]), ah]),
                              log_ratio(rw, aw), log_ratio(rh, ah)], axis=-1)
    targets = ctx.node("Div", [ctx.node("Sub", [raw, means]), stds])
    ctx.node("Where", [valid4, targets, ctx.const(np.asarray(0, dtype))], outs[:1])
    mask = ctx.node("Expand", [ctx.cast(valid4, dtype), ctx.int64s([b, n, 4])])
    ctx.node("Identity", [mask], outs[1:2])
