"""NumPy's statistics, histograms, polynomials and searching (percentile, quantile, median, histogram, bincount, interp, diff, polyval, searchsorted, cov, ...)."""

__all__ = []
