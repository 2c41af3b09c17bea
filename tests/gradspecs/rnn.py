"""Gradient specs: the fused RNN of mxlite/ops/rnn.py (every mode, stacked, bidirectional,
projection, sequence_length, final states) and _rnn_param_concat. Small sizes: the third
order differentiates the unrolled backpropagation through time twice more."""
import numpy as np

from . import Spec

_T, _N, _C, _H = 2, 2, 3, 2


def _size(g, layers, d, h=_H, c=_C, p=None):
    r = p or h
    return sum(d * (g * h * ((c if k == 0 else d * r) + r + 2) + (p * h if p else 0))
               for k in range(layers))


# input: (shape, what) in call order
_SHAPES = [(_T, _N, _C),                                   # x
           (_size(4, 2, 2),), (4, _N, _H), (4, _N, _H),    # lstm: 2 layers, bidirectional
           (_size(3, 1, 2),), (2, _N, _H),                 # gru: bidirectional, lengths
           (_size(1, 2, 1),), (2, _N, _H),                 # rnn_tanh: 2 layers
           (_size(1, 1, 1),), (1, _N, _H),                 # rnn_relu
           (_size(4, 1, 1, p=1),), (1, _N, 1), (1, _N, _H)]  # lstm with projection


def _rnn(nd, x, wl, hl, cl, wg, hg, wt, ht, wr, hr, wp, hp, cp):
    lengths = nd.array(np.array([2.0, 1.0]), dtype="float64")
    outs = list(nd.RNN(x, wl, hl, cl, state_size=_H, num_layers=2, bidirectional=True,
                       mode="lstm", state_outputs=True))
    outs += list(nd.RNN(x, wg, hg, sequence_length=lengths, state_size=_H, num_layers=1,
                        bidirectional=True, mode="gru", state_outputs=True,
                        use_sequence_length=True))
    outs.append(nd.RNN(x, wt, ht, state_size=_H, num_layers=2, mode="rnn_tanh"))
    outs.append(nd.RNN(x, wr, hr, state_size=_H, num_layers=1, mode="rnn_relu")
                * nd.slice(x, begin=(0, 0, 0), end=(1, None, 2)))
    outs += list(nd.RNN(x, wp, hp, cp, state_size=_H, num_layers=1, mode="lstm",
                        projection_size=1, state_outputs=True))
    return outs


SPECS = {
    "RNN": Spec(_SHAPES, _rnn),
    "_rnn_param_concat": Spec([(3,), (2,)], lambda nd, a, b: [
        nd._internal._rnn_param_concat(a * a, b, dim=0) * nd.concat(a, b * b, dim=0)]),
}
