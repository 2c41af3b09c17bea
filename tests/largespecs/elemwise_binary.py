"""Large-tensor rows: element-wise binary, broadcast and scalar ops, where."""

ROWS = {}
