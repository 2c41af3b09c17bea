"""GPU compute of the operators in mxlite/ops/la_factor.py (extracttrian, maketrian): their
CPU compute functions compute the triangle's positions with ``rctx.xp.arange`` and
comparisons and move the elements with integer-array indexing (array methods NumPy and
CuPy share), so they run unchanged on the GPU."""
from . import device_generic

device_generic("_linalg_extracttrian", "_linalg_maketrian")
