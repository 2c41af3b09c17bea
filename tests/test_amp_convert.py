"""amp.convert_symbol / convert_model / convert_hybrid_block: which dtype each operator of a
converted graph computes in (read off the graph by type inference), and a converted block
trained with loss scaling against the float32 run."""
import json
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError, autograd, gluon
from mxlite.contrib import amp
from mxlite.ops.registry import REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures"))
import make_amp_fixture  # noqa: E402  (the graphs the fixture was made from)

ml_dtypes = pytest.importorskip("ml_dtypes")
F16, F32 = np.dtype("float16"), np.dtype("float32")
TARGETS = {"float16": F16, "bfloat16": np.dtype(ml_dtypes.bfloat16)}


def op_input_dtypes(sym, dtype="float32"):
    """{op name: [(node name, [input dtypes])]} of every op node of ``sym``, by mxlite's
    type inference with every variable of ``dtype``."""
    internals = sym.get_internals()
    _, out_types, _ = internals.infer_type(**{n: dtype for n in sym.list_inputs()})
    of = {(id(n), i): None if t is None else np.dtype(t)
          for (n, i), t in zip(internals._outputs, out_types)}
    found = {}
    for node in sym._nodes():
        if node.op is not None:
            found.setdefault(node.op.name, []).append(
                (node.name, [of.get((id(c), i)) for c, i in node.inputs]))
    return found


class Net(gluon.HybridBlock):
    """conv -> BatchNorm -> relu -> pool -> dense -> LayerNorm -> dense -> log_softmax, plus a
    residual add of two dense branches (a widest-type op)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv = gluon.nn.Conv2D(4, 3, padding=1)
            self.bn = gluon.nn.BatchNorm()
            self.fc1 = gluon.nn.Dense(16)
            self.fc1b = gluon.nn.Dense(16)
            self.ln = gluon.nn.LayerNorm()
            self.fc2 = gluon.nn.Dense(3)

    def hybrid_forward(self, F, x):
        h = F.relu(self.bn(self.conv(x)))
        h = F.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
        h = self.fc1(h) + self.fc1b(h)
        return F.log_softmax(self.fc2(self.ln(h)))


def _net(seed=0):
    mx.random.seed(seed)
    net = Net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def _data(seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 2, 6, 6)).astype(np.float32)
    y = (x[:, 0].mean(axis=(1, 2)) > 0).astype(np.float32) + (x[:, 1, 0, 0] > 1)
    return mx.nd.array(x), mx.nd.array(y)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_converted_graph_runs_each_op_in_its_listed_dtype(target):
    low = TARGETS[target]
    net = _net()
    x, _ = _data()
    net(x)
    block = amp.convert_hybrid_block(net, target_dtype=target)
    dtypes = op_input_dtypes(block._cached_graph[1])
    # the compute-bound ops in the target dtype, every input (data, weight, bias) cast
    for op in ("Convolution", "FullyConnected"):
        for name, ins in dtypes[op]:
            assert ins == [low] * len(ins), (name, ins)
    # the float32-heavy ops: norms and the softmax
    for op in ("LayerNorm", "log_softmax"):
        for name, ins in dtypes[op]:
            assert set(ins) == {F32}, (name, ins)
    # BatchNorm runs as given in MXNet's lists, but mxlite's kernel takes no float16 or
    # bfloat16 data: the converter gives it float32 (its statistics are never cast)
    (name, ins), = dtypes["BatchNorm"]
    assert set(ins) == {F32}
    # the residual add: both branches already share the target dtype, so no multicast
    (name, ins), = dtypes["elemwise_add"]
    assert ins == [low, low]
    assert "amp_multicast" not in dtypes
    # inputs are cast once per entry: one cast of data, one per weight and bias
    casts = [n for n, _ in dtypes["amp_cast"]]
    assert len(casts) == len(set(casts))


FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "amp_convert_mxnet.json")


def _describe(sym):
    """The converted graph's op nodes as the fixture stores them (op names canonical)."""
    nodes = json.loads(sym.tojson(remove_amp_cast=False))["nodes"]
    return [[REGISTRY[n["op"]].name, n["attrs"]["dtype"] if n["op"] == "amp_cast" else None,
             len(n["inputs"]) if n["op"] == "amp_multicast" else None]
            for n in nodes if n["op"] != "null"]


