"""Anchor targets and region proposals (MXNet 1.9.1's ``contrib`` namespace):
``_contrib_MultiBoxTarget`` (SSD's training targets), ``_contrib_Proposal`` and
``_contrib_MultiProposal`` (Faster R-CNN's region proposal layer, one image and a batch).

The element-wise parts (IoU matrices, box decoding, the background probability of every
anchor, the regression targets) run on the data's device through its namespace
(``rctx.xp``) and the array methods NumPy and CuPy share. The sequential parts (the greedy
anchor-to-box matching, the choice of hard negatives, the running top-k of the proposals
and their greedy NMS) work on host copies of the few numbers they need (``HOST_CODE``), as
detection.py's NMS does; the results go back with ``xp.from_host``.

Proposal's arithmetic follows MXNet's: float32 with the pixel ``+ 1`` convention
(a box from x1 to x2 is ``x2 - x1 + 1`` wide), the sub-expressions MXNet evaluates in
double evaluated in float64 and rounded where MXNet stores a float, so float32 results match
MXNet's bit for bit where ``exp`` rounds alike.
"""
import math

import numpy as np

from ..base import FLOAT_DTYPES, op_error
from .common import check_num_inputs, compute_dtype, run_in
from .detection import _greedy_match, _host_markers, _overlap, _unary
from .registry import NON_DIFFERENTIABLE, OpDef, Param, get_op, register
from .shape_utils import check_shape

I64 = np.dtype("int64")
F32 = np.dtype("float32")
F64 = np.dtype("float64")

BLOCK = 1 << 20        # elements of a temporary: big inputs are read in blocks of this size


def _float_types(op, names, n_out):
    """infer_type of an op whose inputs (``names``) share one float dtype, as its outputs."""
    def infer_type(dtypes, attrs):
        for name, dt in zip(names, dtypes):
            if dt not in FLOAT_DTYPES:
                raise op_error(op, f"{name} must be a float array, got {dt}")
            if dt != dtypes[0]:
                raise op_error(op, f"{name} has dtype {dt}, but {names[0]} has {dtypes[0]}; "
                               "every input must have one dtype")
        return [dtypes[0]] * n_out
    return infer_type


def _param32(dtype, value):
    """A float parameter as MXNet holds it (float32), in the compute dtype."""
    return dtype.type(np.float32(value))


# ==== MultiBoxTarget ============================================================================
TARGET = "_contrib_MultiBoxTarget"


def _target_shape(shapes, attrs):
    check_num_inputs(TARGET, shapes, 3)
    anchor, label, cls = (tuple(s) for s in shapes)
    if len(anchor) != 3 or anchor[0] != 1 or anchor[1] <= 0 or anchor[2] != 4:
        raise op_error(TARGET, f"anchor must have shape (1, num_anchors, 4) with num_anchors "
                       f"> 0, got {anchor}")
    if len(label) != 3 or label[1] <= 0 or label[2] < 5:
        raise op_error(TARGET, f"label must have shape (batch, num_labels, width) with "
                       f"num_labels > 0 and width >= 5 ([class, xmin, ymin, xmax, ymax, "
                       f"...]), got {label}")
    b, n = label[0], anchor[1]
    if len(cls) != 3 or cls[0] != b or cls[1] <= 0 or cls[2] != n:
        raise op_error(TARGET, f"cls_pred must have shape ({b}, num_classes, {n}) with "
                       f"num_classes > 0 for anchor {anchor} and label {label}, got {cls}")
    _target_check(attrs)
    return [check_shape(TARGET, (b, 4 * n)), (b, 4 * n), (b, n)]


def _target_check(attrs):
    if len(attrs.variances) != 4:
        raise op_error(TARGET, f"variances must hold 4 numbers, got {attrs.variances}")
    if attrs.negative_mining_ratio > 0 and not attrs.negative_mining_thresh > 0:
        raise op_error(TARGET, f"negative_mining_thresh={attrs.negative_mining_thresh} must "
                       "be > 0 when negative mining is on (negative_mining_ratio="
                       f"{attrs.negative_mining_ratio})")
    if attrs.minimum_negative_samples < 0:
        raise op_error(TARGET, "minimum_negative_samples must be >= 0, got "
                       f"{attrs.minimum_negative_samples}")


