"""Blocks: MXNet's names and prefixes, collect_params, save/load_parameters, hybridize
(cached graph, gradients of every order), export -> SymbolBlock.imports, and the model
exported by MXNet 1.9.1's Gluon."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.base import MXNetError
from mxlite.gluon import nn

nd = mx.nd
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")


def small_net(prefix=None):
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(8, activation="tanh"), nn.Dense(3))
    return net


def data(seed=0, shape=(2, 2, 6, 6)):
    return nd.array(np.random.RandomState(seed).standard_normal(shape))


def test_names_and_prefixes():
    with mx.name.NameManager():
        net = small_net()
        other = nn.Dense(2)
    assert net.prefix == "hybridsequential0_" and net.name == "hybridsequential0"
    assert other.prefix == "dense0_"
    assert list(net.collect_params().keys()) == [
        "hybridsequential0_conv0_weight", "hybridsequential0_conv0_bias",
        "hybridsequential0_batchnorm0_gamma", "hybridsequential0_batchnorm0_beta",
        "hybridsequential0_batchnorm0_running_mean", "hybridsequential0_batchnorm0_running_var",
        "hybridsequential0_dense0_weight", "hybridsequential0_dense0_bias",
        "hybridsequential0_dense1_weight", "hybridsequential0_dense1_bias"]
    assert list(net.collect_params(".*dense1.*|.*gamma").keys()) == [
        "hybridsequential0_batchnorm0_gamma", "hybridsequential0_dense1_weight",
        "hybridsequential0_dense1_bias"]
    assert net[5].act.prefix == "hybridsequential0_dense0_tanh_"
    assert len(net) == 7 and isinstance(net[1:3], nn.HybridSequential)


def test_custom_block_and_sharing():
    class Net(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.a = nn.Dense(3, in_units=2)
                self.b = nn.Dense(3, in_units=2, params=self.a.params)

        def forward(self, x):
            return self.a(x) + self.b(x)

    net = Net(prefix="net_")
    assert list(net.collect_params().keys()) == ["net_dense0_weight", "net_dense0_bias"]
    net.initialize()
    x = data(shape=(4, 2))
    np.testing.assert_allclose(net(x).asnumpy(), 2 * net.a(x).asnumpy(), rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="HybridBlock"):
        nn.HybridSequential().add(Net())
    with pytest.raises(TypeError, match="Changing attribute type"):
        net.a = 3


def test_hybridize_trace_and_cache():
    net = small_net()
    net.initialize(mx.init.Xavier())
    x = data()
    ref = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_array_equal(net(x).asnumpy(), ref)
    np.testing.assert_array_equal(net(x).asnumpy(), ref)
    assert net._cached_op.cached_plans() == 1
    net(data(shape=(3, 2, 6, 6)))          # a new input shape: a second plan
    assert net._cached_op.cached_plans() == 2
    net.hybridize(False)
    np.testing.assert_array_equal(net(x).asnumpy(), ref)


def _train_grads(net, x):
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    return [x.grad.asnumpy()] + [p.grad().asnumpy() for p in net.collect_params().values()
                                 if p.grad_req != "null"]


def test_hybridized_gradients_equal_imperative():
    results = []
    for hybrid in (False, True):
        mx.random.seed(1)
        with mx.name.NameManager():
            net = small_net()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        results.append(_train_grads(net, data()))
        results[-1] += [p.data().asnumpy() for p in net.collect_params().values()]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def _penalty_grads(net, x):
    """A WGAN-GP penalty: the gradient of the gradient norm with respect to the weights."""
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        y = net(x)
        (gx,) = autograd.grad(y.sum(), [x], create_graph=True)
        penalty = ((gx * gx).sum() - 1) ** 2
    penalty.backward()
    return [p.grad().asnumpy() for p in net.collect_params().values()
            if p.grad_req != "null"]


def test_hybridized_grad_of_grad_equals_imperative():
    def critic():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(3, 3, in_channels=2), nn.LeakyReLU(0.2), nn.Flatten(),
                    nn.Dense(1, in_units=48))
        net.initialize(mx.init.Xavier())
        return net
    mx.random.seed(2)
    imperative = critic()
    mx.random.seed(2)
    hybrid = critic()
    hybrid.hybridize()
    x = data(3)
    first, second = _penalty_grads(imperative, x), _penalty_grads(hybrid, x)
    for a, b in zip(first, second):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the weights get a penalty gradient (the biases none: the input gradient ignores them)
    assert np.abs(first[0]).sum() > 0 and np.abs(first[2]).sum() > 0


def test_hybridized_dropout_higher_order_raises():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=2), nn.Dropout(0.5))
    net.initialize()
    net.hybridize()
    x = nd.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        y = net(x)
        with pytest.raises(mx.MXNetError, match="without hybridize"):
            autograd.grad(y.sum(), [x], create_graph=True)


def test_two_calls_under_one_record():
    """The cached graph keeps each call's values: a critic on two batches."""
    results = []
    for hybrid in (False, True):
        mx.random.seed(4)
        net = small_net()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        with autograd.record():
            loss = net(data(5)).sum() - 2 * (net(data(6)) ** 2).sum()
        loss.backward()
        results.append([p.grad().asnumpy() for p in net.collect_params().values()
                        if p.grad_req != "null"])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_deferred_init_hybridized_and_infer_shape():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(5), nn.Dense(2))
    net.initialize()
    net.hybridize()
    assert net(nd.ones((3, 7))).shape == (3, 2)
    assert net[0].weight.shape == (5, 7)
    other = nn.Dense(4)
    other.infer_shape(nd.ones((2, 9)))
    assert other.weight.shape == (4, 9)


