"""``mx.npx``'s operators: MXNet's neural-network and utility operators with NumPy
conventions (np arrays in and out).

Most are entry points onto the registered operator of the legacy name (``_TABLE``):
``npx.fully_connected`` is ``FullyConnected``, ``npx.batch_norm`` is ``BatchNorm`` (one
output unless ``output_mean_var=True``), ``npx.topk`` is ``topk`` (float32 indices unless
``dtype`` says otherwise, as MXNet's). Three have their own rules: ``reshape`` (npx's codes,
the ``_npx_reshape`` operator), ``nonzero`` (indices read on the host) and
``constraint_check`` (the ``_npx_constraint_check`` operator). The rest of the module are
MXNet's ``npx`` utilities: ``save``/``load``, the ``image`` namespace and the device
helpers.

>>> from mxlite import np as mnp, npx
>>> x = mnp.array([[1.0, -2.0, 3.0]])
>>> npx.relu(x)
array([[1., 0., 3.]])
>>> npx.reshape(mnp.zeros((2, 1, 3, 4)), (-2, -3, -5)).shape
(2, 12)
"""
import numpy as _onp

from ..base import op_error
from ..context import Context, cpu_pinned, gpu_memory_info
from ..ndarray.ndarray import waitall
from ..numpy import _front
from ..numpy.multiarray import array, asarray
from . import image
from ._entry import entry_point
from .utils import load, save

# (npx name, registered operator, what it computes)
_TABLE = (
    ("activation", "Activation",
     "Element-wise activation chosen by ``act_type`` (relu, sigmoid, tanh, softrelu, "
     "softsign, log_sigmoid, mish)."),
    ("relu", "relu", "Element-wise ``max(x, 0)``."),
    ("sigmoid", "sigmoid",
     "Element-wise ``1 / (1 + exp(-x))``; float for integer input (MXNet's kept the integer "
     "dtype, truncating every value to 0)."),
    ("softmax", "softmax",
     "Softmax along ``axis``, optionally over the first ``length`` entries of each row "
     "(``use_length=True``, int ``length``) and at a ``temperature``."),
    ("log_softmax", "log_softmax",
     "Log of the softmax along ``axis`` (``length``/``use_length`` and ``temperature`` as "
     "for ``softmax``)."),
    ("leaky_relu", "LeakyReLU",
     "Leaky rectifiers: leaky, prelu (slopes ``gamma``), rrelu, elu, selu, gelu."),
    ("batch_norm", "BatchNorm",
     "Batch normalisation over every axis but ``axis``; returns the output alone, or "
     "(output, mean, inverse std) with ``output_mean_var=True``. Training mode updates "
     "``moving_mean``/``moving_var`` in place."),
    ("layer_norm", "LayerNorm",
     "Layer normalisation along ``axis`` with scale ``gamma`` and shift ``beta``."),
    ("fully_connected", "FullyConnected",
     "``data @ weight.T + bias`` (``flatten=True`` first flattens data to 2-D; "
     "``no_bias=True`` takes no bias)."),
    ("convolution", "Convolution", "1-, 2- or 3-D convolution (NCW, NCHW, NCDHW)."),
    ("deconvolution", "Deconvolution", "1-, 2- or 3-D transposed convolution."),
    ("pooling", "Pooling", "Max, average, sum or Lp pooling over 1-3 spatial axes."),
    ("dropout", "Dropout",
     "Zeroes elements with probability ``p`` in training mode (``autograd.record()``), "
     "scaling the rest by ``1 / (1 - p)``; the identity otherwise."),
    ("embedding", "Embedding", "Rows of ``weight`` at the indices ``data``."),
    ("one_hot", "one_hot",
     "One-hot encoding of ``indices`` with ``depth`` classes (float32 unless ``dtype``)."),
    ("pick", "pick", "``data``'s elements at ``index`` along ``axis``."),
    ("topk", "topk",
     "The ``k`` largest (or smallest) entries along ``axis``: indices (float32 unless "
     "``dtype``), values, both, or a mask, by ``ret_typ``."),
    ("batch_dot", "batch_dot",
     "Matrix products over the leading batch axes (inputs of >= 3 dimensions)."),
    ("batch_flatten", "flatten", "``data`` as 2-D: the first axis kept, the others merged."),
    ("gather_nd", "gather_nd", "Elements or slices of ``data`` at the n-d ``indices``."),
    ("reshape_like", "reshape_like",
     "``lhs`` with the shape of ``rhs`` (or of a range of their axes)."),
    ("sequence_mask", "SequenceMask",
     "Sets the steps at or after each sequence's length to ``value``."),
    ("shape_array", "shape_array", "The shape of ``data`` as an int64 array."),
    ("slice", "slice",
     "The slice ``begin:end:step`` per axis (None entries take the whole axis)."),
    ("smooth_l1", "smooth_l1", "Element-wise smooth L1 loss with ``sigma = scalar``."),
    ("erf", "erf", "Element-wise Gauss error function."),
    ("erfinv", "erfinv", "Element-wise inverse of the error function."),
    ("gamma", "gamma", "Element-wise gamma function."),
    ("gammaln", "gammaln", "Element-wise log of the absolute gamma function."),
    ("arange_like", "_contrib_arange_like",
     "``start, start + step, ...`` with the shape of ``data`` (or the length of its "
     "``axis``)."),
    ("cast", "cast", "``data`` converted to ``dtype``."),
    ("rnn", "RNN", "Fused multi-layer RNN, LSTM or GRU (MXNet's ``RNN``)."),
    ("roi_pooling", "ROIPooling", "Max pooling of regions of interest to ``pooled_size``."),
    ("multibox_prior", "_contrib_MultiBoxPrior", "SSD anchor boxes for a feature map."),
    ("multibox_detection", "_contrib_MultiBoxDetection",
     "SSD detections (with non-maximum suppression) from class scores and box offsets."),
    ("multibox_target", "_contrib_MultiBoxTarget",
     "SSD training targets matched from anchors and labels."),
)