def _valid_labels(labels, item):
    """How many labels of one item (host ``(M, W)``) are objects: those before the first row
    of class -1 (MXNet's padding, which must be -1 in the box columns too)."""
    pad = (labels[:, 0] == -1).nonzero()[0]
    if pad.size == 0:
        return labels.shape[0]
    g = int(pad[0])
    if not (labels[g, 1:5] == -1).all():
        raise op_error(TARGET, f"label[{item}, {g}] has class -1 (padding) but box "
                       f"{labels[g, 1:5].tolist()}; padding rows must be -1 throughout")
    return g


def _iou_matrix(anchors, boxes):
    """IoU (N, G) of anchors (N, 4) with boxes (G, 4), corner format, in MXNet's order of
    operations; 0 where the union is 0."""
    al, at, ar, ab = (anchors[:, k:k + 1] for k in range(4))
    gl, gt, gr, gb = (boxes[:, k] for k in range(4))
    inter = _overlap(al, ar, gl, gr) * _overlap(at, ab, gt, gb)
    union = (ar - al) * (ab - at) + (gr - gl) * (gb - gt) - inter
    empty = union == 0
    return inter / (union + empty) * ~empty


def _best_of_rows(work):
    """(best value, its column) of each row of host ``work`` ((N, G), -inf where a value
    may not win): the first column on ties."""
    col = work.argmax(axis=1)
    return work[np.arange(work.shape[0]), col], col


# MXNet's first matching stage is bipartite_matching's greedy matching at threshold 1e-6
_BEST_PAIRS = get_op("_contrib_bipartite_matching").parse_attrs({"threshold": 1e-6})


def _match_anchors(xp, iou, threshold):
    """MXNet's matching of one item's anchors to its objects on the host IoU matrix
    ``(N, G)``: greedily the best remaining (anchor, object) pair above 1e-6 (the first in
    anchor-major order on ties) until every object has an anchor, then, with ``threshold``
    > 0, every other anchor whose best IoU passes it. Returns (match (N,) int64 object of
    each anchor or -1, positive (N,) bool, best IoU of each anchor (N,), -1 where none)."""
    n, g = iou.shape
    dt = iou.dtype.type
    usable = iou > -1                         # NaN and IoUs of inverted boxes never win
    best, best_col = _best_of_rows(np.where(usable, iou, -np.inf))
    best = np.where(np.isfinite(best), best, dt(-1))
    rows = _host_markers(xp, (1, n))
    _greedy_match(xp, iou[None], _BEST_PAIRS, rows, _host_markers(xp, (1, g)))
    match = rows[0]
    positive = match >= 0
    if threshold > 0:
        extra = ~positive & (best > dt(np.float32(threshold)))
        match[extra] = best_col[extra]
        positive |= extra
    return match, positive, best


def _num_negatives(num_positive, num_anchors, attrs):
    """How many hard negatives to keep: ``negative_mining_ratio`` times the positives (the
    product in float32, truncated, as MXNet), at least ``minimum_negative_samples``, at most
    the anchors that are not positive."""
    with np.errstate(over="ignore"):          # a huge ratio asks for every anchor
        product = np.float32(num_positive) * np.float32(attrs.negative_mining_ratio)
    want = int(product) if product < num_anchors else num_anchors
    want = max(want, attrs.minimum_negative_samples)
    return min(want, num_anchors - num_positive)


def _hard_negatives(positive, best_iou, background, count, thresh):
    """The ``count`` anchors (host int64 indices) that are not positive, overlap every object
    less than ``thresh`` and give the background the lowest probability (host
    ``background``; anchor order on ties), or all such anchors when fewer qualify."""
    dt = best_iou.dtype.type
    cand = (~positive & (best_iou < dt(np.float32(thresh)))).nonzero()[0]
    order = np.argsort(background[cand], kind="stable")
    return cand[order[:count]]


