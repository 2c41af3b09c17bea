"""``mx.npx``'s operators: MXNet's neural-network and utility operators with NumPy
conventions (np arrays in and out)."""

__all__ = []
