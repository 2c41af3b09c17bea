"""GPU compute of the operators in mxlite/ops/la_factor.py."""
