"""Shape and type inference over symbol graphs (``mxlite/symbol/infer.py``): MXNet's legacy
partial shapes (0: an unknown dimension, ``()``: an unknown shape), NumPy-shape semantics
(-1 and None) and the consistency of every constraint. Expected shapes are worked out by
hand from each op's shape formula."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _args(sym, arg_shapes):
    return dict(zip(sym.list_arguments(), arg_shapes))


def test_zero_dimensions_of_variables_unify_through_elementwise_ops():
    a = mx.sym.var("a", shape=(0, 10))
    b = mx.sym.var("b", shape=(12, 0))
    arg_shapes, out_shapes, _ = (a + b).infer_shape()
    assert arg_shapes == [(12, 10), (12, 10)] and out_shapes == [(12, 10)]


def test_partial_shapes_flow_forwards_and_backwards_through_layers():
    a = mx.sym.var("a", shape=(0, 10))
    fc = mx.sym.FullyConnected(a, num_hidden=21, name="fc")
    d = fc + mx.sym.var("c", shape=(5, 0))
    assert _args(d, d.infer_shape()[0]) == {"a": (5, 10), "fc_weight": (21, 10),
                                            "fc_bias": (21,), "c": (5, 21)}
    conv = mx.sym.Convolution(mx.sym.var("x", shape=(0, 10, 0, 0)), num_filter=21,
                              kernel=(3, 3), pad=(1, 1), name="cv")
    e = conv + mx.sym.var("y", shape=(5, 21, 32, 32))
    assert _args(e, e.infer_shape()[0])["x"] == (5, 10, 32, 32)
    cat = mx.sym.Concat(mx.sym.var("p", shape=(0, 10)), mx.sym.var("q", shape=(0, 5)), dim=1)
    f = mx.sym.var("r", shape=(2, 0)) + cat
    assert _args(f, f.infer_shape()[0]) == {"r": (2, 15), "p": (2, 10), "q": (2, 5)}


def test_given_shapes_with_zero_dimensions_and_partial_results():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    z = mx.sym.dot(x, y)
    assert z.infer_shape_partial(x=(0, 3, 4), y=(4, 5)) == \
        ([(0, 3, 4), (4, 5)], [(0, 3, 5)], [])
    # incomplete: infer_shape gives nothing, infer_shape_partial what it knows
    assert z.infer_shape(x=(0, 3, 4), y=(4, 5)) == (None, None, None)
    assert mx.sym.sin(x).infer_shape_partial() == ([()], [()], [])


def test_numpy_shape_semantics_use_minus_one_and_none():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with mx.np_shape(True):
        assert mx.sym.sin(x).infer_shape_partial() == ([None], [None], [])
        assert mx.sym.dot(x, y).infer_shape_partial(x=(-1, 3, 4), y=(4, 5))[1] == [(-1, 3, 5)]
        # 0 is a real (empty) dimension here
        assert mx.sym.dot(x, y).infer_shape(x=(0, 3, 4), y=(4, 5))[1] == [(0, 3, 5)]


def test_every_constraint_is_checked_not_only_unknowns_filled():
    """transpose(V) + (x + V) needs V square: both sides of the outer add become known
    from elsewhere, and their disagreement is still an error."""
    v, x = mx.sym.var("V"), mx.sym.var("x")
    s = mx.sym.transpose(v) + (x + v)
    with pytest.raises(MXNetError, match=r"shape inconsistent"):
        s.infer_shape(x=(2, 3))
    with pytest.raises(MXNetError, match=r"_plus\d+.*\(3, 2\).*\(2, 3\)"):
        s.infer_shape(V=(2, 3))
    assert s.infer_shape(x=(3, 3))[1] == [(3, 3)]
    a = mx.sym.var("a", shape=(2, 0))
    with pytest.raises(MXNetError, match=r"shape inconsistent.*\(2, \?\)|\(2, \?\).*inconsistent"):
        (a + mx.sym.var("b", shape=(3, 4))).infer_shape()


def test_identity_with_attr_like_rhs_carries_a_shape_backwards():
    w = mx.sym.var("weight")
    wt = mx.sym.broadcast_add(w, mx.sym.var("wshift", shape=(1,)))
    wt = mx.sym._internal._identity_with_attr_like_rhs(wt, w)
    net = mx.sym.FullyConnected(mx.sym.var("data"), weight=wt, num_hidden=11, no_bias=True)
    assert _args(net, net.infer_shape(data=(7, 100))[0])["weight"] == (11, 100)
    out = mx.nd._internal._identity_with_attr_like_rhs(mx.nd.array([1., 2.]), mx.nd.zeros(2))
    np.testing.assert_array_equal(out.asnumpy(), [1., 2.])


def test_partial_types_flow_both_ways():
    data = mx.sym.var("data")
    mlp = mx.sym.FullyConnected(mx.sym.Cast(data, dtype="float32"), num_hidden=8, name="fc")
    # Cast's output type does not depend on its input's, which stays unknown
    arg, out, aux = mlp.infer_type_partial()
    assert arg == [None, np.float32, np.float32] and out == [np.float32] and aux == []
    assert mlp.infer_type() == (None, None, None)
    # an element-wise op's known output type gives its inputs theirs
    x, y = mx.sym.var("x"), mx.sym.var("y")
    s = mx.sym.Cast(x + y, dtype="float64") + mx.sym.var("z", dtype="float64")
    assert s.infer_type_partial() == ([None, None, np.float64], [np.float64], [])
    t = mx.sym.elemwise_add(x + y, mx.sym.var("z", dtype="float16"))
    assert t.infer_type_partial()[0] == [np.float16, np.float16, np.float16]


def test_numpy_shape_graphs_are_marked_and_legacy_graphs_converted_on_load():
    import json
    net = mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.var("weight", shape=(16, 0)),
                                num_hidden=16, name="fc")
    legacy = net.tojson()
    assert "is_np_shape" not in json.loads(legacy)["attrs"]
    with mx.np_shape(True):
        assert json.loads(net.tojson())["attrs"]["is_np_shape"] == ["int", 1]
        # a legacy file's 0 is an unknown dimension, also read under NumPy shapes
        loaded = mx.sym.load_json(legacy)
        assert loaded.infer_shape(data=(4, 7))[0] == [(4, 7), (16, 7), (16,)]
        assert loaded.get_internals()["weight"].attr("__shape__") == "(16, -1)"
    assert mx.sym.load_json(legacy).infer_shape(data=(4, 7))[0][1] == (16, 7)


def test_zero_dims_of_created_arrays_are_inferred_from_the_graph():
    """MXNet 1.x's symbols read a 0 in ``zeros``/``ones``/``full``/a sampler's ``shape`` as
    unknown: a ``begin_state`` of shape (0, H) gets its batch size from the data, in
    infer_shape, bind and eval; the results equal those of states made from the data."""
    cell = mx.rnn.LSTMCell(4, prefix="l_")
    states = cell.begin_state()
    out, _ = cell.unroll(3, mx.sym.var("data"), begin_state=states, layout="NTC",
                         merge_outputs=True)
    assert out.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 4)]
    rng = np.random.RandomState(3)
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in
            zip(out.list_arguments(), out.infer_shape(data=(2, 3, 5))[0])}
    plain, _ = cell.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    want = plain.eval(**args)[0].asnumpy()
    np.testing.assert_allclose(out.eval(**args)[0].asnumpy(), want, rtol=1e-6)
    exe = out.bind(mx.cpu(), args)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-6)
    # a sampler and full alike; a dimension nothing determines is an error at bind
    x = mx.sym.var("x")
    noisy = x + mx.sym.random.uniform(shape=(0, 3)) * 0 + mx.sym.full((2, 0), 1.5)
    assert noisy.infer_shape(x=(2, 3))[1] == [(2, 3)]
    np.testing.assert_array_equal(noisy.eval(x=mx.nd.ones((2, 3)))[0].asnumpy(),
                                  np.full((2, 3), 2.5))
    with pytest.raises(MXNetError, match="unknown \\(0\\) dimensions"):
        mx.sym.zeros((0, 3)).eval()
    assert mx.nd.zeros((0, 3)).shape == (0, 3)          # NDArrays: an empty array
