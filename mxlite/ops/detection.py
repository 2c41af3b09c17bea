"""Box and anchor operators of object detection (MXNet 1.9.1's ``contrib`` namespace):
``_contrib_box_iou``, ``_contrib_box_nms`` (alias ``_contrib_box_non_maximum_suppression``),
``_contrib_box_encode``, ``_contrib_box_decode``, ``_contrib_bipartite_matching`` and
``_contrib_MultiBoxPrior``.

A box is four numbers: ``corner`` format ``[xmin, ymin, xmax, ymax]``, ``center`` format
``[x, y, width, height]``. Arithmetic runs in the data's dtype, in MXNet's order, so float32
results match MXNet's bit for bit where the formula is the same.

The sequential parts (greedy NMS, greedy bipartite matching) work on the host copy of the
scores (``rctx.xp.to_host``: no copy on CPU), one vectorised step per kept box or match; the
selected rows are then gathered on the device. Every other part uses the device namespace
and the array methods NumPy and CuPy share, so the compute functions run unchanged on a GPU.
"""
import math

import numpy as np

from .._core import resample as _resample
from .._core import sorting as _sorting
from ..base import FLOAT_DTYPES, op_error
from .common import check_num_inputs
from .registry import NON_DIFFERENTIABLE, OpDef, Param, get_op, register
from .shape_utils import check_shape, size_of

I64 = np.dtype("int64")
FORMATS = ("corner", "center")


def _unary(rctx, name, x):
    """Op ``name`` (``exp``, ``log``) of ``x`` by the compute function of ``x``'s device."""
    op = get_op(name)
    out = rctx.xp.empty(x.shape, x.dtype)
    op.compute[rctx.kernels](rctx, [x], [out], op.default_attrs)
    return out


def _float_input(op, arg, dtype):
    if dtype not in FLOAT_DTYPES:
        raise op_error(op, f"{arg} must be a float array, got {dtype}")


def _same_float_types(op, names):
    """infer_type of an op whose inputs (``names``) share one float dtype, as its outputs."""
    def infer_type(dtypes, attrs):
        for name, dt in zip(names, dtypes):
            _float_input(op, name, dt)
            if dt != dtypes[0]:
                raise op_error(op, f"{name} has dtype {dt}, but {names[0]} has {dtypes[0]}; "
                               "every input must have one dtype")
        return [dtypes[0]] * _NUM_OUTPUTS[op]
    return infer_type


_NUM_OUTPUTS = {}


BLOCK = 1 << 20        # elements of a temporary: the computations run in blocks of this size


