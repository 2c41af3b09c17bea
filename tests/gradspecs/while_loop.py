"""Gradient specs: _while_loop, built by mx.sym.contrib.while_loop: a counter runs the loop
three of at most five steps, so the gradient's masked rows are exercised too."""
import mxlite as mx
from gradspecs import Spec


def _graphs():
    k, x, w = mx.sym.var("k"), mx.sym.var("x"), mx.sym.var("w")
    outs, _ = mx.sym.contrib.while_loop(
        lambda k, x: k < 3,
        lambda k, x: ([mx.sym.sin(x * w)], [k + 1, mx.sym.tanh(x * w) + x]),
        [k, x], max_iterations=5)
    node = outs[0]._outputs[0][0]
    keys = ("subgraph", "num_outputs", "num_out_data", "max_iterations", "cond_input_locs",
            "func_input_locs", "func_var_locs")
    return {k: node.attrs[k] for k in keys}, [n.name for n, _ in node.inputs]


ATTRS, ORDER = _graphs()


def _while_loop(nd, x, w):
    assert ORDER == ["k", "x", "w"], ORDER
    k = nd.zeros((1,), dtype="float64")
    outs = nd._internal._while_loop(k, x, w, num_args=3, **ATTRS)
    return [outs[0], outs[2] * x]


SPECS = {
    "_while_loop": Spec([(2,), (2,)], _while_loop),
}
