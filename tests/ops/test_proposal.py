"""Anchor targets and proposals of mxlite/ops/proposal.py: every case of
tests/fixtures/proposal_mxnet.npz (made by make_proposal_fixture.py with MXNet 1.9.1)
replayed, the places mxlite departs from MXNet checked against NumPy, and bad input."""
import ast
import math
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops import proposal

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "proposal_mxnet.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURE.files})


def _case(case):
    name = str(FIXTURE[f"{case}/op"])
    kwargs = ast.literal_eval(str(FIXTURE[f"{case}/kwargs"]))
    ins = [FIXTURE[f"{case}/in{i}"] for i in range(3)]
    outs = [FIXTURE[f"{case}/out{j}"] for j in range(3) if f"{case}/out{j}" in FIXTURE.files]
    return name, kwargs, ins, outs


def _run(name, ins, kwargs, dtype="float32"):
    got = getattr(mx.nd.contrib, name)(*[mx.nd.array(x, dtype=dtype) for x in ins], **kwargs)
    return [g.asnumpy() for g in (got if isinstance(got, list) else [got])]


@pytest.mark.parametrize("case", CASES)
def test_forward_matches_mxnet(case):
    name, kwargs, ins, outs = _case(case)
    got = _run(name, ins, kwargs)
    assert len(got) == len(outs)
    for g, want in zip(got, outs):
        assert g.shape == want.shape and g.dtype == want.dtype
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6, err_msg=case)


@pytest.mark.parametrize("case", ["mbt_mining", "mbt_mining_thresh", "prop_default",
                                  "prop_small", "multi_default", "multi_small"])
def test_blocked_computation_equals_one_block(case, monkeypatch):
    """Big inputs are read in blocks of BLOCK elements (classes of cls_pred, windows of the
    proposal maps with a running top-k): tiny blocks give MXNet's values too."""
    monkeypatch.setattr(proposal, "BLOCK", 7)
    name, kwargs, ins, outs = _case(case)
    for g, want in zip(_run(name, ins, kwargs), outs):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6, err_msg=case)


@pytest.mark.parametrize("case", ["mbt_mining_thresh", "prop_small", "multi_iou_loss"])
def test_float16_and_float64_compute_like_float32(case):
    """MXNet's Proposal takes float32 only; mxlite also takes float16 (computed in float32,
    rounded once at the end: the float32 results of the same values, rounded) and float64
    (computed in float64: MXNet's float32 values within float32's precision)."""
    name, kwargs, ins, outs = _case(case)
    halves = [x.astype(np.float16) for x in ins]
    for g, want in zip(_run(name, halves, kwargs, "float16"), _run(name, halves, kwargs)):
        assert g.dtype == np.float16
        np.testing.assert_array_equal(g, want.astype(np.float16))
    for g, want in zip(_run(name, ins, kwargs, "float64"), outs):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


# ---- MultiBoxTarget beyond MXNet's CPU kernel -------------------------------------------------
def _softmax_background(cls):
    e = np.exp(cls - cls.max(axis=0))
    return e[0] / e.sum(axis=0)


def _mining_inputs(rng, n=30):
    """One object equal to anchor 0 (its only positive: every other anchor lies apart)."""
    anchors = np.zeros((1, n, 4))
    anchors[0, 0] = [0, 0, 0.3, 0.3]
    anchors[0, 1:] = [0.5, 0.5, 0.9, 0.9] + rng.uniform(0, 0.05, (n - 1, 4))
    label = np.array([[[0, 0, 0, 0.3, 0.3], [-1, -1, -1, -1, -1]]])
    cls = rng.normal(0, 2, (1, 3, n))
    return anchors, label, cls


def test_minimum_negative_samples_is_honoured():
    """MXNet's CPU kernel ignored minimum_negative_samples (its GPU kernel honoured it): one
    positive at ratio 2 asks for 2 negatives, the minimum makes it 6, the 6 anchors whose
    softmax gives the background the lowest probability."""
    anchors, label, cls = _mining_inputs(np.random.RandomState(1))
    _, _, target = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(anchors), mx.nd.array(label), mx.nd.array(cls),
        negative_mining_ratio=2, minimum_negative_samples=6)
    hardest = np.argsort(_softmax_background(cls[0, :, 1:]))[:6] + 1
    want = -np.ones(anchors.shape[1])
    want[0], want[hardest] = 1, 0
    np.testing.assert_array_equal(target.asnumpy()[0], want)


