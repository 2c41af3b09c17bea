"""Large-tensor rows: NN layers: convolution, pooling, normalization, activations, softmax family, output layers."""

ROWS = {}
