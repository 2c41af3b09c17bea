"""The operator registry and the front-end generator, checked registry-wide.

Every test here walks ``REGISTRY``, so operators added by any family are covered as soon as
they are registered: complete records, a generated ``mx.nd`` function in the right namespace
with a real signature and docstring, ``list_ops``, and parameter validation errors.
"""
import importlib
import inspect
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.device import run_context
from mxlite.ops.frontend import make_function
from mxlite.ops.registry import (NON_DIFFERENTIABLE, REGISTRY, REQUIRED, Attrs, OpDef, Param,
                                 get_op, list_ops, register)

# ops with no outputs: each writes every input in place (MXNet's FMutateInputs lists them all)
ZERO_OUTPUTS = {"reset_arrays"}

ALL_NAMES = sorted(REGISTRY)
UNIQUE_OPS = sorted({id(op): op for op in REGISTRY.values()}.values(), key=lambda op: op.name)
UNIQUE_NAMES = [op.name for op in UNIQUE_OPS]
_P = inspect.Parameter


def expected_namespace(name):
    """Where a registered name is shown (MXNet's prefixes): ('random', 'uniform') etc."""
    for prefix, ns in (("_random_", "random"),
                       ("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_image_", "image"),
                       ("_sparse_", "sparse")):
        if name.startswith(prefix):
            return ns, name[len(prefix):]
    return ("_internal", name) if name.startswith("_") else ("", name)


def nd_function(name):
    ns, public = expected_namespace(name)
    module = getattr(mx.nd, ns) if ns else mx.nd
    return getattr(module, public)


# ---- records -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", UNIQUE_NAMES)
def test_op_record_is_complete(name):
    op = REGISTRY[name]
    assert isinstance(op, OpDef)
    assert callable(op.infer_shape), name
    assert callable(op.infer_type), name
    assert callable(op.compute.get("cpu")), f"{name} has no cpu kernel"
    assert isinstance(op.doc, str) and op.doc.strip(), f"{name} has no docstring"
    assert all(isinstance(i, str) and i for i in op.inputs)
    assert len(set(op.inputs)) == len(op.inputs)
    assert all(isinstance(p, Param) for p in op.params)
    pnames = [p.name for p in op.params]
    assert len(set(pnames)) == len(pnames), f"{name} repeats a parameter"
    assert not set(pnames) & set(op.inputs), f"{name}: a parameter shares an input's name"
    assert not set(pnames + list(op.inputs)) & {"out", "name"}, f"{name} shadows out=/name="
    assert op.gradient is None or op.gradient == NON_DIFFERENTIABLE or callable(op.gradient)
    assert op.differentiable == callable(op.gradient)
    # no outputs only for an op that writes every input in place (reset_arrays, as MXNet)
    assert callable(op.num_outputs) or (isinstance(op.num_outputs, int) and (
        op.num_outputs >= 1 or name in ZERO_OUTPUTS))
    for alias in op.aliases:
        assert REGISTRY[alias] is op


@pytest.mark.parametrize("name", ALL_NAMES)
def test_nd_function_in_its_namespace(name):
    op = REGISTRY[name]
    fn = nd_function(name)
    assert callable(fn) and fn.op is op
    assert fn.__name__ == expected_namespace(name)[1]
    assert op.doc.strip() in fn.__doc__
    for p in op.params:
        assert p.name in fn.__doc__
    ns = expected_namespace(name)[0]
    if ns and ns != "_internal":     # MXNet also lists namespaced ops under _internal
        assert getattr(mx.nd._internal, name).op is op
        assert importlib.import_module(f"mxlite.ndarray.{ns}") is getattr(mx.nd, ns)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_signature_is_inputs_params_out_name(name):
    op = REGISTRY[name]
    sig = inspect.signature(nd_function(name))
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    if op.variadic:
        assert params[0].kind is _P.VAR_POSITIONAL and names[0] == (op.inputs or ("data",))[0]
        assert names[1:] == [p.name for p in op.params] + ["out", "name"]
    else:
        assert names == list(op.inputs) + [p.name for p in op.params] + ["out", "name"]
        for p in params[:len(op.inputs)]:
            assert p.kind is _P.POSITIONAL_OR_KEYWORD and p.default is _P.empty
    by_name = sig.parameters
    for p in op.params:
        want = _P.empty if p.default is REQUIRED else p.default
        got = by_name[p.name].default
        assert got is want or got == want, (p.name, got, want)
    assert by_name["out"].kind is _P.KEYWORD_ONLY and by_name["out"].default is None
    assert by_name["name"].kind is _P.KEYWORD_ONLY and by_name["name"].default is None


