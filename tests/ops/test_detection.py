"""Box operators of mxlite/ops/detection.py: every case of tests/fixtures/detection_mxnet.npz
(made by make_detection_fixture.py with MXNet 1.9.1) replayed, the places mxlite departs from
MXNet checked against NumPy, and bad input."""
import ast
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "detection_mxnet.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURE.files})

# MXNet converts formats only for kept boxes whose first coordinate is >= 0 and copies the
# head gradient unchanged through a format change: those cases differ on purpose
FORMAT_CHANGE = {"nms_to_center", "nms_to_corner"}


def _case(case):
    name = str(FIXTURE[f"{case}/op"])
    kwargs = ast.literal_eval(str(FIXTURE[f"{case}/kwargs"]))
    ins = [FIXTURE[f"{case}/in{i}"] for i in range(6) if f"{case}/in{i}" in FIXTURE.files]
    outs = [FIXTURE[f"{case}/out{j}"] for j in range(2) if f"{case}/out{j}" in FIXTURE.files]
    return name, kwargs, ins, outs


@pytest.mark.parametrize("case", CASES)
def test_forward_matches_mxnet(case):
    name, kwargs, ins, outs = _case(case)
    got = getattr(mx.nd.contrib, name)(*[mx.nd.array(x) for x in ins], **kwargs)
    got = got if isinstance(got, list) else [got]
    assert len(got) == len(outs)
    for g, want in zip(got, outs):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6, atol=1e-6, err_msg=case)


@pytest.mark.parametrize("case", [c for c in CASES if f"{c}/grad0" in FIXTURE.files
                                  and c not in FORMAT_CHANGE])
def test_nms_gradient_matches_mxnet(case):
    name, kwargs, ins, _ = _case(case)
    x = mx.nd.array(ins[0])
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(x, **kwargs)
    y.backward(mx.nd.array(FIXTURE[f"{case}/head"]))
    np.testing.assert_array_equal(x.grad.asnumpy(), FIXTURE[f"{case}/grad0"])


def _to_center(c):
    return np.concatenate([(c[..., :2] + c[..., 2:]) / 2, c[..., 2:] - c[..., :2]], -1)


def test_nms_format_change_gradient_is_the_transposed_conversion():
    """d out / d data through corner -> center: cx = (l + r) / 2, w = r - l (MXNet copied the
    head gradient unchanged, which is not the derivative)."""
    _, kwargs, ins, _ = _case("nms_to_center")
    data = ins[0][0].astype(np.float64)                 # (24, 6)
    x = mx.nd.array(data, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_nms(x, **kwargs)
    head = np.random.RandomState(0).normal(size=y.shape)
    y.backward(mx.nd.array(head, dtype="float64"))
    out = y.asnumpy()
    kept = out[:, 1] >= 0
    rows = [int(np.nonzero(data[:, 1] == s)[0][0]) for s in out[kept, 1]]
    want = np.zeros_like(data)
    for row, h in zip(rows, head[kept]):
        gx, gy, gw, gh = h[2:6]
        want[row] = [h[0], h[1], gx / 2 - gw, gy / 2 - gh, gx / 2 + gw, gy / 2 + gh]
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)
    # and the forward converts every kept box, also one with a negative xmin
    np.testing.assert_allclose(out[kept, 2:], _to_center(data[rows, 2:]),
                               rtol=1e-6)


def test_nms_negative_coordinates_are_converted():
    d = np.array([[0, 0.9, -0.5, 0, 0.5, 1], [0, 0.8, 2, 2, 3, 3]])
    got = mx.nd.contrib.box_nms(mx.nd.array(d), out_format="center").asnumpy()
    np.testing.assert_allclose(got[:, 2:], _to_center(d[:, 2:]), rtol=1e-6)


def _greedy(s, thresh, topk, ascend=False):
    """NumPy reference: greedy matching over scores sorted stably."""
    n, m = s.shape
    order = np.argsort(s.ravel() if ascend else -s.ravel(), kind="stable")
    rows, cols, count = -np.ones(n), -np.ones(m), 0
    for k in order:
        r, c = divmod(int(k), m)
        if rows[r] == -1 and cols[c] == -1:
            if not (s[r, c] < thresh if ascend else s[r, c] > thresh) or count == topk:
                break
            rows[r], cols[c], count = c, r, count + 1
    return rows, cols


