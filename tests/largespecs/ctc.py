"""Large-tensor row: CTCLoss of mxlite/ops/ctc.py.

CTCLoss computes in float32/float64 and has a hidden gradient output of the data's shape,
so data (T, N, alphabet) past 2**31 float32 elements (8 GiB) is run in place: the hidden
gradient is written over the data (``out=[loss, data]``), block of sequences by block, and
the scratch stays bounded by the op's blocks. Two steps of a 2048-class alphabet, one label
per sequence: the losses and gradients of the sequences that hold the checked positions
(around 2**31 and at the tail) equal the same op on a small batch of those sequences.
"""
import numpy as np

import mxlite as mx

from . import Row

_T, _A = 2, 2048
_REASON = ("float32/float64 only: data past 2**32 float32 elements is 16 GiB, the whole "
           "peak, before its hidden gradient output")


def _sequences(t, n):
    """The sequences whose elements a check reads or a marker sits in."""
    pts = set(t.positions(_T * n * _A)) | set(t.marks(_T * n * _A))
    return sorted({(p // _A) % n for p in pts})


def _flat(seqs, n):
    """Flat positions of ``seqs`` in data (T, n, A), step-major (the small batch's order)."""
    return [(s * n + q) * _A + k for s in range(_T) for q in seqs for k in range(_A)]


def _ctc_row(t):
    n = t.P31 // (_T * _A) + 1
    x = t.big("float32", _T * n * _A, shape=(_T, n, _A))
    labels = mx.nd.array((np.arange(n) % (_A - 1) + 1).reshape(n, 1))
    seqs = _sequences(t, n)
    small = t.small(x, _flat(seqs, n)).reshape((_T, len(seqs), _A))
    want_loss = mx.nd.empty((len(seqs),))
    mx.nd.CTCLoss(small, mx.nd.array([[q % (_A - 1) + 1] for q in seqs]),
                  out=[want_loss, small])
    loss = mx.nd.empty((n,))
    mx.nd.CTCLoss(x, labels, out=[loss, x])
    t.equal(t.values(loss, seqs), want_loss.asnumpy(), "losses")
    t.equal(t.values(x, _flat(seqs, n)), small.asnumpy().ravel(), "gradient over the data")


ROWS = {
    "CTCLoss": Row(_ctc_row, "float32", "2**31", _REASON),
}
