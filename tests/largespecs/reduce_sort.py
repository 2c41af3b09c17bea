"""Large-tensor rows: reductions, finiteness reductions, sorting, cumsum, hardmax, take_along_axis."""

ROWS = {}
