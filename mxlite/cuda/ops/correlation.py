"""GPU compute of the operators in mxlite/ops/correlation.py (Correlation, its adjoint and
tangent): their CPU compute functions use the device namespace only (``zeros``,
``cast_into``, ``fill_zero``) and the array methods NumPy and CuPy share (slices, ``sum``,
``abs``, comparisons), so they run unchanged on the GPU."""
from . import device_generic

device_generic("Correlation", "_correlation_adjoint", "_correlation_tangent")
