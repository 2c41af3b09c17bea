"""MXNet 1.x symbol JSON: files written by MXNet 1.9.1 load in mxlite with MXNet's argument
lists and inferred shapes/types; mxlite writes the same JSON for the same graph.

Fixtures: tests/fixtures/symbols-mxnet.json (made by make_symbol_fixtures.py with MXNet
1.9.1: each graph's JSON and what MXNet reported for it) and the checkpoints'
``*-symbol.json`` (make_mxnet_fixtures.py).
"""
import json
import os
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops.registry import REGISTRY
from mxlite.symbol.json_format import _FROM_MXNET

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
with open(os.path.join(HERE, "symbols-mxnet.json")) as _f:
    MXNET = json.load(_f)


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.sym.NameManager():
        yield


@pytest.mark.parametrize("name", sorted(MXNET))
def test_mxnet_json_loads_with_mxnets_lists_and_inference(name):
    ref = MXNET[name]
    sym = mx.sym.load_json(ref["json"])
    assert sym.list_arguments() == ref["arguments"]
    assert sym.list_outputs() == ref["outputs"]
    assert sym.list_auxiliary_states() == ref["aux"]
    shapes = {k: tuple(v) for k, v in ref["shapes"].items()}
    got = sym.infer_shape(**shapes)
    assert [[list(s) for s in v] for v in got] == ref["infer_shape"]
    types = sym.infer_type(**{k: "float64" for k in shapes})
    assert [[np.dtype(t).name for t in v] for v in types] == ref["infer_type"]


def _normalized(text):
    """A JSON graph with op names made canonical (MXNet writes ``Flatten``, mxlite its
    canonical ``flatten``: aliases of one op), parameter strings in one form (MXNet writes
    the caller's ``str(value)``, ``axis=1`` as ``'1'``; mxlite the parsed value, ``'(1,)'``:
    both read back to one value) and without node_row_ptr (MXNet's counts include its own
    hidden outputs; MXNet recomputes them on load)."""
    graph = json.loads(text)
    for node in graph["nodes"]:
        if node["op"] != "null":
            attrs = node.get("attrs", {})
            if node["op"] in _FROM_MXNET:             # MXNet's _zeros is mxlite's zeros
                node["op"], renames = _FROM_MXNET[node["op"]]
                attrs = node["attrs"] = {renames.get(k, k): v for k, v in attrs.items()}
            op = REGISTRY[node["op"]]
            node["op"] = op.name
            params = {k: v for k, v in attrs.items() if k in op._param_map}
            attrs.update(op.format_attrs({k: op.parse_attrs(params)[k] for k in params}))
    del graph["node_row_ptr"]
    return graph


def _build(name):
    """The fixture graphs, built with mx.sym exactly as make_symbol_fixtures.py builds them
    with MXNet."""
    sym = mx.sym
    if name == "elementwise":
        x = sym.var("x")
        return (sym.sin(x) * 2 + x / 3 - sym.exp(-x)) ** 2
    if name == "creation":
        return sym.Group([sym.zeros(shape=(2, 3), dtype="float32", name="z"),
                          sym.full(shape=(2, 3), val=3.5, dtype="float32", name="f"),
                          sym.arange(start=0, stop=6, step=2, repeat=1, infer_range=False,
                                     dtype="float32", name="r"),
                          sym.ones(shape=(1, 3), dtype="float64", name="o")])
    if name == "multi":
        a = sym.var("a", shape=(4, 5), dtype="float64", lr_mult=2.0)
        b = sym.var("b")
        cat = sym.Concat(a, b, dim=1, name="cat")
        sp = sym.split(cat, num_outputs=2, axis=1, name="sp")
        return sym.Group([sp[1], sym.sum(cat, axis=1, keepdims=True, name="s"),
                          sym.slice(cat, begin=(0, None), end=(2, -1), name="sl"),
                          sym.transpose(sp[0], axes=(1, 0), name="t")])
    d = sym.var("data")
    c = sym.Convolution(d, kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1),
                        no_bias=True, name="c1")
    bn = sym.BatchNorm(c, fix_gamma=False, eps=1e-3, momentum=0.8, name="bn")
    act = sym.LeakyReLU(bn, act_type="leaky", slope=0.1, name="lrelu")
    pool = sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="p")
    drop = sym.Dropout(sym.flatten(pool, name="f"), p=0.25, name="drop")
    fc = sym.FullyConnected(drop, num_hidden=5, name="fc")
    return sym.LinearRegressionOutput(fc, name="reg")


