"""Large-tensor rows: the fused RNN of mxlite/ops/rnn.py and _rnn_param_concat.

RNN computes in float32/float64 only; its row's big array is the output (T, N, H) just past
2**31 float32 elements (8 GiB) over 16 steps, so the states (N, H) and the data (T, N, 1)
stay at 1/16 of it and the scratch is bounded by the op's blocks of sequences. It is a
rnn_relu with dyadic weights (h = relu(w x + h / 2 + b) on small integers): every value is
exact, so the sequences around 2**31 and the last ones equal the same op on a small batch of
those sequences bit for bit, whatever the GEMM blocking. A one-layer rnn_relu saves no
states beyond its output (the hidden outputs lstm and gru keep for the gradient, gates and
cells of every step, are absent), so the row's peak is the output's. _rnn_param_concat is concat: its row
joins 2**32 int8 elements.
"""
import numpy as np

import mxlite as mx

from . import Row

_T, _H = 16, 16
_REASON = ("float32/float64 only: the output past 2**32 float32 elements is 16 GiB, the "
           "whole peak, before the data and states")


def _weights():
    """i2h (H, 1) small integers, h2h = I / 2, i2h bias integers, h2h bias 0."""
    wx = (np.arange(_H) % 5 - 2).astype(np.float32)
    wh = np.eye(_H, dtype=np.float32) / 2
    bx = (np.arange(_H) % 3).astype(np.float32)
    return mx.nd.array(np.concatenate([wx, wh.ravel(), bx, np.zeros(_H, np.float32)]))


def _rnn(x, h0):
    return mx.nd.RNN(x, _weights(), h0, state_size=_H, num_layers=1, mode="rnn_relu")


def _rnn_row(t):
    n = t.P31 // (_T * _H) + 1
    out_size = _T * n * _H
    items = sorted({(p // _H) % n for p in t.positions(out_size)})
    x = mx.nd.zeros((_T, n, 1))
    for i, b in enumerate(items):
        x[:, b:b + 1] = mx.nd.array(((np.arange(_T) + i) % 7 - 3).reshape(_T, 1, 1))
    y = _rnn(x, mx.nd.zeros((1, n, _H)))
    t.seen(x, y)
    t.shape(y, (_T, n, _H), "output")
    small = mx.nd.array(t.values(x, [s * n + b for s in range(_T) for b in items])
                        .reshape(_T, len(items), 1))
    want = _rnn(small, mx.nd.zeros((1, len(items), _H))).asnumpy()
    got = t.values(y, [s * n * _H + b * _H + h for s in range(_T) for b in items
                       for h in range(_H)])
    t.equal(got.reshape(want.shape), want, "output sequences")


def _param_concat_row(t):
    a = t.big("int8", t.P32, values=(3, 5, 7, 9))
    b = mx.nd.full((16,), 2, dtype="int8")
    y = mx.nd._internal._rnn_param_concat(a, b, dim=0)
    t.shape(y, (t.P32 + 16,), "result")
    pos = [p for p in t.positions(t.P32 + 16)]
    want = np.concatenate([t.values(a, [p for p in pos if p < t.P32]),
                           np.full(sum(p >= t.P32 for p in pos), 2, np.int8)])
    t.equal(t.values(y, pos), want, "result at the far end")


ROWS = {
    "RNN": Row(_rnn_row, "float32", "2**31", _REASON),
    "_rnn_param_concat": Row(_param_concat_row, "int8"),
}