def _valid_value(p):
    """A value ``p`` parses: its default, else one of its choices or a sample of its kind."""
    if p.default is not REQUIRED:
        return p.default
    if p.choices:
        return p.choices[0]
    return {"int": 1, "float": 1.0, "number": 1, "bool": False, "shape": (1,),
            "str": "x"}.get(p.kind)


def _valid_values_taking_every_input(op):
    """Valid parameters of an op whose inputs depend on them, chosen (among the choices of
    its str parameters and the other value of its bool ones) so that the call takes every
    input."""
    values = {p.name: _valid_value(p) for p in op.params}
    for p in op.params:
        for choice in p.choices or ((not _valid_value(p),) if p.kind == "bool" else ()):
            if tuple(op.list_inputs(op.parse_attrs(values))) == tuple(op.inputs):
                return values
            values[p.name] = choice
    return values


# ops that bind their calls themselves (``OpDef.bind_call``: Custom's inputs and parameters
# come from its registered property); tests/test_custom_op.py checks their binding
_SELF_BINDING = [n for n in UNIQUE_NAMES if getattr(REGISTRY[n], "bind_call", None)]


@pytest.mark.parametrize("name", [n for n in UNIQUE_NAMES if n not in _SELF_BINDING])
def test_generated_function_routes_arguments_like_its_signature(name):
    """Calling the generated function as its signature says hands invoke the right pieces."""
    op = REGISTRY[name]
    calls = []
    fn = make_function(op, lambda o, inputs, kwargs, out: calls.append((o, inputs, kwargs, out)))
    sig = inspect.signature(fn)
    inputs = [object() for _ in (op.inputs if not op.variadic else range(3))]
    values = {p.name: object() for p in op.params}
    if op._list_inputs:     # the binding parses these to list the inputs: valid values
        values = _valid_values_taking_every_input(op)
    if op.key_var_num_args:                # the count of a variadic op: checked, so real
        values[op.key_var_num_args] = len(inputs)
    out = object()
    positional = list(inputs)
    keywords = {}
    for p in op.params:
        if sig.parameters[p.name].kind is _P.POSITIONAL_OR_KEYWORD and len(keywords) == 0:
            positional.append(values[p.name])
        else:
            keywords[p.name] = values[p.name]
    fn(*positional, out=out, name="ignored", **keywords)
    (o, got_inputs, got_kwargs, got_out), = calls
    assert o is op and got_out is out
    assert list(got_inputs) == inputs
    assert got_kwargs == values
    calls.clear()
    if op.variadic and op.inputs:          # MXNet style: data=[...], the count left out
        fn(**{op.inputs[0]: inputs}, **{k: v for k, v in values.items()
                                         if k != op.key_var_num_args})
        assert list(calls[0][1]) == inputs and calls[0][2] == values
    elif op.inputs:                        # inputs may also be given by keyword
        fn(**dict(zip(op.inputs, inputs)), **values)
        assert list(calls[0][1]) == inputs and calls[0][2] == values


def test_namespaces_have_no_collisions():
    """Two different operators must not be shown under the same public name."""
    seen = {}
    for name in ALL_NAMES:
        key = expected_namespace(name)
        if key in seen:
            assert REGISTRY[seen[key]] is REGISTRY[name], f"{name} and {seen[key]} both map to {key}"
        seen[key] = name


def test_fluent_methods():
    x = mx.nd.array([0.5, 1.0])
    for name in ALL_NAMES:
        ns, public = expected_namespace(name)
        op = REGISTRY[name]
        if ns or not op.inputs or op.variadic:
            continue
        assert callable(getattr(mx.nd.NDArray, public, None)), public
    np.testing.assert_array_equal(x.exp().asnumpy(), mx.nd.exp(x).asnumpy())
    np.testing.assert_array_equal(x.broadcast_add(x).asnumpy(), [1.0, 2.0])


