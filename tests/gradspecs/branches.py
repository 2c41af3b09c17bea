"""Gradient specs: _cond (if-then-else over graphs), built by mx.sym.contrib.cond; one call
takes each branch (the condition reads an input kept positive)."""
import mxlite as mx
from gradspecs import Spec


def _graphs():
    """The node attributes of cond(sum(p) > 0, a * b * b, sin(b) * a)."""
    p, a, b = mx.sym.var("p"), mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.contrib.cond(mx.sym.sum(p) > 0, lambda: a * b * b, lambda: mx.sym.sin(b) * a)
    node = out._outputs[0][0]
    keys = ("subgraph", "num_outputs", "cond_input_locs", "then_input_locs", "else_input_locs")
    inputs = [n.name for n, _ in node.inputs]
    return {k: node.attrs[k] for k in keys}, inputs


ATTRS, ORDER = _graphs()


def _cond(nd, p, a, b):
    """The node's inputs: the condition's value (computed outside), then a and b."""
    assert ORDER[1:] == ["a", "b"], ORDER
    taken = nd._internal._cond(nd.sum(p) > 0, a, b, num_args=3, **ATTRS)
    other = nd._internal._cond(nd.sum(-p) > 0, a, b, num_args=3, **ATTRS)
    return [taken * a, other * b]


SPECS = {
    "_cond": Spec([(3,), (3,), (3,)], _cond, [(0.2, 1.0), (-1.0, 1.0), (-1.0, 1.0)]),
}
