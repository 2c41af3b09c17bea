"""GPU compute functions of ``mxlite/ops/layers.py`` (LRN, GroupNorm, Pad, _pad_backward,
SoftmaxActivation, SVMOutput, IdentityAttachKLSparseReg, hard_sigmoid, depth_to_space,
space_to_depth, im2col, col2im): their CPU compute functions are written against the
device namespace and the array methods NumPy and CuPy share, call the compute function
the same device has for another operator (InstanceNorm, softmax), or the convolution's
im2col/col2im kernels through ``kernels(rctx, ...)``, so they run unchanged on the GPU."""
from . import device_generic

device_generic("LRN", "GroupNorm", "Pad", "_pad_backward", "SoftmaxActivation", "SVMOutput",
               "IdentityAttachKLSparseReg", "hard_sigmoid", "depth_to_space", "space_to_depth",
               "im2col", "col2im")
