"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (detection, elemwise, grad, image, linalg, mathops, nn, normalize,  # noqa: F401
               random, rnn, shape, sorting, spatial, updates)
