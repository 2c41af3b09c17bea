"""GPU compute of the operators in mxlite/ops/spatial.py: every CPU compute function there
is written against the device namespace (views, ``strided_copy``, ``copyto``,
``broadcast_to``, ``matmul``, ``add_at``, ``to_host``/``from_host``) and the array methods
NumPy and CuPy share, so it runs unchanged on the GPU."""
from . import device_generic

device_generic("Crop", "_slice_assign", "_slice_assign_scalar")

# the samplers gather with integer indexing and scatter with ``add_at``; GridGenerator's
# products run through ``matmul``: all in the device namespace or shared array methods
device_generic("BilinearSampler", "_bilinear_sampler_d", "_bilinear_sampler_adjoint",
               "GridGenerator", "_grid_generator_affine_adjoint", "SpatialTransformer")

# ROIPooling reads the rois on the host (``to_host``) and takes each bin's maximum with the
# shared ``max``/``argmax`` array methods on the device
device_generic("ROIPooling", "_roi_pooling_argmax")

# AdaptiveAvgPooling2D, BilinearResize2D and their adjoints are two products with small
# bin or interpolation matrices (``matmul``)
device_generic("_contrib_AdaptiveAvgPooling2D", "_adaptive_avg_pooling2d_adjoint",
               "_contrib_BilinearResize2D", "_bilinear_resize2d_adjoint")
