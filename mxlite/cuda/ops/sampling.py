"""GPU compute of the operators in mxlite/ops/sampling.py."""
