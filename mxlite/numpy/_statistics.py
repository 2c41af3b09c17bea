"""NumPy's statistics, histograms, polynomials, searching and window functions, gathered.

The functions live in modules with one job each: ``_quantiles`` (the quantiles,
percentiles and medians), ``_histograms`` (histograms, ``bincount``, ``digitize``,
``searchsorted``), ``_signal`` (``interp``, the differences, ``trapz``, ``unwrap``,
``correlate``, the windows), ``_polynomials`` (the ``poly*`` functions, ``vander``,
``roots``, ``i0``), ``_covariance`` (``cov``, ``corrcoef``), with the private helpers they
share in ``_stats_common``. This module names them all (``__all__``) for ``mx.np``.

Three kinds of function are gathered here:

* differentiable ones, composed of registered operators (``sort``, ``take``,
  ``_take_along_axis``, ``slice_axis``, ``dot``, the ufuncs and reductions), so autograd
  records them and they differentiate to any order: ``quantile``/``percentile``/``median``
  and their ``nan`` versions (the gradient goes to the selected elements), ``diff``,
  ``ediff1d``, ``interp`` (w.r.t. ``x``, ``xp`` and ``fp``), ``polyval``, ``vander``,
  ``cov``, ``corrcoef``, ``correlate``, ``trapz``, ``unwrap`` (its correction, a multiple
  of the period, is a constant), ``polyadd``, ``polysub``, ``polymul``, ``bincount`` with
  ``weights`` (w.r.t. the weights) and the windows ``hanning``, ``hamming``, ``blackman``;
* counting and searching ones, whose results are counts or indices (int64, not
  differentiable), computed on the host with NumPy: ``histogram`` and relatives,
  ``bincount`` without weights, ``digitize``, ``searchsorted``;
* NumPy "fallbacks" computed on the host (in float64) and not recorded, as MXNet's
  ``mx.np`` ran them with NumPy too: ``polyfit``, ``polydiv``, ``polyint``, ``poly``,
  ``roots``, ``i0``.

Dtypes follow ``mx.np``'s rule of no silent float64: a float result is in the inputs'
float dtype (the widest of them), integer inputs give the default float (float32, or
float64 after ``npx.set_np(dtype=True)``); NumPy often widens to float64 instead.
Counts and indices are int64.

Symbols (a hybridized Gluon block): the quantiles (``q`` a number, a list or a Symbol),
``median``, ``diff``, ``ediff1d``, ``trapz``, ``polyval``, ``vander``, ``cov``,
``corrcoef``, the windows and ``histogram`` (an int ``bins`` with ``range``, or given
edges) build graph nodes, using the shapes a traced Symbol knows;
the functions that read values (the ``nan`` quantiles, whose positions depend on the NaN
count, ``interp``, ``correlate``, ``unwrap``, the counting, searching and fallback ones)
refuse Symbols with an MXNetError.
"""
from ._covariance import corrcoef, cov
from ._histograms import (bincount, digitize, histogram, histogram2d, histogram_bin_edges,
                          histogramdd, searchsorted)
from ._polynomials import (i0, poly, polyadd, polydiv, polyfit, polyint, polymul, polysub,
                           polyval, roots, vander)
from ._quantiles import (median, nanmedian, nanpercentile, nanquantile, percentile,
                         quantile)
from ._signal import (blackman, correlate, diff, ediff1d, hamming, hanning, interp, trapz,
                      unwrap)

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "bincount",
           "digitize", "searchsorted", "interp", "diff", "ediff1d", "polyval", "polyfit",
           "polyadd", "polysub", "polymul", "polydiv", "polyint", "poly", "roots", "vander",
           "cov", "corrcoef", "correlate", "trapz", "unwrap", "i0", "hanning", "hamming",
           "blackman"]
