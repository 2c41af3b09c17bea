"""``mx.np``: NumPy's interface on mxlite arrays (MXNet 1.9.1's ``mxnet.numpy``).

``from mxlite import np, npx; npx.set_np()`` then write NumPy code: ``np.array``,
``np.zeros``, the ufuncs, reductions, shape functions, ``np.linalg``, ``np.random``. Each
function is an entry point onto registered operators (``mxlite.numpy._front``), so the
results live on mxlite devices, are recorded by ``autograd`` and differentiate to any
order through the operators' gradients; inside a hybridized Gluon block the same
functions build graph nodes (``mx.sym.np``).

The modules, one job each: ``multiarray`` (the ``ndarray`` class), ``_dtypes`` (default
float and promotion), ``_creation``, ``_ufuncs``, ``_reductions``, ``_manipulation``,
``_indexing``, ``_products``, ``_extra``, ``_math_more``, ``_statistics``, ``_structure``
(the longer tail; ``_math_more`` and ``_statistics`` gather smaller modules, each naming
its own), ``linalg``, ``random``,
``_interop`` (NumPy's ``__array_function__``/``__array_ufunc__`` protocols).
"""
import numpy as _onp

from . import _front
from . import _creation, _extra, _indexing, _manipulation, _products, _reductions, _ufuncs
from . import _math_more, _statistics, _structure
from . import _internal  # noqa: F401  (mx.np._internal: MXNet's internal entry points)
from . import multiarray
from .multiarray import ndarray
from ._dtypes import is_np_default_dtype

_MODULES = (_creation, _ufuncs, _reductions, _manipulation, _indexing, _products, _extra,
            _math_more, _statistics, _structure)

__all__ = ["ndarray", "linalg", "random", "is_np_default_dtype"]
for _m in _MODULES:
    for _n in _m.__all__:
        globals()[_n] = getattr(_m, _n)
    __all__ += list(_m.__all__)

# NumPy's scalar types and constants (the same objects as NumPy's)
bool_, int8, uint8, int32, int64, float16, float32, float64 = (
    _onp.bool_, _onp.int8, _onp.uint8, _onp.int32, _onp.int64, _onp.float16,
    _onp.float32, _onp.float64)
bool = _onp.bool_  # noqa: A001  (MXNet's mx.np.bool)
dtype, finfo, iinfo, integer, floating, number, generic = (
    _onp.dtype, _onp.finfo, _onp.iinfo, _onp.integer, _onp.floating, _onp.number, _onp.generic)
pi, e, inf, nan, newaxis, euler_gamma = _onp.pi, _onp.e, _onp.inf, _onp.nan, None, _onp.euler_gamma
PZERO, NZERO, PINF, NINF, NAN, NaN = 0.0, -0.0, _onp.inf, -_onp.inf, _onp.nan, _onp.nan
__all__ += ["bool_", "bool", "int8", "uint8", "int32", "int64", "float16", "float32",
            "float64", "dtype", "finfo", "iinfo", "integer", "floating", "number", "generic",
            "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "PZERO", "NZERO", "PINF",
            "NINF", "NAN", "NaN"]

from . import linalg, random  # noqa: E402
from ._methods import install as _install_methods  # noqa: E402

_install_methods(ndarray, globals())
from . import _interop  # noqa: E402,F401  (NumPy's protocols on ndarray)