# ---- list_ops / get_op -----------------------------------------------------------------------
def test_list_ops():
    entries = list_ops()
    names = [e[0] for e in entries]
    assert names == sorted(names) == ALL_NAMES
    for name, ns, differentiable in entries:
        assert ns == expected_namespace(name)[0]
        assert differentiable is callable(REGISTRY[name].gradient)
    # spot checks of the flags: comparisons are declared non-differentiable
    flags = {e[0]: e[2] for e in entries}
    assert flags["broadcast_equal"] is False and flags["sign"] is False


def test_get_op():
    assert get_op("sin") is REGISTRY["sin"]
    assert get_op("broadcast_plus") is get_op("broadcast_add")
    with pytest.raises(MXNetError, match="no_such_op"):
        get_op("no_such_op")


def test_register_rejects_duplicates_atomically():
    op = REGISTRY["sin"]
    clone = OpDef("sin", inputs=("data",), infer_shape=op.infer_shape,
                  infer_type=op.infer_type, compute=op.compute, doc="dup")
    with pytest.raises(ValueError, match="sin"):
        register(clone)
    assert REGISTRY["sin"] is op
    fresh = "_test_registry_never_registered"
    half = OpDef(fresh, inputs=("data",), infer_shape=op.infer_shape, infer_type=op.infer_type,
                 compute=op.compute, doc="dup alias", aliases=("sin",))
    with pytest.raises(ValueError, match="sin"):
        register(half)
    assert fresh not in REGISTRY      # nothing was half-registered


def test_param_rejects_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        Param("x", "complex")


def test_attrs_attribute_access():
    a = Attrs(axis=1)
    assert a.axis == 1 and a["axis"] == 1
    with pytest.raises(AttributeError):
        a.missing


# ---- parameter validation ------------------------------------------------------------------
BAD_VALUES = {
    "int": ["abc", 1.5, None, (1, 2)],
    "float": ["abc", None, [1.0, 2.0]],
    "bool": ["maybe", 2, None, [True]],
    "axis": ["abc", 1.5, (0, 1)],
    "axes": ["abc", 1.5, (0, "x")],
    "shape": ["abc", 1.5, None, (2, "x"), (2, 1.5)],
    "dtype": ["int16", "not_a_dtype", "complex64"],
}


def _bad_values(p):
    if p.kind == "str":
        bad = ["__not_a_choice__"] if p.choices else [5, None]
    else:
        bad = BAD_VALUES.get(p.kind, [])
    return [v for v in bad if v is not None or not p.optional]   # optional: None is valid


PARAM_CASES = [(op.name, p.name) for op in UNIQUE_OPS for p in op.params if _bad_values(p)]


@pytest.mark.parametrize("op_name, param", PARAM_CASES)
def test_bad_param_value_names_op_and_param(op_name, param):
    op = REGISTRY[op_name]
    p = next(q for q in op.params if q.name == param)
    for bad in _bad_values(p):
        with pytest.raises(MXNetError) as info:
            op.parse_attrs({param: bad})
        message = str(info.value)
        assert op.name in message and param in message, (bad, message)


@pytest.mark.parametrize("name", UNIQUE_NAMES)
def test_unknown_param_is_an_error(name):
    """An op with parameters refuses an unknown one; one without any ignores it with a
    warning (MXNet 1.x had no parser for it and ignored it: broadcast_maximum(axis=1))."""
    op = REGISTRY[name]
    if op.params:
        with pytest.raises(MXNetError, match=re.escape(op.name) + ".*bogus"):
            op.parse_attrs({"bogus": 1})
    else:
        with pytest.warns(UserWarning, match=re.escape(op.name) + ".*'bogus' is ignored"):
            assert op.parse_attrs({"bogus": 1}) == op.parse_attrs({})


def test_hidden_attribute_keywords_are_ignored_by_the_parser():
    """MXNet's parameter parser allowed ``__key__`` attributes (symbol attributes such as
    ``__layout__``); they are not parameters."""
    fc = REGISTRY["FullyConnected"]
    assert fc.parse_attrs({"num_hidden": 3, "__layout__": "NC"}) == \
        fc.parse_attrs({"num_hidden": 3})
    x = mx.nd.ones((2, 3))
    out = mx.nd.FullyConnected(x, mx.nd.ones((4, 3)), num_hidden=4, no_bias=True,
                               __layout__="NC")
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 4), 3.0))


