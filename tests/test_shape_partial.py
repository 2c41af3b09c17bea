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
from mxlite.ops.shape_partial import same_shape_backward
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
    return all(g is None or g == t for g, t in zip(got, truth)) and len(got) == len(truth)


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
                if None not in got_in:
                    assert got_out == outs


def _sample_attrs(op):
    needs = {"cast": {"dtype": "int32"}, "clip": {"a_min": 0, "a_max": 1},
             "Activation": {"act_type": "tanh"}}
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
    assert op.infer_shape_partial([(2, 3), None], attrs) == ([(2, 3), None], [None])
    with pytest.raises(MXNetError, match=r"concat: expected 2 input shape\(s\).*got 3"):
        op.infer_shape_partial([(2, 3)] * 3, attrs)


def test_disagreeing_shapes_are_errors():
    sin = REGISTRY["sin"]
    with pytest.raises(MXNetError, match=r"sin: output 'output' is given shape \(3, 2\), but "
                                         r"inputs of shapes \[\(2, 3\)\] give \(2, 3\)"):
        sin.infer_shape_partial([(2, 3)], sin.parse_attrs({}), [(3, 2)])
    add = REGISTRY["elemwise_add"]
    with pytest.raises(MXNetError, match=r"elemwise_add: output 'output' is given shape "
                                         r"\(3, 2\), but inputs of shapes \[\(2, 3\), \(2, 3\)\]"):
        add.infer_shape_partial([(2, 3), None], add.parse_attrs({}), [(3, 2)])
    with pytest.raises(MXNetError, match="elemwise_add: lhs and rhs must have the same shape"):
        add.infer_shape_partial([(2, 3), (3, 2)], add.parse_attrs({}))
    with pytest.raises(MXNetError, match=r"sin: expected 1 input shape\(s\) \['data'\], got 2"):
        sin.infer_shape_partial([(2,), (2,)], sin.parse_attrs({}))
    with pytest.raises(MXNetError, match=r"sin: expected 1 output shape\(s\) \['output'\]"):
        sin.infer_shape_partial([None], sin.parse_attrs({}), [(2,), (2,)])
