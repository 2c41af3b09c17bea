"""mx.sym: graph construction, MXNet's automatic names, listing, attributes, composition.

Expected names and orders are MXNet 1.9.1's (checked with the reference install).
"""
import copy

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.symbol.graph import SymNode, topo_order


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.sym.NameManager():
        yield


def test_operator_names_and_scalar_names_as_mxnet():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    names = [(x + y).name, (x * 2).name, (x - y).name, (2 - x).name, (x ** y).name,
             (x % y).name, (-x).name, (x / y).name, (x ** 2).name, (x == y).name,
             (x + y).name, (3 / x).name, (x > 1).name]
    assert names == ["_plus0", "_mulscalar0", "_minus0", "_rminusscalar0", "_power0",
                     "_mod0", "_mulscalar1", "_div0", "_powerscalar0", "_equal0", "_plus1",
                     "_rdivscalar0", "_greaterscalar0"]


def test_operators_route_to_registered_ops():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    ops = {s.name: s._outputs[0][0].op.name for s in
           (x + y, x - y, x * y, x / y, x ** y, x + 1, 1 - x, x < y)}
    assert ops == {"_plus0": "elemwise_add", "_minus0": "elemwise_sub", "_mul0": "elemwise_mul",
                   "_div0": "elemwise_div", "_power0": "broadcast_power",
                   "_plusscalar0": "_plus_scalar", "_rminusscalar0": "_rminus_scalar",
                   "_lesser0": "broadcast_lesser"}
    with pytest.raises(TypeError):
        x + "a"


def test_fully_connected_arguments_and_outputs():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3)
    assert fc.name == "fullyconnected0"
    assert fc.list_arguments() == ["x", "fullyconnected0_weight", "fullyconnected0_bias"]
    assert fc.list_outputs() == ["fullyconnected0_output"]
    fc1 = mx.sym.FullyConnected(data=x, num_hidden=2, no_bias=True, name="fc1")
    assert fc1.list_arguments() == ["x", "fc1_weight"]
    assert fc1.attr("num_hidden") == "2" and fc1.attr("no_bias") == "True"
    assert fc1.attr("flatten") is None          # not given: MXNet lists given parameters


def test_batchnorm_auxiliary_states():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn1")
    assert bn.list_arguments() == ["x", "fc_weight", "fc_bias", "bn1_gamma", "bn1_beta"]
    assert bn.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    assert bn.list_inputs() == ["x", "fc_weight", "fc_bias", "bn1_gamma", "bn1_beta",
                                "bn1_moving_mean", "bn1_moving_var"]
    assert bn.list_outputs() == ["bn1_output"]
    assert bn.get_children().list_outputs() == ["fc_output", "bn1_gamma", "bn1_beta",
                                                "bn1_moving_mean", "bn1_moving_var"]
    assert bn.attr_dict()["bn1_moving_var"] == {"__init__": '["one", {}]'}


def test_ops_give_their_input_variables_mxnets_initializers():
    """A variable an op creates, or one given without ``__init__``, gets the op's
    initializer (BatchNorm's moving statistics, prelu's gamma 0.25, the KL regulariser's
    moving average); one given with an initializer keeps it. Module.init_params follows."""
    x = mx.sym.var("x")
    prelu = mx.sym.LeakyReLU(x, act_type="prelu", name="p")
    assert prelu.attr_dict()["p_gamma"]["__init__"] == '["Constant", {"value": 0.25}]'
    bare, ones = mx.sym.var("g1"), mx.sym.var("g2", init=mx.init.One())
    mx.sym.LeakyReLU(x, gamma=bare, act_type="prelu")
    mx.sym.LeakyReLU(x, gamma=ones, act_type="prelu")
    assert bare.attr("__init__") == '["Constant", {"value": 0.25}]'
    assert ones.attr("__init__") == '["one", {}]'
    mv = mx.sym.var("mv")
    mx.sym.BatchNorm(x, moving_var=mv)
    assert mv.attr("__init__") == '["one", {}]'
    kl = mx.sym.IdentityAttachKLSparseReg(x, name="kl")
    assert kl.attr_dict()["kl_moving_avg"] == {"__init__": '["zero", {}]'}
    mod = mx.mod.Module(prelu, data_names=["x"], label_names=None)
    mod.bind(data_shapes=[("x", (4, 3))])
    mod.init_params(mx.init.Uniform())
    np.testing.assert_array_equal(mod.get_params()[0]["p_gamma"].asnumpy(), [0.25] * 3)


