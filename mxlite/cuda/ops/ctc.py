"""GPU compute of the operators in mxlite/ops/ctc.py."""
