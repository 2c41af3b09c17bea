"""``mx.np.fallback``: the names of ``mx.np`` functions that MXNet 1.9.1 ran by NumPy on
the host (its ``mxnet.numpy.fallback`` module).

In mxlite each is the ordinary ``mx.np`` function -- a composition of registered
operators where the result is differentiable, host NumPy where it is not -- so this
module only lists the names and hands out the ``mx.np`` functions (``fallback.choose is
mx.np.choose``). A name whose ``mx.np`` function is not available raises
AttributeError.
"""

_NAMES = ("allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition",
          "argwhere", "array_equal", "array_equiv", "choose", "compress", "corrcoef",
          "correlate", "count_nonzero", "cov", "digitize", "divmod", "extract",
          "flatnonzero", "float_power", "frexp", "heaviside", "histogram2d",
          "histogram_bin_edges", "histogramdd", "i0", "in1d", "interp", "intersect1d",
          "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "mirr", "modf", "msort",
          "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmedian",
          "nanmin", "nanpercentile", "nanprod", "nanquantile", "ndim", "npv", "partition",
          "piecewise", "packbits", "poly", "polyadd", "polydiv", "polyfit", "polyint",
          "polymul", "polysub", "positive", "ppmt", "promote_types", "ptp", "pv", "rate",
          "real", "result_type", "rollaxis", "roots", "searchsorted", "select", "setdiff1d",
          "setxor1d", "signbit", "size", "spacing", "take_along_axis", "trapz",
          "tril_indices_from", "trim_zeros", "triu_indices_from")
__all__ = list(_NAMES)


def resolver(module, names, source):
    """``(__getattr__, __dir__)`` of a module ``module`` whose public ``names`` are the
    functions of the same names in module ``source`` (looked up when asked, so the module
    can be imported while ``source`` is being built)."""
    def getattr_(name):
        if name in names:
            import importlib
            try:
                return vars(importlib.import_module(source))[name]
            except KeyError:
                pass
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def dir_():
        return sorted(names)
    return getattr_, dir_


__getattr__, __dir__ = resolver(__name__, _NAMES, "mxlite.numpy")
