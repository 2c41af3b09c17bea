"""Large-tensor rows: index ops (take, pick, one_hot, Embedding, sequence ops) and their scatter adjoints; gradients at the far end."""

ROWS = {}