def test_group_indexing_internals():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc1")
    act = mx.sym.Activation(fc, act_type="relu", name="relu1")
    g = mx.sym.Group([fc, act])
    assert g.name is None and len(g) == 2
    assert g.list_outputs() == ["fc1_output", "relu1_output"]
    assert g[1].name == "relu1" and g["fc1_output"].name == "fc1"
    assert [s.name for s in g] == ["fc1", "relu1"]
    with pytest.raises(MXNetError, match="no output named"):
        g["nope"]
    with pytest.raises(IndexError):
        g[2]
    internals = act.get_internals()
    assert internals.list_outputs() == ["x", "fc1_weight", "fc1_bias", "fc1_output",
                                        "relu1_output"]
    assert internals["fc1_output"].list_arguments() == ["x", "fc1_weight", "fc1_bias"]
    sp = mx.sym.split(x, num_outputs=2, name="sp")
    assert sp.list_outputs() == ["sp_output0", "sp_output1"] and sp[1].name == "sp"
    with pytest.raises(MXNetError, match="group"):
        mx.sym.sin(sp)
    assert x.get_children() is None


def test_variable_attributes():
    v = mx.sym.var("v", shape=(2, 3), dtype="float64", init=mx.init.One(), lr_mult=2,
                   attr={"foo": "bar"})
    assert v.list_attr() == {"foo": "bar", "__shape__": "(2, 3)", "__lr_mult__": "2",
                             "__dtype__": "1", "__init__": '["one", {}]', "lr_mult": "2"}
    assert v.attr("__shape__") == "(2, 3)" and v.attr("missing") is None
    assert mx.sym.Variable("w", __wd_mult__=0.5).attr("__wd_mult__") == "0.5"
    with pytest.raises(ValueError):
        mx.sym.var("w", foo=1)
    with pytest.raises(TypeError):
        mx.sym.var(3)
    with mx.sym.AttrScope(ctx_group="dev1"):
        y = mx.sym.sin(v, name="s")
    assert y.attr("ctx_group") == "dev1" and mx.sym.cos(v).attr("ctx_group") is None
    y._set_attr(mood="calm")
    assert y.list_attr()["mood"] == "calm"


def test_naming_managers():
    x = mx.sym.var("x")
    with mx.sym.NameManager():
        assert mx.sym.sin(x).name == "sin0"
        assert mx.sym.sin(x).name == "sin1"
    with mx.sym.Prefix("net_"):
        assert mx.sym.FullyConnected(x, num_hidden=2).list_arguments() == [
            "x", "net_fullyconnected0_weight", "net_fullyconnected0_bias"]
    assert mx.sym.sin(x, name="given").name == "given"


def test_methods_and_binary_functions():
    x = mx.sym.var("x")
    assert x.sum(axis=1).name == "sum0" and x.reshape(shape=(2, -1)).name == "reshape0"
    assert mx.sym.maximum(x, 2).name == "_maximumscalar0"
    assert mx.sym.maximum(x, x)._outputs[0][0].op.name == "broadcast_maximum"
    with pytest.raises(MXNetError, match="out="):
        mx.sym.sin(x, out=x)
    with pytest.raises(MXNetError, match="must be a Symbol"):
        mx.sym.sin(mx.nd.ones((2,)))
    with pytest.raises(MXNetError):
        bool(x)


def test_concat_counts_inputs():
    a, b, c = (mx.sym.var(n) for n in "abc")
    s = mx.sym.Concat(a, b, c, dim=1)
    assert s.list_arguments() == ["a", "b", "c"] and s.attr("num_args") == "3"


def test_compose_and_copy():
    x = mx.sym.var("x")
    net = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    data = mx.sym.var("data")
    pre = mx.sym.tanh(data, name="pre")
    composed = net(x=pre)
    assert composed.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert net.list_arguments() == ["x", "fc_weight", "fc_bias"]     # unchanged
    c = copy.deepcopy(net)
    assert c.list_arguments() == net.list_arguments()
    assert c._outputs[0][0] is not net._outputs[0][0]
    with pytest.raises(MXNetError, match="no argument"):
        net(nope=pre)


