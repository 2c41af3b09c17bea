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
from mxlite.ops.registry import REGISTRY, Attrs, OpDef, Param, register

# Ops that bind their calls themselves (``OpDef.bind_call``: Custom's inputs, outputs and
# parameters come from its registered property, not from the record) are left out here;
# tests/test_custom_op.py checks their binding and records.
UNIQUE_OPS = sorted((op for op in {id(op): op for op in REGISTRY.values()}.values()
                     if getattr(op, "bind_call", None) is None), key=lambda op: op.name)
# Variadic ops whose record names its inputs itself (``list_inputs`` overridden) and whose
# count parameter counts groups of inputs, not arrays: ``multi_sgd_update(num_weights=2)``
# takes weight_0, grad_0, weight_1, grad_1 (MXNet's callers pass num_weights; nothing fills it).
GROUPED = [op.name for op in UNIQUE_OPS if op.variadic and op.key_var_num_args is None
           and type(op).list_inputs is not OpDef.list_inputs]
VARIADIC = [op.name for op in UNIQUE_OPS if op.variadic and op.name not in GROUPED]


def spy(op):
    """The front-end function of ``op`` with a recording strategy; returns (fn, calls)."""
    calls = []
    return make_function(op, lambda o, inputs, kwargs, out: calls.append(
        (o, list(inputs), dict(kwargs), out))), calls


# ---- num_args on variadic ops (item 3) ------------------------------------------------------
def test_variadic_ops_exist():
    assert {"concat", "stack", "_contrib_all_finite"} <= set(VARIADIC)
    assert {"multi_sgd_update", "preloaded_multi_mp_sgd_mom_update"} <= set(GROUPED)


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


# ---- inputs that depend on attrs, outputs, auxiliary states (item 4) -------------------------
def _fc_inputs(attrs):
    return ("data", "weight") if attrs.no_bias else ("data", "weight", "bias")


def _fc_shape(shapes, attrs):
    data, weight = shapes[0], shapes[1]
    k = int(np.prod(data[1:]))
    if weight != (attrs.num_hidden, k) or (not attrs.no_bias and shapes[2] != (attrs.num_hidden,)):
        raise MXNetError(f"_test_fc: bad shapes {shapes}")
    return [(data[0], attrs.num_hidden)]


def _fc_backward_shape(in_shapes, out_shapes, attrs):
    """MXNet's FullyConnected rule: weight (num_hidden, prod(data[1:])), bias (num_hidden,)."""
    data = in_shapes[0]
    weight = None if data is None else (attrs.num_hidden, int(np.prod(data[1:])))
    return [data, weight] + ([] if attrs.no_bias else [(attrs.num_hidden,)])


def _fc_compute(rctx, ins, outs, attrs):
    y = ins[0].reshape(ins[0].shape[0], -1) @ ins[1].T
    outs[0][...] = y + ins[2] if not attrs.no_bias else y


FC = OpDef("_test_fc", inputs=("data", "weight", "bias"), list_inputs=_fc_inputs,
           params=(Param("num_hidden", "int", doc="outputs"),
                   Param("no_bias", "bool", False, doc="no bias input")),
           infer_shape=_fc_shape, infer_type=lambda dtypes, attrs: [dtypes[0]],
           backward_shape=_fc_backward_shape, compute={"cpu": _fc_compute},
           doc="A test-only FullyConnected.")
BN = OpDef("_test_bn", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
           aux_inputs=("moving_mean", "moving_var"), mutate_inputs=("moving_mean", "moving_var"),
           params=(Param("output_mean_var", "bool", False, doc="also return mean and var"),),
           num_outputs=3, output_names=("output", "mean", "var"),
           num_visible_outputs=lambda attrs: 3 if attrs.output_mean_var else 1,
           infer_shape=lambda shapes, attrs: [shapes[0], shapes[1], shapes[1]],
           infer_type=lambda dtypes, attrs: dtypes[:1] * 3, compute={}, doc="A test-only BatchNorm.")


@pytest.fixture
def test_ops():
    """FC and BN registered under private names for one test, then removed."""
    for op in (FC, BN):
        register(op)
    try:
        yield FC, BN
    finally:
        for op in (FC, BN):
            del REGISTRY[op.name]