def test_save_load_parameters(tmp_path):
    net = small_net()
    net.initialize(mx.init.Xavier())
    x = data()
    with autograd.record():
        net(x)              # moves the running statistics
    ref = net(x).asnumpy()
    fname = str(tmp_path / "net.params")
    net.save_parameters(fname)
    keys = sorted(nd.load(fname))
    assert "0.weight" in keys and "1.running_mean" in keys and "6.bias" in keys
    other = small_net()     # another prefix: attribute paths still match
    other.load_parameters(fname)
    np.testing.assert_array_equal(other(x).asnumpy(), ref)
    extra = small_net()
    with extra.name_scope():
        extra.add(nn.Dense(2))
    with pytest.raises(mx.MXNetError, match="missing"):
        extra.load_parameters(fname)
    extra.load_parameters(fname, allow_missing=True)
    fewer = nn.HybridSequential()
    with fewer.name_scope():
        fewer.add(nn.Conv2D(4, 3, padding=1))
    with pytest.raises(mx.MXNetError, match="not present"):
        fewer.load_parameters(fname)
    fewer.load_parameters(fname, ignore_extra=True)
    np.testing.assert_array_equal(fewer[0].weight.data().asnumpy(),
                                  net[0].weight.data().asnumpy())


def test_export_and_symbolblock_imports(tmp_path):
    net = small_net()
    net.initialize(mx.init.Xavier())
    x = data()
    with pytest.raises(mx.MXNetError, match="hybridize"):
        net.export(str(tmp_path / "m"))
    net.hybridize()
    with autograd.record():
        net(x)
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "m"), epoch=3)
    assert params_file.endswith("m-0003.params")
    keys = sorted(nd.load(params_file))
    assert "aux:" + net[1].running_var.name in keys and "arg:" + net[0].weight.name in keys
    back = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_array_equal(back(x).asnumpy(), ref)
    symbol, args, auxs = mx.model.load_checkpoint(str(tmp_path / "m"), 3)
    exe = symbol.bind(mx.cpu(), dict(args, data=x), aux_states=auxs, grad_req="null")
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), ref)
    # a SymbolBlock trains: its gradients equal the original block's
    np.testing.assert_array_equal(_train_grads(back, x)[0], _train_grads(net, x)[0])


def test_symbolblock_over_symbol():
    data_var = mx.sym.var("data")
    out = mx.sym.FullyConnected(mx.sym.tanh(data_var), num_hidden=3, name="fc")
    blk = gluon.SymbolBlock(out, data_var)
    assert sorted(blk.collect_params().keys()) == ["fc_bias", "fc_weight"]
    blk.initialize(mx.init.One())
    x = data(shape=(2, 4))
    np.testing.assert_allclose(blk(x).asnumpy(),
                               np.tanh(x.asnumpy()).sum(axis=1, keepdims=True) + 1 + 0 *
                               np.ones((2, 3)), rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="inputs given"):
        blk(x, x)


