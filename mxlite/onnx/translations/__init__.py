"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (detection, elemwise, grad, image, indexing, linalg, mathops, nn,  # noqa: F401
               normalize, random, reductions, rnn, shape, sorting, spatial, updates)
