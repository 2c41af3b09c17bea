"""Contrib vision and detection operators on one-op graphs: exported, checked, run in
onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import check

rng = np.random.default_rng(11)
CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


# onnxruntime 1.32 has no MaxRoiPool/RoiAlign kernels of opset 22: the roi ops export at 21
OPSET = {"roi_pooling": 21, "roi_align": 21}


def corner_boxes(*lead):
    lo = rng.random(lead + (2,)) * 4
    size = rng.random(lead + (2,)) * 3
    return np.concatenate([lo, lo + size], -1).astype(np.float32)


def rois(n, batch, h, w, scale):
    """(n, 5) rows [batch_index, x1, y1, x2, y2] in image coordinates."""
    x = rng.random((n, 2)) * (w - 1) / scale
    y = rng.random((n, 2)) * (h - 1) / scale
    out = np.stack([rng.integers(0, batch, n), x.min(1), y.min(1), x.max(1), y.max(1)], 1)
    return out.astype(np.float32)


def _degenerate():
    b = corner_boxes(5)
    b[0, 2] = b[0, 0] - 1          # negative width: no area
    b[1] = [10, 10, 11, 11]         # apart from every other box
    b[2] = b[3]                     # identical boxes: IoU 1
    return b


case("box_iou_corner", lambda F, a, b: F.contrib.box_iou(a, b), corner_boxes(6), corner_boxes(4))
case("box_iou_batched", lambda F, a, b: F.contrib.box_iou(a, b), corner_boxes(2, 3),
     corner_boxes(3, 1, 2))
case("box_iou_center", lambda F, a, b: F.contrib.box_iou(a, b, format="center"),
     corner_boxes(5), corner_boxes(3))
case("box_iou_degenerate", lambda F, a, b: F.contrib.box_iou(a, b), _degenerate(), _degenerate())
case("roi_pooling", lambda F, x, r: F.ROIPooling(x, r, pooled_size=(2, 2), spatial_scale=1.0),
     rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rois(5, 2, 8, 8, 1.0))
case("roi_pooling_scaled", lambda F, x, r: F.ROIPooling(x, r, pooled_size=(3, 2),
                                                         spatial_scale=0.5),
     rng.standard_normal((1, 2, 7, 9)).astype(np.float32), rois(4, 1, 7, 9, 0.5))
for aligned in (False, True):
    for ratio in (-1, 2):
        case(f"roi_align_aligned{int(aligned)}_ratio{ratio}",
             lambda F, x, r, al=aligned, s=ratio: F.contrib.ROIAlign(
                 x, r, pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=s, aligned=al),
             rng.standard_normal((2, 3, 9, 10)).astype(np.float32), rois(6, 2, 9, 10, 0.5),
             rtol=1e-4)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_detection_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path, request):
    label = request.node.callspec.id
    opset = next((v for k, v in OPSET.items() if label.startswith(k)), None)
    check(fn, inputs, rtol, tmp_path, opset_version=opset)


def test_roi_align_position_sensitive_is_refused(tmp_path):
    y = mx.sym.contrib.ROIAlign(mx.sym.var("x"), mx.sym.var("r"), pooled_size=(2, 2),
                                spatial_scale=1.0, position_sensitive=True)
    with pytest.raises(mx.MXNetError, match="position_sensitive"):
        mx.onnx.export_model(y, {}, in_shapes=[(1, 8, 4, 4), (1, 5)],
                             onnx_file_path=tmp_path / "m.onnx")


def _anchors(n, fmt):
    boxes = corner_boxes(1, n)
    if fmt == "corner":
        return boxes
    w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    return np.stack([boxes[..., 0] + w / 2, boxes[..., 1] + h / 2, w, h], -1)


PRIOR_CASES = [
    pytest.param((1, 3, 4, 5), dict(sizes=(0.5, 0.25), ratios=(1, 2, 0.5)), id="sizes_ratios"),
    pytest.param((2, 1, 3, 3), dict(sizes=(0.8,), clip=True, steps=(0.3, 0.4),
                                    offsets=(0.2, 0.7)), id="clip_steps_offsets"),
]


@pytest.mark.parametrize("shape,kw", PRIOR_CASES)
def test_multibox_prior_is_a_constant_of_the_shape(shape, kw, tmp_path):
    x = rng.standard_normal(shape).astype(np.float32)
    check(lambda F, d: F.contrib.MultiBoxPrior(d, **kw), [x], 1e-6, tmp_path)


@pytest.mark.parametrize("fmt", ["center", "corner"])
@pytest.mark.parametrize("kw", [{}, dict(std0=0.1, std1=0.2, std2=0.3, std3=0.4, clip=0.1)])
def test_box_decode(fmt, kw, tmp_path):
    data = rng.standard_normal((2, 5, 4)).astype(np.float32)
    check(lambda F, d, a: F.contrib.box_decode(d, a, format=fmt, **kw),
          [data, _anchors(5, fmt)], 1e-5, tmp_path)


def test_box_decode_float16(tmp_path):
    data = rng.standard_normal((1, 3, 4)).astype(np.float16)
    check(lambda F, d, a: F.contrib.box_decode(d, a, std2=0.5),
          [data, _anchors(3, "center").astype(np.float16)], 1e-3, tmp_path)


@pytest.mark.parametrize("match_dtype", [np.float32, np.int64])
def test_box_encode(match_dtype, tmp_path):
    b, n, m = 2, 6, 3
    samples = np.array([[1, 0, 1, -1, 1, 0], [0, 1, 1, 1, 0, -1]], np.float32)
    matches = rng.integers(0, m, (b, n)).astype(match_dtype)
    matches[samples <= 0.5] = -1                       # unmatched: never read
    anchors, refs = corner_boxes(b, n), corner_boxes(b, m)
    means = np.array([0.1, -0.1, 0.0, 0.2], np.float32)
    stds = np.array([0.1, 0.1, 0.2, 0.2], np.float32)
    check(lambda F, *xs: F.contrib.box_encode(*xs), [samples, matches, anchors, refs, means,
                                                      stds], 1e-5, tmp_path)


def test_box_iou_and_box_decode_are_valid_at_opset_17(tmp_path):
    """Their column Splits give explicit sizes (Split's num_outputs only exists from
    opset 18): the models pass the full check at the opset the translations declare."""
    a, b = corner_boxes(6), corner_boxes(4)
    check(lambda F, x, y: F.contrib.box_iou(x, y), [a, b], 1e-5, tmp_path, opset_version=17)
    data = rng.standard_normal((2, 5, 4)).astype(np.float32)
    check(lambda F, d, an: F.contrib.box_decode(d, an, format="corner"),
          [data, _anchors(5, "corner")], 1e-5, tmp_path, opset_version=17)
