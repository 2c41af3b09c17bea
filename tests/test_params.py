"""Operator parameters read MXNet's string forms and format back to them (item 1 of issue 8).

Oracle: what MXNet's Python front end wrote into a symbol's attrs (``str(value)``; dtypes by
name; ``'cpu(0)'``) and what its C++ parameter parser read (``'[3,3]'``, ``'3'`` for a
1-tuple, ``'1'``/``'0'`` for booleans, ``'None'`` for an optional value).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError
from mxlite.base import DTYPES
from mxlite.ops.params import KINDS
from mxlite.ops.registry import REGISTRY, REQUIRED, Param

UNIQUE_OPS = sorted({id(op): op for op in REGISTRY.values()}.values(), key=lambda op: op.name)


def same(a, b):
    """Equality of canonical values: NaN equals NaN, index arrays compare by dtype, shape
    and values, and an int never equals a float (``number`` keeps ints exact)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.array_equal(a, b))
    if type(a) is float and type(b) is float and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def test_same_is_strict():
    assert not same(1, 1.0) and not same((1,), (1, 2)) and not same(float("nan"), 0.0)
    assert not same(np.array([1]), np.array([True])) and same(np.array([1]), np.array([1]))


# ---- the string forms MXNet wrote and read ----------------------------------------------------
@pytest.mark.parametrize("kind, default, text, value", [
    ("int", 0, "128", 128), ("int", 0, " -3 ", -3),
    ("float", 0.0, "1e-05", 1e-05), ("float", 0.0, "-inf", -math.inf), ("float", 0.0, "2", 2.0),
    ("number", 1.0, "3", 3), ("number", 1.0, "2.5", 2.5), ("number", 1.0, "-1E3", -1000.0),
    ("bool", False, "True", True), ("bool", False, "false", False), ("bool", False, "1", True),
    ("bool", True, "0", False),
    ("shape", (), "(3, 3)", (3, 3)), ("shape", (), "[3,3]", (3, 3)), ("shape", (), "(3,)", (3,)),
    ("shape", (), "3", (3,)), ("shape", (), "()", ()), ("shape", (), "[]", ()),
    ("shape", (), "(2, -1, 0)", (2, -1, 0)),
    ("axes", None, "None", None), ("axes", None, "(0, 2)", (0, 2)), ("axes", None, "1", (1,)),
    ("axis", None, "None", None), ("axis", None, "-1", -1),
    ("opt_ints", None, "(0, None, -1)", (0, None, -1)), ("opt_ints", None, "[None]", (None,)),
    ("dtype", None, "float32", np.dtype("float32")), ("dtype", None, "None", None),
    ("dtype", None, "int64", np.dtype("int64")),
    ("ctx", None, "cpu(0)", mx.cpu(0)), ("ctx", None, "cpu(3)", mx.cpu(3)),
    ("ctx", None, "cpu", mx.cpu(0)), ("ctx", None, "cpu_pinned(0)", mx.Context("cpu_pinned")),
    ("ctx", None, "", None),
    ("str", "a", "clip", "clip"), ("str", "a", " raw text ", " raw text "),
    ("int", None, "None", None),                 # an optional int (dmlc::optional<int>)
])
def test_mxnet_string_forms_parse(kind, default, text, value):
    assert same(Param("p", kind, default).parse("op", text), value)


@pytest.mark.parametrize("kind, value, text", [
    ("int", 128, "128"), ("float", 1e-05, "1e-05"), ("float", 0.5, "0.5"),
    ("float", math.inf, "inf"), ("number", 3, "3"), ("number", 2.5, "2.5"),
    ("number", 2 ** 70, str(2 ** 70)), ("bool", True, "True"), ("bool", False, "False"),
    ("shape", (3, 3), "(3, 3)"), ("shape", (3,), "(3,)"), ("shape", (), "()"),
    ("axes", None, "None"), ("axis", -1, "-1"), ("opt_ints", (0, None), "(0, None)"),
    ("dtype", np.dtype("float32"), "float32"), ("dtype", np.dtype("bool"), "bool"),
    ("ctx", mx.cpu(0), "cpu(0)"), ("ctx", mx.Context("cpu_shared", 2), "cpu_shared(2)"),
    ("str", "clip", "clip"),
])
def test_format_writes_mxnet_strings(kind, value, text):
    assert Param("p", kind, None if KINDS[kind].none_ok else REQUIRED).format(value) == text


