"""Large-tensor rows: the anchor-target and proposal operators of mxlite/ops/proposal.py.

MultiBoxTarget reads a float16 cls_pred past 2**32 elements (many classes of a few anchors):
the hard negatives are the anchors whose class logits past 2**31 and 2**32 (and at the tail)
make the background least likely. Proposal and MultiProposal read a float16 bbox_pred past
2**32 elements (cls_prob is half of it): scored proposals near the head, around 2**31 and at
the tail carry corner deltas (``iou_loss``: exact in float16) whose last ones sit past
2**32; the output equals the shifted, clipped anchors (a closed form).
"""
import math

import numpy as np

import mxlite as mx

from . import Row


def _write(x, values):
    """``x[pos] = value`` for each flat position of ``values``."""
    for pos, v in values.items():
        x[pos] = v


# ---- MultiBoxTarget -------------------------------------------------------------------------
def _target_row(t):
    n = 256                                      # anchors
    c = t.P32 // n + 2                           # classes: cls_pred passes 2**32 elements
    cls = mx.nd.zeros((c * n,), dtype="float16")
    # (class, anchor) -> logit: past 2**31, past 2**32 and the last element
    logits = {((t.P31 + 5) // n, 5): 3.0, ((t.P32 + 3) // n, 7): 5.0, (c - 1, n - 1): 7.0}
    _write(cls, {k * n + j: v for (k, j), v in logits.items()})
    t.seen(cls)
    anchors = [[0, 0, 0.5, 0.5]] + [[0.625, 0.625, 0.875, 0.875]] * (n - 1)
    anchor = mx.nd.array([anchors], dtype="float16")
    label = mx.nd.array([[[1, 0, 0, 0.5, 0.5], [-1] * 5]], dtype="float16")
    loc, mask, target = mx.nd.contrib.MultiBoxTarget(anchor, label, cls.reshape((1, c, n)),
                                                     negative_mining_ratio=3)
    # anchor 0 is the object's (class 1 -> target 2); one positive, so 3 hard negatives:
    # the anchors whose foreground logits make the background least likely
    want = np.full((1, n), -1, np.float16)
    want[0, 0] = 2
    want[0, [j for _, j in logits]] = 0
    t.equal(target, want, "MultiBoxTarget cls_target")
    want_mask = np.zeros((1, 4 * n), np.float16)
    want_mask[0, :4] = 1
    t.equal(mask, want_mask, "MultiBoxTarget loc_mask")
    t.equal(loc, np.zeros((1, 4 * n), np.float16), "MultiBoxTarget loc_target")


# ---- Proposal / MultiProposal ---------------------------------------------------------------
_RPN = dict(scales=(4,), ratios=(1,), feature_stride=1, rpn_min_size=0, iou_loss=True,
            output_score=True)                  # one anchor per cell: [-1.5, -1.5, 1.5, 1.5]


def _marks(batch, hw):
    """{(image, cell): (score, corner deltas)} of the scored proposals: near the head, in the
    middle and at the tail of the maps."""
    cells = [3, hw // 3, hw // 2 + 7, hw - 1]
    images = [0, 0, batch - 1, batch - 1]
    deltas = [(1, 2, 3, 4), (-2, 1, 2, -1), (0, -1, 1, 2), (1, -1, 2, 3)]
    return {(b, s): (0.25 * (k + 1), d)
            for k, (b, s, d) in enumerate(zip(images, cells, deltas))}


def _rpn_oracle(marks, batch, height, width):
    """Rows [image, x1, y1, x2, y2] and scores: each image's marked proposals by score, the
    anchor of cell (h, w) moved by the corner deltas and clipped to the image."""
    rows, scores = [], []
    for b in range(batch):
        mine = sorted(((v, s, d) for (i, s), (v, d) in marks.items() if i == b), reverse=True)
        for v, s, d in mine:
            h, w = divmod(s, width)
            box = [w - 1.5 + d[0], h - 1.5 + d[1], w + 1.5 + d[2], h + 1.5 + d[3]]
            lim = [width - 1, height - 1] * 2
            rows.append([b] + [min(max(x, 0), m) for x, m in zip(box, lim)])
            scores.append([v])
    return np.array(rows, np.float32).astype(np.float16), np.array(scores, np.float16)


def _rpn_row(name, batch):
    def run(t):
        # bbox_pred past 2**32 elements in all; im_info holds the map's size in float16,
        # exact for a power of two and a multiple of 32 below 2**16
        height = 1 << (math.isqrt(t.P32 // (4 * batch)).bit_length() - 1)
        width = (t.P32 // (4 * batch * height) // 32 + 1) * 32
        hw = height * width
        cls = mx.nd.zeros((batch * 2 * hw,), dtype="float16")
        bbox = mx.nd.zeros((batch * 4 * hw,), dtype="float16")
        t.seen(cls, bbox)
        marks = _marks(batch, hw)
        _write(cls, {(2 * b + 1) * hw + s: v for (b, s), (v, _) in marks.items()})
        _write(bbox, {(4 * b + k) * hw + s: d[k] for (b, s), (_, d) in marks.items()
                      for k in range(4)})
        t.check(max(marks) == (batch - 1, hw - 1) and (4 * batch) * hw > t.P32,
                "the last deltas lie past 2**32")
        info = mx.nd.array([[height, width, 1]] * batch, dtype="float16")
        per = len(marks) // batch
        rois, scores = getattr(mx.nd.contrib, name)(
            cls.reshape((batch, 2, height, width)), bbox.reshape((batch, 4, height, width)),
            info, rpn_pre_nms_top_n=per, rpn_post_nms_top_n=per, **_RPN)
        want_rois, want_scores = _rpn_oracle(marks, batch, height, width)
        t.equal(rois, want_rois, f"{name} rois")
        t.equal(scores, want_scores, f"{name} scores")
    return run


ROWS = {
    "_contrib_MultiBoxTarget": Row(_target_row, "float16"),
    "_contrib_Proposal": Row(_rpn_row("Proposal", 1), "float16"),
    "_contrib_MultiProposal": Row(_rpn_row("MultiProposal", 2), "float16"),
}
