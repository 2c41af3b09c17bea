"""GPU compute of the operators of mxlite/ops/sparse on dense data: ``_sparse_retain`` picks
its rows on the host and copies with the device namespace, ``_sparse_adagrad_update`` is
array arithmetic; so their CPU functions run unchanged. Sparse storage itself lives on the
CPU."""
from . import device_generic

device_generic("_sparse_retain", "_sparse_adagrad_update")
