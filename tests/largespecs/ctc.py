"""Large-tensor rows: CTCLoss of mxlite/ops/ctc.py, its gradient op (_ctc_loss_grad, the
same kernel: the same in-place row) and the two recursions of that op's gradient graph
(_ctc_alpha, _ctc_wrec).

CTCLoss computes in float32/float64 and has a hidden gradient output of the data's shape,
so data (T, N, alphabet) past 2**31 float32 elements (8 GiB) is run in place: the hidden
gradient is written over the data (``out=[loss, data]``), sequence by sequence. Two steps
of a 2048-class alphabet, one label per sequence: the losses and gradients of the sequences
that hold the checked positions (around 2**31 and at the tail) equal the same op on a small
batch of those sequences.

_ctc_alpha (N, T, S) past 2**31 float32 elements runs in place too (out= its data); 64
steps of 1025 states keep its (N, S) masks small. _ctc_wrec has four (N, T, S) inputs: its
row passes 2**30 with the three weights one array and the output written over data.

Measured on the CPU (2 shared cores): CTCLoss 16 s; _ctc_loss_grad 14 s, peak 8.1 GB;
_ctc_alpha 11 s, peak 8.8 GB; _ctc_wrec 9 s, peak 8.1 GB.
"""
import numpy as np

import mxlite as mx

from . import Row

_T, _A = 2, 2048
_REASON = ("float32/float64 only: data past 2**32 float32 elements is 16 GiB, the whole "
           "peak, before its hidden gradient output")
_ALPHA_REASON = ("float32/float64 only: data past 2**32 float32 elements is 16 GiB, the "
                 "whole peak; past 2**31 it is written in place (8 GiB)")
_WREC_REASON = ("four float (N, T, S) inputs: past 2**31 float32 they take 32 GiB (16 GiB "
                "with the weights one array), over the peak; past 2**30 the weights are one "
                "array and the output is written over data (8 GiB)")


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


def _loss_grad_row(t):
    """_ctc_loss_grad written over the data, checked against CTCLoss's hidden gradient on
    the small batch of the checked sequences."""
    n = t.P31 // (_T * _A) + 1
    x = t.big("float32", _T * n * _A, shape=(_T, n, _A))
    seqs = _sequences(t, n)
    small = t.small(x, _flat(seqs, n)).reshape((_T, len(seqs), _A))
    mx.nd.CTCLoss(small, mx.nd.array([[q % (_A - 1) + 1] for q in seqs]),
                  out=[mx.nd.empty((len(seqs),)), small])
    labels = mx.nd.array((np.arange(n) % (_A - 1) + 1).reshape(n, 1))
    mx.nd._internal._ctc_loss_grad(x, labels, out=x)
    t.equal(t.values(x, _flat(seqs, n)), small.asnumpy().ravel(), "gradient over the data")


def _grid(t, elements):
    """(sequences, steps, states) of an (N, T, S) array just past ``elements``: 64 steps of
    1025 states at full scale, fewer at the small one."""
    states = 2 * max(1, elements >> 22) + 1
    steps = max(2, elements >> 25)
    return elements // (steps * states) + 1, steps, states


def _rows_of(t, n, per):
    """The sequences (rows of ``per`` elements) a check reads, and their flat positions."""
    seqs = sorted({p // per for p in t.positions(n * per)})
    return seqs, [q * per + k for q in seqs for k in range(per)]


def _alpha_row(t):
    n, steps, s = _grid(t, t.P31)
    e = t.big("float32", n * steps * s, shape=(n, steps, s))
    pos = np.arange(s)
    skip = np.tile(((pos % 2 == 1) & (pos >= 3)).astype("float32"), (n, 1))
    first = np.tile((pos < 2).astype("float32"), (n, 1))
    lengths = (np.arange(n) % steps + 1).astype("float32")
    seqs, flat = _rows_of(t, n, steps * s)
    small = t.small(e, flat).reshape((len(seqs), steps, s))
    want = mx.nd._internal._ctc_alpha(small, *(mx.nd.array(a[seqs]) for a in
                                               (skip, first, lengths)))
    mx.nd._internal._ctc_alpha(e, *(mx.nd.array(a) for a in (skip, first, lengths)), out=e)
    t.equal(t.values(e, flat), want.asnumpy().ravel(), "alpha written over the data")


def _wrec_row(t):
    n, steps, s = _grid(t, t.power("2**30"))
    w = t.big("float32", n * steps * s, shape=(n, steps, s), values=(0.5, -0.25, 0.75))
    g = t.big("float32", n * steps * s, shape=(n, steps, s))
    seqs, flat = _rows_of(t, n, steps * s)
    small_w, small_g = (t.small(a, flat).reshape((len(seqs), steps, s)) for a in (w, g))
    want = mx.nd._internal._ctc_wrec(small_w, small_w, small_w, small_g, reverse=True)
    mx.nd._internal._ctc_wrec(w, w, w, g, reverse=True, out=g)
    t.equal(t.values(g, flat), want.asnumpy().ravel(), "recursion written over data")


ROWS = {
    "CTCLoss": Row(_ctc_row, "float32", "2**31", _REASON),
    "_ctc_alpha": Row(_alpha_row, "float32", "2**31", _ALPHA_REASON),
    "_ctc_wrec": Row(_wrec_row, "float32", "2**30", _WREC_REASON),
    "_ctc_loss_grad": Row(_loss_grad_row, "float32", "2**31", _REASON),
}
