"""The NMS-family detection operators on one-op graphs: exported, checked (full check), run
in onnxruntime and compared with ``mx.nd`` (box_nms, MultiBoxDetection, bipartite_matching,
MultiBoxTarget, Proposal and MultiProposal). The inputs hold tied scores, boxes below the
thresholds and overlapping boxes, so the order of ties and the suppression are exercised."""
import zlib

import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run

F32, F64 = np.float32, np.float64
CASES = []


def case(label, fn, make, exact=(), rtol=None, **export):
    """One case: ``fn(F, *vars)`` on the inputs ``make(rng)``; outputs listed in ``exact``
    must match bit for bit, the others within ``rtol`` (by dtype when None)."""
    CASES.append(pytest.param(fn, make, exact, rtol, export, id=label))


def run_case(fn, make, exact, rtol, export, tmp_path):
    inputs = make(np.random.default_rng(zlib.crc32(fn.__name__.encode())))
    names = [f"in{i}" for i in range(len(inputs))]
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = export_and_run(fn(mx.sym, *[mx.sym.var(n) for n in names]), {},
                         dict(zip(names, inputs)), tmp_path, **export)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        if exact == "all" or k in exact:
            np.testing.assert_array_equal(g, e)
        else:
            tol = rtol if rtol is not None else (1e-12 if e.dtype == F64 else 2e-6)
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    return expected


@pytest.mark.parametrize("fn, make, exact, rtol, export", CASES)
def test_export(fn, make, exact, rtol, export, tmp_path):
    run_case(fn, make, exact, rtol, export, tmp_path)


# ---- box_nms ------------------------------------------------------------------------------
def nms_rows(shape, dtype, score=1, coord=2, ident=0, classes=3):
    """Boxes of ``shape`` (..., N, W): scores from a few values (ties, some at or below the
    thresholds used), class ids 0..classes-1, corner boxes that overlap often."""
    def make(rng):
        x = rng.uniform(0, 1, shape)
        x[..., score] = rng.choice([0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9], shape[:-1])
        if ident is not None:
            x[..., ident] = rng.integers(0, classes, shape[:-1])
        lo = rng.uniform(0, 0.6, shape[:-1] + (2,))
        x[..., coord:coord + 2] = lo
        x[..., coord + 2:coord + 4] = lo + rng.uniform(0.05, 0.5, shape[:-1] + (2,))
        k = shape[-2] // 3                   # near copies of some boxes: IoU close to 1
        x[..., 1:1 + k, coord:coord + 4] = x[..., :k, coord:coord + 4] + 0.01
        if ident is not None:
            x[..., 1:1 + k, ident] = x[..., :k, ident]
        return [x.astype(dtype)]
    return make


def nms_case(label, make, **attrs):
    def fn(F, x):
        return F.contrib.box_nms(x, **attrs)
    fn.__name__ = f"box_nms_{label}"
    case(f"box_nms_{label}", fn, make, exact="all")


for dt in (np.float16, F32, F64):
    n = dt.__name__
    nms_case(f"default_{n}", nms_rows((2, 12, 6), dt))
    nms_case(f"classes_{n}", nms_rows((2, 12, 6), dt), id_index=0, overlap_thresh=0.3,
             valid_thresh=0.2)
    nms_case(f"force_topk_background_{n}", nms_rows((3, 2, 10, 6), dt), id_index=0,
             force_suppress=True, topk=5, background_id=1)
    nms_case(f"center_in_{n}", nms_rows((2, 9, 6), dt), in_format="center",
             out_format="corner", overlap_thresh=0.1)
    nms_case(f"center_out_{n}", nms_rows((2, 15, 7), dt, score=0, coord=1, ident=6),
             score_index=0, coord_start=1, id_index=6, out_format="center")
    nms_case(f"topk0_{n}", nms_rows((2, 5, 6), dt), topk=0)
    nms_case(f"no_id_{n}", nms_rows((4, 6), dt, ident=None), overlap_thresh=0.25, topk=3)
    nms_case(f"no_boxes_{n}", lambda rng, d=dt: [np.zeros((2, 0, 6), d)])
    nms_case(f"many_ties_{n}", nms_rows((2, 300, 6), dt), id_index=0, topk=200)
    nms_case(f"one_box_{n}", nms_rows((3, 1, 6), dt), id_index=0)


