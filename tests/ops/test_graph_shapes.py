"""mxlite/ops/graph_shapes.py: ``_foreach``, ``_while_loop`` and ``_cond`` fill the shape of
an input only their body reads (a weight) from the body's own inference, so a graph with a
loop or a branch infers its weights and a hybridized Gluon block with one finishes its
deferred initialization."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon

W = mx.sym.var("w")


def _fc(x, units):
    return mx.sym.FullyConnected(x, W, no_bias=True, num_hidden=units)


def test_foreach_infers_a_weight_its_body_reads():
    x, s = mx.sym.var("x"), mx.sym.var("s")
    out, _ = mx.sym.contrib.foreach(lambda d, st: (_fc(d, 3), [st[0] + 1]), x, [s])
    args, outs, _ = out.infer_shape(x=(5, 2, 4), s=(1,))
    assert dict(zip(out.list_arguments(), args))["w"] == (3, 4) and outs == [(5, 2, 3)]


def test_foreach_infers_a_sequence_from_its_step_and_another_sequence():
    """A second sequence only the body constrains gets the step shape with the loop's
    length (taken from the known sequence)."""
    x, y = mx.sym.var("x"), mx.sym.var("y")
    out, _ = mx.sym.contrib.foreach(lambda d, st: (d[0] + d[1], st), [x, y], [mx.sym.var("s")])
    args, _, _ = out.infer_shape_partial(x=(6, 2, 3), s=(1,))
    assert dict(zip(out.list_arguments(), args))["y"] == (6, 2, 3)


def test_while_loop_infers_a_weight_its_body_reads():
    x = mx.sym.var("x")
    _, loop_vars = mx.sym.contrib.while_loop(
        lambda i, y: i < 3, lambda i, y: (_fc(y, 4), [i + 1, _fc(y, 4)]),
        [mx.sym.var("i"), x], max_iterations=3)
    group = mx.sym.Group(loop_vars)
    args, outs, _ = group.infer_shape(i=(1,), x=(2, 4))
    assert dict(zip(group.list_arguments(), args))["w"] == (4, 4) and outs[1] == (2, 4)


def test_cond_infers_a_weight_a_branch_reads():
    x = mx.sym.var("x")
    out = mx.sym.contrib.cond(mx.sym.var("p"), lambda: _fc(x, 3),
                              lambda: mx.sym.slice_axis(x, axis=1, begin=0, end=3))
    args, outs, _ = out.infer_shape(p=(1,), x=(2, 4))
    assert dict(zip(out.list_arguments(), args))["w"] == (3, 4) and outs == [(2, 3)]


def test_a_body_that_cannot_tell_leaves_the_input_unknown():
    x = mx.sym.var("x")
    out, _ = mx.sym.contrib.foreach(lambda d, st: (d + st[0], st), x, [mx.sym.var("s")])
    args, _, _ = out.infer_shape_partial(x=(5, 2))
    assert dict(zip(out.list_arguments(), args))["s"] in ((2,), ())


class _Loop(gluon.HybridBlock):
    """A Dense layer (units only: its input size is deferred) applied in a foreach."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = gluon.nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x, state):
        return F.contrib.foreach(lambda d, s: (self.dense(d) + s[0], s), x, [state])


@pytest.mark.parametrize("hybridize", [False, True])
def test_hybridized_block_with_a_loop_finishes_deferred_init(hybridize):
    block = _Loop()
    rng = np.random.default_rng(1)
    # fixed values (a random initializer draws on the CPU, which the GPU run refuses)
    block.initialize(mx.init.Mixed([".*weight", ".*"], [
        mx.init.Constant(rng.normal(size=(3, 5))), mx.init.Constant(rng.normal(size=3))]))
    if hybridize:
        block.hybridize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=(4, 2, 5)))
    out, _ = block(x, mx.nd.zeros((2, 3)))
    assert block.dense.weight.shape == (3, 5) and out.shape == (4, 2, 3)
    want = np.einsum("tnc,oc->tno", x.asnumpy(), block.dense.weight.data().asnumpy()) \
        + block.dense.bias.data().asnumpy()
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
