"""RROIAlign, its adjoint and ROIPooling's argmax as ONNX Loops over sample positions.

Their work per bin depends on the rois' values (RROIAlign's adaptive sample grid, a
ROIPooling bin's window), so each is a Loop whose trip count the graph computes from the
rois: iteration t handles sample (or window offset) t of every roi and bin at once, with
the geometry as element-wise float64 arithmetic, the pixels read by Gather and written back
by ScatterND add, as mxlite's own loops over (iy, ix) do."""
import math

import numpy as np

from ..table import translates
from .roi_common import (Arith, bilinear_corners, loop, roi_columns, spatial_scale, to_dtype,
                         work_dtype)


# ---- RROIAlign --------------------------------------------------------------------------------
def _rroi_geometry(ctx, rois, attrs):
    """Per roi (R, 1, 1) float64: centre, bin size, grid, start, cos and sin (mxlite's
    rules: sizes at least one pixel, theta in degrees counter-clockwise), the batch index
    (R, 1) int64 and the Loop's trip count max(gh) * max(gw) with max(gw)."""
    m = Arith(ctx)
    b, x, y, w, h, theta = roi_columns(ctx, rois, 6)
    scale, (ph, pw) = spatial_scale(attrs), attrs.pooled_size
    w, h = m.max(m.mul(w, scale), 1.0), m.max(m.mul(h, scale), 1.0)
    ratio = int(attrs.sampling_ratio)
    geo = dict(cx=m.mul(x, scale), cy=m.mul(y, scale), bh=m.div(h, float(ph)),
               bw=m.div(w, float(pw)), sh=m.div(h, -2.0), sw=m.div(w, -2.0))
    angle = m.mul(theta, math.pi / 180.0)
    geo["cos"], geo["sin"] = m.op("Cos", angle), m.op("Sin", angle)
    geo = {k: ctx.node("Unsqueeze", [v, ctx.int64s([-1])]) for k, v in geo.items()}
    if ratio <= 0:
        geo["gh"], geo["gw"] = m.ceil(geo["bh"]), m.ceil(geo["bw"])
        most = [m.index(m.op("ReduceMax", geo[k], keepdims=0)) for k in ("gh", "gw")]
    else:
        geo["gh"] = geo["gw"] = m.v(float(ratio))
        most = [ctx.const(np.asarray(ratio, np.int64))] * 2
    geo["batch"] = b
    trips = ctx.node("Mul", most)
    return geo, trips, most[1]


def _rroi_corners(ctx, geo, it, gw_most, ph, pw, height, width):
    """[(flat pixel (R, ph * pw) int64, weight (R, ph * pw) float64)] of the four corners of
    sample ``it`` (row it // max gw, column it % max gw) of every bin, the weights over the
    bin's sample count, zero where the roi has no such sample, it lies outside [-1, size]
    or the roi's batch index is negative."""
    m = Arith(ctx)
    iy = ctx.cast(ctx.node("Div", [it, gw_most]), np.float64)
    ix = ctx.cast(ctx.node("Mod", [it, gw_most]), np.float64)
    i = np.arange(ph, dtype=np.float64)[None, :, None]
    j = np.arange(pw, dtype=np.float64)[None, None, :]
    yy = m.add(m.add(geo["sh"], m.mul(i, geo["bh"])),
               m.mul(m.add(iy, 0.5), m.div(geo["bh"], geo["gh"])))
    xx = m.add(m.add(geo["sw"], m.mul(j, geo["bw"])),
               m.mul(m.add(ix, 0.5), m.div(geo["bw"], geo["gw"])))
    x = m.add(m.add(m.mul(xx, geo["cos"]), m.mul(yy, geo["sin"])), geo["cx"])
    y = m.add(m.sub(m.mul(yy, geo["cos"]), m.mul(xx, geo["sin"])), geo["cy"])
    batch = ctx.node("Unsqueeze", [geo["batch"], ctx.int64s([-1])])
    keep = m.mask(m.ge(y, -1.0), m.le(y, float(height)), m.ge(x, -1.0), m.le(x, float(width)),
                  m.gt(geo["gh"], iy), m.gt(geo["gw"], ix),
                  ctx.node("GreaterOrEqual", [batch, ctx.const(np.asarray(0, np.int64))]))
    share = m.div(keep, m.mul(geo["gh"], geo["gw"]))
    ylow, yhigh, fy = bilinear_corners(m, y, height)
    xlow, xhigh, fx = bilinear_corners(m, x, width)
    plane = m.mul(ctx.cast(ctx.node("Max", [batch, ctx.const(np.asarray(0, np.int64))]),
                           np.float64), float(height * width))
    out = []
    for py, wy in ((ylow, m.sub(1.0, fy)), (yhigh, fy)):
        for px, wx in ((xlow, m.sub(1.0, fx)), (xhigh, fx)):
            at = m.index(m.add(plane, m.add(m.mul(py, float(width)), px)))
            wt = m.mul(m.mul(wy, wx), share)
            out.append((ctx.node("Reshape", [at, ctx.int64s([0, ph * pw])]),
                        ctx.node("Reshape", [wt, ctx.int64s([0, ph * pw])])))
    return out


