"""GPU compute of ``_softmax_grad`` and ``_log_softmax_grad`` (ops/softmax_grad.py): their
compute composes the device's registered element-wise and reduction kernels."""
from . import device_generic

device_generic("_softmax_grad", "_log_softmax_grad")
