"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (attention, control, correlation_grad, detection, elemwise, fused,  # noqa: F401
               grad, gradscatter, histogram, image, indexing, linalg, matching, mathops, nms, nn,
               normalize, proposal, random, random_loops, reductions, rnn, roi, roi_deformable,
               roi_loops, shape, sorting, spatial, spatial_grad, updates, windows)
