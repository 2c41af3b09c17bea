"""GPU compute functions of the shape operators (``mxlite/ops/shape.py``).

Each of them builds a view of its input with ``rctx.xp`` (reshape, slicing, transpose,
``broadcast_to``, ``as_strided``) and moves the bytes with ``rctx.xp.strided_copy``, one
launch of the copy kernel per output (per input for concat/stack): the CPU compute
functions run unchanged on the GPU namespace.
"""
from . import device_generic

device_generic("reshape", "_npx_reshape", "reshape_like", "flatten", "expand_dims", "squeeze", "transpose",
               "swapaxes", "flip", "tile", "repeat", "concat", "stack", "split", "slice",
               "slice_axis", "broadcast_to", "broadcast_like", "broadcast_axis", "diag",
               "_slice_scatter", "_diag_scatter")
