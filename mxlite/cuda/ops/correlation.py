"""GPU compute of the operators in mxlite/ops/correlation.py."""