def test_topo_order_is_depth_first_in_input_order():
    a, b = SymNode(None, "a"), SymNode(None, "b")
    s = mx.sym.sin(mx.sym.var("z"))
    op = s._outputs[0][0].op
    n1 = SymNode(op, "n1", s._outputs[0][0].attrs, [(b, 0)])
    n2 = SymNode(op, "n2", s._outputs[0][0].attrs, [(a, 0)])
    top = SymNode(mx.sym.elemwise_add.op, "top", mx.sym.elemwise_add.op.parse_attrs({}),
                  [(n1, 0), (n2, 0)])
    assert [n.name for n in topo_order([(top, 0), (a, 0)])] == ["b", "n1", "a", "n2", "top"]
    deep = mx.sym.var("d")
    for _ in range(3000):                   # no recursion limit
        deep = deep + 1
    assert len(deep.list_arguments()) == 1


# ---- shape and type inference ------------------------------------------------------------
def _mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    bn = mx.sym.BatchNorm(fc1, name="bn1")
    act = mx.sym.Activation(bn, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def test_infer_shape_mlp_in_mxnet_order():
    net = _mlp()
    args, outs, aux = net.infer_shape(data=(8, 4))
    assert dict(zip(net.list_arguments(), args)) == {
        "data": (8, 4), "fc1_weight": (16, 4), "fc1_bias": (16,), "bn1_gamma": (16,),
        "bn1_beta": (16,), "fc2_weight": (10, 16), "fc2_bias": (10,), "softmax_label": (8,)}
    assert outs == [(8, 10)] and aux == [(16,), (16,)]
    assert net.infer_shape((8, 4)) == (args, outs, aux)          # positional


def test_infer_shape_partial_and_incomplete():
    net = _mlp()
    assert net.infer_shape() == (None, None, None)
    args, outs, aux = net.infer_shape_partial()
    assert args == [(), (), (16,), (), (), (), (10,), ()] and outs == [()] and aux == [(), ()]


def test_infer_shape_convolution_and_backward_from_outputs():
    x = mx.sym.var("data")
    c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv")
    args, outs, _ = c.infer_shape(data=(2, 3, 10, 10))
    assert args == [(2, 3, 10, 10), (8, 3, 3, 3), (8,)] and outs == [(2, 8, 10, 10)]
    a, b = mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.sin(a) + b                 # b's shape flows back through elemwise_add
    assert y.infer_shape(a=(2, 5)) == ([(2, 5), (2, 5)], [(2, 5)], [])
    assert y.infer_shape(b=(2, 5))[0] == [(2, 5), (2, 5)]


def test_variable_shape_and_dtype_seed_inference():
    v = mx.sym.var("v", shape=(3, 4), dtype="float64")
    y = mx.sym.sum(v * 2, axis=1)
    assert y.infer_shape() == ([(3, 4)], [(3,)], [])
    assert y.infer_type() == ([np.float64], [np.float64], [])
    hint = mx.sym.var("h", shape=(0, 4))           # 0: unknown dimension, only a hint
    assert hint.infer_shape() == (None, None, None)


def test_inconsistent_shapes_name_the_node_and_both_shapes():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with pytest.raises(MXNetError, match=r"_plus0.*\(2, 3\).*\(3, 2\)"):
        (a + b).infer_shape(a=(2, 3), b=(3, 2))
    s = mx.sym.sin(a, name="s1")
    t = mx.sym.elemwise_add(s, mx.sym.FullyConnected(a, num_hidden=7, name="fc"), name="add")
    with pytest.raises(MXNetError, match=r"'add'.*\(4, 3\).*\(4, 7\)"):
        t.infer_shape(a=(4, 3))
    w = mx.sym.var("w")                    # w's shape comes from FullyConnected's rule
    fc = mx.sym.FullyConnected(a, weight=w, num_hidden=7, no_bias=True, name="fc2")
    g = mx.sym.Group([fc, mx.sym.elemwise_add(w, mx.sym.var("d"), name="add2")])
    with pytest.raises(MXNetError, match=r"'add2'.*\(7, 3\).*\(5, 5\)"):
        g.infer_shape(a=(4, 3), d=(5, 5))
    with pytest.raises(MXNetError, match="not an input"):
        a.infer_shape(zz=(1,))


def test_infer_type_defaults_from_known_inputs():
    net = _mlp()
    args, outs, aux = net.infer_type(data="float64")
    assert set(args) == {np.float64} and outs == [np.float64] and aux == [np.float64] * 2
    args, outs, aux = net.infer_type(data=np.float32)
    assert set(args) == {np.float32}
    assert net.infer_type() == (None, None, None)
    partial = net.infer_type_partial(fc2_weight="float64")
    assert partial[0][net.list_arguments().index("fc2_weight")] == np.float64
    # element-wise typed ops pass a known dtype back to their inputs, layer by layer
    # (MXNet's ElemwiseType): the data is float64 too
    assert partial[0][0] == np.float64
    i = mx.sym.var("i")
    assert mx.sym.cast(i, dtype="int32").infer_type(i="float32")[1] == [np.int32]
    mixed = i + mx.sym.cast(i, dtype="float64")          # mixed dtypes promote (NumPy)
    assert mixed.infer_type(i="float32") == ([np.float32], [np.float64], [])


def test_sym_mirrors_nd():
    """Every op function of mx.nd (and its namespaces) is in mx.sym for the same op."""
    for ns in ("", "_internal", "random", "contrib", "linalg"):
        if ns and not hasattr(mx.nd, ns):
            continue
        nd, sym = (getattr(m, ns) if ns else m for m in (mx.nd, mx.sym))
        ops = {k: f.op for k, f in vars(nd).items() if hasattr(f, "op")}
        assert ops and ops == {k: vars(sym)[k].op for k in ops}, ns


def test_module_level_names_and_astype():
    assert mx.name.NameManager is mx.sym.NameManager and mx.AttrScope is mx.sym.AttrScope
    x = mx.sym.var("x")
    y = x.astype("float64")
    assert y._outputs[0][0].op.name == "cast" and y.infer_type(x="float32")[1] == [np.float64]


def test_attr_keyword_repr_and_get_inputs():
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=2, name="fc", attr={"__lr_mult__": "0.5"})
    assert fc.attr("__lr_mult__") == "0.5" and fc.list_attr()["lr_mult"] == "0.5"
    with pytest.raises(MXNetError, match="attr must be a dict"):
        mx.sym.sin(x, attr="no")
    g = mx.sym.Group([fc, mx.sym.sin(x, name="s")])
    assert repr(g) == "<Symbol group [fc, s]>" and repr(fc) == "<Symbol fc>"
    assert g.get_inputs().list_outputs() == ["x", "fc_weight", "fc_bias"]