def test_attr_dependent_inputs(test_ops):
    assert REGISTRY["_test_fc"] is FC
    assert FC.list_inputs(FC.parse_attrs({"num_hidden": 4})) == ("data", "weight", "bias")
    no_bias = FC.parse_attrs({"num_hidden": 4, "no_bias": "True"})
    assert FC.list_inputs(no_bias) == FC.list_arguments(no_bias) == ("data", "weight")
    assert FC.list_auxiliary_states(no_bias) == () and FC.mutated_indices(no_bias) == ()
    assert FC.list_outputs(no_bias) == ["output"] and FC.num_visible_outputs(no_bias) == 1


def test_front_end_binds_inputs_by_the_attrs(test_ops):
    fn, calls = spy(FC)
    x, w, b = object(), object(), object()
    fn(x, w, b, num_hidden=4)
    assert calls[-1][1] == [x, w, b]
    fn(x, w, num_hidden=4, no_bias=True)
    assert calls[-1][1] == [x, w]
    fn(x, num_hidden=4, no_bias=True)                  # weight left out: None
    assert calls[-1][1] == [x, None]
    fn(x, bias=b, num_hidden=4)
    assert calls[-1][1] == [x, None, b]
    fn(x, w, None, 4, True)                            # params by position; None: left out
    assert calls[-1][1] == [x, w] and calls[-1][2] == {"num_hidden": 4, "no_bias": True}
    n = len(calls)
    with pytest.raises(MXNetError, match=r"_test_fc: input\(s\) \['bias'\] given, but these "
                                         r"parameters take only \['data', 'weight'\]"):
        fn(x, w, b, num_hidden=4, no_bias=True)
    assert len(calls) == n


def test_attr_dependent_inputs_run_in_nd(test_ops):
    fc = make_function(FC, mx.nd.ndarray.invoke)
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((5, 2, 3), (4, 6), (4,)))
    got = fc(mx.nd.array(x), mx.nd.array(w), num_hidden=4, no_bias=True).asnumpy()
    np.testing.assert_allclose(got, x.reshape(5, 6) @ w.T, rtol=1e-5)
    got = fc(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=4).asnumpy()
    np.testing.assert_allclose(got, x.reshape(5, 6) @ w.T + b, rtol=1e-5)
    with pytest.raises(MXNetError, match="_test_fc: missing input 'weight'"):
        fc(mx.nd.array(x), num_hidden=4, no_bias=True)


def test_aux_states_mutated_inputs_and_visible_outputs(test_ops):
    """How BatchNorm will declare moving_mean/moving_var: inputs that are auxiliary states
    (not arguments of a symbol) and that the kernel updates in place."""
    attrs = BN.parse_attrs({})
    assert BN.list_inputs(attrs) == ("data", "gamma", "beta", "moving_mean", "moving_var")
    assert BN.list_arguments(attrs) == ("data", "gamma", "beta")
    assert BN.list_auxiliary_states(attrs) == ("moving_mean", "moving_var")
    assert BN.mutated_indices(attrs) == (3, 4)
    assert BN.list_outputs(attrs) == ["output", "mean", "var"]
    assert BN.output_count(attrs) == 3 and BN.num_visible_outputs(attrs) == 1
    assert BN.num_visible_outputs(BN.parse_attrs({"output_mean_var": "1"})) == 3


