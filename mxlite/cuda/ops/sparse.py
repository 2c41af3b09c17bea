"""GPU compute of sparse storage and of the operators of mxlite/ops/sparse.

* Dense data: ``_sparse_retain`` picks its rows on the host and copies with the device
  namespace, ``_sparse_adagrad_update`` is array arithmetic, ``_square_sum`` runs the
  device's reduce kernel (``sumsq``); so their CPU functions run unchanged.
  ``_contrib_getnnz`` of a dense array is an error on every device (it counts a csr
  matrix's stored values), so its dense function is the CPU's too.
* csr and row_sparse arrays on a GPU: ``sparse_formats`` (checks and conversions,
  registered as ``formats.DEVICE['gpu']``), ``sparse_rules`` and ``sparse_dot`` (the GPU
  compute of the storage rules; ``sparse_rules.FALLBACK`` names those that run densely),
  over the kernels of ``sparse_kernels``.
"""
from . import device_generic

device_generic("_sparse_retain", "_sparse_adagrad_update", "_square_sum", "_contrib_getnnz")

from . import sparse_formats, sparse_rules, sparse_dot    # noqa: E402,F401  (attach on import)