@pytest.mark.parametrize("topk", [1, 2, 3])
@pytest.mark.parametrize("ascend", [False, True])
def test_bipartite_topk_makes_at_most_topk_matches(topk, ascend):
    """MXNet 1.9.1 makes topk + 1 matches; mxlite topk."""
    s = np.random.RandomState(topk).uniform(size=(5, 4)).astype(np.float32)
    thresh = 1.0 if ascend else 0.0
    rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(s), threshold=thresh,
                                                  topk=topk, is_ascend=ascend)
    want_rows, want_cols = _greedy(s, thresh, topk, ascend)
    np.testing.assert_array_equal(rows.asnumpy(), want_rows)
    np.testing.assert_array_equal(cols.asnumpy(), want_cols)
    assert (rows.asnumpy() >= 0).sum() == topk


def test_bipartite_items_of_a_batch_stop_on_their_own():
    """Items are matched together, step by step; one whose best score fails stops while the
    others go on (NumPy reference item by item)."""
    s = np.random.RandomState(5).uniform(size=(6, 4, 5)).astype(np.float32)
    s[2] -= 0.6                              # item 2 runs out of passing scores early
    s[4, 1, 2] = np.nan
    rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(s), threshold=0.25)
    for b in range(6):
        want_rows, want_cols = _greedy(np.nan_to_num(s[b], nan=-1.0), 0.25, -1)
        np.testing.assert_array_equal(rows.asnumpy()[b], want_rows)
        np.testing.assert_array_equal(cols.asnumpy()[b], want_cols)


def test_bipartite_ties_go_to_the_first_position():
    s = np.array([[0.5, 0.5], [0.5, 0.5]])
    rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(s), threshold=0.1)
    assert rows.asnumpy().tolist() == [0, 1] and cols.asnumpy().tolist() == [0, 1]


def test_box_decode_gradient_is_the_derivative():
    """Finite differences of box_decode in both inputs (MXNet gave zeros)."""
    rng = np.random.RandomState(3)
    data = rng.normal(0, 0.3, (2, 3, 4))
    anchors = np.concatenate([rng.uniform(0, 0.5, (1, 3, 2)), rng.uniform(0.6, 1, (1, 3, 2))],
                             -1)
    head = rng.normal(size=(2, 3, 4))
    kw = dict(format="corner", std2=0.5, clip=0.2)

    def f(d, a):
        return (mx.nd.contrib.box_decode(mx.nd.array(d, dtype="float64"),
                                         mx.nd.array(a, dtype="float64"),
                                         **kw).asnumpy() * head).sum()
    x, a = mx.nd.array(data, dtype="float64"), mx.nd.array(anchors, dtype="float64")
    x.attach_grad()
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_decode(x, a, **kw)
    y.backward(mx.nd.array(head, dtype="float64"))
    for value, grad, which in ((data, x.grad, 0), (anchors, a.grad, 1)):
        num = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            step = np.zeros_like(value)
            step[i] = 1e-6
            args = [data, anchors]
            args[which] = value + step
            up = f(*args)
            args[which] = value - step
            num[i] = (up - f(*args)) / 2e-6
        np.testing.assert_allclose(grad.asnumpy(), num, rtol=1e-5, atol=1e-8)


def test_prior_matches_a_numpy_closed_form():
    got = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2)), sizes=(0.5,),
                                      ratios=(4,)).asnumpy()
    # centers 0.25, 0.75; w = 0.5 * 2 / 2 * 2 = 1 (half 0.5), h = 0.5 / 2 = 0.25 (half 0.125)
    want = [[cx - 0.5, cy - 0.125, cx + 0.5, cy + 0.125] for cy in (0.25, 0.75)
            for cx in (0.25, 0.75)]
    np.testing.assert_allclose(got[0], want, rtol=1e-6)


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 4))), "lhs"),
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((4,)), mx.nd.zeros((2, 4))), "(4,)"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 4))), "at least 5"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), coord_start=3), "coord_start=3"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), score_index=2), "score_index=2"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), id_index=1), "id_index=1"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), in_format="xy"), "in_format"),
    (lambda: mx.nd.contrib.box_encode(
        mx.nd.ones((1, 2)), mx.nd.array([[0, 3]]), mx.nd.zeros((1, 2, 4)),
        mx.nd.zeros((1, 3, 4)), mx.nd.zeros(4), mx.nd.ones(4)), "matches[0, 1] = 3.0"),
    (lambda: mx.nd.contrib.box_encode(
        mx.nd.ones((1, 2)), mx.nd.zeros((1, 3)), mx.nd.zeros((1, 2, 4)),
        mx.nd.zeros((1, 3, 4)), mx.nd.zeros(4), mx.nd.ones(4)), "matches must have shape"),
    (lambda: mx.nd.contrib.box_decode(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 3, 4))),
     "anchors must have shape (1, 3, 4)"),
    (lambda: mx.nd.contrib.bipartite_matching(mx.nd.zeros((3,)), threshold=0), "(3,)"),
    (lambda: mx.nd.contrib.bipartite_matching(mx.nd.zeros((3, 3), dtype="int32"),
                                              threshold=0), "float"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 20)),
                                             mx.nd.zeros((2, 5, 4))), "anchor must have"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 16)),
                                             mx.nd.zeros((1, 5, 4))), "loc_pred must have"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 20)),
                                             mx.nd.zeros((1, 5, 4)), variances=(1, 2)),
     "variances"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 3))), "(1, 1, 3)"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 3, 3)), sizes=()), "sizes"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 3, 3)), steps=(0.1, -1)),
     "steps"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 3, 3)), offsets=(0.5, 1.5)),
     "offsets"),
])
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises(MXNetError) as err:
        call()
    assert words in str(err.value)