def test_a_shortage_of_negatives_takes_those_there_are():
    """Ratio 50 asks for more negatives than anchors qualify (MXNet 1.9.1's CPU kernel
    failed a check): every anchor overlapping the object less than the mining threshold
    is a negative, the others are ignored."""
    rng = np.random.RandomState(2)
    anchors, label, cls = _mining_inputs(rng)
    anchors[0, 1:4] = [0, 0, 0.3, 0.32]         # IoU 0.94: above the mining threshold
    loc, mask, target = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(anchors), mx.nd.array(label), mx.nd.array(cls),
        negative_mining_ratio=50, overlap_threshold=0.99)
    want = np.zeros(anchors.shape[1])
    want[0], want[1:4] = 1, -1
    np.testing.assert_array_equal(target.asnumpy()[0], want)
    np.testing.assert_array_equal(mask.asnumpy()[0], np.repeat(want == 1, 4))


def test_a_huge_mining_ratio_takes_every_candidate():
    """An infinite ratio x positives (MXNet converted inf to int) or a minimum past the
    anchors asks for every anchor: all candidates are negatives."""
    anchors, label, cls = _mining_inputs(np.random.RandomState(3))
    _, _, target = mx.nd.contrib.MultiBoxTarget(mx.nd.array(anchors), mx.nd.array(label),
                                                mx.nd.array(cls), negative_mining_ratio=math.inf,
                                                minimum_negative_samples=2 ** 40)
    want = np.zeros(anchors.shape[1])
    want[0] = 1
    np.testing.assert_array_equal(target.asnumpy()[0], want)


def test_regression_targets_are_the_encoded_offsets():
    """loc_target of a matched anchor: center offsets over the anchor size and log size
    ratios, each over its variance (NumPy in float64)."""
    a = np.array([0.1, 0.2, 0.5, 0.4])
    g = np.array([0.15, 0.18, 0.45, 0.5])
    v = (0.125, 0.25, 0.375, 0.5)               # float32-exact: MXNet's parameters are float32
    loc, mask, target = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array([[a]], dtype="float64"), mx.nd.array([[[4, *g]]], dtype="float64"),
        mx.nd.zeros((1, 2, 1), dtype="float64"), variances=v)
    aw, ah, gw, gh = a[2] - a[0], a[3] - a[1], g[2] - g[0], g[3] - g[1]
    want = [((g[0] + g[2]) - (a[0] + a[2])) / 2 / aw / v[0],
            ((g[1] + g[3]) - (a[1] + a[3])) / 2 / ah / v[1],
            np.log(gw / aw) / v[2], np.log(gh / ah) / v[3]]
    np.testing.assert_allclose(loc.asnumpy()[0], want, rtol=1e-12)
    assert target.asnumpy().tolist() == [[5]] and mask.asnumpy().tolist() == [[1] * 4]


def test_each_object_gets_its_best_anchor_first():
    """The greedy matching gives each object an anchor even below overlap_threshold; the
    best pair goes first, so two objects preferring one anchor share out two anchors."""
    anchors = np.array([[[0, 0, 1, 1], [0, 0, 0.8, 1], [5, 5, 6, 6]]])
    label = np.array([[[0, 0, 0, 1, 1], [1, 0, 0, 0.9, 1]]])   # both prefer anchor 0
    _, _, target = mx.nd.contrib.MultiBoxTarget(mx.nd.array(anchors), mx.nd.array(label),
                                                mx.nd.zeros((1, 3, 3)), overlap_threshold=0.95)
    # object 0 takes anchor 0 (IoU 1); object 1 takes anchor 1 (IoU 0.8 / 0.9 > 0 with 0 gone)
    assert target.asnumpy().tolist() == [[1, 2, 0]]


def test_labels_end_at_the_first_padding_row():
    """Rows after the first class -1 row are padding even when they hold a box (MXNet's
    CPU kernel stops there): the object in row 2 matches nothing."""
    anchors = np.array([[[0, 0, 1, 1], [2, 2, 3, 3]]])
    label = np.array([[[0, 0, 0, 1, 1], [-1, -1, -1, -1, -1], [1, 2, 2, 3, 3]]])
    _, _, target = mx.nd.contrib.MultiBoxTarget(mx.nd.array(anchors), mx.nd.array(label),
                                                mx.nd.zeros((1, 3, 2)))
    assert target.asnumpy().tolist() == [[1, 0]]