# ---- MultiBoxDetection --------------------------------------------------------------------
def detection_inputs(b, c, n, dtype):
    """cls_prob with tied scores (some below the thresholds), loc_pred, anchors."""
    def make(rng):
        cls = rng.choice([0.0, 0.05, 0.2, 0.4, 0.6], (b, c, n))
        loc = rng.normal(0, 1, (b, 4 * n))
        center, size = rng.uniform(0.2, 0.8, (n, 2)), rng.uniform(0.1, 0.5, (n, 2))
        anchors = np.concatenate([center - size / 2, center + size / 2], 1)[None]
        k = n // 3                           # near copies of some anchors
        anchors[:, 1:1 + k] = anchors[:, :k] + 0.01
        return [a.astype(dtype) for a in (cls, loc, anchors)]
    return make


def detection_case(label, make, **attrs):
    def fn(F, cls, loc, anchors):
        return F.contrib.MultiBoxDetection(cls, loc, anchors, **attrs)
    fn.__name__ = f"detection_{label}"
    case(f"detection_{label}", fn, make)


for dt in (np.float16, F32, F64):
    n = dt.__name__
    detection_case(f"default_{n}", detection_inputs(2, 3, 18, dt))
    detection_case(f"thresholds_{n}", detection_inputs(2, 4, 16, dt), threshold=0.1,
                   nms_threshold=0.3)
    detection_case(f"force_topk_noclip_{n}", detection_inputs(3, 3, 12, dt),
                   force_suppress=True, nms_topk=4, clip=False)
    detection_case(f"no_nms_{n}", detection_inputs(2, 3, 10, dt), nms_threshold=0)
    detection_case(f"topk_{n}", detection_inputs(1, 5, 20, dt), nms_topk=3,
                   nms_threshold=0.2, variances=(0.2, 0.1, 0.3, 0.25))
    detection_case(f"background_only_{n}", detection_inputs(2, 1, 6, dt))


@pytest.mark.parametrize("fn, make", [p.values[:2] for p in CASES if p.id.startswith(
    ("box_nms", "detection")) and not p.id.startswith((
        "box_nms_topk0", "box_nms_no_boxes", "box_nms_one_box", "detection_no_nms",
        "detection_background"))])
def test_cases_suppress_some(fn, make):
    """The NMS cases above drop some valid boxes and keep others (mxlite's results)."""
    inputs = make(np.random.default_rng(zlib.crc32(fn.__name__.encode())))
    out = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs]).asnumpy()
    if fn.__name__.startswith("detection"):
        valid, kept = (out[..., 1] >= 0).sum(), (out[..., 0] >= 0).sum()
    else:
        score = 0 if "center_out" in fn.__name__ else 1
        valid = (inputs[0][..., score] > (0.2 if "classes" in fn.__name__ else 0)).sum()
        kept = (out[..., score] >= 0).sum()
    assert 0 < kept < valid


# ---- bipartite_matching -------------------------------------------------------------------
def scores(shape, dtype):
    """Score matrices from a few values (ties) with NaNs."""
    def make(rng):
        return [rng.choice([0.1, 0.2, 0.4, 0.6, 0.9, np.nan], shape).astype(dtype)]
    return make


def bipartite_case(label, make, **attrs):
    def fn(F, x):
        return F.contrib.bipartite_matching(x, **attrs)
    fn.__name__ = f"bipartite_{label}"
    case(f"bipartite_{label}", fn, make, exact="all")


for dt in (np.float16, F32, F64):
    n = dt.__name__
    bipartite_case(f"desc_{n}", scores((4, 3), dt), threshold=0.3)
    bipartite_case(f"ascend_{n}", scores((2, 3, 5, 4), dt), threshold=0.5, is_ascend=True)
    bipartite_case(f"topk_{n}", scores((3, 6, 6), dt), threshold=0.1, topk=2)
    bipartite_case(f"all_{n}", scores((2, 7, 3), dt), threshold=-1)
    bipartite_case(f"no_rows_{n}", lambda rng, d=dt: [np.zeros((2, 0, 3), d)], threshold=0.1)
    bipartite_case(f"one_row_{n}", scores((1, 5), dt), threshold=0.1)


# ---- MultiBoxTarget -----------------------------------------------------------------------
def random_boxes(rng, count):
    center, size = rng.uniform(0.2, 0.8, (count, 2)), rng.uniform(0.1, 0.5, (count, 2))
    return np.concatenate([center - size / 2, center + size / 2], 1)


def target_inputs(b, n, m, c, dtype, width=5):
    """Anchors, labels (item 0 full, item 1 without objects, the others padded with rows of
    -1 after a random count) and class predictions from a few values (ties)."""
    def make(rng):
        anchors = random_boxes(rng, n)[None]
        labels = np.full((b, m, width), -1.0)
        for i in range(b):
            g = m if i == 0 else 0 if i == 1 else rng.integers(1, m + 1)
            labels[i, :g, 0] = rng.integers(0, 3, g)
            labels[i, :g, 1:5] = random_boxes(rng, g)
            labels[i, :g, 5:] = rng.uniform(0, 1, (g, width - 5))
        cls = rng.choice([0.0, 0.5, 1.0, 2.0], (b, c, n))
        return [x.astype(dtype) for x in (anchors, labels, cls)]
    return make


