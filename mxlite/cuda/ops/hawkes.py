"""GPU compute of the operators in mxlite/ops/hawkes.py."""