# ---- Proposal ---------------------------------------------------------------------------------
def test_default_anchors_are_faster_rcnn_anchors():
    """The anchors of a 16-pixel cell at ratios (0.5, 1, 2) and scales (8, 16, 32): the
    published table of Faster R-CNN's generate_anchors."""
    attrs = mx.nd.contrib.Proposal.op.parse_attrs({"scales": (8, 16, 32)})
    want = [[-84, -40, 99, 55], [-176, -88, 191, 103], [-360, -184, 375, 199],
            [-56, -56, 71, 71], [-120, -120, 135, 135], [-248, -248, 263, 263],
            [-36, -80, 51, 95], [-80, -168, 95, 183], [-168, -344, 183, 359]]
    np.testing.assert_array_equal(proposal._anchor_table(attrs), want)


def _one_anchor_rpn(scores, deltas, info, **kwargs):
    """Proposal with one anchor per cell ([-1.5, -1.5, 1.5, 1.5] shifted by the cell) and
    corner deltas (iou_loss): boxes are exact."""
    h, w = scores.shape
    cls = np.stack([np.zeros_like(scores), scores])[None]
    bbox = np.asarray(deltas, dtype=np.float64).reshape(1, 4, h, w)
    return mx.nd.contrib.Proposal(mx.nd.array(cls), mx.nd.array(bbox), mx.nd.array([info]),
                                  scales=(4,), ratios=(1,), feature_stride=1, iou_loss=True,
                                  output_score=True, **kwargs)


def test_few_survivors_repeat_in_order():
    """Fewer kept proposals than rpn_post_nms_top_n: the kept ones repeat cyclically. Four
    cells of a 1 x 4 image, clipped: x from 0 to 1.5, 2.5, 3, 3 (widths 2.5, 3.5, 3.5, 2.5
    pixels); cell 0 overlaps cells 1 and 2 by IoU 5/7 and 1/2, cell 3 by 1/4 (kept)."""
    scores = np.array([[0.9, 0.8, 0.7, 0.6]])
    rois, out = _one_anchor_rpn(scores, np.zeros((4, 1, 4)), [1, 4, 1],
                                rpn_post_nms_top_n=5, rpn_min_size=0, threshold=0.3)
    kept = [[0, 0, 0, 1.5, 0], [0, 1.5, 0, 3, 0]]
    np.testing.assert_array_equal(rois.asnumpy(), [kept[i % 2] for i in range(5)])
    np.testing.assert_allclose(out.asnumpy().ravel(), [0.9, 0.6, 0.9, 0.6, 0.9], rtol=1e-7)


def test_padding_cells_and_small_boxes_score_minus_one():
    """Cells beyond im_info's image and boxes under rpn_min_size x scale pixels score -1 and
    rank last (by position); a small box is widened by that size (MXNet's layout). A 2 x 3
    map over a 2 x 2 image: column 2 is padding (and 1.5 pixels wide once clipped); cell
    (0, 0) is moved to 1 pixel wide; the other cells clip to [0, 0, 1, 1]."""
    scores = np.array([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4]])
    deltas = np.zeros((4, 2, 3))
    deltas[2, 0, 0] = -3.0                      # cell (0, 0): x2 = 1.5 - 3 -> clipped to 0
    rois, out = _one_anchor_rpn(scores, deltas, [2, 2, 1.0], rpn_post_nms_top_n=6,
                                rpn_pre_nms_top_n=6, rpn_min_size=2, threshold=1.0)
    want = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1],       # cells (0, 1), (1, 0), (1, 1)
            [-1, -1, 1, 2], [-0.5, -1, 2, 2], [-0.5, -1, 2, 2]]   # cells (0, 0), (0, 2), (1, 2)
    np.testing.assert_array_equal(rois.asnumpy()[:, 1:], want)
    np.testing.assert_allclose(out.asnumpy().ravel(), [0.8, 0.6, 0.5, -1, -1, -1], rtol=1e-7)


