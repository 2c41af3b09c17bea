"""GPU compute of the operators in mxlite/ops/pdf.py (``_random_pdf_uniform``, ``_normal``,
``_gamma``, ``_exponential``, ``_poisson``, ``_negative_binomial``,
``_generalized_negative_binomial``, ``_dirichlet``): their CPU compute functions use the device
namespace (``empty``, ``cast_into``, ``broadcast_to``), the array methods NumPy and CuPy share
(arithmetic, comparisons, boolean-mask assignment, ``sum``, ``any``, ``all``, ``astype``) and
the compute function the same device has for ``log``, ``log1p``, ``exp`` and ``gammaln``, so
they run unchanged on the GPU. The parameter check reads one flag per block (a
synchronisation) and copies a block to the host only to name a bad element."""
from ...ops.pdf import DENSITIES
from . import device_generic

device_generic(*(d.op for d in DENSITIES))