@pytest.mark.parametrize("name", [op.name for op in UNIQUE_OPS
                                  if any(p.default is REQUIRED for p in op.params)])
def test_missing_required_param_is_an_error(name):
    op = REGISTRY[name]
    missing = [p.name for p in op.params if p.default is REQUIRED]
    with pytest.raises(MXNetError, match=re.escape(op.name) + ".*" + re.escape(missing[0])):
        op.parse_attrs({})


def test_param_parsing_converts_values():
    p_int, p_float = Param("k", "int", 0), Param("s", "float", 1.0)
    assert p_int.parse("op", 3.0) == 3 and p_int.parse("op", np.int64(2)) == 2
    assert p_float.parse("op", "2.5") == 2.5 and p_float.parse("op", np.float32(0.5)) == 0.5
    p_bool = Param("b", "bool", False)
    assert p_bool.parse("op", "True") is True and p_bool.parse("op", 0) is False
    assert p_bool.parse("op", np.bool_(True)) is True
    assert Param("s", "shape").parse("op", 3) == (3,)
    assert Param("s", "shape").parse("op", [2, np.int64(3)]) == (2, 3)
    assert Param("a", "axes", None).parse("op", None) is None
    assert Param("d", "dtype", None).parse("op", "float16") == np.float16
    with pytest.raises(MXNetError, match="op.*'k'"):
        p_int.parse("op", True)            # a bool is not an integer parameter
    with pytest.raises(MXNetError, match="op.*'m'.*one of"):
        Param("m", "str", "a", choices=("a", "b")).parse("op", "c")


# ---- the generated nd functions at run time --------------------------------------------------
def test_nd_call_errors():
    x = mx.nd.array([1.0, 2.0])
    with pytest.raises(MXNetError, match="sum.*bogus"):
        mx.nd.sum(x, bogus=1)
    with pytest.warns(UserWarning, match="sin takes no parameters.*'bogus'"):
        mx.nd.sin(x, bogus=1)
    with pytest.warns(UserWarning, match="broadcast_maximum.*'axis' is ignored"):
        out = mx.nd.broadcast_maximum(mx.nd.array([0.0]), x - 1.5, axis=1)
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 0.5])
    with pytest.raises(MXNetError, match="_plus_scalar.*positional"):
        mx.nd._internal._plus_scalar(x, 1.0, 2.0)
    with pytest.raises(MXNetError, match="_plus_scalar.*multiple values.*scalar"):
        mx.nd._internal._plus_scalar(x, 1.0, scalar=2.0)
    with pytest.raises(MXNetError, match="broadcast_add.*missing input.*rhs"):
        mx.nd.broadcast_add(x)
    with pytest.raises(TypeError, match="broadcast_add.*rhs"):
        mx.nd.broadcast_add(x, [1.0, 2.0])
    # inputs by keyword, name= accepted and ignored
    np.testing.assert_array_equal(mx.nd.broadcast_add(lhs=x, rhs=x, name="n").asnumpy(), [2, 4])


ELEMENTWISE_OPS = [op.name for op in UNIQUE_OPS
                   if op.elementwise and not op.variadic and 1 <= len(op.inputs) <= 2
                   and not any(p.default is REQUIRED for p in op.params)]


@pytest.mark.parametrize("name", ELEMENTWISE_OPS)
def test_out_argument_checked(name):
    fn = nd_function(name)
    op = REGISTRY[name]
    inputs = [mx.nd.array(np.full((2, 3), 0.5, np.float32))
              for _ in op.list_inputs(op.default_attrs)]
    result = fn(*inputs)
    out = mx.nd.array(np.zeros(result.shape), dtype=result.dtype)
    assert fn(*inputs, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), result.asnumpy())
    with pytest.raises(MXNetError, match=re.escape(REGISTRY[name].name) + ".*shape"):
        fn(*inputs, out=mx.nd.array(np.zeros((3, 2)), dtype=result.dtype))
    other = "float64" if result.dtype != np.float64 else "float32"
    with pytest.raises(MXNetError, match=re.escape(REGISTRY[name].name) + ".*dtype"):
        fn(*inputs, out=mx.nd.array(np.zeros(result.shape), dtype=other))
    with pytest.raises(MXNetError, match=re.escape(REGISTRY[name].name)):
        fn(*inputs, out=[out, out])