def _canonical(rows):
    return [[REGISTRY[op].name, dtype, n] for op, dtype, n in rows]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_conversion_matches_mxnet(target):
    """The same casts in the same places as MXNet 1.9.1's pass (fixture made by
    tests/fixtures/make_amp_fixture.py), on a graph of FullyConnected, softrelu, a residual
    add, LayerNorm and softmax."""
    with open(FIXTURE) as f:
        want = json.load(f)
    got = _describe(amp.convert_symbol(make_amp_fixture.mlp(mx.sym), target_dtype=target))
    assert got == _canonical(want[f"mlp/{target}"])
    # a widest-type op given the FullyConnected's low-precision output and the float32
    # data: MXNet's pass inserted no cast there (its executor coped); mxlite casts the
    # narrower input to float32 once, for the add and the concat, so exp needs no cast
    got = _describe(amp.convert_symbol(make_amp_fixture.mixed_add(mx.sym),
                                       target_dtype=target))
    mxnet = _canonical(want[f"mixed_add/{target}"])
    cast32 = ["amp_cast", "float32", None]
    assert mxnet[4:] == [["elemwise_add", None, None], ["concat", None, None], cast32,
                         ["exp", None, None]]
    assert got == mxnet[:4] + [cast32] + mxnet[4:6] + mxnet[7:]


def test_widest_type_op_gets_its_inputs_in_the_widest_dtype():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    net = mx.sym.elemwise_add(fc, data, name="add")          # float16 + float32
    out = amp.convert_symbol(net, target_dtype="float16")
    dtypes = op_input_dtypes(out)
    assert "amp_multicast" not in dtypes          # the float16 input is cast, once
    (_, ins), = dtypes["elemwise_add"]
    assert ins == [F32, F32]



def test_user_lists_exclusions_and_conditions():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    act = mx.sym.Activation(fc, act_type="softrelu", name="act")
    relu = mx.sym.Activation(act, act_type="relu", name="relu")
    out = mx.sym.FullyConnected(relu, num_hidden=2, name="fc2")
    dt = op_input_dtypes(amp.convert_symbol(out, "float16"))
    acts = dict(dt["Activation"])
    assert acts["act"] == [F32]                       # conditional: softrelu in float32
    assert acts["relu"] == [F32]                      # as given (act's float32 output)
    # fc2 excluded: float32; user lists: FullyConnected in float32 everywhere
    dt = dict(op_input_dtypes(amp.convert_symbol(out, "float16",
                                                 excluded_sym_names=["fc2"]))["FullyConnected"])
    assert set(dt["fc2"]) == {F32} and set(dt["fc"]) == {F16}
    dt = op_input_dtypes(amp.convert_symbol(out, "float16", target_dtype_ops=[],
                                            fp32_ops=["FullyConnected"]))
    assert all(set(ins) == {F32} for _, ins in dt["FullyConnected"])
    assert "amp_cast" not in dt                       # float32 throughout: no cast at all


def test_bad_arguments_raise_mxneterror():
    s = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2)
    cases = [
        (lambda: amp.convert_symbol("x"), "convert_symbol.*Symbol"),
        (lambda: amp.convert_symbol(s, "int8"), "target_dtype"),
        (lambda: amp.convert_symbol(s, "float16", target_dtype_ops=["FullyConnected"],
                                    fp32_ops=["FullyConnected"]), "both"),
        (lambda: amp.convert_symbol(s, "float16", fp32_ops=["no_such_op"]), "no_such_op"),
        (lambda: amp.convert_symbol(s, "float16", fp32_ops=["Correlation"]),
         "none of amp's lists"),
        (lambda: amp.convert_symbol(s, "float16", excluded_sym_names="fc"),
         "excluded_sym_names"),
        (lambda: amp.convert_model(s, [], {}), "dicts"),
        (lambda: amp.convert_hybrid_block(gluon.nn.Dense(2)), "hybridize.*run it"),
        (lambda: amp.convert_hybrid_block(gluon.nn.Sequential()), "HybridBlock"),
    ]
    for call, match in cases:
        with pytest.raises(MXNetError, match=match):
            call()


def test_convert_model_casts_the_parameters_only_where_asked():
    x = mx.sym.var("data")
    net = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    args = {"fc_weight": mx.nd.ones((3, 4)), "fc_bias": mx.nd.zeros((3,))}
    sym, arg_params, aux_params = amp.convert_model(net, args, {}, target_dtype="float16")
    assert {k: v.dtype for k, v in arg_params.items()} == {"fc_weight": F32, "fc_bias": F32}
    sym, arg_params, _ = amp.convert_model(net, args, {}, target_dtype="float16",
                                           cast_optional_params=True)
    assert {k: v.dtype for k, v in arg_params.items()} == {"fc_weight": F16, "fc_bias": F16}
    assert args["fc_weight"].dtype == F32                  # the dicts given are unchanged
    assert "__dtype__" not in sym.attr_dict().get("data", {})
    ex = sym.simple_bind(mx.cpu(), data=(2, 4), type_dict={"fc_weight": "float16",
                                                            "fc_bias": "float16"})
    ex.copy_params_from(arg_params)
    ex.arg_dict["data"][:] = 1.0
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), np.full((2, 3), 4.0))


