"""``mx.np.linalg``: NumPy's linear algebra over the registered ``linalg`` operators."""

__all__ = []
