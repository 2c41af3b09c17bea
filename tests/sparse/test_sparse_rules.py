"""Every storage rule of every operator record, against the same operator on dense copies.

The calls (tests/sparse/rule_cases.py) drive each rule with random inputs of the storage
types it takes. The result must equal the dense computation (the operator's dense kernels,
the specification), pass ``check_format``, and have the storage type MXNet 1.9.1 gives for
the same call (tests/fixtures/sparse_stypes_mxnet.json, made by
tests/fixtures/make_sparse_fixture.py). A rule no call reaches fails
``test_every_rule_has_a_case``, so a new rule cannot land untested.
"""
import json
import os
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.ndarray._sparse_invoke import front_invoke, stype_of
from mxlite.ops.registry import REGISTRY
from mxlite.ops.sparse import elemwise, rules
from rule_cases import CASES, CSR, DNS, EMBEDDINGS, RETAINED_ROWS, RSP, SCALAR, SCATTER, UNARY, \
    UPDATES, label

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "fixtures", "sparse_stypes_mxnet.json")
with open(FIXTURE) as _f:
    MXNET_STYPE = json.load(_f)


def random_input(rng, stype, shape, low=-1.0, high=1.0):
    dense = rng.uniform(low, high, shape).astype(np.float32)
    if stype == CSR:
        dense[rng.random(shape) < 0.6] = 0
    elif stype == RSP:
        dense[rng.random(shape[0]) < 0.5] = 0
    if dense.size and stype != DNS:
        dense.reshape(-1)[0] = 0                       # at least one zero
    x = mx.nd.array(dense)
    return x if stype == DNS else x.tostype(stype)


def _inputs(c, rng):
    if c["op"] == "_sparse_retain":
        return [random_input(rng, RSP, c["shapes"][0]), mx.nd.array(RETAINED_ROWS)]
    if c["op"] == "take":
        return [random_input(rng, CSR, c["shapes"][0]),
                mx.nd.array(rng.integers(-9, 12, c["shapes"][1]))]
    if c["op"] == "_take_grad":
        grad, idx, data = c["shapes"]
        return [random_input(rng, DNS, grad), mx.nd.array(rng.integers(0, data[0], idx)),
                random_input(rng, c["stypes"][2], data)]
    if c["op"] in EMBEDDINGS:
        idx, weight = c["shapes"]
        return [mx.nd.array(rng.integers(0, weight[0], idx)), random_input(rng, RSP, weight)]
    return [random_input(rng, s, shape, c["low"], c["high"])
            for s, shape in zip(c["stypes"], c["shapes"])]


def _dense(x):
    return x.tostype("default") if stype_of(x) != DNS else x


def call(op, inputs, attrs):
    """``mx.nd``'s call of ``op`` (sparse or dense inputs)."""
    return front_invoke(op, list(inputs), dict(attrs))


@pytest.mark.parametrize("c", CASES, ids=label)
def test_rule_equals_dense(c, rng):
    op = REGISTRY[c["op"]]
    inputs = _inputs(c, rng)
    if c["op"] in UPDATES:
        return _check_update(c, op, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a rule runs: no storage fallback
        got = call(op, inputs, c["attrs"])
    assert stype_of(got) == (c["mxnet_out"] or MXNET_STYPE[label(c)])
    if stype_of(got) != DNS:
        got.check_format()
    if c["op"] == "zeros":
        want = np.zeros(c["attrs"]["shape"])
    elif c["op"] == "cast_storage":
        want = _dense(inputs[0]).asnumpy()
    elif c["op"] == "_contrib_getnnz":
        dense = inputs[0].asnumpy() != 0
        want = dense.sum(axis=c["attrs"].get("axis")).reshape(-1)
    elif c["op"] == "_sparse_retain":
        want = _dense(inputs[0]).asnumpy()
        want[~np.isin(np.arange(want.shape[0]), RETAINED_ROWS)] = 0
    elif c["op"] in SCATTER:            # the dense op where the first operand stores
        want = call(op, [_dense(x) for x in inputs], c["attrs"]).asnumpy()
        want[~stored(inputs[0])] = 0
    else:
        want = call(op, [_dense(x) for x in inputs], c["attrs"]).asnumpy()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6, equal_nan=True)


def stored(x):
    """The positions sparse ``x`` stores, as a dense bool mask."""
    mask = np.zeros(x.shape, bool)
    if x.stype == RSP:
        mask[x.indices.asnumpy()] = True
    else:
        indptr = x.indptr.asnumpy()
        rows = np.repeat(np.arange(x.shape[0]), np.diff(indptr))
        mask[rows, x.indices.asnumpy()] = True
    return mask


