"""Large-tensor rows: dot, batch_dot, khatri_rao and the linalg ops."""

ROWS = {}