def _background_probability(rctx, cls, work):
    """softmax(cls, axis=0)[0] of one item's predictions ``cls`` (C, N), in ``work`` dtype,
    reading the classes in blocks (no copy of cls)."""
    c, n = cls.shape
    step = max(1, BLOCK // n)
    xp = rctx.xp

    def rows(s):
        """Rows s, s + step of cls in the work dtype (float16 widened by the namespace's
        compiled cast, then reduced in float32: the same maxima, NaN included)."""
        return run_in(work, [cls[s:s + step]], xp)[0]
    top = run_in(work, [cls[0]], xp)[0]
    for s in range(1, c, step):
        top = top.clip(min=rows(s).max(axis=0))
    total = xp.zeros((n,), work)
    for s in range(0, c, step):
        total += _unary(rctx, "exp", rows(s) - top).sum(axis=0)
    return _unary(rctx, "exp", run_in(work, [cls[0]], xp)[0] - top) / total


def _encode(rctx, anchors, boxes, variances):
    """SSD's regression targets (M, 4) of ``boxes`` (M, 4) from their ``anchors`` (M, 4):
    center offsets over the anchor size and log size ratios, each over its variance."""
    dt = anchors.dtype.type
    half = dt(0.5)
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) * half, (anchors[:, 1] + anchors[:, 3]) * half
    gw, gh = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    gx, gy = (boxes[:, 0] + boxes[:, 2]) * half, (boxes[:, 1] + boxes[:, 3]) * half
    v = [_param32(anchors.dtype, x) for x in variances]
    out = rctx.xp.empty(anchors.shape, anchors.dtype)
    out[:, 0] = (gx - ax) / aw / v[0]
    out[:, 1] = (gy - ay) / ah / v[1]
    out[:, 2] = _unary(rctx, "log", gw / aw) / v[2]
    out[:, 3] = _unary(rctx, "log", gh / ah) / v[3]
    return out


def _target_item(rctx, b, anchors, labels, host_labels, cls, outs, attrs):
    """Targets of batch item ``b`` (arrays in the compute dtype) written into ``outs``."""
    xp = rctx.xp
    loc, mask, cls_target = outs
    g = _valid_labels(host_labels[b], b)
    if g == 0:
        return                                # MXNet: an item without objects is ignored
    iou = xp.to_host(_iou_matrix(anchors, labels[b, :g, 1:5]))
    match, positive, best = _match_anchors(xp, iou, attrs.overlap_threshold)
    pos = positive.nonzero()[0]
    if attrs.negative_mining_ratio > 0:
        count = _num_negatives(pos.size, positive.size, attrs)
        neg = pos[:0]
        if count > 0:
            background = xp.to_host(_background_probability(rctx, cls[b], anchors.dtype))
            neg = _hard_negatives(positive, best, background, count,
                                  attrs.negative_mining_thresh)
    else:
        neg = (~positive).nonzero()[0]
    if neg.size:
        cls_target[b][xp.from_host(neg)] = 0
    if pos.size == 0:
        return
    at, obj = xp.from_host(pos), xp.from_host(match[pos])
    gt = labels[b][obj]
    cls_target[b][at] = gt[:, 0] + 1          # class 0 is the background
    mask.reshape(mask.shape[0], -1, 4)[b][at] = 1
    loc.reshape(loc.shape[0], -1, 4)[b][at] = _encode(rctx, anchors[at], gt[:, 1:5],
                                                      attrs.variances)


def _target_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    work = compute_dtype(ins[0].dtype)
    anchor, label, cls = ins
    anchors = anchor.reshape(-1, 4).astype(work, copy=False)
    labels = label.astype(work, copy=False)
    scratch = [o if o.dtype == work else xp.empty(o.shape, work) for o in outs]
    xp.fill_zero(scratch[0])
    xp.fill_zero(scratch[1])
    scratch[2].fill(_param32(work, attrs.ignore_label))
    host_labels = xp.to_host(labels)
    for b in range(labels.shape[0]):
        _target_item(rctx, b, anchors, labels, host_labels, cls, scratch, attrs)
    for o, s in zip(outs, scratch):
        if s is not o:
            xp.cast_into(o, s)