def _blocks(n, per):
    """Slices of ``range(n)`` holding about ``BLOCK`` elements of ``per`` each: temporaries
    stay small whatever the size of the operands."""
    step = max(1, BLOCK // max(per, 1))
    return [slice(s, min(s + step, n)) for s in range(0, n, step)]


def _corners(c0, c1, c2, c3, fmt):
    """(left, top, right, bottom) of boxes whose columns are ``c0..c3`` in format ``fmt``:
    a center box's half extents are subtracted and added as MXNet's ``Intersect``."""
    if fmt == "corner":
        return c0, c1, c2, c3
    hw, hh = c2 / 2, c3 / 2
    return c0 - hw, c1 - hh, c0 + hw, c1 + hh


def _areas(c0, c1, c2, c3, fmt):
    """Areas as MXNet's ``BoxArea``: width * height, 0 where either is negative."""
    w, h = (c2 - c0, c3 - c1) if fmt == "corner" else (c2, c3)
    return w * h * ((w >= 0) & (h >= 0))


def _overlap(lo_a, hi_a, lo_b, hi_b):
    """Length of the overlap of [lo_a, hi_a] and [lo_b, hi_b] (0 when apart); the b
    arguments may be scalars or arrays broadcasting against the a arguments."""
    return (hi_a.clip(max=hi_b) - lo_a.clip(min=lo_b)).clip(min=0)


# ---- box_iou ------------------------------------------------------------------------------
def _box_iou_shape(shapes, attrs):
    check_num_inputs("_contrib_box_iou", shapes, 2)
    for arg, s in zip(("lhs", "rhs"), shapes):
        if len(s) < 2 or s[-1] != 4:
            raise op_error("_contrib_box_iou", f"{arg} must have shape (..., 4) with at least "
                           f"2 dimensions, got {tuple(s)}")
    return [check_shape("_contrib_box_iou", tuple(shapes[0][:-1]) + tuple(shapes[1][:-1]))]


def _box_iou_compute(rctx, ins, outs, attrs):
    lhs, rhs = (a.reshape(-1, 4) for a in ins)
    out = outs[0].reshape(lhs.shape[0], rhs.shape[0])
    fmt = attrs.format
    rc = [rhs[:, k] for k in range(4)]                # (R,) columns: broadcast to (L, R)
    r0, r1, r2, r3 = _corners(*rc, fmt)
    r_area = _areas(*rc, fmt)
    few = rhs.shape[0] <= _FEW_RHS
    for rows in _blocks(lhs.shape[0], rhs.shape[0]):
        if few:
            # one rhs box at a time against long contiguous lhs columns: NumPy's inner loop
            # runs over the block, not over a last axis of a few rhs boxes
            lc = [rctx.xp.ascontiguousarray(lhs[rows, k]) for k in range(4)]
            l_box, l_area = _corners(*lc, fmt), _areas(*lc, fmt)
            for j in range(rhs.shape[0]):
                pick = slice(j, j + 1)
                out[rows, j] = _iou(l_box, l_area, [r[pick] for r in (r0, r1, r2, r3)],
                                    r_area[pick])
            continue
        lc = [lhs[rows, k:k + 1] for k in range(4)]  # (block, 1) columns
        out[rows] = _iou(_corners(*lc, fmt), _areas(*lc, fmt), (r0, r1, r2, r3), r_area)


_FEW_RHS = 16       # up to this many rhs boxes, box_iou loops over them


def _iou(l_box, l_area, r_box, r_area):
    """IoU of corner boxes ``l_box`` against ``r_box`` (columns broadcasting together)."""
    (l0, l1, l2, l3), (r0, r1, r2, r3) = l_box, r_box
    inter = _overlap(l0, l2, r0, r2) * _overlap(l1, l3, r1, r3)
    union = l_area + r_area - inter
    positive = inter > 0
    # MXNet writes 0 where the boxes do not overlap (no 0 / 0 for empty boxes)
    return (inter / (union + ~positive)) * positive


register(OpDef(
    "_contrib_box_iou", inputs=("lhs", "rhs"),
    params=(Param("format", "str", "corner", "box encoding: 'corner' [xmin, ymin, xmax, ymax] "
                  "or 'center' [x, y, width, height]", choices=FORMATS),),
    infer_shape=_box_iou_shape,
    infer_type=lambda dtypes, attrs: [_box_iou_type(dtypes)],
    compute={"cpu": _box_iou_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""Intersection over union of every box of ``lhs`` (shape ``(..., 4)``) with every box
of ``rhs`` (shape ``(..., 4)``); the output has shape ``lhs.shape[:-1] + rhs.shape[:-1]``.
Boxes that do not overlap, or have no area, give 0.

Not differentiable: MXNet 1.9.1 back-propagates zeros through box_iou, and so does mxlite
(declared non-differentiable).

>>> x = mx.nd.array([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]])
>>> y = mx.nd.array([[0.25, 0.25, 0.75, 0.75]])
>>> [[round(float(v), 4) for v in row] for row in mx.nd.contrib.box_iou(x, y).asnumpy()]
[[0.1429], [0.1429]]
"""))


def _box_iou_type(dtypes):
    for arg, dt in zip(("lhs", "rhs"), dtypes):
        _float_input("_contrib_box_iou", arg, dt)
    if dtypes[0] != dtypes[1]:
        raise op_error("_contrib_box_iou", f"lhs ({dtypes[0]}) and rhs ({dtypes[1]}) must "
                       "have one dtype")
    return dtypes[0]


# ---- box_nms ------------------------------------------------------------------------------
NMS = "_contrib_box_nms"


def _nms_check(width, attrs):
    """MXNet's checks of the column layout of a box of ``width`` numbers."""
    cs, si, ii = attrs.coord_start, attrs.score_index, attrs.id_index
    need = 6 if ii >= 0 else 5
    if width < need:
        raise op_error(NMS, f"the last dimension must hold at least {need} numbers "
                       f"(score, 4 coordinates{', id' if ii >= 0 else ''}), got {width}")
    if cs < 0 or cs + 3 >= width:
        raise op_error(NMS, f"coord_start={cs}: coordinates {cs}..{cs + 3} out of range for "
                       f"boxes of {width} numbers")
    if not 0 <= si < width or cs <= si <= cs + 3:
        raise op_error(NMS, f"score_index={si} must lie in [0, {width}) outside the "
                       f"coordinates {cs}..{cs + 3}")
    if ii >= 0 and (ii >= width or cs <= ii <= cs + 3 or ii == si):
        raise op_error(NMS, f"id_index={ii} must lie in [0, {width}) outside the coordinates "
                       f"{cs}..{cs + 3} and differ from score_index={si}")


def _nms_shape(shapes, attrs):
    check_num_inputs(NMS, shapes, 1)
    s = tuple(shapes[0])
    if len(s) < 2:
        raise op_error(NMS, f"data must have shape (..., num_boxes, box_width), got {s}")
    _nms_check(s[-1], attrs)
    return [s, s[:-1] + (1,)]


def _nms_type(dtypes, attrs):
    _float_input(NMS, "data", dtypes[0])
    return [dtypes[0], I64]


def _nms_survivors(h, attrs, t32):
    """Host row indices (int64, best first) that NMS keeps of one batch item ``h``
    (``(N, W)`` host array)."""
    scores = h[:, attrs.score_index]
    valid = scores > t32(attrs.valid_thresh)
    if attrs.id_index >= 0:
        valid &= h[:, attrs.id_index] != t32(attrs.background_id)
    cand = valid.nonzero()[0]
    # descending scores; ties keep the row order (MXNet's stable sort)
    cand = cand[(-scores[cand]).argsort(kind="stable")]
    if attrs.topk >= 0:
        cand = cand[:attrs.topk]
    cs, fmt = attrs.coord_start, attrs.in_format
    box = h[cand, cs:cs + 4]
    cols = [box[:, k] for k in range(4)]
    l, t, r, b = _corners(*cols, fmt)
    area = _areas(*cols, fmt)
    ids = h[cand, attrs.id_index].astype(I64) if attrs.id_index >= 0 else None
    thresh = t32(attrs.overlap_thresh)
    alive = valid[cand]                      # all True: one flag per candidate
    for i in range(len(cand)):
        if not alive[i]:
            continue
        rest = slice(i + 1, None)
        inter = _overlap(l[rest], r[rest], l[i], r[i]) * _overlap(t[rest], b[rest], t[i], b[i])
        iou = inter / (area[i] + area[rest] - inter)
        hit = iou > thresh
        if ids is not None and not attrs.force_suppress:
            hit &= ids[rest] == ids[i]       # only boxes of one class suppress each other
        alive[rest] &= ~hit
    return cand[alive]


def _convert_format(cols, to):
    """Coordinate columns ``cols`` (views) rewritten in place into format ``to``."""
    c0, c1, c2, c3 = (c.copy() for c in cols)
    if to == "center":
        w, h = c2 - c0, c3 - c1
        new = (c0 + c2) / 2, (c1 + c3) / 2, w, h
    else:
        new = _corners(c0, c1, c2, c3, "center")
    for dst, src in zip(cols, new):
        dst[...] = src


def _nms_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    data = ins[0]
    n, w = data.shape[-2], data.shape[-1]
    batch = size_of(data.shape[:-2])
    flat = data.reshape(batch * n, w)
    out, record = outs[0].reshape(batch, n, w), outs[1].reshape(batch, n)
    if attrs.topk == 0:                      # MXNet: topk 0 passes the boxes through
        xp.copyto(outs[0], data)
        record[...] = xp.arange(batch * n, I64).reshape(batch, n)
        return
    out.fill(-1)
    record.fill(-1)
    host = xp.to_host(flat).reshape(batch, n, w)
    t32 = np.float32                         # MXNet's float parameters compare as float32
    cs = attrs.coord_start
    for b in range(batch):
        kept = _nms_survivors(host[b], attrs, t32) + b * n
        k = kept.shape[0]
        if k == 0:
            continue
        rows = xp.from_host(kept)
        out[b, :k] = flat[rows]
        record[b, :k] = rows
        if attrs.in_format != attrs.out_format:
            _convert_format([out[b, :k, cs + j] for j in range(4)], attrs.out_format)


def _format_adjoint(F, g, attrs, w):
    """The head gradient of box_nms's output taken back through its change of box format
    (the transpose of the linear map ``_convert_format`` applies to kept rows)."""
    cs = attrs.coord_start
    col = [F.slice_axis(g, axis=-1, begin=j, end=j + 1) for j in range(w)]
    g0, g1, g2, g3 = col[cs:cs + 4]
    if attrs.out_format == "center":         # cx = (l + r) / 2, w = r - l
        new = [g0 * 0.5 - g2, g1 * 0.5 - g3, g0 * 0.5 + g2, g1 * 0.5 + g3]
    else:                                    # l = x - w / 2, r = x + w / 2
        new = [g0 + g2, g1 + g3, (g2 - g0) * 0.5, (g3 - g1) * 0.5]
    col[cs:cs + 4] = new
    return F.concat(*col, dim=-1)


def _nms_gradient(F, node, ograds):
    """The head gradient of each kept row goes back to the input row it was copied from
    (``_backward_gather_nd`` over the flat row index the hidden record output holds; -1
    rows add zero at row 0)."""
    attrs = node.attrs
    shape = node.input_shapes[0]
    rows, w = size_of(shape[:-1]), shape[-1]
    g = ograds[0]
    if attrs.topk != 0 and attrs.in_format != attrs.out_format:
        g = _format_adjoint(F, g, attrs, w)
    record = F.reshape(node.outputs[1], shape=(1, rows))
    kept = F.cast(F.reshape(F._internal._greater_equal_scalar(record, scalar=0),
                            shape=(rows, 1)), dtype=node.output_dtypes[0])
    g = F.reshape(g, shape=(rows, w)) * kept
    at = F._internal._maximum_scalar(record, scalar=0)
    return [F.reshape(F._internal._backward_gather_nd(g, at, shape=(rows, w)), shape=shape)]


_NMS_PARAMS = (
    Param("overlap_thresh", "float", 0.5, "IoU above which the lower-scored box is suppressed"),
    Param("valid_thresh", "float", 0.0, "boxes must score above this to be considered"),
    Param("topk", "int", -1, "apply NMS to the topk highest-scored boxes, -1 for all"),
    Param("coord_start", "int", 2, "index of the first of the 4 consecutive coordinates"),
    Param("score_index", "int", 1, "index of the score"),
    Param("id_index", "int", -1, "index of the class id, -1 for none"),
    Param("background_id", "int", -1, "class id that is ignored"),
    Param("force_suppress", "bool", False, "suppress across classes"),
    Param("in_format", "str", "corner", "input box format", choices=FORMATS),
    Param("out_format", "str", "corner", "output box format", choices=FORMATS),
)

register(OpDef(
    NMS, inputs=("data",), aliases=("_contrib_box_non_maximum_suppression",),
    params=_NMS_PARAMS, infer_shape=_nms_shape, infer_type=_nms_type,
    compute={"cpu": _nms_compute}, gradient=_nms_gradient, grad_needs=("outputs",),
    num_outputs=2, num_visible_outputs=1,
    doc="""Non-maximum suppression of the boxes of ``data`` (shape ``(..., N, W)``; each row a
box of ``W`` numbers: a score at ``score_index``, 4 coordinates from ``coord_start``, a class
id at ``id_index`` when it is >= 0).

Per batch item, the boxes scoring above ``valid_thresh`` (and of a class other than
``background_id``) are sorted by score (ties keep their order), the first ``topk`` kept
(-1: all), and greedily each kept box suppresses the later ones whose IoU with it exceeds
``overlap_thresh`` (of its own class unless ``force_suppress``). The output has data's
shape: the surviving rows first, best first, coordinates in ``out_format``; the rest of the
rows are -1. ``topk=0`` passes data through (MXNet's rule).

The gradient copies the head gradient of each surviving row back to the row it came from
(zero elsewhere), as MXNet's; where ``in_format`` differs from ``out_format`` the head
gradient is first taken back through the format change (MXNet copied it unchanged, which
is not the derivative). MXNet also left kept boxes whose first coordinate is negative in
``in_format``; mxlite converts every kept box.

>>> d = mx.nd.array([[0, 0.9, 0, 0, 1, 1], [0, 0.8, 0, 0, 1, 1], [1, 0.7, 2, 2, 3, 3]])
>>> mx.nd.contrib.box_nms(d).asnumpy().tolist()[1]
[1.0, 0.699999988079071, 2.0, 2.0, 3.0, 3.0]
"""))
_NUM_OUTPUTS[NMS] = 2


# ---- box_encode ---------------------------------------------------------------------------
ENC = "_contrib_box_encode"
_ENC_INPUTS = ("samples", "matches", "anchors", "refs", "means", "stds")
_NUM_OUTPUTS[ENC] = 2


def _box_encode_shape(shapes, attrs):
    check_num_inputs(ENC, shapes, 6)
    samples, matches, anchors, refs, means, stds = (tuple(s) for s in shapes)
    if len(anchors) != 3 or anchors[-1] != 4:
        raise op_error(ENC, f"anchors must have shape (B, N, 4), got {anchors}")
    b, n = anchors[:2]
    if len(refs) != 3 or refs[0] != b or refs[-1] != 4:
        raise op_error(ENC, f"refs must have shape ({b}, M, 4) for anchors {anchors}, "
                       f"got {refs}")
    for arg, s in (("samples", samples), ("matches", matches)):
        if s != (b, n):
            raise op_error(ENC, f"{arg} must have shape {(b, n)} for anchors {anchors}, "
                           f"got {s}")
    for arg, s in (("means", means), ("stds", stds)):
        if s != (4,):
            raise op_error(ENC, f"{arg} must have shape (4,), got {s}")
    return [anchors, anchors]


def _centers(box):
    """(x, y, width, height) columns of corner boxes ``box`` (``(..., 4)``), MXNet's order."""
    w = box[..., 2] - box[..., 0]
    h = box[..., 3] - box[..., 1]
    return box[..., 0] + w * 0.5, box[..., 1] + h * 0.5, w, h


def _box_encode_type(dtypes):
    """anchors, refs, means and stds share one float dtype, the outputs'; samples and
    matches may be any real dtype (int64 matches index past float32's exact integers)."""
    for name, dt in zip(_ENC_INPUTS, dtypes):
        if dt.kind not in "iuf":
            raise op_error(ENC, f"{name} must be a real array, got {dt}")
    _same_float_types(ENC, _ENC_INPUTS[2:])(dtypes[2:], None)
    return [dtypes[2]] * 2


def _check_matches(xp, samples, matches, m):
    """MXNetError for the first positive sample whose match is not a row of refs."""
    n = samples.shape[1]
    samples, matches = samples.reshape(-1), matches.reshape(-1)
    for part in _blocks(samples.shape[0], 1):
        at = matches[part]
        bad = (samples[part] > 0.5) & ((at < 0) | (at >= m) | (at != at))
        if bool(bad.any()):
            k = part.start + int(xp.argmax(bad))
            raise op_error(ENC, f"matches[{k // n}, {k % n}] = {matches[k].item()} of a "
                           f"positive sample is not a row of refs (must lie in [0, {m}))")


def _box_encode_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    samples, matches, anchors, refs, means, stds = ins
    b, n = samples.shape
    m = refs.shape[1]
    _check_matches(xp, samples, matches, m)
    samples, matches = samples.reshape(b * n), matches.reshape(b * n)
    anchors, refs = anchors.reshape(b * n, 4), refs.reshape(b * m, 4)
    targets, masks = (o.reshape(b * n, 4) for o in outs)
    for part in _blocks(b * n, 4):
        valid = samples[part] > 0.5
        # MXNet truncates the match; unmatched anchors read ref 0 of their batch item
        row = (xp.arange(part.stop - part.start, I64) + part.start) // n * m
        picked = refs[row + matches[part].astype(I64) * valid]
        _encode_block(rctx, valid, picked, anchors[part], means, stds, targets[part])
        masks[part] = valid[:, None]


def _encode_block(rctx, valid, picked, anchors, means, stds, targets):
    """Targets of one block of anchors (rows) and their matched reference boxes."""
    rx, ry, rw, rh = _centers(picked)
    ax, ay, aw, ah = _centers(anchors)
    rw_ratio, rh_ratio = rw / aw, rh / ah
    invalid = ~valid
    rw_ratio[invalid] = 1                    # no log of a ratio that is not used
    rh_ratio[invalid] = 1
    raw = [(rx - ax) / aw, (ry - ay) / ah, _unary(rctx, "log", rw_ratio),
           _unary(rctx, "log", rh_ratio)]
    for k in range(4):
        col = (raw[k] - means[k]) / stds[k]
        col[invalid] = 0
        targets[:, k] = col


register(OpDef(
    ENC, inputs=_ENC_INPUTS, infer_shape=_box_encode_shape,
    infer_type=lambda dtypes, attrs: _box_encode_type(dtypes),
    compute={"cpu": _box_encode_compute},
    gradient=NON_DIFFERENTIABLE, num_outputs=2,
    doc="""Regression targets of anchors for their matched reference boxes (SSD/Faster R-CNN
encoding): for each anchor ``anchors[b, i]`` (corner format) with ``samples[b, i] > 0.5``
and matched box ``refs[b, matches[b, i]]``, the target is
``((rx - ax) / aw, (ry - ay) / ah, log(rw / aw), log(rh / ah))`` minus ``means``, divided
by ``stds``; other anchors get 0. Returns ``(targets, masks)``, both of shape ``(B, N, 4)``,
the mask 1 where the anchor is a positive sample.

anchors, refs, means and stds share one float dtype (the outputs'); samples and matches may
have any real dtype (MXNet: the same dtype as the others, so float32 matches could not
name a row past 2**24 exactly).

A match of a positive sample outside ``[0, M)`` is an MXNetError (MXNet read outside refs).
Targets are training labels: declared non-differentiable (MXNet: zero gradients).
"""))


# ---- box_decode ---------------------------------------------------------------------------
DEC = "_contrib_box_decode"


def _box_decode_shape(shapes, attrs):
    check_num_inputs(DEC, shapes, 2)
    data, anchors = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 3 or data[-1] != 4:
        raise op_error(DEC, f"data must have shape (B, N, 4), got {data}")
    if anchors != (1,) + data[1:]:
        raise op_error(DEC, f"anchors must have shape {(1,) + data[1:]} for data {data}, "
                       f"got {anchors}")
    return [data]


def _anchor_centers(anchors, fmt):
    """(x, y, w, h) of the anchors, each (1, N)."""
    if fmt == "corner":
        return _centers(anchors)
    return tuple(anchors[..., k] for k in range(4))


def _box_decode_compute(rctx, ins, outs, attrs):
    data, anchors = ins
    if rctx.kernels == "cpu" and data.flags.c_contiguous and anchors.flags.c_contiguous \
            and outs[0].flags.c_contiguous:
        # compiled (mxlite._core.resample.box_decode): the same operations, one pass
        dt = data.dtype.type if data.dtype == np.float64 else np.float32
        stds = [float(dt(np.float32(attrs[f"std{k}"]))) for k in range(4)]
        clip = float(dt(np.float32(attrs.clip))) if attrs.clip > 0 else None
        _resample.box_decode(data, anchors, outs[0], stds, clip, attrs.format == "corner")
        return
    for part in _blocks(data.shape[1], 4 * data.shape[0]):
        _decode_block(rctx, data[:, part], anchors[:, part], outs[0][:, part], attrs)


def _decode_block(rctx, data, anchors, out, attrs):
    """box_decode of the anchors of one block (a slice of axis 1); float16 blocks compute in
    float32 (NumPy's float16 arithmetic is emulated, an order of magnitude slower) and round
    once, into ``out``."""
    if data.dtype == np.float16:
        data, anchors = data.astype(np.float32), anchors.astype(np.float32)
    dt = data.dtype.type
    stds = [dt(np.float32(attrs[f"std{k}"])) for k in range(4)]
    ax, ay, aw, ah = _anchor_centers(anchors, attrs.format)
    ox = data[..., 0] * stds[0] * aw + ax
    oy = data[..., 1] * stds[1] * ah + ay
    dw, dh = data[..., 2] * stds[2], data[..., 3] * stds[3]
    if attrs.clip > 0:
        c = dt(np.float32(attrs.clip))
        dw, dh = dw.clip(max=c), dh.clip(max=c)
    ow = _unary(rctx, "exp", dw) * aw * 0.5
    oh = _unary(rctx, "exp", dh) * ah * 0.5
    out[..., 0] = ox - ow
    out[..., 1] = oy - oh
    out[..., 2] = ox + ow
    out[..., 3] = oy + oh


def _box_decode_gradient(F, node, ograds):
    """The derivative of the decoding, written with registered ops (so it differentiates
    again): MXNet 1.9.1 gave zeros."""
    attrs = node.attrs
    data, anchors = node.inputs
    s = [attrs[f"std{k}"] for k in range(4)]
    col = lambda x, k: F.slice_axis(x, axis=-1, begin=k, end=k + 1)   # noqa: E731
    a = [col(anchors, k) for k in range(4)]
    if attrs.format == "corner":
        aw, ah = a[2] - a[0], a[3] - a[1]
        ax, ay = a[0] + aw * 0.5, a[1] + ah * 0.5
    else:
        ax, ay, aw, ah = a
    d = [col(data, k) for k in range(4)]
    g = [col(ograds[0], k) for k in range(4)]
    gx, gy, gw, gh = g[0] + g[2], g[1] + g[3], g[2] - g[0], g[3] - g[1]
    dw, dh = d[2] * s[2], d[3] * s[3]
    ew, eh = F.exp(dw), F.exp(dh)
    if attrs.clip > 0:        # exp(min(dw, clip)): no derivative through dw past clip
        below_w = F._internal._lesser_scalar(dw, scalar=attrs.clip)
        below_h = F._internal._lesser_scalar(dh, scalar=attrs.clip)
        cw = F._internal._minimum_scalar(dw, scalar=attrs.clip)
        ch = F._internal._minimum_scalar(dh, scalar=attrs.clip)
        ew, eh = F.exp(cw), F.exp(ch)
    half_w, half_h = gw * ew * 0.5, gh * eh * 0.5      # d/d(aw * e * 0.5) terms
    gd2, gd3 = half_w * aw * s[2], half_h * ah * s[3]
    if attrs.clip > 0:
        gd2, gd3 = gd2 * below_w, gd3 * below_h
    g_data = F.concat(gx * s[0] * aw, gy * s[1] * ah, gd2, gd3, dim=-1)
    g_aw = F.sum(gx * d[0] * s[0] + half_w, axis=0, keepdims=True)
    g_ah = F.sum(gy * d[1] * s[1] + half_h, axis=0, keepdims=True)
    g_ax = F.sum(gx, axis=0, keepdims=True)
    g_ay = F.sum(gy, axis=0, keepdims=True)
    if attrs.format == "corner":   # ax = (a0 + a2) / 2, aw = a2 - a0
        g_anchor = F.concat(g_ax * 0.5 - g_aw, g_ay * 0.5 - g_ah, g_ax * 0.5 + g_aw,
                            g_ay * 0.5 + g_ah, dim=-1)
    else:
        g_anchor = F.concat(g_ax, g_ay, g_aw, g_ah, dim=-1)
    return [g_data, g_anchor]


register(OpDef(
    DEC, inputs=("data", "anchors"),
    params=tuple(Param(f"std{k}", "float", 1.0, f"the std of the encoded value {k}")
                 for k in range(4)) + (
        Param("clip", "float", -1.0, "if > 0, the width/height offsets are clipped to it "
              "before the exponential"),
        Param("format", "str", "center", "the anchors' format", choices=FORMATS)),
    infer_shape=_box_decode_shape, infer_type=_same_float_types(DEC, ("data", "anchors")),
    compute={"cpu": _box_decode_compute}, gradient=_box_decode_gradient,
    doc="""Decode box offsets ``data`` (shape ``(B, N, 4)``) against ``anchors`` (shape
``(1, N, 4)``, in ``format``) into corner boxes: with the anchor's center ``(ax, ay)`` and
size ``(aw, ah)``, ``x = d0 * std0 * aw + ax``, ``y = d1 * std1 * ah + ay``,
``w = exp(d2 * std2) * aw`` and ``h = exp(d3 * std3) * ah`` (the exponents capped at
``clip`` when it is positive); the output is ``[x - w/2, y - h/2, x + w/2, y + h/2]``.

Differentiable in data and anchors (MXNet 1.9.1 back-propagated zeros). Anchors of another
shape than ``(1, N, 4)`` are an MXNetError (MXNet read the first N of them).
"""))
_NUM_OUTPUTS[DEC] = 1


# ---- bipartite_matching -------------------------------------------------------------------
BIP = "_contrib_bipartite_matching"


def _bipartite_shape(shapes, attrs):
    check_num_inputs(BIP, shapes, 1)
    s = tuple(shapes[0])
    if len(s) < 2:
        raise op_error(BIP, f"data must be a score matrix (..., N, M), got shape {s}")
    return [s[:-1], s[:-2] + s[-1:]]


def _bipartite_type(dtypes, attrs):
    _float_input(BIP, "data", dtypes[0])
    return [dtypes[0], dtypes[0]]


def _match_limit(n, m, attrs):
    """How many pairs an item may match: min(n, m), and at most topk when it is positive."""
    return min(n, m) if attrs.topk <= 0 else min(n, m, attrs.topk)


def _match_block(rctx, h, attrs, rows, cols):
    """``_greedy_match``, on the CPU by the compiled kernel (``mxlite._core.sorting.
    greedy_match``: an item at a time, items across threads, the same choices; float16 and
    bfloat16 scores compared in float32, which holds them exactly)."""
    if rctx.kernels != "cpu":
        _greedy_match(rctx.xp, h, attrs, rows, cols)
        return
    thresh = float(h.dtype.type(np.float32(attrs.threshold)))     # in the data's dtype
    narrow = h.dtype not in (np.float32, np.float64)
    work = h.astype(np.float32) if narrow else h if h.flags.c_contiguous else h.copy()
    _sorting.greedy_match(work, rows, cols, thresh, attrs.is_ascend,
                          _match_limit(h.shape[1], h.shape[2], attrs))


def _greedy_match(xp, h, attrs, rows, cols):
    """Fill host markers ``rows`` (B, N) and ``cols`` (B, M) with the greedy matching of the
    score matrices ``h`` (B, N, M), all items at once: each step takes the best remaining
    score of every item (the first on ties); where it passes the threshold its row and
    column are matched and taken out, and an item whose best fails is done (MXNet's break)."""
    b, n, m = h.shape
    work = h.reshape(b, n * m).copy()        # taken rows and columns are overwritten
    worst = math.inf if attrs.is_ascend else -math.inf
    work[work != work] = worst               # NaN never matches
    thresh = h.dtype.type(np.float32(attrs.threshold))
    limit = _match_limit(n, m, attrs)
    items = xp.to_host(xp.arange(b, I64))
    start = items * (n * m)                  # flat offset of each item
    active = items >= 0
    grid = work.reshape(b, n, m)
    for _ in range(limit):
        k = work.argmin(axis=1) if attrs.is_ascend else work.argmax(axis=1)
        r, c = k // m, k % m
        score = h.reshape(-1).take(start + k)
        passes = score < thresh if attrs.is_ascend else score > thresh
        active &= passes & (rows[items, r] == -1) & (cols[items, c] == -1)
        if not active.any():
            return
        at, r, c = items[active], r[active], c[active]
        rows[at, r], cols[at, c] = c, r
        grid[at, r, :] = worst
        grid[at, :, c] = worst


def _host_markers(xp, shape):
    """A writable int64 host array of -1s (a new device array's host copy: itself on CPU)."""
    markers = xp.to_host(xp.empty(shape, I64))
    markers.fill(-1)
    return markers


def _bipartite_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    data = ins[0]
    n, m = data.shape[-2:]
    batch = size_of(data.shape[:-2])
    host = xp.to_host(data).reshape(batch, n, m)
    out_rows, out_cols = outs[0].reshape(batch, n), outs[1].reshape(batch, m)
    # blocks of whole items: the working copy and the markers stay small
    for part in _blocks(batch, n * m):
        rows = _host_markers(xp, (part.stop - part.start, n))
        cols = _host_markers(xp, (part.stop - part.start, m))
        if n and m:
            _match_block(rctx, host[part], attrs, rows, cols)
        xp.cast_into(out_rows[part], xp.from_host(rows))
        xp.cast_into(out_cols[part], xp.from_host(cols))


register(OpDef(
    BIP, inputs=("data",),
    params=(Param("is_ascend", "bool", False, "lower scores are better"),
            Param("threshold", "float", doc="scores must be above it (below with is_ascend)"),
            Param("topk", "int", -1, "at most this many matches, -1 for no limit")),
    infer_shape=_bipartite_shape, infer_type=_bipartite_type,
    compute={"cpu": _bipartite_compute}, gradient=NON_DIFFERENTIABLE, num_outputs=2,
    doc="""Greedy bipartite matching of a score matrix ``data`` (shape ``(..., N, M)``): the
best score (the highest, or the lowest with ``is_ascend``; ties by row-major position)
matches its row and column, both are taken out, and so on while the best remaining score
passes ``threshold`` (strictly), at most ``topk`` matches (-1: no limit). Returns the
matched column of each row (shape ``(..., N)``) and the matched row of each column (shape
``(..., M)``), -1 where unmatched, in data's dtype. Non-differentiable (indices).

MXNet 1.9.1 made ``topk + 1`` matches; mxlite makes at most ``topk``. NaN scores never match.

>>> s = mx.nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]])
>>> [a.asnumpy().tolist() for a in mx.nd.contrib.bipartite_matching(s, threshold=1e-12)]
[[1.0, -1.0, 0.0], [2.0, 0.0]]
"""))


# ---- MultiBoxPrior ------------------------------------------------------------------------
PRIOR = "_contrib_MultiBoxPrior"


def _prior_check(attrs):
    if not attrs.sizes or not attrs.ratios:
        raise op_error(PRIOR, f"sizes {attrs.sizes} and ratios {attrs.ratios} must not be "
                       "empty")
    if len(attrs.steps) != 2 or len(attrs.offsets) != 2:
        raise op_error(PRIOR, f"steps {attrs.steps} and offsets {attrs.offsets} must be "
                       "(y, x) pairs")
    if not all(0 <= o <= 1 for o in attrs.offsets):
        raise op_error(PRIOR, f"offsets {attrs.offsets} must lie in [0, 1]")
    if (attrs.steps[0] > 0) != (attrs.steps[1] > 0):
        raise op_error(PRIOR, f"steps {attrs.steps}: give both step_y and step_x, or "
                       "neither (<= 0 for the automatic 1 / size)")


def _prior_shape(shapes, attrs):
    check_num_inputs(PRIOR, shapes, 1)
    s = tuple(shapes[0])
    if len(s) < 4 or s[2] <= 0 or s[3] <= 0:
        raise op_error(PRIOR, f"data must be (batch, channel, height, width) with height and "
                       f"width > 0, got shape {s}")
    _prior_check(attrs)
    anchors = len(attrs.sizes) + len(attrs.ratios) - 1
    return [check_shape(PRIOR, (1, s[2] * s[3] * anchors, 4))]


def _prior_sizes(attrs, height, width):
    """Half width and half height of each anchor at a location, in float32 as MXNet:
    every size at the first ratio, then the first size at each further ratio."""
    f = np.float32
    pairs = [(s, attrs.ratios[0]) for s in attrs.sizes]
    pairs += [(attrs.sizes[0], r) for r in attrs.ratios[1:]]
    out = []
    for size, ratio in pairs:
        root = f(math.sqrt(f(ratio)))
        out.append((f(size) * f(height) / f(width) * root / f(2), f(size) / root / f(2)))
    return out


def _prior_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    f = np.float32
    height, width = ins[0].shape[2:4]
    step_y, step_x = (f(s) for s in attrs.steps)
    if step_y <= 0:
        step_y, step_x = f(1) / f(height), f(1) / f(width)
    cy = (xp.arange(height, np.float32) + f(attrs.offsets[0])) * step_y
    cx = (xp.arange(width, np.float32) + f(attrs.offsets[1])) * step_x
    cy, cx = cy[:, None], cx[None, :]
    sizes = _prior_sizes(attrs, height, width)
    out = outs[0].reshape(height, width, len(sizes), 4)
    for k, (hw, hh) in enumerate(sizes):
        box = [cx - hw, cy - hh, cx + hw, cy + hh]
        for j in range(4):
            col = box[j]
            out[:, :, k, j] = col.clip(0, 1) if attrs.clip else col


register(OpDef(
    PRIOR, inputs=("data",),
    params=(Param("sizes", "floats", (1.0,), "anchor sizes (fractions of the image)"),
            Param("ratios", "floats", (1.0,), "anchor aspect ratios"),
            Param("clip", "bool", False, "clip the boxes to [0, 1]"),
            Param("steps", "floats", (-1.0, -1.0), "(step_y, step_x) between anchor centers; "
                  "<= 0 for 1 / height, 1 / width"),
            Param("offsets", "floats", (0.5, 0.5), "(y, x) offset of the centers in a cell")),
    infer_shape=_prior_shape,
    infer_type=lambda dtypes, attrs: [_prior_type(dtypes[0])],
    compute={"cpu": _prior_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""Anchor boxes (corner format) of SSD for a feature map ``data`` of shape
``(batch, channel, height, width)``: at each cell ``(r, c)`` (center
``((c + offsets[1]) * step_x, (r + offsets[0]) * step_y)``), one box per size at the first
ratio, then one per further ratio at the first size; width ``size * height / width *
sqrt(ratio)``, height ``size / sqrt(ratio)``. Output shape
``(1, height * width * (len(sizes) + len(ratios) - 1), 4)``, computed in float32 as MXNet,
in data's dtype. The anchors depend on data's shape only: declared non-differentiable
(MXNet: zero gradient).
"""))


def _prior_type(dtype):
    _float_input(PRIOR, "data", dtype)
    return dtype


# ---- MultiBoxDetection --------------------------------------------------------------------
DET = "_contrib_MultiBoxDetection"


def _detection_shape(shapes, attrs):
    check_num_inputs(DET, shapes, 3)
    cls, loc, anchor = (tuple(s) for s in shapes)
    if len(cls) != 3 or cls[2] <= 0:
        raise op_error(DET, f"cls_prob must have shape (batch, classes, anchors) with "
                       f"anchors > 0, got {cls}")
    b, _, n = cls
    if anchor != (1, n, 4):
        raise op_error(DET, f"anchor must have shape {(1, n, 4)} for cls_prob {cls}, "
                       f"got {anchor}")
    if loc != (b, 4 * n):
        raise op_error(DET, f"loc_pred must have shape {(b, 4 * n)} for cls_prob {cls}, "
                       f"got {loc}")
    if len(attrs.variances) != 4:
        raise op_error(DET, f"variances must hold 4 numbers, got {attrs.variances}")
    return [(b, n, 6)]


def _detection_rows(rctx, cls, loc, anchor, attrs):
    """(B, N, 6) rows [class - 1, score, xmin, ymin, xmax, ymax] of every anchor: the best
    foreground class (the first on ties; -1 below ``threshold``) and the decoded box."""
    xp = rctx.xp
    b, c, n = cls.shape
    dt = cls.dtype.type
    rows = xp.empty((b, n, 6), cls.dtype)
    rows.fill(-1)
    best, ids = _best_class(xp, cls)
    ids[best < dt(np.float32(attrs.threshold))] = 0
    rows[:, :, 0] = ids - 1
    rows[:, :, 1] = best
    v = [dt(np.float32(x)) for x in attrs.variances]
    a = anchor.reshape(n, 4)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    p = loc.reshape(b, n, 4)
    ox, oy = p[..., 0] * v[0] * aw + ax, p[..., 1] * v[1] * ah + ay
    ow = _unary(rctx, "exp", p[..., 2] * v[2]) * aw / 2
    oh = _unary(rctx, "exp", p[..., 3] * v[3]) * ah / 2
    for k, col in enumerate((ox - ow, oy - oh, ox + ow, oy + oh)):
        rows[:, :, 2 + k] = col.clip(0, 1) if attrs.clip else col
    return rows


def _best_class(xp, cls):
    """(score, class) of the best foreground class of each anchor, (B, N) each: MXNet's scan
    from score -1 over classes 1.. keeping a class only when strictly better (the first on
    ties; score -1 and class 0 where none is above -1), in blocks of classes so that no
    copy of cls_prob is made."""
    b, c, n = cls.shape
    best = xp.empty((b, n), cls.dtype)
    best.fill(-1)
    ids = xp.zeros((b, n), I64)
    for part in _blocks(c - 1, b * n):
        block = cls[:, part.start + 1:part.stop + 1, :]
        top, at = block.max(axis=1), block.argmax(axis=1)
        better = top > best
        best[better] = top[better]
        ids[better] = at[better] + (part.start + 1)
    return best, ids


def _detection_nms(kept, attrs):
    """MXNet's NMS of one batch item's valid rows ``kept`` (host, (V, 6), in anchor order),
    in place: sorted by score (stable) up to ``nms_topk``, suppressed rows' ids set to -1;
    rows past nms_topk keep their unsorted values with id -1 (MXNet's layout)."""
    order = (-kept[:, 1]).argsort(kind="stable")
    nkeep = kept.shape[0] if attrs.nms_topk <= 0 else min(kept.shape[0], attrs.nms_topk)
    top = kept[order[:nkeep]]
    kept[nkeep:, 0] = -1
    l, t, r, b = (top[:, 2 + k] for k in range(4))
    area = (r - l) * (b - t)
    thresh = kept.dtype.type(np.float32(attrs.nms_threshold))
    for i in range(nkeep):
        if top[i, 0] < 0:
            continue
        rest = slice(i + 1, None)
        inter = _overlap(l[rest], r[rest], l[i], r[i]) * _overlap(t[rest], b[rest], t[i], b[i])
        union = area[i] + area[rest] - inter
        positive = union > 0
        iou = inter / (union + ~positive) * positive
        hit = (iou >= thresh) & (top[rest, 0] >= 0)
        if not attrs.force_suppress:
            hit &= top[rest, 0] == top[i, 0]
        top[rest, 0][hit] = -1
    kept[:nkeep] = top


def _detection_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    rows = _detection_rows(rctx, *ins, attrs)
    out = outs[0]
    out.fill(-1)
    nms = 0 < attrs.nms_threshold <= 1
    for b in range(rows.shape[0]):
        host = xp.to_host(rows[b])
        kept = host[host[:, 0] >= 0]             # a copy, in anchor order
        if kept.shape[0] == 0:
            continue
        if nms:
            _detection_nms(kept, attrs)
        out[b, :kept.shape[0]] = xp.from_host(kept)


register(OpDef(
    DET, inputs=("cls_prob", "loc_pred", "anchor"),
    params=(Param("clip", "bool", True, "clip the boxes to [0, 1]"),
            Param("threshold", "float", 0.01, "lowest score of a detection"),
            Param("background_id", "int", 0, "the background class (not used, as MXNet: "
                  "class 0 is the background)"),
            Param("nms_threshold", "float", 0.5, "IoU at which a box is suppressed; NMS "
                  "is skipped outside (0, 1]"),
            Param("force_suppress", "bool", False, "suppress across classes"),
            Param("variances", "floats", (0.1, 0.1, 0.2, 0.2), "the variances of the "
                  "encoding of loc_pred"),
            Param("nms_topk", "int", -1, "keep the nms_topk best detections before NMS, "
                  "-1 for all")),
    infer_shape=_detection_shape,
    infer_type=_same_float_types(DET, ("cls_prob", "loc_pred", "anchor")),
    compute={"cpu": _detection_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""SSD's detections from class probabilities ``cls_prob`` (batch, classes, anchors),
box offsets ``loc_pred`` (batch, anchors * 4) and anchors ``anchor`` (1, anchors, 4): the
output (batch, anchors, 6) holds rows ``[class, score, xmin, ymin, xmax, ymax]``.

Each anchor takes its best foreground class (class 0 is the background; ties go to the
lower class; ``class`` counts from 0 for class 1) unless its score is below ``threshold``,
and its box decoded as box_decode's with ``variances`` (clipped to [0, 1] with ``clip``).
Those rows come first, in anchor order; with ``0 < nms_threshold <= 1`` they are sorted by
score (stable), the best ``nms_topk`` kept and greedily suppressed (class set to -1) where
their IoU with a better row of the same class (any class with ``force_suppress``) reaches
``nms_threshold``. As MXNet's layout, suppressed rows keep their values with class -1; rows
past nms_topk keep their unsorted values with class -1; the rest of the rows are -1.

A post-processing step: declared non-differentiable (MXNet back-propagated zeros). Anchors
of another shape than (1, anchors, 4) are an MXNetError (MXNet read the first item).
"""))
_NUM_OUTPUTS[DET] = 1
