"""GPU compute of the operators in mxlite/ops/correlation.py (Correlation, its adjoint and
tangent; DeformablePSROIPooling, its differentiated sampler and scatter): their CPU compute
functions use the device namespace only (``zeros``, ``arange``, ``cast_into``,
``fill_zero``, ``add_at``, ``to_host``/``from_host`` for the rois' batch indices and the
bins' index tables) and the array methods NumPy and CuPy share (slices, gathers, ``sum``,
``abs``, ``clip``, comparisons), so they run unchanged on the GPU."""
from . import device_generic

device_generic("Correlation", "_correlation_adjoint", "_correlation_tangent",
               "_contrib_DeformablePSROIPooling", "_dpsroi_sample", "_dpsroi_scatter")
