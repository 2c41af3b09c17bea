"""GPU compute of the operators in mxlite/ops/proposal.py."""