@pytest.mark.parametrize("kind, text", [
    ("int", "1.5"), ("int", "abc"), ("int", "1_000"), ("int", "None"), ("int", ""),
    ("float", "abc"), ("float", "1e400"), ("float", "1_0"), ("float", "None"),
    ("number", "abc"), ("number", "1e400"), ("number", "None"), ("number", "0x10"),
    ("bool", "maybe"), ("bool", "2"), ("bool", "None"),
    ("shape", "(2, x)"), ("shape", "(2,,3)"), ("shape", "(None,)"), ("shape", "None"),
    ("shape", "(1.5,)"), ("axes", "(0, x)"), ("opt_ints", "(0, 1.5)"), ("opt_ints", "(x,)"),
    ("dtype", "float31"), ("dtype", "complex64"), ("ctx", "tpu(0)"), ("ctx", "cpu(-1)"),
    ("ctx", "cpu(0"), ("index", "[1.5]"), ("index", "{}"), ("index", "not json"),
])
def test_bad_strings_name_op_and_parameter(kind, text):
    p = Param("the_param", kind)
    with pytest.raises(MXNetError, match=r"^the_op: .*\bthe_param\b"):
        p.parse("the_op", text)


def test_strings_inside_a_tuple_are_not_numbers():
    """MXNet read ``str(('2',))`` == "('2',)" as an error; a shape of strings is not a shape."""
    for kind in ("shape", "axes", "opt_ints"):
        with pytest.raises(MXNetError, match="'p'"):
            Param("p", kind).parse("op", ("2",))


def test_optional_params_take_none_others_reject_it():
    assert Param("n", "int", None).parse("op", None) is None
    assert Param("n", "int", None).optional and not Param("n", "int", 0).optional
    for kind in ("int", "float", "number", "bool", "shape", "str"):   # (index: x[None] is valid)
        with pytest.raises(MXNetError, match=r"^op: .*\bn\b"):
            Param("n", kind, REQUIRED).parse("op", None)


def test_gpu_context_string_parses_and_data_on_it_needs_a_gpu():
    """As MXNet: 'gpu(0)' is a Context without a GPU; data on it is a clear error."""
    assert Param("ctx", "ctx", None).parse("op", "gpu(0)") == mx.gpu(0)
    if not mx.num_gpus():
        with pytest.raises(MXNetError, match="GPU"):
            mx.nd.zeros((2,), ctx="gpu(0)")


def test_kind_any_has_no_string_form():
    with pytest.raises(TypeError, match="any"):
        Param("x", "any", None).format(object())


# ---- round trips: parse(format(v)) == v -------------------------------------------------------
_ints = st.integers(min_value=-2 ** 70, max_value=2 ** 70)
_small = st.integers(min_value=-2 ** 40, max_value=2 ** 40)
_slice_bound = st.none() | _small
_index_item = st.one_of(
    _small, st.none(), st.just(Ellipsis),
    st.builds(slice, _slice_bound, _slice_bound, _slice_bound),
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)),
    hnp.arrays(np.bool_, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)))
VALUES = {
    "int": _ints,
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "number": _ints | st.floats(allow_nan=True, allow_infinity=True),
    "bool": st.booleans(),
    "axis": st.none() | _small,
    "axes": st.none() | st.tuples() | st.lists(_small, max_size=6).map(tuple),
    "shape": st.lists(_ints, max_size=8).map(tuple),
    "opt_ints": st.none() | st.lists(st.none() | _small, max_size=6).map(tuple),
    "dtype": st.none() | st.sampled_from(sorted(DTYPES.values(), key=str)),
    "str": st.text(),
    "ctx": st.none() | st.builds(mx.Context, st.sampled_from(["cpu", "cpu_pinned", "cpu_shared"]),
                                 st.integers(0, 2 ** 31)),
    "index": st.lists(_index_item, max_size=5).map(tuple),
    "floats": st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6).map(tuple),
}


