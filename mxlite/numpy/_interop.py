"""NumPy's ``__array_function__`` and ``__array_ufunc__`` protocols for ``mx.np.ndarray``
(filled in by the interop work; until then NumPy functions see the array through
``__array__``)."""
