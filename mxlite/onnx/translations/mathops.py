"""Element-wise math not in elemwise.py: more unary functions, mod, hypot, logical ops."""