register(OpDef(
    TARGET, inputs=("anchor", "label", "cls_pred"),
    params=(Param("overlap_threshold", "float", 0.5, "IoU above which an anchor is matched "
                  "to an object (<= 0: only the best anchor of each object)"),
            Param("ignore_label", "float", -1.0, "cls_target of anchors that are neither "
                  "matched nor negative"),
            Param("negative_mining_ratio", "float", -1.0, "hard negatives per positive; <= 0 "
                  "makes every unmatched anchor a negative"),
            Param("negative_mining_thresh", "float", 0.5, "anchors overlapping an object "
                  "this much are never negatives (with negative mining)"),
            Param("minimum_negative_samples", "int", 0, "the fewest hard negatives (with "
                  "negative mining)"),
            Param("variances", "floats", (0.1, 0.1, 0.2, 0.2), "the variances the "
                  "regression targets are divided by")),
    infer_shape=_target_shape,
    infer_type=_float_types(TARGET, ("anchor", "label", "cls_pred"), 3),
    compute={"cpu": _target_compute}, gradient=NON_DIFFERENTIABLE, num_outputs=3,
    output_names=("loc_target", "loc_mask", "cls_target"),
    doc="""SSD's training targets from anchors ``anchor`` (1, N, 4), labels ``label``
(batch, M, width: rows ``[class, xmin, ymin, xmax, ymax, ...]``, padded with rows of -1) and
class predictions ``cls_pred`` (batch, classes, N). Returns ``loc_target`` (batch, 4 N),
``loc_mask`` (batch, 4 N) and ``cls_target`` (batch, N).

Per item, each object takes the anchor it overlaps most (greedily, best pair first, IoU
above 1e-6), then every other anchor whose best IoU exceeds ``overlap_threshold`` (when >
0) is matched to that object. A matched anchor gets ``cls_target`` = class + 1, a mask of
ones and the regression target ``[(gx - ax) / aw / v0, (gy - ay) / ah / v1,
log(gw / aw) / v2, log(gh / ah) / v3]`` (centers and sizes of object and anchor).
Without negative mining every other anchor is a negative (``cls_target`` 0); with
``negative_mining_ratio`` > 0 only the ``ratio`` x positives (at least
``minimum_negative_samples``) anchors overlapping every object less than
``negative_mining_thresh`` whose softmax(cls_pred) gives the background the lowest
probability are, and the rest get ``ignore_label``. An item without objects is all
``ignore_label``.

Declared non-differentiable: MXNet 1.9.1 returns a zero gradient for cls_pred.
MXNet's CPU kernel ignored ``minimum_negative_samples`` (its GPU kernel used it, as mxlite
does) and failed when fewer anchors qualified as negatives than asked for; mxlite takes
those there are.

>>> anchor = mx.nd.array([[[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0, 0.5, 0.5, 1]]])
>>> label = mx.nd.array([[[2, 0.1, 0.1, 0.5, 0.5], [-1, -1, -1, -1, -1]]])
>>> loc, mask, cls = mx.nd.contrib.MultiBoxTarget(anchor, label, mx.nd.zeros((1, 4, 3)))
>>> cls.asnumpy().tolist()
[[3.0, 0.0, 0.0]]
"""))


# ==== Proposal and MultiProposal ================================================================
PROPOSAL = "_contrib_Proposal"
MULTI = "_contrib_MultiProposal"


def _proposal_check(op, attrs):
    if not attrs.scales or not attrs.ratios:
        raise op_error(op, f"scales {attrs.scales} and ratios {attrs.ratios} must not be empty")
    bad = [x for x in attrs.scales + attrs.ratios if not (0 < x < math.inf)]
    if bad:
        raise op_error(op, f"scales {attrs.scales} and ratios {attrs.ratios} must be positive "
                       f"and finite, got {bad}")
    if attrs.feature_stride <= 0:
        raise op_error(op, f"feature_stride must be > 0, got {attrs.feature_stride}")
    if attrs.rpn_post_nms_top_n < 0:
        raise op_error(op, f"rpn_post_nms_top_n must be >= 0, got {attrs.rpn_post_nms_top_n}")