@pytest.mark.parametrize("case", ["iou_corner", "iou_center", "encode", "decode_center",
                                  "decode_corner", "bip_batch", "bip_desc", "det_default",
                                  "det_force"])
def test_blocked_computation_equals_one_block(case, monkeypatch):
    """The element-wise box ops run in blocks of BLOCK elements (bounded temporaries): tiny
    blocks give MXNet's values too."""
    from mxlite.ops import detection
    monkeypatch.setattr(detection, "BLOCK", 3)
    name, kwargs, ins, outs = _case(case)
    got = getattr(mx.nd.contrib, name)(*[mx.nd.array(x) for x in ins], **kwargs)
    for g, want in zip(got if isinstance(got, list) else [got], outs):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6, atol=1e-6, err_msg=case)


def test_bad_match_found_in_a_later_block(monkeypatch):
    from mxlite.ops import detection
    monkeypatch.setattr(detection, "BLOCK", 2)
    samples = mx.nd.array([[1, 1, 0, 1, 1]])
    with pytest.raises(MXNetError, match=r"matches\[0, 4\] = -2.0"):
        mx.nd.contrib.box_encode(samples, mx.nd.array([[0, 1, 9, 1, -2]]),
                                 mx.nd.zeros((1, 5, 4)), mx.nd.zeros((1, 2, 4)),
                                 mx.nd.zeros(4), mx.nd.ones(4))


def test_box_decode_float16_is_the_float32_result_rounded_once():
    """float16 boxes decode in float32 and round once: every element equals the float32
    decoding of the same (float16-exact) inputs, rounded to float16."""
    rng = np.random.default_rng(7)
    data = rng.uniform(-1, 1, (2, 50, 4)).astype(np.float16)
    lo = rng.uniform(0, 10, (1, 50, 2))
    anchors = np.concatenate([lo, lo + rng.uniform(1, 5, (1, 50, 2))], -1).astype(np.float16)
    kw = dict(std0=0.1, std2=0.2, clip=1.5)
    got = mx.nd.contrib.box_decode(mx.nd.array(data, dtype="float16"),
                                   mx.nd.array(anchors, dtype="float16"), **kw).asnumpy()
    want = mx.nd.contrib.box_decode(mx.nd.array(data, dtype="float32"),
                                    mx.nd.array(anchors, dtype="float32"), **kw).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want.astype(np.float16))


def _numpy_iou(a, b):
    """IoU of corner boxes a (L, 4) against b (R, 4), written from the definition."""
    out = np.zeros((len(a), len(b)))
    for i, p in enumerate(a):
        for j, q in enumerate(b):
            w = min(p[2], q[2]) - max(p[0], q[0])
            h = min(p[3], q[3]) - max(p[1], q[1])
            inter = max(w, 0) * max(h, 0)
            area = lambda z: max(z[2] - z[0], 0) * max(z[3] - z[1], 0)   # noqa: E731
            union = area(p) + area(q) - inter
            out[i, j] = inter / union if inter > 0 else 0.0
    return out


@pytest.mark.parametrize("rhs_boxes", [1, 3, 16, 17, 40])
def test_box_iou_against_the_definition_for_few_and_many_rhs_boxes(rhs_boxes):
    """box_iou loops over up to 16 rhs boxes and broadcasts beyond: both agree with the
    definition (empty and disjoint boxes included)."""
    rng = np.random.default_rng(rhs_boxes)

    def boxes(n):
        lo = rng.uniform(0, 8, (n, 2))
        b = np.concatenate([lo, lo + rng.uniform(-1, 4, (n, 2))], 1)   # some empty
        return b
    a, b = boxes(50), boxes(rhs_boxes)
    got = mx.nd.contrib.box_iou(mx.nd.array(a, dtype="float64"),
                                mx.nd.array(b, dtype="float64")).asnumpy()
    np.testing.assert_allclose(got, _numpy_iou(a, b), rtol=1e-12, atol=1e-12)