def test_proposal_takes_one_image():
    cls, bbox = mx.nd.zeros((2, 24, 3, 4)), mx.nd.zeros((2, 48, 3, 4))
    with pytest.raises(MXNetError, match="batch 1"):
        mx.nd.contrib.Proposal(cls, bbox, mx.nd.ones((2, 3)))
    rois = mx.nd.contrib.MultiProposal(cls, bbox, mx.nd.array([[48, 64, 1]] * 2),
                                       rpn_post_nms_top_n=4)
    assert rois.shape == (8, 5) and rois.asnumpy()[:, 0].tolist() == [0] * 4 + [1] * 4


def test_symbol_infers_bbox_pred_and_im_info_from_cls_prob():
    sym = mx.sym.contrib.Proposal(mx.sym.var("c"), mx.sym.var("b"), mx.sym.var("i"),
                                  output_score=True)
    args, outs, _ = sym.infer_shape(c=(1, 24, 3, 4))
    assert args == [(1, 24, 3, 4), (1, 48, 3, 4), (1, 3)] and outs == [(300, 5), (300, 1)]
    multi = mx.sym.contrib.MultiProposal(mx.sym.var("c"), mx.sym.var("b"), mx.sym.var("i"),
                                         rpn_post_nms_top_n=7, scales=(8,))
    assert multi.infer_shape(c=(3, 6, 2, 2))[1] == [(21, 5)]


def test_empty_output_when_no_proposal_is_asked_for():
    rois = mx.nd.contrib.Proposal(mx.nd.ones((1, 24, 2, 2)), mx.nd.zeros((1, 48, 2, 2)),
                                  mx.nd.array([[32, 32, 1]]), rpn_post_nms_top_n=0)
    assert rois.shape == (0, 5)


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((2, 5, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 5))), "anchor must have shape"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 4)),
                                          mx.nd.zeros((1, 3, 5))), "width >= 5"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((2, 2, 5)),
                                          mx.nd.zeros((1, 3, 5))), "cls_pred must have shape"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 4))), "(1, num_classes, 5)"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 5)), variances=(1, 2)),
     "variances"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 5)), negative_mining_ratio=2,
                                          negative_mining_thresh=0), "negative_mining_thresh"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)),
                                          mx.nd.array([[[-1, 0, 0, 1, 1]]]),
                                          mx.nd.zeros((1, 3, 5))), "label[0, 0]"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 5), dtype="int32")), "float"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 20, 3, 4)), mx.nd.zeros((1, 40, 3, 4)),
                                    mx.nd.ones((1, 3))), "2 * 12"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 24, 3, 4)), mx.nd.zeros((1, 24, 3, 4)),
                                    mx.nd.ones((1, 3))), "bbox_pred must have shape"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 24, 3, 4)), mx.nd.zeros((1, 48, 3, 4)),
                                    mx.nd.ones((1, 2))), "im_info must have shape"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 24, 3, 4)), mx.nd.zeros((1, 48, 3, 4)),
                                    mx.nd.array([[480, 64, 1]])), "at least 30 x 4"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 24, 3, 4)), mx.nd.zeros((1, 48, 3, 4)),
                                    mx.nd.array([[np.nan, 64, 1]])), "finite"),
    (lambda: mx.nd.contrib.Proposal(mx.nd.zeros((1, 2, 3, 4)), mx.nd.zeros((1, 4, 3, 4)),
                                    mx.nd.ones((1, 3)), scales=(1,), ratios=(0,)), "positive"),
    (lambda: mx.nd.contrib.MultiProposal(mx.nd.zeros((1, 24, 3, 4)),
                                         mx.nd.zeros((1, 48, 3, 4)), mx.nd.ones((1, 3)),
                                         feature_stride=0), "feature_stride"),
    (lambda: mx.nd.contrib.MultiProposal(mx.nd.zeros((1, 24, 3, 4)),
                                         mx.nd.zeros((1, 48, 3, 4)), mx.nd.ones((1, 3)),
                                         rpn_post_nms_top_n=-1), "rpn_post_nms_top_n"),
    (lambda: mx.nd.contrib.MultiProposal(mx.nd.zeros((1, 24, 3, 4)),
                                         mx.nd.zeros((1, 48, 3, 4), dtype="float64"),
                                         mx.nd.ones((1, 3))), "one dtype"),
])
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises(MXNetError) as err:
        call()
    assert words in str(err.value)
