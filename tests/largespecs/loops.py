"""Large-tensor row: _foreach over int8 sequences past 2**32 elements in all (4 steps of
2**30 + 4): each step's output is its slice plus one (wrapping), and a running state
counts the steps; the outputs at the head, around 2**31 and 2**32 and the tail are the
input's plus one."""
import numpy as np

import mxlite as mx

from . import Row


def _loop():
    """A body: out = d + 1, state = state + 1 (the node's attributes)."""
    def body(d, s):
        return d + 1, [s[0] + 1]
    out, _ = mx.sym.contrib.foreach(body, mx.sym.var("x"), [mx.sym.var("s")])
    node = out._outputs[0][0]
    keys = ("num_outputs", "num_out_data", "in_data_locs", "in_state_locs", "remain_locs")
    return node.attrs["subgraph"], {k: node.attrs[k] for k in keys}


def _foreach_row(t):
    body, locs = _loop()
    steps = 4
    per = t.N // steps
    x = t.big("int8", steps * per, values=(3, 127, -128, 9)).reshape((steps, per))
    outs = mx.nd._internal._foreach(x, mx.nd.zeros((1,), dtype="int8"), subgraph=body,
                                    num_args=2, **locs)
    y, state = outs[0], outs[1]
    t.shape(y, (steps, per), "stacked outputs")
    pos = t.positions(steps * per)
    want = ((t.values(x, pos).astype(np.int16) + 1 + 128) % 256 - 128).astype(np.int8)
    t.equal(t.values(y, pos), want, "outputs at the far end")
    t.equal(state, np.array([steps], np.int8), "the state after every step")


ROWS = {"_foreach": Row(_foreach_row, "int8")}
