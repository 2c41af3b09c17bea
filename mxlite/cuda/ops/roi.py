"""GPU compute of the operators in mxlite/ops/roi.py (ROIAlign, PSROIPooling, RROIAlign
and their adjoints, the deformable convolutions and their grid; the sampling is
BilinearSampler's compute): their CPU compute functions use the device namespace only (``matmul``,
``add_at``, ``zeros``, ``arange``, ``to_host``/``from_host`` for the rois' batch indices)
and the array methods NumPy and CuPy share, so they run unchanged on the GPU."""
from . import device_generic

device_generic("_contrib_ROIAlign", "_roi_align_adjoint", "_contrib_PSROIPooling",
               "_psroi_pooling_adjoint", "_contrib_RROIAlign", "_rroi_align_adjoint",
               "_deform_grid", "_contrib_DeformableConvolution",
               "_contrib_ModulatedDeformableConvolution")
