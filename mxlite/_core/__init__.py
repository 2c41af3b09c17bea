"""Compiled kernels (Cython extensions generated from ``kernel_table.py`` and the ``.pyx.in`` templates)."""