def _proposal_shape(op):
    def infer_shape(shapes, attrs):
        check_num_inputs(op, shapes, 3)
        cls, bbox, info = (tuple(s) for s in shapes)
        anchors = len(attrs.scales) * len(attrs.ratios)
        if len(cls) != 4 or cls[1] != 2 * anchors or cls[2] <= 0 or cls[3] <= 0:
            raise op_error(op, f"cls_prob must have shape (batch, 2 * {anchors}, height, width) "
                           f"for {len(attrs.ratios)} ratios x {len(attrs.scales)} scales with "
                           f"height, width > 0, got {cls}")
        b = cls[0]
        if op == PROPOSAL and b != 1:
            raise op_error(op, f"cls_prob holds {b} images; Proposal takes one (batch 1), "
                           "MultiProposal a batch")
        if bbox != (b, 2 * cls[1], cls[2], cls[3]):
            raise op_error(op, f"bbox_pred must have shape {(b, 2 * cls[1], cls[2], cls[3])} "
                           f"for cls_prob {cls}, got {bbox}")
        if info != (b, 3):
            raise op_error(op, f"im_info must have shape {(b, 3)} (height, width, scale per "
                           f"image) for cls_prob {cls}, got {info}")
        _proposal_check(op, attrs)
        rows = check_shape(op, (b * attrs.rpn_post_nms_top_n, 5))
        return [rows, (rows[0], 1)]
    return infer_shape


def _proposal_backward_shape(in_shapes, out_shapes, attrs):
    """bbox_pred (B, 2 C, H, W) and im_info (B, 3) from cls_prob (B, C, H, W), as MXNet."""
    cls, bbox, info = in_shapes
    if cls is not None and len(cls) == 4:
        bbox = bbox if bbox is not None else (cls[0], 2 * cls[1], cls[2], cls[3])
        info = info if info is not None else (cls[0], 3)
    return [cls, bbox, info]


def _anchor_table(attrs):
    """Host (A, 4) float32 anchors of the cell at the origin, ratio-major: each ratio's box of
    the stride's area, rounded to whole pixels, times each scale, centred on the cell's center
    (MXNet's float32 arithmetic, its double sub-expressions in double)."""
    f = np.float32
    side = f(f(attrs.feature_stride - 1.0) + f(1))
    center = f(0.5 * (float(side) - 1.0))
    rows = []
    for ratio in attrs.ratios:
        for scale in attrs.scales:
            area = f(math.floor(f(f(side * side) / f(ratio))))
            w = f(math.floor(f(f(math.sqrt(area)) + f(0.5)))) * f(scale)
            h = f(math.floor(f(f(w / f(scale)) * f(ratio)) + f(0.5))) * f(scale)
            hw, hh = f(f(0.5) * f(w - f(1))), f(f(0.5) * f(h - f(1)))
            rows.append([center - hw, center - hh, center + hw, center + hh])
    return np.array(rows, dtype=F32)


