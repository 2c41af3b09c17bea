"""Restores, on import, the NumPy aliases (``np.int``, ``np.float``, ``np.NaN``, ...) that
NumPy 2 removed and MXNet 1.9.1's tests and tutorials use, as the same objects NumPy 1 gave.
Shared by the unit-test plugin and the tutorial runner (both sides alike)."""
import numpy as np

# what NumPy 1 had under these names (NumPy 2 removed them)
_ALIASES = {"int": int, "float": float, "bool": bool, "object": object, "str": str,
            "complex": complex, "long": int, "unicode": str,
            "NaN": float("nan"), "NAN": float("nan"), "Inf": float("inf"),
            "Infinity": float("inf"), "infty": float("inf"), "PINF": float("inf"),
            "NINF": float("-inf"), "PZERO": 0.0, "NZERO": -0.0,
            "float_": np.float64, "complex_": np.complex128, "unicode_": np.str_,
            "string_": np.bytes_, "int0": np.intp, "uint0": np.uintp, "bool8": np.bool_,
            "object0": np.object_, "cfloat": np.complex128, "singlecomplex": np.complex64,
            "longfloat": np.longdouble, "longcomplex": np.clongdouble,
            "clongfloat": np.clongdouble, "round_": np.round, "product": np.prod,
            "cumproduct": np.cumprod, "alltrue": np.all, "sometrue": np.any}
for _name, _value in _ALIASES.items():
    if _name not in np.__dict__:
        setattr(np, _name, _value)
if "trapz" not in np.__dict__ and hasattr(np, "trapezoid"):
    np.trapz = np.trapezoid


def _in1d(ar1, ar2, assume_unique=False, invert=False, **kwargs):
    """NumPy 1's ``in1d`` (removed in NumPy 2.4): ``isin`` of the flattened ``ar1``."""
    return np.isin(ar1, ar2, assume_unique=assume_unique, invert=invert, **kwargs).ravel()


def _msort(a):
    """NumPy 1's ``msort`` (removed in NumPy 2): a copy sorted along the first axis."""
    return np.sort(a, axis=0)


for _name, _value in (("in1d", _in1d), ("msort", _msort)):
    if _name not in np.__dict__:
        _value.__name__ = _name
        setattr(np, _name, _value)


def _with_interpolation(fn):
    """NumPy 1's ``interpolation=`` keyword of the quantile functions (NumPy 2: ``method=``)."""
    import functools

    @functools.wraps(fn)
    def call(*args, interpolation=None, **kwargs):
        if interpolation is not None:
            kwargs.setdefault("method", interpolation)
        return fn(*args, **kwargs)
    return call


def _restore_interpolation():
    import inspect
    for name in ("quantile", "percentile", "nanquantile", "nanpercentile"):
        fn = getattr(np, name)
        if "interpolation" not in inspect.signature(fn).parameters:
            setattr(np, name, _with_interpolation(fn))


_restore_interpolation()