for _name, _op_name, _summary in _TABLE:
    globals()[_name] = entry_point(_name, _op_name, _summary, __name__)

__all__ = [row[0] for row in _TABLE] + [
    "reshape", "nonzero", "constraint_check", "save", "load", "image", "waitall",
    "gpu_memory_info", "cpu_pinned", "Context", "get_cuda_compute_capability"]


def _input(a):
    """``a`` as an np array (a Symbol stays one); NumPy arrays and lists are converted."""
    return a if _front.is_symbolic([a]) else asarray(a)


def reshape(a, newshape, reverse=False, order="C"):
    """``a`` with a new shape of the same size; always a copy.

    ``newshape`` (an int or a tuple) takes npx's codes: an entry >= 0 is that size, -1 is
    inferred from the size, -2 copies one input dimension, -3 drops an input dimension of
    size 1, -4 copies all remaining input dimensions, -5 multiplies two consecutive input
    dimensions and -6 splits one input dimension into the two entries that follow (one may
    be -1). ``reverse=True`` matches the codes right to left. Only ``order='C'``. Runs the
    registered operator ``_npx_reshape``, so it differentiates and works on Symbols.

    >>> from mxlite import np as mnp, npx
    >>> npx.reshape(mnp.ones((8, 3, 2, 4, 8)), (-4, -1, 2, -6), reverse=True).shape
    (8, 3, 2, 4, 4, 2)
    """
    if order != "C":
        raise op_error("reshape", f"order={order!r} is not supported; only 'C'")
    shape = (newshape,) if isinstance(newshape, (int, _onp.integer)) else tuple(newshape)
    return _front.call("_npx_reshape", [_input(a)], newshape=shape,
                       reverse=bool(reverse), order=order)


def nonzero(a):
    """The indices of the non-zero elements of ``a`` as one int64 array of shape
    ``(count, a.ndim)``, in C order: NumPy's ``transpose(nonzero(a))`` (``argwhere``).
    A 0-d ``a`` counts as 1-d (one row ``[0]`` when it is non-zero), as MXNet's.

    The result's size depends on the values, so they are read on the host (not
    differentiable: indices). A Symbol cannot give such a shape: MXNetError.

    >>> from mxlite import np as mnp, npx
    >>> npx.nonzero(mnp.array([[3, 0], [0, 4]])).tolist()
    [[0, 0], [1, 1]]
    """
    _front.needs_values("nonzero", a)
    a = asarray(a)
    host = a.asnumpy()
    if host.ndim == 0:
        host = host.reshape(1)
    return array(_onp.argwhere(host).astype(_onp.int64), dtype=_onp.int64, ctx=a.context)


def constraint_check(x, msg="Constraint violated."):
    """``np.array(True)`` when every element of the boolean ``x`` is true (an empty ``x``
    included); otherwise MXNetError (a ValueError) carrying ``msg``.

    Multiply the guarded value by the result (``scale * npx.constraint_check(scale > 0,
    'scale must be positive')``) so that a hybridized block computes the check as part of
    its graph (the registered operator ``_npx_constraint_check``).
    """
    return _front.call("_npx_constraint_check", [_input(x)], msg=msg)


reshape.meta_free = constraint_check.meta_free = True     # one registered operator each


def get_cuda_compute_capability(ctx):
    """The compute capability of GPU context ``ctx`` as an int (80 for sm_80); MXNetError
    for a CPU context or without a GPU."""
    from ..test_utils._context import get_cuda_compute_capability as capability
    return capability(ctx)
