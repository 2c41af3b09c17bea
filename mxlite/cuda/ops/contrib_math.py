"""GPU compute of the operators in mxlite/ops/contrib_math.py."""
