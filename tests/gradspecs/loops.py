"""Gradient specs: _foreach (a loop whose body is a graph), through its symbolic front end's
body: a tanh recurrence with a weight read from outside the loop and a per-step output."""
import mxlite as mx
from gradspecs import Spec


def _body_and_locs():
    """The body mx.sym.contrib.foreach builds for a small recurrence, and its node's
    location parameters."""
    x, w, s0 = mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("s0")

    def body(d, s):
        h = mx.sym.tanh(d * w + s[0])
        return [h * d, mx.sym.sin(h)], [h * h]
    (out, _), _ = mx.sym.contrib.foreach(body, x, [s0])
    node = out._outputs[0][0]
    keys = ("num_outputs", "num_out_data", "in_data_locs", "in_state_locs", "remain_locs")
    return node.attrs["subgraph"], {k: node.attrs[k] for k in keys}


BODY, LOCS = _body_and_locs()


def _foreach(nd, x, s0, w):
    outs = nd._internal._foreach(x, s0, w, subgraph=BODY, num_args=3, **LOCS)
    return [outs[0] * x, outs[1], outs[2] * outs[2]]


SPECS = {
    "_foreach": Spec([(3, 2), (2,), (2,)], _foreach),
}