@pytest.mark.parametrize("name", sorted(MXNET))
def test_mxlite_writes_mxnets_json(name):
    """Same graph, same names (automatic ones included), same attribute strings, same
    input versions (1 for BatchNorm's mutated moving statistics)."""
    assert _normalized(_build(name).tojson()) == _normalized(MXNET[name]["json"])


@pytest.mark.parametrize("name", sorted(MXNET))
def test_round_trip(name):
    sym = mx.sym.load_json(MXNET[name]["json"])
    text = sym.tojson()
    again = mx.sym.load_json(text)
    assert again.tojson() == text
    assert pickle.loads(pickle.dumps(sym)).tojson() == text


@pytest.mark.parametrize("prefix, data, aux", [("mlp", (2, 4), []),
                                               ("convnet", (2, 3, 6, 6), [(3,), (3,)])])
def test_checkpoint_symbols(prefix, data, aux, tmp_path):
    path = os.path.join(HERE, f"{prefix}-symbol.json")
    sym = mx.sym.load(path)
    assert sym.list_outputs() == ["softmax_output"]
    assert sym.list_arguments()[-1] == "softmax_label"
    args, outs, auxs = sym.infer_shape(data=data)
    assert args[-1] == (2,) and outs[0][0] == 2 and auxs == aux
    with open(path) as f:
        assert _normalized(sym.tojson()) == _normalized(f.read())
    sym.save(str(tmp_path / "s.json"))
    assert mx.sym.load(str(tmp_path / "s.json")).tojson() == sym.tojson()


def test_old_param_and_attr_keys():
    text = json.dumps({
        "nodes": [{"op": "null", "name": "x", "param": {}, "attr": {"__shape__": "(2, 3)"},
                   "inputs": []},
                  {"op": "sum", "name": "s", "param": {"axis": "1"},
                   "attr": {"ctx_group": "g"}, "inputs": [[0, 0]]}],
        "arg_nodes": [0], "heads": [[1, 0]]})
    sym = mx.sym.load_json(text)
    assert sym.infer_shape() == ([(2, 3)], [(2,)], [])
    assert sym.attr("axis") == "(1,)" and sym.attr("ctx_group") == "g"


def _graph(nodes, heads=((1, 0, 0),)):
    return json.dumps({"nodes": nodes, "arg_nodes": [0], "heads": [list(h) for h in heads]})


X = {"op": "null", "name": "x", "inputs": []}


@pytest.mark.parametrize("text, match", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "'nodes' and 'heads'"),
    (_graph([X, {"op": "no_such_op", "name": "n1", "inputs": [[0, 0, 0]]}]),
     "'n1'.*unknown operator 'no_such_op'"),
    (_graph([X, {"op": "sin", "name": "n1", "inputs": [[5, 0, 0]]}]), "'n1'.*refers to node 5"),
    (_graph([X, {"op": "sin", "name": "n1", "inputs": [[0, 3, 0]]}]), "'n1'.*output 3"),
    (_graph([X, {"op": "sin", "name": "n1", "inputs": [[0, 0, 0], [0, 0, 0]]}]),
     "'n1'.*1 input"),
    (_graph([X, {"op": "sum", "name": "n1", "attrs": {"axis": "x"}, "inputs": [[0, 0, 0]]}]),
     "'n1'.*axis"),
    (_graph([X, {"op": "sin", "name": "n1", "attrs": {"bogus": "1"}, "inputs": [[0, 0, 0]]}]),
     "'n1'.*'bogus' is not a parameter"),
    (_graph([X, {"op": "sin", "name": "n1", "inputs": [[0, 0, 0]]}], heads=((7, 0, 0),)),
     "heads.*node 7"),
    (_graph([X, {"op": "sin", "name": 3, "inputs": []}]), "node 1"),
    (_graph([X], heads=()), "empty"),
])
def test_bad_json_raises_naming_the_node(text, match):
    with pytest.raises(MXNetError, match=match):
        mx.sym.load_json(text)