def target_case(label, make, rtol=None, **attrs):
    def fn(F, anchors, labels, cls):
        return F.contrib.MultiBoxTarget(anchors, labels, cls, **attrs)
    fn.__name__ = f"target_{label}"
    case(f"target_{label}", fn, make, exact=(1, 2), rtol=rtol)


MINING = dict(overlap_threshold=0.3, negative_mining_ratio=2, negative_mining_thresh=0.4,
              minimum_negative_samples=1)
for dt in (np.float16, F32, F64):
    n, tol = dt.__name__, 1e-3 if dt == np.float16 else None
    target_case(f"default_{n}", target_inputs(3, 20, 4, 4, dt), tol)
    target_case(f"mining_{n}", target_inputs(4, 30, 5, 3, dt, width=6), tol, **MINING)
    target_case(f"best_only_{n}", target_inputs(3, 16, 3, 2, dt), tol, overlap_threshold=0,
                ignore_label=-2, variances=(0.1, 0.2, 0.3, 0.4))
    target_case(f"mining_ratio_{n}", target_inputs(3, 24, 6, 5, dt), tol,
                negative_mining_ratio=1.5, negative_mining_thresh=0.5)


@pytest.mark.parametrize("fn, make", [p.values[:2] for p in CASES
                                      if p.id.startswith("target_mining")])
def test_target_cases_mine(fn, make):
    """The negative-mining cases above have positives, negatives and ignored anchors."""
    inputs = make(np.random.default_rng(zlib.crc32(fn.__name__.encode())))
    cls_target = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])[2].asnumpy()
    assert (cls_target > 0).any() and (cls_target == 0).any() and (cls_target < 0).any()


# ---- Proposal and MultiProposal -----------------------------------------------------------
def proposal_inputs(b, a, h, w, dtype, stride=16):
    """cls_prob from a few values (ties), small bbox deltas, and images that leave a
    padding of the map (cells outside the image score -1), at scales 0.5 or 1."""
    def make(rng):
        cls = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9], (b, 2 * a, h, w))
        bbox = rng.normal(0, 0.3, (b, 4 * a, h, w))
        info = np.array([[h * stride - rng.integers(0, 2 * stride),
                          w * stride - rng.integers(0, 2 * stride), rng.choice([0.5, 1.0])]
                         for _ in range(b)])
        return [x.astype(dtype) for x in (cls, bbox, info)]
    return make


def proposal_case(label, op, make, rtol, **attrs):
    def fn(F, cls, bbox, info):
        return getattr(F.contrib, op)(cls, bbox, info, **attrs)
    fn.__name__ = f"{op}_{label}"
    case(f"{op}_{label}", fn, make, rtol=rtol)


SMALL = dict(rpn_pre_nms_top_n=-1, rpn_post_nms_top_n=30, threshold=0.5, rpn_min_size=12,
             scales=(0.5, 2), ratios=(0.5, 1, 2), feature_stride=8, output_score=True)
for dt in (np.float16, F32, F64):
    n, tol = dt.__name__, 1e-3 if dt == np.float16 else None
    for op, b in (("Proposal", 1), ("MultiProposal", 3)):
        proposal_case(f"top50_{n}", op, proposal_inputs(b, 12, 5, 6, dt), tol,
                      rpn_pre_nms_top_n=50, rpn_post_nms_top_n=20, output_score=True)
        proposal_case(f"small_{n}", op, proposal_inputs(b, 6, 4, 7, dt, 8), tol, **SMALL)
        proposal_case(f"iou_loss_{n}", op, proposal_inputs(b, 1, 6, 5, dt), tol,
                      iou_loss=True, rpn_pre_nms_top_n=40, rpn_post_nms_top_n=10, scales=(8,),
                      ratios=(1.0,), output_score=True)
        proposal_case(f"defaults_{n}", op, proposal_inputs(b, 12, 3, 4, dt), tol)
        proposal_case(f"big_map_{n}", op, proposal_inputs(b, 12, 12, 16, dt), tol,
                      rpn_pre_nms_top_n=600, rpn_post_nms_top_n=50, output_score=True)


@pytest.mark.parametrize("fn, make", [p.values[:2] for p in CASES if "Proposal_small" in p.id
                                      or "Proposal_iou_loss" in p.id])
