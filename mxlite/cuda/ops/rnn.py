"""GPU compute of the operators in mxlite/ops/rnn.py."""
