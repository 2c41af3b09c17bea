"""Shape inference in both directions with None for unknown (issue 8):
``OpDef.infer_shape_partial``.

Oracle: the shapes of real ``mx.nd`` runs. Every op application of every ``tests/gradspecs``
row is recorded (op, attrs, input and output shapes) by a spy strategy wrapped around the
``nd`` one; with all shapes known ``infer_shape_partial`` must give exactly those shapes, and
with some unknown it may leave a shape None but never fill in a wrong one.
"""
import itertools
import types
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.frontend import populate
from mxlite.ops.registry import REGISTRY, Attrs
from mxlite.ops.shape_partial import is_complete, same_shape_backward
from gradspecs import all_specs

SPECS = all_specs()
UNIQUE_OPS = sorted({id(op): op for op in REGISTRY.values()}.values(), key=lambda op: op.name)
_applications = []


def _spy_invoke(op, inputs, kwargs, out=None):
    result = mx.nd.ndarray.invoke(op, inputs, kwargs, out)
    attrs = kwargs if type(kwargs) is Attrs else op.parse_attrs(kwargs)
    outs = result if isinstance(result, (list, tuple)) else [result]
    ins = [tuple(x.shape) for x in inputs]
    shapes = [tuple(y.shape) for y in outs]
    if len(shapes) < op.output_count(attrs):    # hidden outputs (num_visible_outputs): a call
        shapes += [tuple(s) for s in op.infer_shape(ins, attrs)[len(shapes):]]  # returns none
    _applications.append((op, attrs, ins, shapes))
    return result


SPY = types.ModuleType("spy", "mx.nd with every registered op recording its shapes.")
populate(SPY, _spy_invoke, "spy")
SPY.__getattr__ = lambda name: getattr(mx.nd, name)      # the rest of mx.nd, unrecorded


def applications(name):
    """(op, attrs, in_shapes, out_shapes) of each call of op ``name`` in its spec row."""
    spec = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if spec.sample is not None:
        xs = [mx.nd.array(a, dtype="float64") for a in spec.sample(rng)]
    else:
        xs = [mx.nd.array(rng.uniform(*spec.domain(i), size=s), dtype="float64")
              for i, s in enumerate(spec.shapes)]
    _applications.clear()
    spec.call(SPY, *xs)
    return [a for a in _applications if a[0] is REGISTRY[name]]


def _agrees(got, truth):
    """Every shape of ``got`` unknown, or of ``truth``'s rank with each dimension unknown
    (None) or right."""
    def one(g, t):
        return g is None or (len(g) == len(t) and all(d is None or d == e for d, e in zip(g, t)))
    return len(got) == len(truth) and all(one(g, t) for g, t in zip(got, truth))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_all_known_equals_infer_shape(name):
    found = applications(name)
    assert found, f"the spec row of {name!r} never calls it through the front end"
    for op, attrs, ins, outs in found:
        assert op.infer_shape_partial(ins, attrs) == (ins, outs)
        assert [tuple(s) for s in op.infer_shape(ins, attrs)] == outs
        assert op.infer_shape_partial(ins, attrs, outs) == (ins, outs)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_unknown_shapes_are_filled_right_or_left_unknown(name):
    for op, attrs, ins, outs in applications(name):
        for hidden in itertools.product((False, True), repeat=len(ins)):
            partial = [None if h else s for h, s in zip(hidden, ins)]
            for given_outs in (None, outs):
                got_in, got_out = op.infer_shape_partial(partial, attrs, given_outs)
                assert _agrees(got_in, ins) and _agrees(got_out, outs), (partial, given_outs)
                if op.backward_shape is same_shape_backward and (given_outs or not all(hidden)):
                    assert (got_in, got_out) == (ins, outs)     # 'same': anything known fills all
                if all(map(is_complete, got_in)):
                    assert got_out == outs


def _sample_attrs(op):
    needs = {"cast": {"dtype": "int32"}, "clip": {"a_min": 0, "a_max": 1},
             "Activation": {"act_type": "tanh"}, "amp_cast": {"dtype": "float16"},
             "cast_storage": {"stype": "default"}}
    return op.parse_attrs(needs.get(op.name, {}))


SAME = [op.name for op in UNIQUE_OPS if op.backward_shape is same_shape_backward]


def test_same_rule_is_declared_where_expected():
    assert {"sin", "relu", "_plus_scalar", "elemwise_add", "clip", "cast", "zeros_like",
            "_copy", "BlockGrad", "_contrib_isnan", "_random_uniform_like"} <= set(SAME)
    assert not {"broadcast_add", "sum", "reshape", "dot"} & set(SAME)


