"""GPU compute of the operators in mxlite/ops/legacy.py."""
