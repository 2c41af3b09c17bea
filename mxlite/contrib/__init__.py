"""Contributed utilities built on the operators: ``mxlite.contrib.amp`` (automatic mixed
precision and loss scaling)."""
from . import amp  # noqa: F401

__all__ = ["amp"]