@pytest.mark.parametrize("name", SAME)
def test_same_rule_agrees_with_infer_shape(name):
    """Where an op declares 'same', same-shaped inputs give outputs of that shape."""
    op = REGISTRY[name]
    attrs = _sample_attrs(op)
    for shape in ((2, 3), (), (0, 4)):
        ins = [shape] * len(op.inputs)
        assert [tuple(s) for s in op.infer_shape(ins, attrs)] == [shape] * op.output_count(attrs)
        assert op.infer_shape_partial([None] * len(ins), attrs, [shape]) == (ins, [shape])


def test_broadcast_fills_outputs_only_when_both_inputs_are_known():
    op = REGISTRY["broadcast_add"]
    attrs = op.parse_attrs({})
    assert op.infer_shape_partial([(2, 1), (1, 3)], attrs) == ([(2, 1), (1, 3)], [(2, 3)])
    assert op.infer_shape_partial([(2, 1), None], attrs) == ([(2, 1), None], [None])
    assert op.infer_shape_partial([None, None], attrs, [(2, 3)]) == ([None, None], [(2, 3)])


def test_ops_without_inputs_infer_their_outputs():
    op = REGISTRY["zeros"]
    assert op.infer_shape_partial([], op.parse_attrs({"shape": "(2, 5)"})) == ([], [(2, 5)])


def test_variadic_partial_inference():
    op = REGISTRY["concat"]
    attrs = op.parse_attrs({"num_args": 2, "dim": 0})
    assert op.infer_shape_partial([(2, 3), (4, 3)], attrs) == ([(2, 3), (4, 3)], [(6, 3)])
    # the unknown input takes every dimension but dim from the known one
    assert op.infer_shape_partial([(2, 3), None], attrs) == ([(2, 3), (None, 3)], [(None, 3)])
    with pytest.raises(MXNetError, match=r"concat: expected 2 input shape\(s\).*got 3"):
        op.infer_shape_partial([(2, 3)] * 3, attrs)


def test_disagreeing_shapes_are_errors():
    sin = REGISTRY["sin"]
    with pytest.raises(MXNetError, match=r"sin: shape inconsistent: output 'output' is given "
                                         r"shape \(3, 2\), but inputs of shapes \[\(2, 3\)\] "
                                         r"give \(2, 3\)"):
        sin.infer_shape_partial([(2, 3)], sin.parse_attrs({}), [(3, 2)])
    add = REGISTRY["elemwise_add"]
    with pytest.raises(MXNetError, match=r"elemwise_add: shape inconsistent: \(2, 3\) vs "
                                         r"\(3, 2\)"):
        add.infer_shape_partial([(2, 3), None], add.parse_attrs({}), [(3, 2)])
    with pytest.raises(MXNetError, match="elemwise_add: lhs and rhs must have the same shape"):
        add.infer_shape_partial([(2, 3), (3, 2)], add.parse_attrs({}))
    with pytest.raises(MXNetError, match=r"sin: expected 1 input shape\(s\) \['data'\], got 2"):
        sin.infer_shape_partial([(2,), (2,)], sin.parse_attrs({}))
    with pytest.raises(MXNetError, match=r"sin: expected 1 output shape\(s\) \['output'\]"):
        sin.infer_shape_partial([None], sin.parse_attrs({}), [(2,), (2,)])


# ---- partial shapes: None dimensions (MXNet's legacy 0 / NumPy-shape -1) ------------------
def _partial(name, ins, outs=None, **params):
    op = REGISTRY[name]
    return op.infer_shape_partial(ins, op.parse_attrs(params), outs)


def test_unify_merges_dimensions_and_refuses_conflicts():
    from mxlite.ops.shape_partial import unify
    assert unify((None, 10), (12, None)) == (12, 10)
    assert unify(None, (3, None)) == (3, None)
    with pytest.raises(MXNetError, match=r"shape inconsistent: \(2, \?\) vs \(3, 4\)"):
        unify((2, None), (3, 4))
    with pytest.raises(MXNetError, match="shape inconsistent"):
        unify((2,), (2, 1))


def test_same_rule_unifies_dimensions_of_every_input_and_the_output():
    ins, outs = _partial("elemwise_add", [(None, 10), (12, None)])
    assert ins == [(12, 10), (12, 10)] and outs == [(12, 10)]
    ins, outs = _partial("elemwise_add", [(None, 10), None], [(7, None)])
    assert ins == [(7, 10), (7, 10)] and outs == [(7, 10)]