def test_load_errors(tmp_path):
    with pytest.raises(MXNetError, match="cannot read"):
        mx.sym.load(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(MXNetError):
        mx.sym.load(str(bad))
    good = os.path.join(HERE, "mlp-symbol.json")
    with open(good, "rb") as f:
        truncated = f.read()[:300]
    (tmp_path / "t.json").write_bytes(truncated)
    with pytest.raises(MXNetError, match="not valid JSON"):
        mx.sym.load(str(tmp_path / "t.json"))


def test_speed_hints_ride_along_as_attributes():
    text = _graph([{"op": "null", "name": "data", "inputs": []},
                   {"op": "null", "name": "w", "inputs": []},
                   {"op": "Convolution", "name": "c",
                    "attrs": {"kernel": "(1, 1)", "num_filter": "2", "no_bias": "True",
                              "workspace": "1024", "cudnn_tune": "off"},
                    "inputs": [[0, 0, 0], [1, 0, 0]]}], heads=((2, 0, 0),))
    sym = mx.sym.load_json(text)
    assert sym.infer_shape(data=(1, 3, 4, 4))[1] == [(1, 2, 4, 4)]
    assert json.loads(sym.tojson())["nodes"][2]["attrs"]["workspace"] == "1024"


def test_mxnet_creation_ops_load_and_run():
    """MXNet writes mx.sym.zeros/full/arange/ones as _zeros/_full (value=)/_arange/_ones."""
    sym = mx.sym.load_json(MXNET["creation"]["json"])
    z, f, r, o = sym.eval()
    assert z.asnumpy().tolist() == [[0.0] * 3] * 2 and f.asnumpy().tolist() == [[3.5] * 3] * 2
    assert r.asnumpy().tolist() == [0.0, 2.0, 4.0]
    assert o.dtype == np.float64 and o.asnumpy().tolist() == [[1.0] * 3]
    nodes = json.loads(sym.tojson())["nodes"]
    assert [n["op"] for n in nodes] == ["_zeros", "_full", "_arange", "_ones"]
    assert nodes[1]["attrs"]["value"] == "3.5"


def test_pre_09_json_without_auxiliary_inputs():
    """MXNet < 0.9 listed BatchNorm with 3 inputs; its moving statistics are created."""
    text = json.dumps({
        "nodes": [{"op": "null", "name": "data", "inputs": []},
                  {"op": "null", "name": "bn_gamma", "inputs": []},
                  {"op": "null", "name": "bn_beta", "inputs": []},
                  {"op": "BatchNorm", "name": "bn", "param": {"eps": "0.001"},
                   "inputs": [[0, 0], [1, 0], [2, 0]]}],
        "arg_nodes": [0, 1, 2], "heads": [[3, 0]]})
    sym = mx.sym.load_json(text)
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert sym.infer_shape(data=(2, 3))[2] == [(3,), (3,)]


def _legacy_reshape_graph(*params):
    """A pre-1.0 file: ``param`` keys, no ``attrs`` or version; ``data`` then one Reshape
    per entry of ``params``, each reading the one before."""
    nodes = [{"op": "null", "name": "data", "param": {}, "inputs": [], "backward_source_id": -1}]
    for k, p in enumerate(params):
        nodes.append({"op": "Reshape", "name": f"reshape{k}", "param": p,
                      "inputs": [[k, 0]], "backward_source_id": -1})
    return json.dumps({"nodes": nodes, "arg_nodes": [0], "heads": [[len(params), 0]]})


def test_pre_10_reshape_with_target_shape_and_keep_highest():
    """MXNet 1.9.1's rule for the deprecated keys: target_shape is the new shape with one 0
    inferred from the size; keep_highest replaces its first entry by the input's first
    dimension. (2, 3, 4) -> target (0, 4): 24 / 4 = 6, so (6, 4); then keep_highest with
    target (1, 2, 0): (6, 2, 24 / 12) = (6, 2, 2)."""
    sym = mx.sym.load_json(_legacy_reshape_graph(
        {"target_shape": "(0,4)", "keep_highest": "False"},
        {"target_shape": "(1,2,0)", "keep_highest": "True"}))
    assert sym.infer_shape(data=(2, 3, 4)) == ([(2, 3, 4)], [(6, 2, 2)], [])
    internals = sym.get_internals()
    assert internals["reshape0_output"].infer_shape(data=(2, 3, 4))[1] == [(6, 4)]
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = sym.bind(mx.cpu(), {"data": mx.nd.array(x)}).forward()[0]
    np.testing.assert_array_equal(out.asnumpy(), x.reshape(6, 2, 2))
    again = mx.sym.load_json(sym.tojson())       # the keys are written back as given
    assert again.infer_shape(data=(5, 4))[1] == [(5, 2, 2)]
    assert json.loads(sym.tojson())["nodes"][2]["attrs"] == {"target_shape": "(1, 2, 0)",
                                                             "keep_highest": "True"}


@pytest.mark.parametrize("param, data, words", [
    ({"target_shape": "(5,0)"}, (2, 3, 4), ["(5, 0)", "(2, 3, 4)", "infer"]),
    ({"target_shape": "(7,8)"}, (2, 3, 4), ["(7, 8)", "size 24"]),
    ({"target_shape": "(0,0)"}, (2, 3, 4), ["(0, 0)", "size 24"]),
    ({"target_shape": "()", "keep_highest": "True"}, (2, 3), ["keep_highest"]),
])
def test_pre_10_reshape_that_cannot_apply_names_the_shapes(param, data, words):
    sym = mx.sym.load_json(_legacy_reshape_graph(param))
    with pytest.raises(MXNetError) as err:
        sym.infer_shape(data=data)
    for w in ["reshape", "target_shape"] + words:
        assert w in str(err.value)


# ---- remove_amp_cast ---------------------------------------------------------------------------
def _amp_net():
    x, q = mx.sym.var("x"), mx.sym.var("q")
    pair = mx.sym.amp_multicast(x, q, num_outputs=2)
    return mx.sym.relu(mx.sym.amp_cast(pair[0] * pair[1], dtype="float16"), name="r")


def test_remove_amp_cast_rewires_uses_to_the_uncast_inputs():
    net = _amp_net()
    graph = json.loads(net.tojson())
    assert [n["op"] for n in graph["nodes"]] == ["null", "null", "elemwise_mul", "relu"]
    kept = json.loads(net.tojson(remove_amp_cast=False))
    assert [n["op"] for n in kept["nodes"]] == [
        "null", "null", "amp_multicast", "elemwise_mul", "amp_cast", "relu"]
    # the stripped graph computes in the inputs' dtype, the same values here
    args = {"x": mx.nd.array([1.0, -2.0]), "q": mx.nd.array([3.0, 4.0])}
    plain = mx.sym.load_json(net.tojson()).eval(mx.cpu(), **args)[0]
    assert plain.dtype == np.float32
    np.testing.assert_array_equal(plain.asnumpy(), [3.0, 0.0])
    # the symbol itself is unchanged, and a pickle keeps the casts
    assert "amp_cast" in pickle.loads(pickle.dumps(net)).tojson(remove_amp_cast=False)
    assert net.list_outputs() == ["r_output"]


def test_save_and_checkpoint_pass_remove_amp_cast(tmp_path):
    net = _amp_net()
    net.save(str(tmp_path / "a.json"), remove_amp_cast=False)
    assert "amp_cast" in (tmp_path / "a.json").read_text()
    mx.model.save_checkpoint(str(tmp_path / "m"), 0, net, {}, {})
    assert "amp_cast" not in (tmp_path / "m-symbol.json").read_text()
