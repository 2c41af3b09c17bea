"""Contributed utilities built on the operators: ``mxlite.contrib.amp`` (loss scaling)."""
from . import amp  # noqa: F401

__all__ = ["amp"]
