"""Large-tensor row: _cond over an int8 array past 2**32 elements: each branch adds its own
constant (wrapping); the result at the head, around 2**31 and 2**32 and the tail is the
input's plus the taken branch's constant."""
import numpy as np

import mxlite as mx

from . import Row


def _graphs():
    p, x = mx.sym.var("p"), mx.sym.var("x")
    out = mx.sym.contrib.cond(p > 0, lambda: x + 1, lambda: x + 100)
    node = out._outputs[0][0]
    keys = ("subgraph", "num_outputs", "cond_input_locs", "then_input_locs", "else_input_locs")
    return {k: node.attrs[k] for k in keys}


def _cond_row(t):
    attrs = _graphs()
    x = t.big("int8", t.N, values=(3, 127, -128, 9))
    pos = t.positions(t.N)
    before = t.values(x, pos).astype(np.int16)
    for pred, add in ((1, 1), (0, 100)):
        y = mx.nd._internal._cond(mx.nd.array([pred], dtype="int8"), x, num_args=2, **attrs)
        t.shape(y, (t.N,), "result")
        want = ((before + add + 128) % 256 - 128).astype(np.int8)
        t.equal(t.values(y, pos), want, f"branch {'then' if pred else 'else'} at the far end")
        del y


ROWS = {"_cond": Row(_cond_row, "int8")}
