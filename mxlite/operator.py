"""Introspection of the operator registry."""
from .ops.registry import get_op, list_ops

__all__ = ["list_ops", "get_op"]
