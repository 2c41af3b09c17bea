"""Gradient specs: contrib.hawkesll and its scan primitive _hawkesll_scan (mxlite/ops/hawkes.py).

hawkesll is differentiated in lda, alpha, beta, state, lags and max_time through both
outputs (the log-likelihood scaled by a function of the rates, so its head gradient varies,
and the returned state); the marks repeat and leave a mark without points, the rows count
all, some or none of their points, and one row's window ends before its last point (the
model stays smooth there). The scan is checked forward and backward in time."""
import numpy as np

from . import Spec

_MARKS = np.array([[0, 2, 0, 0, 2], [1, 1, 0, -1, -1], [2, 0, 0, 1, 2]])
_LENGTHS = [5, 3, 0]


def _index_args(nd):
    return nd.array(_MARKS, dtype="int32"), nd.array(_LENGTHS, dtype="float64")


def _hawkes_sample(rng):
    return [rng.uniform(0.3, 1.5, (3, 3)), rng.uniform(0.1, 0.8, 3), rng.uniform(0.5, 2.0, 3),
            rng.uniform(0.0, 2.0, (3, 3)), rng.uniform(0.1, 1.0, (3, 5)),
            np.array([4.0, 0.5, 1.0]) + rng.uniform(0.0, 0.5, 3)]


def _hawkes(nd, lda, alpha, beta, state, lags, max_time):
    marks, lengths = _index_args(nd)
    ll, out = nd.contrib.hawkesll(lda, alpha, beta, state, lags, marks, lengths, max_time)
    return [ll * nd.sum(lda, axis=1), out]


def _scan(nd, a, b, init):
    marks, lengths = _index_args(nd)
    first = nd._internal._hawkesll_scan(a, b * a, init, marks, lengths)
    second = nd._internal._hawkesll_scan(a * a, b, init * init, marks, lengths, reverse=True)
    return list(first) + list(second)


SPECS = {
    "_contrib_hawkesll": Spec([(3, 3), (3,), (3,), (3, 3), (3, 5), (3,)], _hawkes,
                              sample=_hawkes_sample),
    "_hawkesll_scan": Spec([(3, 5), (3, 5), (3, 3)], _scan),
}
