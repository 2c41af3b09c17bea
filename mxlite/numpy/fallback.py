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


def __getattr__(name):
    if name in _NAMES:
        import mxlite.numpy as np
        try:
            return np.__dict__[name]
        except KeyError:
            pass
    raise AttributeError(f"module 'mxlite.numpy.fallback' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
