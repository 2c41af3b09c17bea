"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (detection, elemwise, grad, image, linalg, nn, random, rnn, shape,  # noqa: F401
               spatial, updates)
