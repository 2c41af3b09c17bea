"""GPU compute of the operators of mxlite/ops/sparse on dense data: ``_sparse_retain`` picks
its rows on the host and copies with the device namespace, ``_sparse_adagrad_update`` is
array arithmetic, ``_square_sum`` runs the device's reduce kernel (``sumsq``); so their CPU
functions run unchanged. Sparse storage itself lives on the
CPU, so ``_contrib_getnnz`` (csr input only) has no GPU kernel."""
from . import EXEMPT, device_generic

device_generic("_sparse_retain", "_sparse_adagrad_update", "_square_sum")
EXEMPT["_contrib_getnnz"] = ("it takes a csr matrix only (MXNet's rule), and csr storage "
                             "lives on the CPU so far (mxlite/ndarray/sparse.py)")