def test_outputs_keep_the_dimensions_that_do_not_depend_on_unknown_ones():
    assert _partial("dot", [(None, 3, 4), (4, 5)])[1] == [(None, 3, 5)]
    assert _partial("batch_dot", [(None, 3, 4), (None, 4, 5)])[1] == [(None, 3, 5)]
    assert _partial("transpose", [(None, 3, 224, 224)], axes=(0, 3, 2, 1))[1] == \
        [(None, 224, 224, 3)]
    assert _partial("Embedding", [(None, 5), (100, 10)], input_dim=100,
                    output_dim=10)[1] == [(None, 5, 10)]
    assert _partial("pick", [(None, 3, 3), (None, 3)], axis=1)[1] == [(None, 3)]
    # a size computed from an unknown one stays unknown: (? + 2 - 3) / 1 + 1
    assert _partial("Convolution", [(None, 10, None, None), None, None], num_filter=21,
                    kernel=(3, 3), pad=(1, 1))[1] == [(None, 21, None, None)]


def test_an_op_that_cannot_tell_yet_leaves_its_output_unknown():
    # batch_dot needs lhs.shape[2] == rhs.shape[1]; one of them unknown: no output yet
    assert _partial("batch_dot", [(None, 3, 4), (None, None, 5)])[1] == [None]
    # where infers nothing from a partly known condition (MXNet's rule)
    assert _partial("where", [(None, 2), (None, 2), (None, 2)])[1] == [None]


def test_layer_rules_fill_inputs_from_partial_inputs_and_outputs():
    ins, _ = _partial("FullyConnected", [(None, 10), None, None], [(5, 21)], num_hidden=21)
    assert ins == [(5, 10), (21, 10), (21,)]
    ins, _ = _partial("FullyConnected", [(None, 3, 10), None], [(2, 3, 4)], num_hidden=4,
                      no_bias=True, flatten=False)
    assert ins == [(2, 3, 10), (4, 10)]
    # stride 1: in = out - 1 + kernel - 2 pad; stride 2 leaves the size unknown
    ins, _ = _partial("Convolution", [(None, 10, None, None), None, None],
                      [(5, 21, 32, 30)], num_filter=21, kernel=(3, 3), pad=(1, 0))
    assert ins == [(5, 10, 32, 32), (21, 10, 3, 3), (21,)]
    ins, _ = _partial("Convolution", [(None, 10, None, None), None, None],
                      [(5, 21, 16, 16)], num_filter=21, kernel=(3, 3), stride=(2, 2))
    assert ins[0] == (5, 10, None, None)


def test_concat_and_split_rules():
    ins, outs = _partial("concat", [(None, 10), (None, 5)], [(2, None)], num_args=2, dim=1)
    assert ins == [(2, 10), (2, 5)] and outs == [(2, 15)]
    ins, _ = _partial("concat", [(2, 10), (2, None)], [(2, 15)], num_args=2, dim=1)
    assert ins == [(2, 10), (2, 5)]
    ins, _ = _partial("split", [(None, 10)], [(5,)] + [None] * 9, num_outputs=10, axis=1,
                      squeeze_axis=True)
    assert ins == [(5, 10)]
    ins, _ = _partial("split", [(None, 15, None)], [(3, 5, 2)] + [None] * 2, num_outputs=3)
    assert ins == [(3, 15, 2)]


def test_reshape_fills_the_data_s_one_unknown_dimension_from_the_output():
    """Reshape's backward rule: a known output and data with one unknown dimension give
    that dimension (the output's size over the known ones), as MXNet's Reshape."""
    w = mx.sym.var("w")
    out = mx.sym.reshape(w, shape=(-1,)) + mx.sym.var("v", shape=(12,))
    args, _, _ = out.infer_shape_partial(w=(0, 3))
    assert args[0] == (4, 3)
    args, _, _ = out.infer_shape_partial(w=(0, 5))          # 12 is no multiple of 5
    assert args[0] == (0, 5)
    args, _, _ = out.infer_shape_partial(w=(0, 0))          # two unknown: nothing
    assert args[0] == (0, 0)


@pytest.mark.parametrize("ta, tb, x, w, want_w", [
    (False, False, (4, 7), (None, 100), (7, 100)),
    (False, True, (4, 7), (100, None), (100, 7)),
    (True, False, (7, 4), (None, 3), (7, 3)),
])
def test_dot_fills_the_contracted_dimension_of_a_partial_operand(ta, tb, x, w, want_w):
    from mxlite.ops.shape_partial import infer_shape_partial
    op = mx.nd.dot.op
    ins, _ = infer_shape_partial(op, [x, w], op.parse_attrs(
        {"transpose_a": ta, "transpose_b": tb}))
    assert ins[1] == want_w


def test_dot_fills_kept_dimensions_from_a_known_output():
    from mxlite.ops.shape_partial import infer_shape_partial
    op = mx.nd.dot.op
    ins, outs = infer_shape_partial(op, [(None, 7), (7, None)], op.default_attrs,
                                    [(4, 100)])
    assert ins == [(4, 7), (7, 100)] and outs == [(4, 100)]
