# cython: language_level=3
"""(placeholder: kernels are added here)."""
