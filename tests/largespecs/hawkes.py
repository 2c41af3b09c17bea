"""Large-tensor rows: contrib.hawkesll and _hawkesll_scan (mxlite/ops/hawkes.py).

The big tensors are the (N, T) point arrays: lags (float16, so every float input is float16)
and marks (int8; MXNet took int32 only), 32 points per sample, so the last sample starts
past 2**31 and the per-sample arrays (N, K) stay small. Each point carries markers (other
lags and marks) at the head, past 2**31 and at the tail. The samples that hold the checked
positions are run again as a small batch (their rows copied out): the log-likelihoods,
states and the scan's outputs must be equal, bit for bit (each sample's recursion is the
same element-wise arithmetic in any batch). The scan runs in place (out= its input ``a``,
which is also its ``b``), so its row holds one float16 copy of the points.
"""
import mxlite as mx

from . import Row

_T, _K = 32, 3
_REASON = ("memory: the (N, T) lags and marks past 2**32 points, with the per-sample arrays and "
           "the small re-run, peak at about 17 GiB (8.6 GiB at 2**31, where the compiled "
           "kernel's row takes about 60 s on the shared two cores); past 2**31 the last "
           "sample's points already sit past the int32 range")
_SCAN_REASON = ("memory: a, b and pre are (N, T) float arrays (here one float16 array, written "
                "in place) beside the int8 marks: 8.1 GiB peak and about 30 s at 2**31 "
                "points, so about 16.2 GiB at 2**32; past 2**31 the last sample's points "
                "already sit past the int32 range")


def _samples(t, n):
    """The samples whose points a check reads or a marker sits in."""
    pts = set(t.positions(n * _T)) | set(t.marks(n * _T))
    return sorted({p // _T for p in pts})


def _rows_of(t, arr, samples):
    """The (len(samples), ...) small copy of ``arr``'s rows ``samples``."""
    width = arr.size // arr.shape[0]
    flat = [s * width + q for s in samples for q in range(width)]
    return t.small(arr, flat).reshape((len(samples),) + tuple(arr.shape[1:]))


def _points(t, k):
    """(N, lags, marks, valid_length): N * T just past 2**31 points."""
    n = t.P31 // _T + 1
    lags = t.big("float16", n * _T, shape=(n, _T), values=(3, 0.5, 2, 0.125), fill=0.25)
    marks = t.big("int8", n * _T, shape=(n, _T), values=(1, k - 1, k - 1, 1))
    length = mx.nd.full((n,), _T, dtype="int8")
    length[n - 2] = _T // 2                 # a sample that counts half its points
    return n, lags, marks, length


def _hawkes_row(t):
    n, lags, marks, length = _points(t, _K)
    lda = mx.nd.full((n, _K), 0.5, dtype="float16")
    state = mx.nd.full((n, _K), 0.25, dtype="float16")
    max_time = mx.nd.full((n,), 20.0, dtype="float16")
    alpha = mx.nd.array([0.2, 0.3, 0.4], dtype="float16")
    beta = mx.nd.array([1.0, 2.0, 0.5], dtype="float16")
    ll, out = mx.nd.contrib.hawkesll(lda, alpha, beta, state, lags, marks, length, max_time)
    t.shape(ll, (n,), "log-likelihood")
    rows = _samples(t, n)
    small = [_rows_of(t, a, rows) for a in (lda, state, lags, marks, length, max_time)]
    want_ll, want_out = mx.nd.contrib.hawkesll(small[0], alpha, beta, *small[1:])
    t.equal(t.values(ll, rows), want_ll.asnumpy(), "log-likelihoods")
    t.equal(_rows_of(t, out, rows), want_out.asnumpy(), "returned states")


def _scan_row(t):
    n, a, marks, length = _points(t, 2)
    init = mx.nd.full((n, 2), 0.5, dtype="float16")
    rows = _samples(t, n)
    small = [_rows_of(t, x, rows) for x in (a, init, marks, length)]
    want_pre, want_final = mx.nd._internal._hawkesll_scan(small[0], small[0], *small[1:])
    final = mx.nd.empty((n, 2), dtype="float16")
    mx.nd._internal._hawkesll_scan(a, a, init, marks, length, out=[a, final])
    t.equal(_rows_of(t, a, rows), want_pre.asnumpy(), "pre (written over a)")
    t.equal(_rows_of(t, final, rows), want_final.asnumpy(), "final")


ROWS = {
    "_contrib_hawkesll": Row(_hawkes_row, "float16", "2**31", _REASON),
    "_hawkesll_scan": Row(_scan_row, "float16", "2**31", _SCAN_REASON),
}
