"""Large-tensor rows: shape ops, creation ops, getitem/setitem and their scatters, cross-device copy."""

ROWS = {}
