"""The operator record as a symbolic front end and layers need it (issue 8): the count
parameter of variadic ops, inputs that depend on attrs, output names, auxiliary states,
and what the front end hands an invoke strategy.

A strategy here is a spy that records ``(op, inputs, kwargs, out)``; the real ``nd``
strategy is checked where its behaviour is the point (MXNetError for a missing input).
"""
import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops.frontend import make_function
from mxlite.ops.registry import REGISTRY, OpDef, Param, register

UNIQUE_OPS = sorted({id(op): op for op in REGISTRY.values()}.values(), key=lambda op: op.name)
VARIADIC = [op.name for op in UNIQUE_OPS if op.variadic]


def spy(op):
    """The front-end function of ``op`` with a recording strategy; returns (fn, calls)."""
    calls = []
    return make_function(op, lambda o, inputs, kwargs, out: calls.append(
        (o, list(inputs), dict(kwargs), out))), calls


# ---- num_args on variadic ops (item 3) ------------------------------------------------------
def test_variadic_ops_exist():
    assert {"concat", "stack", "_contrib_all_finite"} <= set(VARIADIC)


@pytest.mark.parametrize("name", VARIADIC)
def test_variadic_op_declares_its_count_parameter(name):
    op = REGISTRY[name]
    key = op.key_var_num_args
    assert key is not None, f"{name}: a variadic op must declare key_var_num_args"
    assert op._param_map[key].kind == "int"


@pytest.mark.parametrize("name", VARIADIC)
def test_front_end_fills_and_checks_the_count(name):
    op = REGISTRY[name]
    key = op.key_var_num_args
    fn, calls = spy(op)
    a, b = object(), object()
    fn(a, b)
    assert calls[-1][1] == [a, b] and calls[-1][2] == {key: 2}
    fn(a, b, **{key: 2})
    assert calls[-1][2] == {key: 2}
    fn(a, b, a, **{key: "3"})                  # MXNet's string form
    assert calls[-1][2] == {key: 3}
    fn(**{op.inputs[0]: [a]})                  # MXNet style: data=[...]
    assert calls[-1][1] == [a] and calls[-1][2] == {key: 1}
    n = len(calls)
    for bad in (3, 1, "3"):
        with pytest.raises(MXNetError, match=rf"{name}: {key}=\d but 2 array\(s\)"):
            fn(a, b, **{key: bad})
    with pytest.raises(MXNetError, match=rf"{name}: parameter '{key}' must be an integer"):
        fn(a, b, **{key: 2.5})
    assert len(calls) == n                     # nothing reached the strategy


def test_count_reaches_the_record_and_its_symbol_attrs():
    a = mx.nd.array([[1.0, 2.0]])
    b = mx.nd.array([[3.0, 4.0]])
    op = REGISTRY["concat"]
    fn, calls = spy(op)
    fn(a, b, a, dim=0)
    attrs = op.parse_attrs(calls[0][2])
    assert op.format_attrs(attrs) == {"num_args": "3", "dim": "0"}
    assert op.list_inputs(attrs) == ("arg0", "arg1", "arg2")          # MXNet's names
    np.testing.assert_array_equal(mx.nd.concat(a, b, a, dim=0, num_args=3).asnumpy(),
                                  np.concatenate([a.asnumpy(), b.asnumpy(), a.asnumpy()]))
    np.testing.assert_array_equal(mx.nd.stack(a, b, num_args=2).asnumpy(),
                                  np.stack([a.asnumpy(), b.asnumpy()]))


def test_variadic_input_names_need_the_count():
    op = REGISTRY["stack"]
    with pytest.raises(MXNetError, match="stack: the number of inputs is unknown"):
        op.list_inputs(op.parse_attrs({}))


# ---- missing inputs go to the strategy ------------------------------------------------------
def test_missing_inputs_reach_the_strategy_as_none():
    fn, calls = spy(REGISTRY["broadcast_add"])
    x = object()
    fn(x)
    assert calls[-1][1] == [x, None]
    fn(rhs=x)
    assert calls[-1][1] == [None, x]
    fn()
    assert calls[-1][1] == [None, None]
    fn, calls = spy(REGISTRY["where"])
    fn(x, y=x)
    assert calls[-1][1] == [x, None, x]


def test_nd_strategy_rejects_a_missing_input():
    x = mx.nd.array([1.0, 2.0])
    with pytest.raises(MXNetError, match="broadcast_add: missing input 'lhs'"):
        mx.nd.broadcast_add(rhs=x)
    with pytest.raises(MXNetError, match="where: missing input 'y'"):
        mx.nd.where(x, x)
    with pytest.raises(MXNetError, match="clip: missing input 'data'"):
        mx.nd.clip(a_min=0, a_max=1)
