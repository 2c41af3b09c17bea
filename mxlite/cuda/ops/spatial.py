"""GPU compute of the operators in mxlite/ops/spatial.py."""