def test_every_kind_has_a_round_trip_strategy():
    assert set(VALUES) == set(KINDS) - {"any"}


@pytest.mark.parametrize("kind", sorted(VALUES))
@settings(max_examples=150)
@given(data=st.data())
def test_parse_format_round_trip_per_kind(kind, data):
    p = Param("p", kind, None if KINDS[kind].none_ok else REQUIRED)
    value = data.draw(VALUES[kind])
    text = p.format(value)
    assert isinstance(text, str)
    back = p.parse("op", text)
    assert same(back, value), (value, text, back)
    assert same(p.parse("op", back), back)          # canonical values parse to themselves


ROUND_TRIP_DEFAULTS = [(op.name, p.name) for op in UNIQUE_OPS for p in op.params
                       if p.default is not REQUIRED and p.kind != "any"]


@pytest.mark.parametrize("op_name, param", ROUND_TRIP_DEFAULTS)
def test_registered_defaults_round_trip(op_name, param):
    op = REGISTRY[op_name]
    p = op._param_map[param]
    value = p.parse(op.name, p.default)
    assert same(p.parse(op.name, p.format(value)), value)


@pytest.mark.parametrize("name", [op.name for op in UNIQUE_OPS
                                  if all(p.default is not REQUIRED for p in op.params)])
def test_format_attrs_round_trips_every_default(name):
    op = REGISTRY[name]
    attrs = op.parse_attrs({})
    text = op.format_attrs(attrs)
    assert set(text) == set(attrs) and all(isinstance(v, str) for v in text.values())
    back = op.parse_attrs(text)
    assert set(back) == set(attrs) and all(same(back[k], attrs[k]) for k in attrs)


