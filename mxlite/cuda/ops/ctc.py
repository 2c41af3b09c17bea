"""GPU compute of the operators in mxlite/ops/ctc.py: CTCLoss's compute function is written
against the device namespace, the array methods NumPy and CuPy share and the exp, log and
log_softmax kernels of the same device, so it runs unchanged on the GPU (the labels and
lengths, small (N, L) and (N,) arrays, are checked on the host first)."""
from . import device_generic

device_generic("CTCLoss")
