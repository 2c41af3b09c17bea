"""NumPy's structural and set functions (unique, pad, insert, delete, resize, index helpers, partition, set operations, and the host-run fallbacks)."""

__all__ = []
