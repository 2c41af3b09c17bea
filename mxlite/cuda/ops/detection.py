"""GPU compute of the operators in mxlite/ops/detection.py (_contrib_box_iou,
_contrib_box_nms, _contrib_box_encode, _contrib_box_decode, _contrib_bipartite_matching,
_contrib_MultiBoxPrior): their CPU compute functions use the device namespace
(``rctx.xp``: ``empty``, ``arange``, ``copyto``, ``cast_into``, ``to_host``/``from_host``),
the array methods NumPy and CuPy share (``clip``, comparisons, integer indexing) and the
``exp``/``log`` compute function of the same device, so they run unchanged on the GPU. The
greedy steps of NMS and bipartite matching run on the host copy of the scores, one
vectorised step per kept box or match; the kept rows are gathered on the device."""
from . import device_generic

device_generic("_contrib_box_iou", "_contrib_box_nms", "_contrib_box_encode",
               "_contrib_box_decode", "_contrib_bipartite_matching", "_contrib_MultiBoxPrior",
               "_contrib_MultiBoxDetection")