def test_current_managers_are_class_properties():
    with mx.name.NameManager() as nm:
        assert mx.name.NameManager.current is nm
        assert nm.get(None, "conv") == "conv0" and nm.get("given", "conv") == "given"
    assert mx.name.NameManager.current is not nm
    assert mx.AttrScope.current.get({"a": "1"}) == {"a": "1"}
    with mx.AttrScope(group="g"):
        assert mx.AttrScope.current.get(None) == {"group": "g"}
        with mx.AttrScope(stage="2"):
            assert mx.sym.var("v").list_attr() == {"group": "g", "stage": "2"}
    with pytest.raises(ValueError):
        mx.AttrScope(x=1)


def test_layer_attributes_reach_created_variables_as_mxnet():
    """attr= on a layer and AttrScope reach the weights MXNet creates (what the optimizer's
    lr_mult reads); ctx_group/lr_mult are stored as __key__ and listed both ways (MXNet
    1.9.1's attr_dict for these calls)."""
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=2, name="fc", attr={"__lr_mult__": "0.5"})
    both = {"num_hidden": "2", "__lr_mult__": "0.5", "lr_mult": "0.5"}
    assert fc.attr_dict() == {"fc_weight": both, "fc_bias": both, "fc": both}
    with mx.AttrScope(ctx_group="g1"):
        fc2 = mx.sym.FullyConnected(x, num_hidden=2, name="fc2")
        v = mx.sym.var("v")
    both = {"num_hidden": "2", "__ctx_group__": "g1", "ctx_group": "g1"}
    assert fc2.attr_dict() == {"fc2_weight": both, "fc2_bias": both, "fc2": both}
    assert v.attr_dict() == {"v": {"__ctx_group__": "g1", "ctx_group": "g1"}}
    opt = mx.optimizer.SGD(sym=fc, param_idx2name={0: "fc_weight", 1: "x"})
    assert opt.lr_mult == {"fc_weight": 0.5, "fc_bias": 0.5}


