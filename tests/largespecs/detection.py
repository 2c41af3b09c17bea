"""Large-tensor rows: the box operators of mxlite/ops/detection.py.

They take float data only; the rows use float16 (the least memory per element). box_iou
(the boxes of lhs), box_encode (refs), bipartite_matching (a batch of score matrices) and MultiBoxPrior (its
output) pass 2**32 elements; box_nms and box_decode hold two or three arrays of the big
size, so they pass 2**31 (each row says why). Boxes are written around 2**31 (2**32) and at the tail,
where a wrapped 32-bit index would lose them; the results there equal the same op on those
boxes alone, or a closed form.
"""
import math

import numpy as np

import mxlite as mx

from . import Row

TWO_BIG = ("box_nms's output has data's shape (plus an int64 row record): 2**32 float16 "
           "elements in data and output are 16 GiB, the whole peak")


def _rows_at(t, n, per):
    """Rows (``per`` elements each) of an ``n``-element array that hold the positions a
    check reads and the markers of ``t.big``."""
    return sorted({p // per for p in set(t.positions(n)) | set(t.marks(n))})


def _box(r):
    """A distinct corner box (float16-exact) for row ``r``."""
    x, y = r % 5, r % 7
    return [x, y, x + 1 + r % 3, y + 2 + r % 4]


def _write_rows(x, rows, value):
    for r in rows:
        x[r] = mx.nd.array(value(r), dtype=x.dtype)


_SLOW16 = ("float16 arithmetic in NumPy is slow: past 2**32 float16 elements this row took "
           "about 4 minutes; past 2**31 float32 elements (the same 8 GiB) it checks the same "
           "indexing in a fraction of that")


def _box_iou_row(t):
    n = t.P31 + 16                               # lhs boxes: n elements
    lhs = t.big("float32", n, shape=(n // 4, 4), fill=1)
    rows = _rows_at(t, n, 4)
    _write_rows(lhs, rows, _box)
    rhs = mx.nd.array([[1, 2, 4, 5], [0, 0, 2, 2]], dtype="float32")
    got = mx.nd.contrib.box_iou(lhs, rhs)
    t.seen(got)
    t.shape(got, (n // 4, 2), "box_iou")
    small = mx.nd.array([_box(r) for r in rows], dtype="float32")
    want = mx.nd.contrib.box_iou(small, rhs).asnumpy()
    flat = [r * 2 + k for r in rows for k in range(2)]
    t.equal(t.values(got, flat).reshape(want.shape), want, "box_iou rows")


def _box_nms_row(t):
    w = 8                                        # [id, score, 4 coordinates, 0, 0]
    n = (t.P31 // w + 2) * w
    data = t.big("float16", n, shape=(1, n // w, w))   # scores 0: not valid
    mid, tail = (t.P31 + 5) // w, n // w - 1
    boxes = {0: [0, 0.25, 0, 0, 1, 1, 0, 0], mid: [0, 0.75, 2, 2, 4, 4, 0, 0],
             mid + 1: [0, 0.5, 2, 2, 4, 4.25, 0, 0], tail: [0, 0.875, 5, 5, 6, 7, 0, 0]}
    _write_rows(data.reshape((n // w, w)), boxes, boxes.get)
    got = mx.nd.contrib.box_nms(data, overlap_thresh=0.5)
    t.seen(got)
    t.shape(got, (1, n // w, w), "box_nms")
    kept = [boxes[tail], boxes[mid], boxes[0]]   # mid + 1 overlaps mid: suppressed
    pos = t.positions(n)
    want = [kept[p // w][p % w] if p // w < len(kept) else -1 for p in pos]
    t.equal(t.values(got, pos), np.array(want, dtype=np.float16), "box_nms output")


def _box_encode_row(t):
    m = (t.P32 + 16) // 4                        # refs: past 2**32 elements
    refs = t.big("float16", 4 * m, shape=(1, m, 4), fill=1)
    targets = _rows_at(t, 4 * m, 4)
    _write_rows(refs.reshape((m, 4)), targets, _box)
    k = len(targets)
    anchors = mx.nd.array([[[0, 0, 2, 3]] * k], dtype="float16")
    samples = mx.nd.ones((1, k), dtype="float16")
    means, stds = mx.nd.zeros((4,), dtype="float16"), mx.nd.ones((4,), dtype="float16")
    # the match indices pass 2**30 (refs rows): int64 matches keep them exact
    got, mask = mx.nd.contrib.box_encode(samples, mx.nd.array([targets], dtype="int64"),
                                         anchors, refs, means, stds)
    small = mx.nd.array([[_box(r) for r in targets]], dtype="float16")
    want, _ = mx.nd.contrib.box_encode(samples, mx.nd.array([list(range(k))], dtype="float16"),
                                       anchors, small, means, stds)
    t.equal(got, want, "box_encode targets")
    t.equal(mask, mx.nd.ones((1, k, 4), dtype="float16"), "box_encode masks")


def _box_decode_row(t):
    n = t.P31 // 8 + 2                           # data (2, n, 4): past 2**31 elements
    data = t.big("float16", 8 * n, shape=(2, n, 4), values=(0.5, -0.25, 0.75, 1))
    anchors = t.big("float16", 4 * n, shape=(1, n, 4), values=(1, 2, 3, 4), fill=0.5)
    got = mx.nd.contrib.box_decode(data, anchors, std2=0.5, clip=0.8)
    t.seen(got)
    pos = _rows_at(t, 8 * n, 4)                  # rows of the (2 n, 4) data
    small_d = t.small(data.reshape((2 * n, 4)),
                      [r * 4 + k for r in pos for k in range(4)]).reshape((1, len(pos), 4))
    small_a = t.small(anchors.reshape((n, 4)),
                      [(r % n) * 4 + k for r in pos for k in range(4)]).reshape(
                          (1, len(pos), 4))
    want = mx.nd.contrib.box_decode(small_d, small_a, std2=0.5, clip=0.8).asnumpy()
    flat = [r * 4 + k for r in pos for k in range(4)]
    t.equal(t.values(got, flat).reshape(want.shape), want, "box_decode rows")


def _bipartite_row(t):
    """A batch of 4 x 4 score matrices past 2**31 scores (items are matched together in
    blocks): the items around 2**31 and at the tail equal the op on those items."""
    n = t.P31 + 16
    scores = t.big("float32", n, shape=(n // 16, 4, 4))   # 0, with 3, 5, 7, 9 at the marks
    got_rows, got_cols = mx.nd.contrib.bipartite_matching(scores, threshold=-1)
    items = _rows_at(t, n, 16)
    small = t.small(scores, [i * 16 + k for i in items for k in range(16)])
    want_rows, want_cols = mx.nd.contrib.bipartite_matching(small.reshape((len(items), 4, 4)),
                                                            threshold=-1)
    for got, want, what in ((got_rows, want_rows, "rows"), (got_cols, want_cols, "columns")):
        t.seen(got)
        flat = [i * 4 + k for i in items for k in range(4)]
        t.equal(t.values(got, flat).reshape(want.shape), want,
                f"bipartite_matching {what}")


_PRIOR = dict(sizes=(0.5, 0.25, 0.125, 0.0625), ratios=(1, 2, 0.5, 4, 0.25))   # 8 anchors


def _prior_oracle(h, w, positions):
    """MultiBoxPrior's closed form (float32, MXNet's order of operations) at flat output
    ``positions``, as float16."""
    f = np.float32
    pairs = [(s, _PRIOR["ratios"][0]) for s in _PRIOR["sizes"]]
    pairs += [(_PRIOR["sizes"][0], r) for r in _PRIOR["ratios"][1:]]
    out = []
    for p in positions:
        loc, j = divmod(p, 4)
        cell, k = divmod(loc, len(pairs))
        r, c = divmod(cell, w)
        size, ratio = pairs[k]
        root = f(math.sqrt(f(ratio)))
        hw = f(size) * f(h) / f(w) * root / f(2)
        hh = f(size) / root / f(2)
        cx = (f(c) + f(0.5)) * (f(1) / f(w))
        cy = (f(r) + f(0.5)) * (f(1) / f(h))
        out.append([cx - hw, cy - hh, cx + hw, cy + hh][j])
    return np.array(out, dtype=np.float32).astype(np.float16)


def _prior_row(t):
    h, w = 8, t.P32 // 256 + 1                   # 8 * w cells of 8 anchors: past 2**32
    data = mx.nd.zeros((1, 1, h, w), dtype="float16")
    got = mx.nd.contrib.MultiBoxPrior(data, **_PRIOR)
    t.seen(got)
    t.shape(got, (1, h * w * 8, 4), "MultiBoxPrior")
    pos = t.positions(got.size)
    t.equal(t.values(got, pos), _prior_oracle(h, w, pos), "MultiBoxPrior anchors")


ROWS = {
    # float32 past 2**31: in float16, NumPy's arithmetic made 2**32 elements of these two
    # rows take about 4 minutes each, a tenth of CI's large sweep (same 8 GiB of data)
    "_contrib_box_iou": Row(_box_iou_row, "float32", "2**31", _SLOW16),
    "_contrib_box_nms": Row(_box_nms_row, "float16", "2**31", TWO_BIG),
    "_contrib_box_encode": Row(_box_encode_row, "float16"),
    "_contrib_box_decode": Row(_box_decode_row, "float16", "2**31",
                               "data, anchors and output hold 2.5 arrays of the big size: "
                               "2**32 float16 elements would be 20 GiB, past the 16 GiB peak"),
    "_contrib_bipartite_matching": Row(_bipartite_row, "float32", "2**31", _SLOW16),
    "_contrib_MultiBoxPrior": Row(_prior_row, "float16"),
}


def _detection_row(t):
    """cls_prob (1, classes, 256) past 2**31 float32 elements: the best class of an anchor
    sits past 2**31 (and at the tail), its id exact in float32."""
    n = 256
    c = t.P31 // n + 2
    cls = t.big("float32", c * n, shape=(1, c, n), values=(0.25, 0.5, 0.75))
    loc = mx.nd.zeros((1, 4 * n))
    anchor = mx.nd.array([[[i / n, 0, i / n + 0.5, 0.5] for i in range(n)]])
    got = mx.nd.contrib.MultiBoxDetection(cls, loc, anchor, threshold=0.1, nms_threshold=0.9,
                                          clip=False)
    # the marks past class 0 are the only scores above threshold: one row each, by score
    marks = [(v, p) for p, v in zip(t.marks(c * n), (0.25, 0.5, 0.75)) if p >= n]
    want = []
    for v, p in sorted(marks, reverse=True):
        cls_id, i = divmod(p, n)
        want.append([cls_id - 1, v, i / n, 0, i / n + 0.5, 0.5])
    want += [[-1] * 6] * (n - len(want))
    t.equal(got.reshape((n, 6)), np.array(want, dtype=np.float32), "MultiBoxDetection")
    t.check(want[0][0] > t.P31 // n - 2, "the best class lies past 2**31 elements")


ROWS["_contrib_MultiBoxDetection"] = Row(
    _detection_row, "float32", "2**31",
    "class ids are output in the data's dtype: float32 keeps ids past 2**23 classes exact, "
    "and 2**32 float32 scores are 16 GiB, the whole peak")