def test_proposal_cases_cover_the_rules(fn, make):
    """The cases above output boxes that were too small (score -1: the 'small' cases) and
    repeat the kept boxes (fewer survive NMS than are output: the 'iou_loss' cases)."""
    inputs = make(np.random.default_rng(zlib.crc32(fn.__name__.encode())))
    rois, scores = (x.asnumpy() for x in fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype)
                                                     for a in inputs]))
    assert (scores > 0).any()
    if "small" in fn.__name__:
        assert (scores == -1).any()
    else:
        first = rois[rois[:, 0] == 0]
        assert len(np.unique(first, axis=0)) < len(first)


# ---- dynamic batch axes: exported at one batch size, run at others --------------------------
def _box_nms_dyn(F, x):
    return F.contrib.box_nms(x, id_index=0, overlap_thresh=0.3, topk=6)


def _detection_dyn(F, cls, loc, anchors):
    return F.contrib.MultiBoxDetection(cls, loc, anchors, nms_topk=8)


def _bipartite_dyn(F, x):
    return F.contrib.bipartite_matching(x, threshold=0.2)


def _target_dyn(F, anchors, labels, cls):
    return F.contrib.MultiBoxTarget(anchors, labels, cls, **MINING)


def _multi_proposal_dyn(F, cls, bbox, info):
    return F.contrib.MultiProposal(cls, bbox, info, rpn_pre_nms_top_n=30,
                                   rpn_post_nms_top_n=12, output_score=True)


DYNAMIC = [  # (fn, the inputs at batch b, which inputs have a batch axis)
    pytest.param(_box_nms_dyn, lambda b: nms_rows((b, 10, 6), F32), (True,), id="box_nms"),
    pytest.param(_detection_dyn, lambda b: detection_inputs(b, 3, 12, F32),
                 (True, True, False), id="detection"),
    pytest.param(_bipartite_dyn, lambda b: scores((b, 5, 4), F32), (True,), id="bipartite"),
    pytest.param(_target_dyn, lambda b: target_inputs(b, 20, 4, 3, F32),
                 (False, True, True), id="target"),
    pytest.param(_multi_proposal_dyn, lambda b: proposal_inputs(b, 12, 4, 5, F32),
                 (True, True, True), id="multi_proposal")]


@pytest.mark.parametrize("fn, make, batched", DYNAMIC)
def test_dynamic_batch_axes(fn, make, batched, tmp_path):
    """Exported with a symbolic batch axis at batch 2, run at batches 1 and 3 (anchors keep
    their leading 1)."""
    from onnx_harness import run_onnx
    rng = np.random.default_rng(11)
    inputs = make(2)(rng)
    names = [f"in{i}" for i in range(len(inputs))]
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(fn(mx.sym, *[mx.sym.var(n) for n in names]), {},
                         in_shapes=[a.shape for a in inputs], in_types=[a.dtype for a in inputs],
                         onnx_file_path=path,
                         dynamic_input_shapes=[(None,) + a.shape[1:] if b else a.shape
                                               for a, b in zip(inputs, batched)])
    for b in (1, 3):
        inputs = make(b)(rng)
        got = run_onnx(path, dict(zip(names, inputs)))
        want = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w.asnumpy(), rtol=2e-6, atol=2e-6)


# ---- box_nms's gradient graph: its hidden record output carries the kept rows' sources -------
@pytest.mark.parametrize("attrs", [dict(id_index=0, overlap_thresh=0.3),
                                   dict(out_format="center", force_suppress=True, id_index=0)],
                         ids=["classes", "center_out"])
def test_box_nms_gradient_graph(attrs, tmp_path):
    """mx.sym.grad of a weighted sum of box_nms (the record output gathers the head
    gradient back to the rows kept) matches mx.autograd."""
    x = nms_rows((2, 10, 6), F64)(np.random.default_rng(1))[0]
    w = np.random.default_rng(2).normal(size=x.shape)
    v, wv = mx.sym.var("x", shape=x.shape), mx.sym.var("w", shape=x.shape)
    graph = mx.sym.Group(mx.sym.grad(mx.sym.sum(mx.sym.contrib.box_nms(v, **attrs) * wv), [v]))
    (got,) = export_and_run(graph, {}, {"x": x, "w": w}, tmp_path)
    xa = mx.nd.array(x, dtype=F64)
    xa.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.sum(mx.nd.contrib.box_nms(xa, **attrs) * mx.nd.array(w, dtype=F64))
    loss.backward()
    want = xa.grad.asnumpy()
    assert (want != 0).any() and (want == 0).any()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