# ---- a node with several outputs is one symbol, not a group ---------------------------------
BN_INPUTS = ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]


def _bn3(**attr):
    return mx.sym.BatchNorm(mx.sym.var("x"), output_mean_var=True, name="bn", attr=attr)


def test_get_children_lists_each_nodes_inputs_once():
    """MXNet 1.9.1 visits each output's node once: BatchNorm's three outputs have its five
    inputs as children (they came back fifteen times), a split's outputs its one input.
    Distinct nodes each list theirs, and a node's repeated input stays repeated."""
    x, y = mx.sym.var("x"), mx.sym.var("y")
    bn = _bn3()
    assert len(bn) == 3
    assert bn.get_children().list_outputs() == BN_INPUTS
    sp = mx.sym.split(x, num_outputs=3, name="sp")
    assert sp.get_children().list_outputs() == ["x"]
    assert mx.sym.Group([sp[2], y * 2, sp[0]]).get_children().list_outputs() == ["x", "y"]
    assert mx.sym.Group([x + y, x * y]).get_children().list_outputs() == ["x", "y", "x", "y"]
    assert (x * x).get_children().list_outputs() == ["x", "x"]


def test_listings_of_a_multi_output_node_name_each_node_once():
    bn = _bn3()
    assert bn.get_internals().list_outputs() == BN_INPUTS + ["bn_output", "bn_mean", "bn_var"]
    g = mx.sym.Group([bn, bn[0] + 1, bn[2]])
    assert g.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert g.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert g.list_inputs() == BN_INPUTS
    assert [n for n in g.get_internals().list_outputs() if n.startswith("bn_")] == \
        ["bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output", "bn_mean",
         "bn_var"]


def test_name_and_attributes_of_a_multi_output_node():
    """MXNet reads the name and attributes of a symbol whose outputs are all one node's."""
    bn = _bn3(tag="t")
    assert bn.name == "bn" and repr(bn) == "<Symbol bn>"
    assert bn.attr("tag") == "t" and bn.list_attr()["tag"] == "t"
    bn._set_attr(tag="u")
    assert bn[1].attr("tag") == "u"
    g = mx.sym.Group([bn, mx.sym.var("y")])
    assert g.name is None and repr(g) == "<Symbol group [bn, bn, bn, y]>"
    with pytest.raises(MXNetError, match=r"attr: .*\['bn', 'y'\]"):
        g.attr("tag")


def test_shape_methods_accept_inplace_as_mxnet():
    """MXNet's Symbol.flatten/squeeze/expand_dims take inplace= (an NDArray option that
    has no effect on a symbol)."""
    x = mx.sym.var("x")
    assert x.flatten(inplace=True).infer_shape(x=(2, 3, 4))[1] == [(2, 12)]
    assert x.squeeze(axis=1, inplace=True).infer_shape(x=(2, 1, 4))[1] == [(2, 4)]
    assert x.expand_dims(axis=0, inplace=True).infer_shape(x=(2,))[1] == [(1, 2)]


def test_gen_atomic_symbol_is_the_op_alone_ready_to_compose():
    data, p, h0, h1 = (mx.sym.var(n) for n in ("data", "param", "h0", "h1"))
    s = mx.sym.RNN(data, p, h0, h1, state_size=4, num_layers=1, state_outputs=True,
                   mode="lstm", name="lstm")
    atom = s._gen_atomic_symbol()
    assert atom.list_arguments() == ["data", "parameters", "state", "state_cell"]
    assert atom.list_outputs() == s.list_outputs()
    again = atom(data=data, parameters=p, state=h0, state_cell=h1)
    assert again.list_arguments() == ["data", "param", "h0", "h1"]
    assert again.tojson() == s.tojson()
    with pytest.raises(MXNetError, match="_gen_atomic_symbol"):
        data._gen_atomic_symbol()
    with pytest.raises(MXNetError, match="_gen_atomic_symbol"):
        mx.sym.Group([s[0], mx.sym.exp(data)])._gen_atomic_symbol()