def _rroi(ctx, node, ins, outs, forward):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    work = work_dtype(dtype)
    n, c, h, w = ctx.shape(node.inputs[0]) if forward else tuple(a.data_shape)
    ph, pw = a.pooled_size
    geo, trips, gw_most = _rroi_geometry(ctx, ins[1], a)
    src = to_dtype(ctx, ins[0], dtype, work)
    # the number of rois (and a forward's batch) read at run time: a dynamic axis
    if forward:        # data as (N * H * W, C) rows read by flat pixel
        table = ctx.node("Reshape", [ctx.node("Transpose", [src], perm=[0, 2, 3, 1]),
                                     ctx.int64s([-1, c])])
        init = ctx.node("Expand", [
            ctx.const(np.zeros((1, ph * pw, c), work), base="rroi_acc"),
            ctx.node("Concat", [ctx.node("Shape", [ins[1]], end=1), ctx.int64s([ph * pw, c])],
                     axis=0)])
        state_shape = [None, ph * pw, c]
    else:              # the gradient as (R, ph * pw, C), added into (N * H * W, C) rows
        table = ctx.node("Transpose", [ctx.node("Reshape", [src,
                                                            ctx.int64s([-1, c, ph * pw])])],
                         perm=[0, 2, 1])
        init = ctx.const(np.zeros((n * h * w, c), work), base="rroi_grad")
        state_shape = [n * h * w, c]

    def body(sc, it, state):
        acc = state[0]
        for at, wt in _rroi_corners(sc, geo, it, gw_most, ph, pw, h, w):
            wt = sc.node("Unsqueeze", [sc.cast(wt, work), sc.int64s([-1])])
            if forward:
                acc = sc.node("Add", [acc, sc.node("Mul", [sc.node("Gather", [table, at]), wt])])
            else:
                acc = sc.node("ScatterND", [acc, sc.node("Unsqueeze", [at, sc.int64s([-1])]),
                                            sc.node("Mul", [table, wt])], reduction="add")
        return [acc]
    (acc,) = loop(ctx, trips, [init], body, [(work, state_shape)])
    if forward:
        out = ctx.node("Reshape", [ctx.node("Transpose", [acc], perm=[0, 2, 1]),
                                   ctx.int64s([-1, c, ph, pw])])
    else:
        out = ctx.node("Transpose", [ctx.node("Reshape", [acc, ctx.int64s([n, h, w, c])])],
                       perm=[0, 3, 1, 2])
    to_dtype(ctx, out, work, dtype, outs[:1])


_RROI_OPS = ["Cast", "Split", "Mul", "Div", "Max", "Min", "Add", "Sub", "Cos", "Sin", "Ceil",
             "Floor", "ReduceMax", "Unsqueeze", "Reshape", "Transpose", "Loop", "Mod", "Shape",
             "GreaterOrEqual", "LessOrEqual", "Greater", "Less", "And", "Identity"]
_RROI_NOTES = ("a Loop over the sample grid (max over the rois of its size, computed from "
               "the rois); a batch index past the data or a non-finite coordinate (MXNetErrors "
               "in mxlite) are undefined in ONNX, a grid past 65536 samples per bin (an "
               "MXNetError in mxlite) runs")


@translates("_contrib_RROIAlign", onnx_ops=_RROI_OPS + ["Gather", "Expand", "Concat"],
            notes=_RROI_NOTES)
def _rroi_align(ctx, node, ins, outs):
    _rroi(ctx, node, ins, outs, forward=True)


@translates("_rroi_align_adjoint", onnx_ops=_RROI_OPS + ["ScatterND"],
            notes=_RROI_NOTES)
def _rroi_align_adjoint(ctx, node, ins, outs):
    _rroi(ctx, node, ins, outs, forward=False)


