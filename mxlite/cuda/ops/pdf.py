"""GPU compute of the operators in mxlite/ops/pdf.py."""