# ---- declared rules the compiled invoke evaluates without Python calls -------------------------
from mxlite.ndarray.ndarray import invoke  # noqa: E402

_RULE_OPS = sorted({op.name for op in REGISTRY.values() if op.float_rule is not None})
_SHAPES = [(), (3,), (2, 0, 3), (4, 5), (2, 3, 4)]
_BROADCAST_PAIRS = [((4, 5), (4, 5)), ((4, 1), (1, 5)), ((3,), (2, 3)), ((), (2, 3)),
                    ((2, 1, 4), (3, 1)), ((0, 3), (1, 3))]
_REDUCE_ATTRS = [{}, {"axis": 0}, {"axis": -1}, {"axis": (0, 2)}, {"axis": 1, "keepdims": True},
                 {"axis": (1,), "exclude": True}, {"keepdims": True}, {"axis": ()}]


def test_float_rules_are_declared_on_the_common_families():
    rules = {name: REGISTRY[name].float_rule for name in _RULE_OPS}
    assert rules["sin"] == rules["_plus_scalar"] == rules["elemwise_mul"] == "same"
    assert rules["broadcast_add"] == rules["broadcast_greater"] == "broadcast"
    assert rules["sum"] == rules["max"] == "reduce"
    assert "cast" not in rules and "dot" not in rules


def _rule_cases(op):
    if op.float_rule == "same":
        return [([s] * len(op.inputs), {}) for s in _SHAPES]
    if op.float_rule == "broadcast":
        return [(list(pair), {}) for pair in _BROADCAST_PAIRS]
    return [([s], kw) for s in _SHAPES for kw in _REDUCE_ATTRS
            if "axis" not in kw or (len(s) == 3 and s[1])]


@pytest.mark.parametrize("name", _RULE_OPS)
def test_float_rule_matches_the_python_inference(name):
    """Wherever the declared rule gives a shape, it is the one the op's own
    infer_shape/infer_type give, for float32 and float64 (through the compiled invoke)."""
    op = REGISTRY[name]
    assert not op.variadic and op.num_outputs == 1
    for shapes, kwargs in _rule_cases(op):
        attrs = op.parse_attrs(kwargs)
        for dtype in ("float32", "float64"):
            try:
                want_shape = op.infer_shape(shapes, attrs)
                want_type = op.infer_type([np.dtype(dtype)] * len(shapes), attrs)
            except MXNetError:
                continue        # bad input: the rule leaves it to Python, which raises
            args = [mx.nd.ones(s, dtype=dtype) for s in shapes]
            got = invoke(op, args, kwargs)         # the compiled invoke applies the rule
            assert (got.shape, got.dtype) == (want_shape[0], want_type[0]), (name, shapes, kwargs)


_CPU_KERNEL_OPS = sorted({op.name for op in REGISTRY.values() if op.cpu_kernel is not None})


def test_cpu_kernels_are_declared_on_the_common_families():
    assert {"sin", "exp", "broadcast_add", "elemwise_mul", "sum", "mean", "max"} <= set(
        _CPU_KERNEL_OPS)
    assert all(REGISTRY[n].float_rule is not None for n in _CPU_KERNEL_OPS)