@pytest.mark.parametrize("name", [op.name for op in UNIQUE_OPS])
def test_every_record_is_consistent(name):
    """For every op at its defaults: inputs = arguments + auxiliary states (in order),
    unique output names, one per output (output / output0.. unless declared), between one
    and all of them visible, mutated inputs at their declared positions."""
    op = REGISTRY[name]
    attrs = Attrs(op._defaults)            # (a required param is absent: nothing reads it)
    attrs.update({"split": {"num_outputs": 3}, "_sample_multinomial": {"get_prob": True},
                  "LeakyReLU": {"act_type": "prelu"},
                  # a loop: 2 per-step outputs and 1 state (+ its hidden history)
                  "_foreach": {"num_outputs": 3, "num_out_data": 2, "in_data_locs": (0,),
                               "in_state_locs": (1,), "remain_locs": ()},
                  "_cond": {"num_outputs": 2},
                  "_while_loop": {"num_outputs": 3, "num_out_data": 1}}.get(name, {}))
    if name in GROUPED:
        attrs[getattr(op, "count_param", "num_weights")] = 2
        per = len(op.group)
        assert op.list_inputs(attrs)[:2 * per] == tuple(
            f"{k}_{i}" for i in range(2) for k in op.group)
    elif op.variadic:
        attrs[op.key_var_num_args] = 2
        assert op.list_inputs(attrs) == ("arg0", "arg1")
    inputs = tuple(op.list_inputs(attrs))
    args, aux = tuple(op.list_arguments(attrs)), tuple(op.list_auxiliary_states(attrs))
    assert set(aux) <= set(op.aux_inputs) and args + aux == tuple(
        i for i in inputs if i not in aux) + aux
    assert set(args) | set(aux) == set(inputs) and not set(args) & set(aux)
    n = op.output_count(attrs)
    names = list(op.list_outputs(attrs))
    assert len(names) == n and len(set(names)) == n
    if op._output_names is None:
        assert names == (["output"] if n == 1 else [f"output{i}" for i in range(n)])
    if n == 0:      # reset_arrays: no outputs, every input written in place (MXNet)
        assert op.mutated_indices(attrs) == tuple(range(len(inputs)))
        return
    assert 1 <= op.num_visible_outputs(attrs) <= n
    if name in GROUPED:      # each group's states, as its single-weight operator mutates them
        mutated = {f"{k}_{i}" for i in range(2) for k in op.group if k in op.single.mutated}
        assert op.mutated_indices(attrs) == tuple(
            i for i, n in enumerate(inputs) if n in mutated)
    else:
        assert op.mutated_indices(attrs) == tuple(inputs.index(m) for m in op.mutate_inputs
                                                  if m in inputs)


def test_declared_auxiliary_states_and_hidden_outputs():
    """BatchNorm's moving statistics are auxiliary states it updates in place; only its
    first output is visible unless output_mean_var (MXNet's record)."""
    bn = REGISTRY["BatchNorm"]
    attrs = bn.parse_attrs({})
    assert bn.list_auxiliary_states(attrs) == ("moving_mean", "moving_var")
    assert bn.list_arguments(attrs) == ("data", "gamma", "beta")
    assert set(bn.mutate_inputs) == {"moving_mean", "moving_var"}
    assert bn.list_outputs(attrs)[:3] == ["output", "mean", "var"]
    assert bn.num_visible_outputs(attrs) == 1
    assert bn.num_visible_outputs(bn.parse_attrs({"output_mean_var": True})) == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(aux_inputs=("nope",)), r"aux_inputs \['nope'\] are not inputs"),
    (dict(mutate_inputs=("nope",)), r"mutate_inputs \['nope'\] are not inputs"),
    (dict(key_var_num_args="n"), "key_var_num_args='n' needs a variadic op"),
    (dict(num_outputs=2, output_names=("a",)), "1 output_names for 2 outputs"),
    (dict(backward_shape="sideways"), "unknown backward_shape 'sideways'"),
])
def test_bad_declarations_fail_at_definition(kwargs, message):
    with pytest.raises(ValueError, match="_test_bad: " + message):
        OpDef("_test_bad", inputs=("data",), infer_shape=None, infer_type=None, compute={},
              doc="x", **kwargs)


def test_backward_shape_rule_infers_weights(test_ops):
    """FullyConnected(num_hidden=16) on data (8, 4): weight (16, 4), bias (16,), as MXNet."""
    attrs = FC.parse_attrs({"num_hidden": 16})
    assert FC.infer_shape_partial([(8, 4), None, None], attrs) == (
        [(8, 4), (16, 4), (16,)], [(8, 16)])
    no_bias = FC.parse_attrs({"num_hidden": 16, "no_bias": True})
    assert FC.infer_shape_partial([(8, 2, 3), None], no_bias) == ([(8, 2, 3), (16, 6)], [(8, 16)])
    assert FC.infer_shape_partial([None, None, None], attrs) == ([None, None, (16,)], [None])
    with pytest.raises(MXNetError, match=r"_test_fc: expected 2 input shape\(s\) "
                                         r"\['data', 'weight'\], got 3"):
        FC.infer_shape_partial([(8, 4), None, None], no_bias)
