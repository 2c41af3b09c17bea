"""GPU compute of the operators in mxlite/ops/rnn.py (RNN, _rnn_param_concat): the CPU compute
functions use the device namespace (``matmul``, ``copyto``, views) and the registered
activation kernels of the running device, so they run unchanged on the GPU (cuBLAS GEMMs)."""
from . import device_generic

device_generic("RNN", "_rnn_param_concat")
