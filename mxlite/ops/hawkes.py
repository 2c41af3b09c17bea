"""contrib.hawkesll: the log-likelihood of a multivariate Hawkes process with exponential kernels."""
