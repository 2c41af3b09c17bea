"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (attention, detection, elemwise, grad, image, indexing, linalg,  # noqa: F401
               mathops, nn, normalize, random, reductions, rnn, shape, sorting,
               spatial, spatial_grad, updates)
