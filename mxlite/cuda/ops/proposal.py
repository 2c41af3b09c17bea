"""GPU compute of the operators in mxlite/ops/proposal.py (_contrib_MultiBoxTarget,
_contrib_Proposal, _contrib_MultiProposal): their CPU compute functions use the device
namespace (``rctx.xp``: ``empty``, ``zeros``, ``arange``, ``ascontiguousarray``,
``cast_into``, ``to_host``/``from_host``), the array methods NumPy and CuPy share (``clip``,
``astype``, ``nonzero``, advanced indexing, reductions) and the ``exp``/``log`` compute
functions of the same device, so they run unchanged on the GPU. The IoU matrices, box
decoding, background probabilities and regression targets are computed on the device; the
greedy matching, the choice of hard negatives, the running top-k and the NMS of the
proposals read host copies of the few values they need (one item's IoU matrix, one block's
candidates), as box_nms does."""
from . import device_generic

device_generic("_contrib_MultiBoxTarget", "_contrib_Proposal", "_contrib_MultiProposal")
