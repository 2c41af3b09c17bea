"""Gradient specs: _contrib_box_nms (the head gradient of each kept row scattered back to
its input row, through the transposed format change where in_format differs from
out_format) and _contrib_box_decode (in data and anchors, with and without clip).

box_nms is piecewise: the sample keeps every score, overlap and class well away from the
thresholds, so finite differences never change which boxes survive."""
import numpy as np

from . import Spec

# [id, score, xmin, ymin, xmax, ymax]: row 1 overlaps row 0 (IoU ~0.9, suppressed), row 4
# overlaps row 2 (IoU ~0.85) in another class (kept unless force_suppress), row 3 stands alone
_BOXES = np.array([[0, 0.9, 0.10, 0.10, 0.50, 0.50],
                   [0, 0.8, 0.12, 0.10, 0.50, 0.52],
                   [1, 0.7, 0.60, 0.60, 0.90, 0.90],
                   [1, 0.6, 0.10, 0.60, 0.40, 0.95],
                   [0, 0.5, 0.62, 0.60, 0.90, 0.88]])


def _boxes(rng):
    return [_BOXES + rng.uniform(0, 0.005, _BOXES.shape)]


def _decode_inputs(rng):
    lo = rng.uniform(0.0, 0.4, (1, 3, 2))
    return [rng.uniform(-0.4, 0.4, (2, 3, 4)),
            np.concatenate([lo, lo + rng.uniform(0.3, 0.6, (1, 3, 2))], -1)]


SPECS = {
    "_contrib_box_nms": Spec([(5, 6)], lambda nd, x: [
        nd.contrib.box_nms(x * x, id_index=0) * x,
        nd.contrib.box_nms(x, force_suppress=True, id_index=0, out_format="center") * x,
        nd.contrib.box_non_maximum_suppression(x, in_format="center", topk=3) * x],
        sample=_boxes),
    "_contrib_box_decode": Spec([(2, 3, 4), (1, 3, 4)], lambda nd, x, a: [
        nd.contrib.box_decode(x * x, a, std0=0.5, std2=2.0),
        nd.contrib.box_decode(x, a * a, format="corner", clip=0.3, std1=0.2)],
        sample=_decode_inputs),
}
