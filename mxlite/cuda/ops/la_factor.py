"""GPU compute of the operators in mxlite/ops/la_factor.py (extracttrian, maketrian,
gelqf, syevd): their CPU compute functions compute the triangle's positions with
``rctx.xp.arange`` and comparisons, move elements with integer-array indexing, and apply
gelqf's Householder reflections and syevd's Jacobi rotations with array arithmetic,
reductions and ``argsort``/``argmax`` (array methods NumPy
and CuPy share), so they run unchanged on the GPU."""
from . import device_generic

device_generic("_linalg_extracttrian", "_linalg_maketrian", "_linalg_gelqf", "_linalg_syevd")