def test_mxnet_191_gluon_fixture():
    net = gluon.SymbolBlock.imports(os.path.join(FIXTURES, "gluon_net-symbol.json"), "data",
                                    os.path.join(FIXTURES, "gluon_net-0000.params"))
    io = nd.load(os.path.join(FIXTURES, "gluon_net-io.params"))
    np.testing.assert_allclose(net(io["data"]).asnumpy(), io["output"].asnumpy(), rtol=1e-5,
                               atol=1e-6)
    # the same parameters in a Gluon net built here (MXNet's names load by name)
    mine = small_net(prefix="hybridsequential0_")
    mine.collect_params().load(os.path.join(FIXTURES, "gluon_net-0000.params"))
    np.testing.assert_allclose(mine(io["data"]).asnumpy(), io["output"].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_hooks_summary_and_cast(capsys):
    net = small_net()
    net.initialize()
    seen = []
    handle = net[0].register_forward_hook(lambda b, i, o: seen.append(o.shape))
    net(data())
    handle.detach()
    net(data())
    assert seen == [(2, 4, 6, 6)]
    net.summary(data())
    text = capsys.readouterr().out
    assert "Conv2D-1" in text and "(2, 3)" in text
    net.cast("float64")
    assert net[0].weight.data().dtype == np.float64
    assert net(data().astype("float64")).dtype == np.float64


def test_input_errors():
    net = small_net()
    net.initialize()
    with pytest.raises(mx.MXNetError, match="NDArray or a Symbol"):
        net(np.ones((2, 2, 6, 6)))
    net.hybridize()
    net(data())
    with pytest.raises(mx.MXNetError, match="argument structure"):
        net([data(), data()])


def test_register_op_hook_reports_each_op_of_the_cached_graph():
    """The hook sees every op's output (and, with monitor_all, its inputs first) with the
    op's name, equal to the arrays the layers compute; a block that is not hybridized runs
    no graph and reports nothing."""
    net = mx.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.Activation("relu"))
    net.initialize(mx.init.Normal(1.0))
    x = mx.nd.array(np.random.RandomState(0).normal(size=(2, 4)))
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.asnumpy())))
    net(x)
    assert seen == []
    net.hybridize()
    out = net(x)
    assert [(n, o) for n, o, _ in seen] == [("net_dense0_fwd_output", "FullyConnected"),
                                            ("net_relu0_fwd_output", "Activation")]
    w, b = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    np.testing.assert_allclose(seen[0][2], x.asnumpy() @ w.T + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(seen[1][2], out.asnumpy())
    seen.clear()
    net.register_op_hook(lambda name, op, arr: seen.append(name), monitor_all=True)
    net(x)
    assert seen == ["net_dense0_fwd_data", "net_dense0_fwd_weight", "net_dense0_fwd_bias",
                    "net_dense0_fwd_output", "net_relu0_fwd_data", "net_relu0_fwd_output"]
    with pytest.raises(MXNetError, match="register_op_hook needs a callable"):
        net.register_op_hook("not a function")


def test_blocks_in_a_plain_container_are_warned_about():
    """Blocks kept in a list or dict attribute are not children: collect_params says so
    (their parameters would be missed), and says nothing for a Sequential or plain data."""
    import warnings

    class Listed(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.layers = {"a": [nn.Dense(2), nn.Dense(3)]}
                self.data = {"a": "4", "b": 123}

    class Sequenced(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.layers = nn.Sequential()
                self.layers.add(nn.Dense(2))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(Listed().collect_params()) == 0
        assert len(Sequenced().collect_params()) == 2
    assert [str(w.message).split(":")[0] for w in caught] == \
        ['"layers" is an unregistered container with Blocks']


def test_hybrid_block_inputs_follow_mxnets_rules():
    """None inputs reach hybrid_forward (also hybridized); numbers pass through while the
    block is not hybridized; no array at all, NDArrays mixed with Symbols, a number in a
    hybridized call, or a changed argument structure are MXNetErrors (ValueErrors)."""
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b=None):
            if isinstance(a, (list, tuple)):
                a = sum(a)
            return a if b is None else b if a is None else a + b

    one = mx.nd.ones((3,))
    plain = Add()
    assert plain(one, 2).asnumpy().tolist() == [3, 3, 3]
    assert plain([one, one], None).asnumpy().tolist() == [2, 2, 2]
    assert plain(None, one).asnumpy().tolist() == [1, 1, 1]
    for block in (Add(), Add()):
        block.hybridize()
        assert block(None, one).asnumpy().tolist() == [1, 1, 1]
        assert block(None, one).asnumpy().tolist() == [1, 1, 1]      # the cached graph
        with pytest.raises(ValueError, match="argument structure"):
            block(one, one)
    defaults = Add()
    defaults.hybridize()
    assert defaults(one).asnumpy().tolist() == [1, 1, 1]
    assert defaults(one, None).asnumpy().tolist() == [1, 1, 1]    # None = the default
    with pytest.raises(ValueError, match="argument structure"):
        defaults(one, one)
    hybrid = Add()
    hybrid.hybridize()
    with pytest.raises(ValueError, match="must be NDArrays, Symbols"):
        hybrid(one, 1)
    for args, match in (((None, None), "must hold an NDArray or a Symbol"),
                        ((one, mx.sym.var("a")), "mix NDArrays and Symbols")):
        with pytest.raises(MXNetError, match=match):
            Add()(*args)


def test_summary_of_a_hybridized_block_lists_its_layers(capsys):
    net = small_net()
    net.initialize()
    net.summary(data())
    eager = capsys.readouterr().out
    net.hybridize()
    net(data())
    net.summary(data())
    assert capsys.readouterr().out == eager
    assert net._active and net._cached_op is not None       # still hybridized, graph kept