# ---- ROIPooling's argmax ---------------------------------------------------------------------
def _windows(ctx, lo, hi, bins, length, scale):
    """(start (R, bins), size (R, bins)) float64 of ROIPooling's bin windows along one axis
    (the corners C-rounded, the end inclusive, each window clipped to the map)."""
    m = Arith(ctx)
    lo, hi = m.c_round(m.mul(lo, scale)), m.c_round(m.mul(hi, scale))
    step = m.div(m.max(m.add(m.sub(hi, lo), 1.0), 1.0), float(bins))
    k = np.arange(bins, dtype=np.float64)[None, :]
    start = m.op("Clip", m.add(m.floor(m.mul(k, step)), lo), 0.0, float(length))
    end = m.op("Clip", m.add(m.ceil(m.mul(m.add(k, 1.0), step)), lo), 0.0, float(length))
    return start, m.max(m.sub(end, start), 0.0)


@translates("_roi_pooling_argmax", onnx_ops=["Cast", "Split", "Mul", "Add", "Sub", "Div", "Max",
                                             "Min", "Sign", "Abs", "Floor", "Ceil", "Clip",
                                             "ReduceMax", "Unsqueeze", "Reshape", "Gather",
                                             "Greater", "IsNaN", "Not", "Or", "And", "Where",
                                             "Loop", "Mod", "Identity"],
            notes="a Loop over the offsets in the largest bin window (computed from the rois), "
                  "keeping the first maximum (a NaN wins, as NumPy's argmax); a batch index "
                  "that is not an integer of the batch (an MXNetError in mxlite) is undefined")
def _roi_pooling_argmax(ctx, node, ins, outs):
    a = node.attrs
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    n, c, h, w = ctx.shape(node.inputs[0])
    ph, pw = (int(v) for v in a.pooled_size)
    m = Arith(ctx)
    b, x1, y1, x2, y2 = roi_columns(ctx, ins[1])
    scale = float(a.spatial_scale)
    hs, hn = _windows(ctx, y1, y2, ph, h, scale)                        # (R, ph)
    ws, wn = _windows(ctx, x1, x2, pw, w, scale)                        # (R, pw)
    most = [m.op("ReduceMax", v, keepdims=0) for v in (hn, wn)]
    wn_most = m.index(m.max(most[1], 1.0))
    trips = m.index(m.mul(most[0], most[1]))
    # (R, C, ph, pw) views: the roi's channel planes, the windows' starts and sizes
    chans = m.mul(m.add(m.mul(ctx.cast(ctx.node("Unsqueeze", [b, ctx.int64s([2, 3])]),
                                       np.float64), float(c)),
                        np.arange(c, dtype=np.float64)[None, :, None, None]), float(h * w))
    hs, hn = (ctx.node("Unsqueeze", [v, ctx.int64s([1, 3])]) for v in (hs, hn))
    ws, wn = (ctx.node("Unsqueeze", [v, ctx.int64s([1, 2])]) for v in (ws, wn))
    flat = ctx.node("Reshape", [to_dtype(ctx, ins[0], dtype, work), ctx.int64s([-1])])

    def read(sc, t):
        """(offset in the window is valid, flat position, value) at window offset ``t``,
        written into the context ``sc``."""
        m = Arith(sc)
        dh = sc.cast(sc.node("Div", [t, wn_most]), np.float64)
        dw = sc.cast(sc.node("Mod", [t, wn_most]), np.float64)
        inside = sc.node("And", [m.gt(hn, dh), m.gt(wn, dw)])
        row = m.min(m.add(hs, dh), float(h - 1))
        col = m.min(m.add(ws, dw), float(w - 1))
        at = m.index(m.add(chans, m.add(m.mul(row, float(w)), col)))
        return inside, at, sc.node("Gather", [flat, at])

    empty = ctx.node("Not", [ctx.node("And", [m.gt(hn, 0.0), m.gt(wn, 0.0)])])
    _, at0, best0 = read(ctx, ctx.const(np.asarray(0, np.int64)))
    idx0 = ctx.node("Where", [empty, ctx.const(np.asarray(-1, np.int64)), at0])

    def body(sc, it, state):
        best, idx = state
        inside, at, value = read(sc, sc.node("Add", [it, sc.const(np.asarray(1, np.int64))]))
        better = sc.node("Or", [sc.node("Greater", [value, best]),
                                sc.node("And", [sc.node("IsNaN", [value]),
                                                sc.node("Not", [sc.node("IsNaN", [best])])])])
        take = sc.node("And", [inside, better])
        return [sc.node("Where", [take, value, best]), sc.node("Where", [take, at, idx])]
    rest = ctx.node("Max", [ctx.node("Sub", [trips, ctx.const(np.asarray(1, np.int64))]),
                            ctx.const(np.asarray(0, np.int64))])
    shape = [None, c, ph, pw]
    _, idx = loop(ctx, rest, [best0, idx0], body, [(work, shape), (np.int64, shape)])
    ctx.node("Identity", [idx], outs[:1])