def _grid_blocks(height, width, anchors):
    """(h0, h1, w0, w1) windows of the feature map, in proposal order, of about BLOCK
    proposals each: whole rows where they fit, else pieces of one row."""
    row = width * anchors
    if row <= BLOCK:
        step = BLOCK // row
        return [(h, min(h + step, height), 0, width) for h in range(0, height, step)]
    step = max(1, BLOCK // anchors)
    return [(h, h + 1, w, min(w + step, width)) for h in range(height)
            for w in range(0, width, step)]


def _decode(rctx, boxes, deltas, info, attrs, work):
    """Proposal boxes [x1, y1, x2, y2] from anchor ``boxes`` and ``deltas`` (4 contiguous
    columns each), clipped to the image (``info``: height, width, ...), in the compute dtype
    ``work``; the sub-expressions MXNet evaluates in double are evaluated in float64."""
    x1, y1, x2, y2 = boxes
    if attrs.iou_loss:                        # deltas move the corners
        pred = [c + d for c, d in zip(boxes, deltas)]
    else:
        one = work.type(1)
        w, h = x2 - x1 + one, y2 - y1 + one
        cx = (x1.astype(F64) + 0.5 * (w.astype(F64) - 1.0)).astype(work)
        cy = (y1.astype(F64) + 0.5 * (h.astype(F64) - 1.0)).astype(work)
        px = (deltas[0] * w + cx).astype(F64)
        py = (deltas[1] * h + cy).astype(F64)
        hw = 0.5 * ((_unary(rctx, "exp", deltas[2]) * w).astype(F64) - 1.0)
        hh = 0.5 * ((_unary(rctx, "exp", deltas[3]) * h).astype(F64) - 1.0)
        pred = [(px - hw).astype(work), (py - hh).astype(work), (px + hw).astype(work),
                (py + hh).astype(work)]
    zero = work.type(0)
    limits = (info[1] - work.type(1), info[0] - work.type(1))     # width, height
    return [c.clip(max=limits[k % 2]).clip(min=zero) for k, c in enumerate(pred)]


def _proposal_block(rctx, item, window, table, info, attrs, work, floor):
    """Candidates of one window of the map, in proposal order: (host boxes (m, 4), host
    scores (m,)) of the proposals whose score can pass ``floor`` (the running k-th best;
    None: all), scores -1 where the box lies in the padding or is too small."""
    xp = rctx.xp
    cls, bbox = item
    a = table.shape[0]
    h0, h1, w0, w1 = window
    raw = cls[a:, h0:h1, w0:w1].transpose(1, 2, 0).reshape(-1).astype(work)
    if floor is None:
        sel = xp.arange(raw.shape[0], I64)
    else:                                     # a score is itself or -1: both must pass
        sel = (raw.clip(min=work.type(-1)) > floor).nonzero()[0]
        if sel.shape[0] == 0:
            return None
    per_row = (w1 - w0) * a
    hh, ww, aa = h0 + sel // per_row, w0 + (sel % per_row) // a, sel % a
    picked = bbox.reshape(a, 4, *bbox.shape[1:])[aa, :, hh, ww]         # (m, 4)
    deltas = xp.ascontiguousarray(picked.T, dtype=work)
    stride = attrs.feature_stride
    dx, dy = (ww * stride).astype(work), (hh * stride).astype(work)
    anchors = xp.from_host(table)[aa].astype(work)
    boxes = [anchors[:, 0] + dx, anchors[:, 1] + dy, anchors[:, 2] + dx, anchors[:, 3] + dy]
    pred = _decode(rctx, boxes, deltas, info, attrs, work)
    score = raw[sel]
    score[(hh >= info[3]) | (ww >= info[4])] = -1       # cells of the padding
    min_size = work.type(attrs.rpn_min_size) * info[2]
    one = work.type(1)
    small = (pred[2] - pred[0] + one < min_size) | (pred[3] - pred[1] + one < min_size)
    half = min_size / work.type(2)           # MXNet widens a too small box before dropping it
    for k in range(4):
        pred[k][small] += -half if k < 2 else half
    score[small] = -1
    boxes_out = xp.empty((sel.shape[0], 4), work)
    for k in range(4):
        boxes_out[:, k] = pred[k]
    return xp.to_host(boxes_out), xp.to_host(score)


def _merge_top(best, new, k):
    """The ``k`` best of two candidate sets (boxes, scores) by score (descending, NaN
    last), ties by position: ``best`` (sorted) comes from earlier windows than ``new`` (in
    proposal order), so a stable sort of the two in a row breaks ties by position."""
    if best is None:
        merged = new
    else:
        merged = tuple(np.concatenate([b, n]) for b, n in zip(best, new))
    order = np.argsort(-merged[1], kind="stable")[:k]
    return tuple(x[order] for x in merged)


def _floor(best, k):
    """The score a new candidate must beat to enter the running top ``k``: the k-th best
    once there are k (a later proposal loses a tie), None while any candidate may enter
    (fewer than k, or a NaN k-th, which every number beats)."""
    if best is None or best[1].size < k or best[1][-1] != best[1][-1]:
        return None
    return best[1][-1]


def _nms_keep(boxes, thresh, limit):
    """Greedy NMS of host ``boxes`` (K, 4) sorted by score, pixel convention (``+ 1``):
    positions of the kept boxes, at most ``limit``; a box is dropped when its overlap
    with a kept one exceeds ``thresh``."""
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    one, zero = boxes.dtype.type(1), boxes.dtype.type(0)
    area = (x2 - x1 + one) * (y2 - y1 + one)
    alive = np.ones(boxes.shape[0], bool)
    keep = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(boxes.shape[0]):
            if len(keep) == limit:
                break
            if not alive[i]:
                continue
            keep.append(i)
            r = slice(i + 1, None)           # views: cheaper than gathering the alive ones
            w = np.maximum(np.minimum(x2[r], x2[i]) - np.maximum(x1[r], x1[i]) + one, zero)
            h = np.maximum(np.minimum(y2[r], y2[i]) - np.maximum(y1[r], y1[i]) + one, zero)
            inter = w * h
            alive[r] &= ~(inter / (area[i] + area[r] - inter) > thresh)
    return np.array(keep, I64)


def _output_rows(b, best, keep, count):
    """Host output rows ``[b, x1, y1, x2, y2]`` and scores of one image: the kept boxes of
    the top-k ``best`` (boxes, scores) in order, repeated cyclically up to ``count`` rows
    (MXNet's padding)."""
    pick = keep[np.arange(count) % keep.size] if count else keep[:0]
    rows = np.empty((count, 5), best[0].dtype)
    rows[:, 0] = b
    rows[:, 1:] = best[0][pick]
    return rows, best[1][pick].reshape(count, 1)


def _image_info(op, host_info, b, shape, stride, work):
    """(height, width, scale) of image ``b`` in the compute dtype, then the rows and columns
    of the map the image covers (the truncated quotients by the stride, as MXNet), checked:
    the map must cover the image (MXNet's check)."""
    info = [work.type(v) for v in host_info[b]]
    if not all(math.isfinite(v) for v in info):
        raise op_error(op, f"im_info[{b}] = {host_info[b].tolist()} must be finite")
    real = [int(info[k] / work.type(stride)) for k in range(2)]
    if real[0] > shape[0] or real[1] > shape[1]:
        raise op_error(op, f"im_info[{b}] = {host_info[b].tolist()}: an image of "
                       f"{info[0]} x {info[1]} pixels needs a feature map of at least "
                       f"{real[0]} x {real[1]} at feature_stride {stride}, got "
                       f"{shape[0]} x {shape[1]}")
    return info + real


def _proposal_compute(op):
    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        cls, bbox, im_info = ins
        work = compute_dtype(cls.dtype)
        table = _anchor_table(attrs)
        _, _, height, width = cls.shape
        count = table.shape[0] * height * width
        pre = min(attrs.rpn_pre_nms_top_n, count) if attrs.rpn_pre_nms_top_n > 0 else count
        post = attrs.rpn_post_nms_top_n
        host_info = xp.to_host(im_info)
        thresh = _param32(work, attrs.threshold)
        windows = _grid_blocks(height, width, table.shape[0])
        for b in range(cls.shape[0]):
            info = _image_info(op, host_info, b, (height, width), attrs.feature_stride, work)
            best = None
            for window in windows:
                new = _proposal_block(rctx, (cls[b], bbox[b]), window, table, info, attrs,
                                      work, _floor(best, pre))
                if new is not None:
                    best = _merge_top(best, new, pre)
            keep = _nms_keep(best[0], thresh, min(post, pre))
            rows, scores = _output_rows(b, best, keep, post)
            part = slice(b * post, (b + 1) * post)
            xp.cast_into(outs[0][part], xp.from_host(rows))
            xp.cast_into(outs[1][part], xp.from_host(scores))
    return compute


_PROPOSAL_PARAMS = (
    Param("rpn_pre_nms_top_n", "int", 6000, "proposals kept (best scores) before NMS; <= 0 "
          "for all"),
    Param("rpn_post_nms_top_n", "int", 300, "proposals output per image (after NMS)"),
    Param("threshold", "float", 0.7, "NMS: a proposal overlapping a better one more than "
          "this is dropped"),
    Param("rpn_min_size", "int", 16, "proposals narrower or lower than this (times the "
          "image scale) score -1"),
    Param("scales", "floats", (4.0, 8.0, 16.0, 32.0), "anchor sizes, in strides"),
    Param("ratios", "floats", (0.5, 1.0, 2.0), "anchor aspect ratios (height / width)"),
    Param("feature_stride", "int", 16, "pixels between two cells of the feature map"),
    Param("output_score", "bool", False, "also return the scores"),
    Param("iou_loss", "bool", False, "bbox_pred moves the corners (instead of center and "
          "log size)"),
)

_PROPOSAL_DOC = """Region proposals of Faster R-CNN's RPN from ``cls_prob`` ({batch}, 2 A,
H, W) (background then object scores of A = len(ratios) x len(scales) anchors per cell),
``bbox_pred`` ({batch}, 4 A, H, W) and ``im_info`` ({batch}, 3) (image height, width and
scale). Returns the rois ({rows}, 5) ``[image, x1, y1, x2, y2]`` and, with
``output_score``, their scores ({rows}, 1).

Anchors: for each ratio, a box of the stride's area with that aspect, in whole pixels, times
each scale, centred on each cell (``feature_stride`` pixels apart); widths count pixels
(``x2 - x1 + 1``). Each anchor is moved by its deltas (center offsets in widths and log
sizes, or corner offsets with ``iou_loss``) and clipped to the image; cells outside the
image (``im_info``) and boxes under ``rpn_min_size`` x scale pixels score -1 (MXNet also
widens the latter by that size). The ``rpn_pre_nms_top_n`` best (ties by position, NaN
last) go through greedy NMS at ``threshold``; the first ``rpn_post_nms_top_n`` kept are the
output, repeated in order when fewer are kept (MXNet's padding).

Declared non-differentiable: MXNet 1.9.1 returns zero gradients. MXNet took float32 only;
mxlite also takes float16 (computed in float32) and float64. An image larger than the map
covers is an MXNetError, as MXNet's; non-finite im_info is one too.
"""

for _op, _batch, _rows in ((PROPOSAL, "1", "rpn_post_nms_top_n"),
                           (MULTI, "B", "B * rpn_post_nms_top_n")):
    register(OpDef(
        _op, inputs=("cls_prob", "bbox_pred", "im_info"), params=_PROPOSAL_PARAMS,
        infer_shape=_proposal_shape(_op), backward_shape=_proposal_backward_shape,
        infer_type=_float_types(_op, ("cls_prob", "bbox_pred", "im_info"), 2),
        compute={"cpu": _proposal_compute(_op)}, gradient=NON_DIFFERENTIABLE, num_outputs=2,
        output_names=("output", "score"),
        num_visible_outputs=lambda attrs: 2 if attrs.output_score else 1,
        doc=_PROPOSAL_DOC.format(batch=_batch, rows=_rows)))

# Functions that compute on the host (tests/test_device.py reads this).
HOST_CODE = {
    "_best_of_rows": "the best object of each anchor, on the host copy of one item's IoU "
                     "matrix (the matching is sequential)",
    "_match_anchors": "the greedy anchor-to-object matching of one item, one step per "
                      "object, on the host copy of its IoU matrix",
    "_hard_negatives": "sorts the candidate negatives of one item by the host copy of their "
                       "background probability (one value per anchor)",
    "_anchor_table": "the anchors of one cell, a table from the parameters sent with "
                     "from_host",
    "_merge_top": "the running top-k proposals (at most k plus one block of candidates) "
                  "merged on the host, where the sequential NMS reads them",
    "_nms_keep": "greedy NMS over the host copy of the top-k proposals, one vectorised step "
                 "per kept box",
    "_output_rows": "the output rows of one image from the host top-k and the kept "
                    "positions, sent with from_host",
}
