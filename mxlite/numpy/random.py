"""``mx.np.random``: NumPy's random sampling over the registered samplers."""

__all__ = []
