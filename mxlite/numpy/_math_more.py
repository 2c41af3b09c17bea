"""NumPy's element-wise and small-array math beyond the core ufuncs (arctan2, copysign, ldexp, gcd/lcm, bitwise, rounding, nan_to_num, isclose, einsum, trace, diag, ...)."""

__all__ = []