def _check_update(c, op, inputs):
    """An update with a row_sparse gradient: lazily, exactly the op's dense kernel on the
    stored rows (weights and states), the other rows untouched; otherwise the dense update."""
    weight, grad, states = inputs[0], inputs[1], inputs[2:]
    w0, s0 = weight.asnumpy(), [s.asnumpy() for s in states]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = call(op, inputs, c["attrs"])
    assert stype_of(got) == (c["mxnet_out"] or MXNET_STYPE[label(c)])
    if c["attrs"].get("lazy_update", True):
        rows = grad.indices.asnumpy()
        w_rows, s_rows = mx.nd.array(w0[rows]), [mx.nd.array(s[rows]) for s in s0]
        new_rows = call(op, [w_rows, grad.data] + s_rows, c["attrs"])
        want, want_s = w0.copy(), [s.copy() for s in s0]
        want[rows] = new_rows.asnumpy()
        for ws, r in zip(want_s, s_rows):
            ws[rows] = r.asnumpy()
    else:
        dense_states = [mx.nd.array(s) for s in s0]
        want = call(op, [mx.nd.array(w0), grad.tostype("default")] + dense_states,
                    c["attrs"]).asnumpy()
        want_s = [s.asnumpy() for s in dense_states]
    np.testing.assert_array_equal(got.asnumpy(), want)
    np.testing.assert_array_equal(weight.asnumpy(), w0)       # no out=: a new weight
    for got_s, ws in zip(states, want_s):
        np.testing.assert_array_equal(got_s.asnumpy(), ws)


def test_every_rule_has_a_case():
    reached = set()
    for c in CASES:
        op = REGISTRY[c["op"]]
        rule = rules.find(op, c["stypes"], op.parse_attrs(dict(c["attrs"])), c["shapes"])
        assert rule is not None, f"no rule takes {label(c)}"
        reached.add(id(rule))
    missing = sorted({f"{op.name} rule {i} {rule.inputs}" for op in REGISTRY.values()
                      for i, rule in enumerate(op.storage) if id(rule) not in reached})
    assert not missing, f"storage rules no case reaches: {missing}"


def test_the_cases_list_the_value_rules():
    assert tuple(UNARY) == elemwise.UNARY and tuple(SCALAR) == elemwise.SCALAR


@pytest.mark.parametrize("name", UNARY + tuple(SCALAR))
def test_value_rules_map_zero_to_zero(name):
    """Such a rule computes on stored positions only: with these attrs the op maps 0 to 0."""
    op = REGISTRY[name]
    attrs = op.parse_attrs({"scalar": SCALAR[name]} if name in SCALAR else
                           ({"a_min": -1, "a_max": 1} if name == "clip" else {}))
    assert elemwise.maps_zero_to_zero(op, attrs)


@pytest.mark.parametrize("name,attrs", [("_plus_scalar", {"scalar": 1.0}),
                                        ("clip", {"a_min": 0.5, "a_max": 1.0}),
                                        ("_greater_equal_scalar", {"scalar": 0.0})])
