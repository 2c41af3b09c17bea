"""GPU compute of the operators in mxlite/ops/image.py."""
