"""GPU compute of the operators in mxlite/ops/roi.py."""
