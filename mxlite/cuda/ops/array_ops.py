"""GPU compute functions of ``mxlite/ops/array_ops.py`` (gather_nd, scatter_nd,
_backward_gather_nd, _scatter_set_nd, batch_take, slice_like, shape_array, size_array,
_eye, _linspace, moments, _histogram, _ravel_multi_index, _unravel_index, _split_v2,
fill_element_0index, _onehot_encode, cast_storage, amp_cast, amp_multicast,
reset_arrays):
their CPU compute functions use the device namespace (``rctx.xp``: ``add_at``, ``arange``, ``cast_into``, views,
``strided_copy``), the array methods NumPy and CuPy share (comparisons, ``astype``, integer
array indexing, ``fill``) and the compute function the same device has for ``take``,
``pick``, ``mean``, ``_linspace``, ``_take_grad``
or ``one_hot``, so they run unchanged on the GPU."""
from . import device_generic

device_generic("gather_nd", "scatter_nd", "_backward_gather_nd", "_scatter_set_nd",
               "batch_take", "slice_like", "shape_array", "size_array", "_eye", "_linspace",
               "moments", "_histogram", "_ravel_multi_index", "_unravel_index",
               "_split_v2", "fill_element_0index", "_onehot_encode",
               "cast_storage", "amp_cast", "amp_multicast", "reset_arrays")