def test_ops_that_move_zero_run_dense(name, attrs, rng, monkeypatch):
    from mxlite.ndarray import _sparse_invoke as sparse_invoke
    monkeypatch.setattr(sparse_invoke, "_warned", set())
    x = random_input(rng, CSR, (4, 5))
    op = REGISTRY[name]
    with pytest.warns(RuntimeWarning, match="Storage type fallback"):
        got = call(op, [x], attrs)
    assert stype_of(got) == DNS
    want = call(op, [x.tostype("default")], attrs)
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_fallback_warns_once_and_is_correct(rng, monkeypatch):
    from mxlite.ndarray import _sparse_invoke as sparse_invoke
    monkeypatch.setattr(sparse_invoke, "_warned", set())
    x = random_input(rng, CSR, (4, 5))
    with pytest.warns(RuntimeWarning, match="'exp'.*csr"):
        y = mx.nd.exp(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.nd.exp(x)                           # the second time: silent
    np.testing.assert_allclose(y.asnumpy(), np.exp(x.asnumpy()), rtol=1e-6)
    monkeypatch.setenv("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.nd.cos(x)


def test_arithmetic_operators_follow_mxnets_sparse_functions(rng):
    a, b = random_input(rng, CSR, (4, 5)), random_input(rng, CSR, (4, 5))
    da, db = a.asnumpy(), b.asnumpy()
    assert (a + b).stype == CSR and (a * 2).stype == CSR and (a / 2).stype == CSR
    np.testing.assert_allclose((a + b).asnumpy(), da + db, rtol=1e-6)
    np.testing.assert_allclose((a - b).asnumpy(), da - db, rtol=1e-6)
    np.testing.assert_allclose((a * b).asnumpy(), da * db, rtol=1e-6)
    np.testing.assert_allclose((-a).asnumpy(), -da)
    np.testing.assert_allclose((2 * a).asnumpy(), 2 * da)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose((a + 1).asnumpy(), da + 1)
        np.testing.assert_allclose((1 - a).asnumpy(), 1 - da)
    r = random_input(rng, RSP, (4, 5))
    d = mx.nd.array(rng.standard_normal((4, 5)).astype(np.float32))
    assert (r * d).stype == RSP and (r + r).stype == RSP
    np.testing.assert_allclose((r * d).asnumpy(), r.asnumpy() * d.asnumpy(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose((d + a).asnumpy(), d.asnumpy() + da, rtol=1e-6)


def test_sparse_namespace_holds_the_ops_with_rules():
    for name in ("dot", "retain", "elemwise_add", "sqrt", "cast_storage", "sum", "add_n",
                 "slice", "zeros_like", "csr_matrix", "row_sparse_array", "zeros"):
        assert callable(getattr(mx.nd.sparse, name)), name
    assert not hasattr(mx.nd.sparse, "Convolution")
    assert callable(mx.sym.sparse.dot) and callable(mx.sym.sparse.retain)


@pytest.mark.parametrize("empty_rows", [[0], [2], [4], [3, 4], [0, 1, 2, 3, 4]])
def test_row_wise_rules_with_empty_rows(rng, empty_rows):
    """Rows that store nothing, first, inside and last (a segment sum's edge cases)."""
    dense = rng.standard_normal((5, 6)).astype(np.float32)
    dense[rng.random((5, 6)) < 0.3] = 0
    dense[empty_rows] = 0
    a = mx.nd.array(dense).tostype(CSR)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(mx.nd.sum(a, axis=1).asnumpy(), dense.sum(1), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(mx.nd.mean(a, axis=0).asnumpy(), dense.mean(0), rtol=1e-5,
                                   atol=1e-6)
        got = mx.nd.slice(a, begin=(1, 2), end=(5, 5))
        got.check_format()
        np.testing.assert_array_equal(got.asnumpy(), dense[1:5, 2:5])
        np.testing.assert_array_equal(a[3:].asnumpy(), dense[3:])


def test_where_reads_a_stored_zero_as_false_and_nan_as_true():
    """A csr condition may store explicit zeros (a user's format) and NaN: the rule reads
    them as the dense kernel reads the dense condition, repeated columns included."""
    data = np.array([0.0, np.nan, 2.0, 0.0, -1.0, 3.0, -3.0])
    cols = np.array([0, 2, 1, 1, 0, 2, 2])              # row 2: column 2 sums to 0
    cond = mx.nd.sparse.csr_matrix((data, cols, np.array([0, 2, 2, 7])), shape=(3, 3))
    x = mx.nd.array(np.arange(9).reshape(3, 3))
    y = mx.nd.array(-np.arange(9).reshape(3, 3) - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mx.nd.where(cond, x, y).asnumpy()
    dense = np.zeros((3, 3))
    np.add.at(dense, (np.repeat([0, 2], [2, 5]), cols), np.where(np.isnan(data), 1, data))
    want = np.where(dense != 0, x.asnumpy(), y.asnumpy())
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("stype", [CSR, RSP])
def test_fallback_writes_back_the_sparse_inputs_the_op_updates(stype, rng):
    """An update with no rule for these storage types runs on dense copies: the sparse
    states it updates (here rmsprop's, and sgd_mom's of a csr weight) receive the new
    values, as the dense call's states do, instead of keeping their old ones (a row_sparse
    sgd_mom_update with lazy_update=False takes its rule: the same values)."""
    dense = [rng.uniform(0.1, 1.0, (6, 3)).astype(np.float32) for _ in range(3)]
    dense[1][2] = 0                                     # a zero gradient row
    for name, n_states, attrs in (("rmsprop_update", 1, {"lr": 0.1, "gamma1": 0.9}),
                                  ("sgd_mom_update", 1, {"lr": 0.1, "momentum": 0.9,
                                                         "lazy_update": False})):
        want = [mx.nd.array(d) for d in dense[:2 + n_states]]
        getattr(mx.nd, name)(*want, out=want[0], **attrs)
        got = [mx.nd.array(d).tostype(stype) for d in dense[:2 + n_states]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # the fallback's warning
            getattr(mx.nd, name)(*got, out=got[0], **attrs)
        for g, w in zip([got[0]] + got[2:], [want[0]] + want[2:]):
            assert stype_of(g) == stype
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