# ---- training a converted block ------------------------------------------------------------
def _train(net, x, y, steps, target=None):
    """``steps`` SGD steps of softmax cross-entropy; the losses (float32)."""
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2})
    if target is not None:
        amp.init_trainer(trainer)
    losses = []
    for _ in range(steps):
        with autograd.record():
            logp = net(x).astype("float32")
            loss = -mx.nd.pick(logp, y, axis=1).mean()
            if target is None:
                loss.backward()
            else:
                with amp.scale_loss(loss, trainer) as scaled:
                    scaled.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    return losses, trainer


@pytest.fixture
def amp_on():
    yield lambda target: amp.init(target)
    amp.amp._restore()


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_converted_block_trains_with_loss_scaling_like_float32(target, amp_on):
    x, y = _data()
    reference = _net()
    reference(x)
    mixed = amp.convert_hybrid_block(reference, target_dtype=target)
    assert mixed(x).dtype == F32              # log_softmax is a float32 op
    # the parameters of the converted block start equal and stay float32 (master weights)
    for name, p in mixed.collect_params().items():
        assert p.dtype == F32
        np.testing.assert_array_equal(p.data().asnumpy(),
                                      reference.collect_params()[name].data().asnumpy())
    plain, _ = _train(reference, x, y, 25)
    amp_on(target)
    scaled, trainer = _train(mixed, x, y, 25, target)
    scaler = trainer._amp_loss_scaler
    if target == "float16":
        # 2**16 times a gradient of float16's range overflows at first: steps skipped
        assert scaler.num_skipped >= 1 and scaler.loss_scale < 2.0 ** 16
    else:
        # bfloat16 has float32's range: nothing overflows
        assert scaler.num_skipped == 0 and scaler.loss_scale == 2.0 ** 16
    assert plain[-1] < 0.5 * plain[0]
    assert scaled[-1] < 0.5 * scaled[0]
    assert abs(scaled[0] - plain[0]) < 0.05 * plain[0]
    assert abs(scaled[-1] - plain[-1]) < 0.25 * plain[-1] + 0.02


# ---- BucketingModule -------------------------------------------------------------------------
def _bucket_sym_gen(seq_len):
    """A graph per sequence length whose parameters do not depend on it."""
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    fc = mx.sym.FullyConnected(data, num_hidden=3, flatten=False, name="fc")
    return (mx.sym.SoftmaxOutput(mx.sym.mean(fc, axis=1), label, name="softmax"),
            ("data",), ("softmax_label",))


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_convert_bucketing_module(target):
    rng = np.random.default_rng(4)
    mod = mx.mod.BucketingModule(_bucket_sym_gen, default_bucket_key=5)
    mod.bind([("data", (2, 5, 4))], [("softmax_label", (2,))], for_training=False)
    mod.init_params(mx.init.Xavier())
    mixed = amp.convert_bucketing_module(mod, target_dtype=target)
    mixed.bind([("data", (2, 5, 4))], [("softmax_label", (2,))], for_training=False)
    arg, _ = mixed.get_params()
    want_arg, _ = mod.get_params()
    assert set(arg) == set(want_arg)
    for name, value in arg.items():             # float32 master copies, the same values
        np.testing.assert_array_equal(value.asnumpy(), want_arg[name].asnumpy())
    for key in (5, 7):                          # the default bucket and a new one
        x = mx.nd.array(rng.standard_normal((2, key, 4)))
        batch = mx.io.DataBatch([x], [mx.nd.array([0, 2])], bucket_key=key,
                                provide_data=[("data", x.shape)],
                                provide_label=[("softmax_label", (2,))])
        for m in (mod, mixed):
            m.forward(batch, is_train=False)
        got, want = mixed.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy()
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=0.05, atol=0.02)
        graph = mixed._curr_module.symbol
        (_, ins), = op_input_dtypes(graph)["FullyConnected"]
        assert ins == [TARGETS[target]] * 3
    with pytest.raises(MXNetError, match="convert_bucketing_module.*bind"):
        amp.convert_bucketing_module(mx.mod.BucketingModule(_bucket_sym_gen, 5))