def test_string_attrs_drive_a_real_call():
    """The strings a symbol JSON holds give the same result as the Python values."""
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    cases = [(mx.nd.sum, {"axis": (0, 2), "keepdims": True}),
             (mx.nd.reshape, {"shape": (4, -1)}),
             (mx.nd.transpose, {"axes": (2, 0, 1)}),
             (mx.nd.slice, {"begin": (0, None), "end": (None, 2), "step": (1, -1)}),
             (mx.nd.cast, {"dtype": "float16"})]
    for fn, kwargs in cases:
        text = fn.op.format_attrs(fn.op.parse_attrs(kwargs))
        got, want = fn(x, **text), fn(x, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    y = mx.nd.array([[-2.0, 0.5], [3.0, 9.0]])
    for fn, kwargs in [(mx.nd.clip, {"a_min": 0, "a_max": 2.5}),
                       (mx.nd._internal._rminus_scalar, {"scalar": 2 ** 40}),
                       (mx.nd._internal._getitem, {"key": (slice(None, None, -1), 1)}),
                       (mx.nd._internal._getitem, {"key": (np.array([1, 0, 1]), Ellipsis)}),
                       (mx.nd._internal._getitem, {"key": (np.array([True, False]), None)})]:
        text = fn.op.format_attrs(fn.op.parse_attrs(kwargs))
        np.testing.assert_array_equal(fn(y, **text).asnumpy(), fn(y, **kwargs).asnumpy())
    z = mx.nd.zeros(**mx.nd.zeros.op.format_attrs(
        mx.nd.zeros.op.parse_attrs({"shape": (2, 3), "dtype": "int32", "ctx": mx.cpu(0)})))
    assert z.shape == (2, 3) and z.dtype == np.int32 and z.context == mx.cpu(0)


# ---- typed kinds instead of 'any' (item 2) --------------------------------------------------
# (op, param) -> why it stays untyped.
_GRAPHS = ("a loop's or branch's graphs are Symbols: MXNet's JSON keeps them in the node's "
           "'subgraphs', not as a string attribute (symbol/json_format.py writes and reads them)")
ANY_REASONS = {("_foreach", "subgraph"): _GRAPHS, ("_while_loop", "subgraph"): _GRAPHS,
               ("_cond", "subgraph"): _GRAPHS,
               ("_imdecode", "str_img"): "the encoded image's bytes (MXNet passed them as a "
                                         "string parameter): data, not a setting"}


def test_every_untyped_param_has_a_written_reason():
    left = {(op.name, p.name) for op in UNIQUE_OPS for p in op.params if p.kind == "any"}
    assert left <= set(ANY_REASONS), f"kind 'any' without a reason: {sorted(left - set(ANY_REASONS))}"
    assert set(ANY_REASONS) <= left, f"stale reasons: {sorted(set(ANY_REASONS) - left)}"
    assert all(isinstance(r, str) and r.strip() for r in ANY_REASONS.values())


@pytest.mark.parametrize("op_name, param, kind", [
    ("slice", "begin", "opt_ints"), ("slice", "end", "opt_ints"), ("slice", "step", "opt_ints"),
    ("_slice_scatter", "begin", "opt_ints"), ("arange", "stop", "number"),
    ("arange", "start", "number"), ("_plus_scalar", "scalar", "number"),
    ("_getitem", "key", "index"), ("_getitem_scatter", "key", "index"),
    ("_setitem", "key", "index"), ("clip", "a_min", "number"), ("full", "val", "number"),
])
def test_typed_kinds(op_name, param, kind):
    assert REGISTRY[op_name]._param_map[param].kind == kind


def test_arange_stop_is_an_optional_number():
    p = REGISTRY["arange"]._param_map["stop"]
    assert p.parse("arange", None) is None and p.parse("arange", "None") is None
    assert same(p.parse("arange", "7"), 7) and same(p.parse("arange", "7.5"), 7.5)
    with pytest.raises(MXNetError, match="arange: stop must be a real number"):
        p.parse("arange", (1, 2))


def test_slice_bounds_parse_as_tuples_of_int_or_none():
    op = REGISTRY["slice"]
    attrs = op.parse_attrs({"begin": "(1, None)", "end": [None, np.int64(-1)], "step": "(2,-1)"})
    assert same(attrs.begin, (1, None)) and same(attrs.end, (None, -1))
    assert same(attrs.step, (2, -1))
    assert op.format_attrs(attrs) == {"begin": "(1, None)", "end": "(None, -1)",
                                      "step": "(2, -1)"}
    with pytest.raises(MXNetError, match="slice: parameter 'begin'"):
        op.parse_attrs({"begin": (1.5,), "end": (2,)})


def test_index_key_json_form():
    p = REGISTRY["_getitem"]._param_map["key"]
    key = (0, slice(1, None, 2), None, Ellipsis, np.array([1, 2]))
    text = p.format(p.parse("_getitem", key))
    assert text == ('[0,{"slice":[1,null,2]},null,"...",'
                    '{"array":[1,2],"shape":[2],"dtype":"int64"}]')
    assert same(p.parse("_getitem", text), key)
    assert same(p.parse("_getitem", np.array([[True], [False]])),
                (np.array([[True], [False]]),))
    assert same(p.parse("_getitem", [np.uint8(3), 1]), (np.array([3, 1]),))   # a list: an array
    for bad in ((1.5,), (slice(0.5, 2),), (True,), (np.array([0.5]),), ("a",)):
        with pytest.raises(MXNetError, match="_getitem: parameter 'key'"):
            p.parse("_getitem", bad)


def test_index_key_of_every_indexing_form_matches_numpy():
    """x[key] through the JSON form of the canonical key equals NumPy's x[key]."""
    from mxlite.ops.indexing import canonical_key
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = mx.nd.array(a)
    p = REGISTRY["_getitem"]._param_map["key"]
    for key in [(1, slice(None, None, -2)), (Ellipsis, 2), (None, 0, slice(1, 3)),
                (np.array([2, 0]), slice(None), np.array([4, 1])), a[:, 0, 0] > 10,
                (slice(None), [0, 3])]:
        canonical = canonical_key(key, a.shape)
        got = mx.nd._internal._getitem(x, key=p.format(canonical)).asnumpy()
        np.testing.assert_array_equal(got, a[key])


def test_format_attrs_in_parameter_order_and_rejects_strangers():
    op = REGISTRY["slice"]
    attrs = op.parse_attrs({"end": (2,), "begin": (0,)})
    assert list(op.format_attrs(attrs)) == ["begin", "end", "step"]
    with pytest.raises(MXNetError, match=r"slice: unknown parameter\(s\) \['bogus'\]"):
        op.format_attrs({"bogus": 1})
