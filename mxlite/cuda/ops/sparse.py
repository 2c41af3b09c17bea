"""GPU compute of ``_sparse_retain`` on dense data (mxlite/ops/sparse/convert.py): the rows
are picked on the host and copied with the device namespace, so the CPU function runs
unchanged. Sparse storage itself lives on the CPU."""
from . import device_generic

device_generic("_sparse_retain")
