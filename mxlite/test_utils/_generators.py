"""Statistical checks of random generators: mean, variance and chi-square tests.

A generator is a function ``generator(n)`` returning ``n`` i.i.d. samples (a NumPy array,
an NDArray or a list).
"""
import numpy as np

from ..base import MXNetError
from ..ndarray import NDArray


def _samples(generator, n):
    out = generator(n)
    return out.asnumpy() if isinstance(out, NDArray) else np.asarray(out)


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets ``(ppf(i/n), ppf((i+1)/n))`` of the
    distribution with quantile function ``ppf``, and their probabilities ``1/n``."""
    if not isinstance(nbuckets, (int, np.integer)) or nbuckets < 1:
        raise MXNetError(f"gen_buckets_probs_with_ppf: nbuckets must be a positive int, "
                         f"got {nbuckets!r}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """True when the mean of ``nsamples`` samples lies within ``mu +- 3 sigma / sqrt(n)``."""
    mean = _samples(generator, nsamples).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """True when the sample variance lies within ``sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))``
    (the normal approximation to the variance's sampling distribution)."""
    var = _samples(generator, nsamples).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < var < sigma ** 2 + bound)


def _bucket_counts(samples, buckets):
    """Observed count per bucket, and the count of samples in no bucket.

    Continuous buckets are ascending, disjoint half-open ranges ``[low, high)``; discrete
    buckets are the possible values."""
    samples = samples.ravel()
    if isinstance(buckets[0], (list, tuple)):
        edges = np.asarray(buckets, dtype=np.float64)
        if np.any(edges[:, 0] > edges[:, 1]) or np.any(edges[1:, 0] < edges[:-1, 1]):
            raise MXNetError(f"chi_square_check: buckets must be ascending, disjoint "
                             f"(low, high) ranges, got {buckets}")
        pos = np.searchsorted(edges.ravel(), samples.astype(np.float64), side="right")
        inside = pos % 2 == 1     # after a low edge, before its high edge
        counts = np.bincount(pos[inside] // 2, minlength=len(buckets))
    else:
        counts = np.array([np.count_nonzero(samples == b) for b in buckets])
    return counts, samples.size - int(counts.sum())


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``nsamples`` samples against bucket probabilities.

    Returns ``(p, observed counts, expected counts)``; a small p means the samples do not
    follow ``probs``. Samples in no bucket make p 0 when ``probs`` sums to 1 (they are
    impossible), else they form one more bucket of probability ``1 - sum(probs)``. Expected
    counts are not rounded (MXNet truncated them to ints, which SciPy >= 1.9 rejects when
    the totals then differ).
    """
    from scipy import stats
    if not isinstance(buckets, list) or len(buckets) != len(probs) or not buckets:
        raise MXNetError(f"chi_square_check: buckets must be a non-empty list as long as "
                         f"probs, got {len(buckets) if hasattr(buckets, '__len__') else buckets}"
                         f" buckets and {len(probs)} probs")
    observed, outside = _bucket_counts(_samples(generator, nsamples), buckets)
    expected = nsamples * np.asarray(probs, dtype=np.float64)
    rest = nsamples - expected.sum()
    if rest > 1e-6 * nsamples:
        observed, expected = np.append(observed, outside), np.append(expected, rest)
    elif outside:
        return 0.0, observed, expected
    keep = expected > 0
    if np.any(observed[~keep]):
        return 0.0, observed, expected
    stat = float(np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep]))
    p = float(stats.chi2.sf(stat, max(int(keep.sum()) - 1, 1)))
    return p, observed, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5,
                     success_rate=0.2, alpha=0.05):
    """Run ``chi_square_check`` ``nrepeat`` times; raise AssertionError unless at least
    ``nrepeat * success_rate`` runs give p > ``alpha``. Returns the p values."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    ps = [r[0] for r in results]
    if np.count_nonzero(np.array(ps) > alpha) < nrepeat * success_rate:
        raise AssertionError(
            f"Generator test fails, chi-square p={ps}, obs_freq={[list(r[1]) for r in results]}, "
            f"expected_freq={[list(r[2]) for r in results]}.\nbuckets={buckets}, probs={probs}")
    return ps
