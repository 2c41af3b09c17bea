"""GPU compute of the operators in mxlite/ops/detection.py."""
