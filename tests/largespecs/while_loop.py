"""Large-tensor row: _while_loop over an int8 loop variable past 2**32 elements: three steps
of x + 1 (wrapping) while a counter is below 3; the final variable at the head, around 2**31
and 2**32 and the tail is the input's plus three, and the step outputs are zero-size."""
import numpy as np

import mxlite as mx

from . import Row


def _graphs():
    k, x = mx.sym.var("k"), mx.sym.var("x")
    _, (fk, fx) = mx.sym.contrib.while_loop(lambda k, x: k < 3, lambda k, x: ([], [k + 1, x + 1]),
                                            [k, x], max_iterations=4)
    node = fx._outputs[0][0]
    keys = ("subgraph", "num_outputs", "num_out_data", "max_iterations", "cond_input_locs",
            "func_input_locs", "func_var_locs")
    return {k: node.attrs[k] for k in keys}, [n.name for n, _ in node.inputs]


def _while_loop_row(t):
    attrs, order = _graphs()
    assert order == ["k", "x"], order
    x = t.big("int8", t.N, values=(3, 127, -128, 9))
    pos = t.positions(t.N)
    before = t.values(x, pos).astype(np.int16)
    outs = mx.nd._internal._while_loop(mx.nd.zeros((1,), dtype="int8"), x, num_args=2,
                                       **attrs)
    k, y = outs[0], outs[1]
    t.equal(k, np.array([3], np.int8), "the counter")
    t.shape(y, (t.N,), "the loop variable")
    t.equal(t.values(y, pos), ((before + 3 + 128) % 256 - 128).astype(np.int8),
            "the loop variable at the far end")


ROWS = {"_while_loop": Row(_while_loop_row, "int8")}
