"""The ONNX translations, one module per family of operators; importing this package
registers them all in ``mxlite.onnx.table``."""
from . import (attention, colour_jitter, control, correlation_grad, ctc, detection,  # noqa: F401
               elemwise, factor, fused, grad, gradscatter, hawkes, histogram, image, indexing,
               linalg, matching, mathops, misc, nms, nn, normalize, proposal, random,
               random_loops, reductions, rnn, roi, roi_deformable, roi_loops, shape, sorting,
               spatial, spatial_grad, updates, windows)
