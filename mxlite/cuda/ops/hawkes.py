"""GPU compute of the operators in mxlite/ops/hawkes.py: contrib.hawkesll and _hawkesll_scan
are written against the device namespace, the array methods NumPy and CuPy share and the
exp/log kernels of the same device (the recursion is looped over time, vectorised over a
block of samples), so they run unchanged on the GPU; valid_length, an (N,) vector, is
checked on the host."""
from . import device_generic

device_generic("_contrib_hawkesll", "_hawkesll_scan")