@pytest.mark.parametrize("name", _CPU_KERNEL_OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cpu_kernel_matches_the_compute_function(name, dtype, rng):
    """Where the compiled invoke calls the declared CPU kernel instead of compute['cpu'],
    the result is the compute function's, bit for bit (and through invoke itself)."""
    op = REGISTRY[name]
    rctx = run_context(mx.cpu())
    for shapes in _rule_cases(op) if op.float_rule != "reduce" else \
            [([s], {}) for s in [(1,), (7,), (3, 4, 5), (2, 1000)]]:
        shapes = shapes[0]
        if any(0 in s for s in shapes):
            continue
        attrs = op.parse_attrs({})
        xs = [rng.uniform(0.5, 1.5, size=s).astype(dtype) for s in shapes]
        want_shape = op.infer_shape([x.shape for x in xs], attrs)[0]
        by_kernel, by_compute = np.empty(want_shape, dtype), np.empty(want_shape, dtype)
        op.cpu_kernel(rctx, xs, [by_kernel], attrs)
        op.compute["cpu"](rctx, xs, [by_compute], attrs)
        np.testing.assert_array_equal(by_kernel, by_compute)
        got = invoke(op, [mx.nd.array(x, dtype=dtype) for x in xs], {})
        np.testing.assert_array_equal(got.asnumpy(), by_compute)


_SCALAR_KERNEL_OPS = [n for n in _CPU_KERNEL_OPS if "scalar" in REGISTRY[n]._param_map]
_SCALARS = [2.5, -3, 0.0, -0.0, 7, 1e39, -1e39, 3.4e38, float("nan"), float("inf"), 2**61,
            -(2**61) - 1, True, 1e-46]


def test_scalar_kernels_are_declared():
    assert {"_plus_scalar", "_rminus_scalar", "_mul_scalar", "_rdiv_scalar",
            "_greater_scalar"} <= set(_SCALAR_KERNEL_OPS)


@pytest.mark.parametrize("name", _SCALAR_KERNEL_OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_cpu_kernel_matches_the_compute_function(name, dtype, rng):
    """The compiled scalar path (the scalar as a 0-d array of the input's dtype) gives the
    compute function's result bit for bit, for every kind of scalar: ints, -0.0, NaN, inf,
    float32 overflow and underflow, huge ints (those go to the compute function)."""
    op = REGISTRY[name]
    rctx = run_context(mx.cpu())
    x = np.concatenate([rng.uniform(-3, 3, size=20), [0.0, -0.0, 1.0, 2.5, -3.0]]).astype(dtype)
    for value in _SCALARS:
        attrs = op.parse_attrs({"scalar": value})
        by_compute = np.empty_like(x)
        op.compute["cpu"](rctx, [x], [by_compute], attrs)
        got = invoke(op, [mx.nd.array(x, dtype=dtype)], {"scalar": value}).asnumpy()
        np.testing.assert_array_equal(got, by_compute, err_msg=f"{name} scalar={value!r}")
        assert np.array_equal(np.signbit(got), np.signbit(by_compute)), (name, value)


def test_memoised_keywords_tell_apart_values_that_compare_equal():
    """invoke memoises parsed keywords and inferred shapes; 0.0/-0.0, 1/1.0/True and equal
    tuples of other types must not share an entry (a wrong sign of zero is a wrong result)."""
    x = mx.nd.array([1.0, -2.0], dtype="float64")
    assert np.signbit((x * 0.0).asnumpy()).tolist() == [False, True]
    assert np.signbit((x * -0.0).asnumpy()).tolist() == [True, False]
    assert np.signbit((x * 0.0).asnumpy()).tolist() == [False, True]
    assert mx.nd.reshape(x, shape=(2, 1)).shape == (2, 1)
    assert mx.nd.reshape(x, shape=(1, 2)).shape == (1, 2)
    assert mx.nd.sum(x, axis=0, keepdims=True).shape == (1,)
    assert mx.nd.sum(x, axis=0, keepdims=1).shape == (1,)
    assert mx.nd.sum(x, axis=0, keepdims=False).shape == (1,)
    with pytest.raises(MXNetError):
        mx.nd.reshape(x, shape=(3,))
    with pytest.raises(MXNetError):          # an error is never memoised as a success
        mx.nd.reshape(x, shape=(3,))


def test_reduce_rule_requires_full_reduction_defaults():
    """The compiled invoke reads a parameterless call of a 'reduce' op as "every axis"."""
    params = (Param("axis", "axes", 0), Param("keepdims", "bool", False),
              Param("exclude", "bool", False))
    with pytest.raises(ValueError, match="float_rule 'reduce' needs"):
        OpDef("_test_bad_reduce", inputs=("data",), params=params, doc="",
              infer_shape=lambda s, a: [(1,)], infer_type=lambda d, a: d[:1], compute={},
              float_rule="reduce")
    with pytest.raises(ValueError, match="unknown float_rule"):
        OpDef("_test_bad_rule", inputs=("data",), doc="", infer_shape=None, infer_type=None,
              compute={}, float_rule="sometimes")
