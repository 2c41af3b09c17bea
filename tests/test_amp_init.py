"""amp.init(): the listed mx.nd / mx.sym functions cast their inputs as MXNet's
monkey-patching did; init_trainer / scale_loss / unscale: dynamic loss scaling on a Gluon
Trainer."""
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
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype("float16"), np.dtype("float32")


@pytest.fixture
def amp_on(request):
    """amp.init(target) for one test, undone after it (init is global, as in MXNet)."""
    def start(target=None, **kwargs):
        amp.init(target, **kwargs)
    yield start
    amp.amp._restore()


def _fc(x, dtype="float32"):
    w = mx.nd.ones((2, x.shape[1]), dtype=dtype)
    return mx.nd.FullyConnected(x, w, mx.nd.zeros((2,), dtype=dtype), num_hidden=2)


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
@pytest.mark.parametrize("graph", sorted(make_amp_fixture.GRAPHS))
def test_symbols_built_after_init_match_mxnet(graph, target, amp_on):
    """The casts MXNet 1.9.1's wrapped mx.sym functions put into the same graphs (fixture
    by tests/fixtures/make_amp_fixture.py), op for op."""
    with open(make_amp_fixture.PATH) as f:
        want = json.load(f)[f"init/{graph}/{target}"]
    amp_on(target)
    got = make_amp_fixture.describe(
        make_amp_fixture.GRAPHS[graph](mx.sym).tojson(remove_amp_cast=False))
    canonical = lambda rows: [[REGISTRY[op].name, d, n] for op, d, n in rows]  # noqa: E731
    assert canonical(got) == canonical(want)


def test_ops_cast_their_inputs_by_list(amp_on):
    amp_on("float16")
    x = mx.nd.array([[1.0, 2.0, 3.0]])
    assert _fc(x).dtype == F16                                    # FP16_FUNCS
    np.testing.assert_array_equal(_fc(x).asnumpy(), [[6.0, 6.0]])
    h = mx.nd.array([[1.0, 2.0]], dtype="float16")
    assert mx.nd.softmax(h).dtype == F32                           # FP32_FUNCS
    assert mx.nd.LayerNorm(mx.nd.ones((2, 4), dtype="float16"), mx.nd.ones((4,)),
                           mx.nd.zeros((4,))).dtype == F32
    assert mx.nd.relu(h).dtype == F16                              # either: as given
    # widest: float16 with float32 -> float32, float16 alone stays
    assert mx.nd.elemwise_add(h, mx.nd.ones((1, 2))).dtype == F32
    assert mx.nd.elemwise_add(h, h).dtype == F16
    assert mx.nd.concat(h, mx.nd.ones((1, 2)), dim=0).dtype == F32
    # conditional: Activation(softrelu) in float32, other act_types as given
    assert mx.nd.Activation(h, act_type="softrelu").dtype == F32
    assert mx.nd.Activation(h, act_type="relu").dtype == F16
    # float64 and integers are never cast
    assert _fc(mx.nd.ones((1, 3), dtype="float64"), "float64").dtype == np.float64


def test_restore_undoes_init(amp_on):
    amp_on("float16")
    assert _fc(mx.nd.ones((1, 3))).dtype == F16
    amp.amp._restore()
    assert _fc(mx.nd.ones((1, 3))).dtype == F32
    assert mx.nd.softmax(mx.nd.ones((2,), dtype="float16")).dtype == F16


def test_a_second_init_does_nothing(amp_on):
    amp_on("float16")
    amp.init("bfloat16")                 # ignored, as in MXNet
    assert _fc(mx.nd.ones((1, 3))).dtype == F16


def test_default_target_follows_the_context(amp_on):
    amp_on()                             # the default context is the CPU: bfloat16
    assert _fc(mx.nd.ones((1, 3))).dtype == BF16
    amp.amp._restore()
    assert amp.convert_symbol(mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2)
                              ).get_internals().list_outputs()[1] == "x_amp_cast_bfloat16_output"
    with mx.gpu(0):                      # (only read, nothing runs there)
        assert amp.convert.target_dtype_of(None, "t") == F16


def test_user_lists_replace_the_defaults(amp_on):
    amp_on("float16", target_precision_ops=["FullyConnected"], fp32_ops=["relu"],
           conditional_fp32_ops=[])
    h = mx.nd.ones((2,), dtype="float16")
    assert mx.nd.relu(h).dtype == F32
    assert mx.nd.softmax(h).dtype == F16            # no longer listed
    assert mx.nd.Activation(h, act_type="softrelu").dtype == F16


def test_bad_arguments_raise_mxneterror():
    with pytest.raises(MXNetError, match="amp.init.*target_dtype.*'float32'"):
        amp.init("float32")
    with pytest.raises(MXNetError, match="amp.init.*fp32_ops.*nonexistent_op"):
        amp.init("float16", fp32_ops=["nonexistent_op"])
    with pytest.raises(MXNetError, match="conditional_fp32_ops"):
        amp.init("float16", conditional_fp32_ops=[("Activation", "act_type")])
    assert amp.amp._State.target is None           # nothing half-done


def test_bfloat16_keeps_batchnorm_parameters_in_float32(amp_on):
    """BF16_USE_FP32_PARAMS: BatchNorm's gamma, beta and statistics are not cast."""
    amp_on("bfloat16", target_precision_ops=["BatchNorm"], fp32_ops=[])
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    nodes = json.loads(bn.tojson(remove_amp_cast=False))["nodes"]
    node = {n["name"]: n for n in nodes}["bn"]
    fed = [nodes[i]["name"] for i, _, _ in node["inputs"]]
    assert fed == ["x_amp_cast", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"] \
        or (fed[0].startswith("amp_cast") and fed[1:] == ["bn_gamma", "bn_beta",
                                                          "bn_moving_mean", "bn_moving_var"])


def test_symbols_get_amp_cast_nodes_on_every_input(amp_on):
    amp_on("float16")
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    nodes = json.loads(fc.tojson(remove_amp_cast=False))["nodes"]
    fc_node = nodes[-1]
    assert fc_node["op"] == "FullyConnected"
    fed = [nodes[i] for i, _, _ in fc_node["inputs"]]
    # data and the weight and bias the call made are all cast to float16
    assert [n["op"] for n in fed] == ["amp_cast"] * 3
    assert {n["attrs"]["dtype"] for n in fed} == {"float16"}
    assert [nodes[n["inputs"][0][0]]["name"] for n in fed] == ["data", "fc_weight", "fc_bias"]
    # the graph runs: float32 in, float16 out
    ex = fc.simple_bind(mx.cpu(), data=(2, 4))
    assert ex.forward()[0].dtype == F16
    # widest type: one amp_multicast over both inputs
    s = mx.sym.elemwise_add(mx.sym.var("a"), mx.sym.var("b"))
    ops = [n["op"] for n in json.loads(s.tojson(remove_amp_cast=False))["nodes"]]
    assert ops == ["null", "null", "amp_multicast", "elemwise_add"]


def test_gluon_model_built_after_init_runs_mixed(amp_on):
    amp_on("bfloat16")
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(0).standard_normal((4, 5)))
    assert net(x).dtype == BF16
    net.hybridize()
    assert net(x).dtype == BF16
    assert net[0].weight.data().dtype == F32          # master weights stay float32


@pytest.mark.parametrize("target", ["bfloat16", "float16"])
def test_either_dtype_ops_without_a_low_precision_kernel_get_float32(target, amp_on):
    """BatchNorm runs in either dtype in MXNet's lists; mxlite's kernel takes neither float16
    nor bfloat16 data, so after a low-precision convolution it is given float32."""
    amp_on(target)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.Dense(2))
    net.initialize()
    x = mx.nd.ones((2, 3, 6, 6))
    assert net(x).dtype == np.dtype(target)
    net.hybridize()
    assert net(x).dtype == np.dtype(target)
    bn = mx.sym.BatchNorm(mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=2),
                          name="bn")
    nodes = json.loads(bn.tojson(remove_amp_cast=False))["nodes"]
    fed = nodes[[i for i, _, _ in nodes[-1]["inputs"]][0]]
    assert fed["op"] == "amp_cast" and fed["attrs"]["dtype"] == "float32"
    assert mx.nd.LRN(mx.nd.ones((1, 2, 3, 3), dtype=target), nsize=3).dtype == F32
    # an op with a kernel for the dtype keeps it
    assert mx.nd.Pooling(mx.nd.ones((1, 1, 2, 2), dtype=target), kernel=(2, 2)).dtype == \
        np.dtype(target)


def test_loss_outputs_scale_their_gradient(amp_on):
    """SoftmaxOutput's gradient is (softmax - onehot) * grad_scale; after init() the
    grad_scale is multiplied by the loss scale (2**16)."""
    amp_on("float16")
    x = mx.nd.array([[1.0, 2.0, 0.5]])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([1.0]), grad_scale=0.5)
    y.backward()
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(x.grad.asnumpy(), [(p - [0, 1, 0]) * 0.5 * 2.0 ** 16],
                               rtol=1e-5)


# ---- Trainer ---------------------------------------------------------------------------------
def _dense_and_trainer(lr=0.5):
    net = gluon.nn.Dense(1, in_units=2, use_bias=False)
    net.initialize(mx.init.Constant(1.0))
    return net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})


def test_trainer_errors():
    net, trainer = _dense_and_trainer()
    with pytest.raises(MXNetError, match="init_trainer.*amp.init"):
        amp.init_trainer(trainer)
    with pytest.raises(MXNetError, match="scale_loss.*init_trainer"):
        with amp.scale_loss(mx.nd.ones((1,)), trainer):
            pass
    with pytest.raises(MXNetError, match="Trainer, not an Optimizer"):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match="expected a Gluon Trainer"):
        amp.unscale("trainer")


def _scaled_step(net, trainer, x):
    with autograd.record():
        loss = net(x).sum()                       # d loss / d w = x
        with amp.scale_loss(loss, trainer) as scaled:
            scaled.backward()
    return net.weight.grad().asnumpy()


def test_trainer_unscales_skips_overflow_and_adapts(amp_on):
    amp_on("float16")
    net, trainer = _dense_and_trainer(lr=0.5)
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    assert scaler.loss_scale == 2.0 ** 16
    x = mx.nd.array([[2.0 ** -4, 2.0 ** -3]])
    w0 = net.weight.data().asnumpy()
    # FullyConnected runs in float16, where the head gradient 2**16 itself overflows
    # (largest float16 65504): the step is skipped, the weights stay, the scale halves
    assert np.isinf(_scaled_step(net, trainer, x)).all()
    trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w0)
    assert scaler.loss_scale == 2.0 ** 15 and scaler.num_skipped == 1
    # now it fits: the optimizer divides by the scale (w -= 0.5 x)
    np.testing.assert_array_equal(_scaled_step(net, trainer, x), [[2.0 ** 11, 2.0 ** 12]])
    trainer.step(1)
    w1 = [[1 - 2.0 ** -5, 1 - 2.0 ** -4]]
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w1)
    assert scaler.loss_scale == 2.0 ** 15 and scaler.num_steps == 2
    # an infinite input: skipped again
    _scaled_step(net, trainer, mx.nd.array([[np.inf, 1.0]]))
    trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w1)
    assert scaler.loss_scale == 2.0 ** 14 and scaler.num_skipped == 2
    # unscale() divides the gradients now; the step then applies no scale of its own
    with autograd.record():
        loss = net(x).sum()
        with amp.scale_loss([loss], trainer) as scaled:
            scaled[0].backward()
    np.testing.assert_array_equal(net.weight.grad().asnumpy(), [[2.0 ** 10, 2.0 ** 11]])
    amp.unscale(trainer)
    np.testing.assert_array_equal(net.weight.grad().asnumpy(), [[2.0 ** -4, 2.0 ** -3]])
    trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(),
                                  [[1 - 2.0 ** -4, 1 - 2.0 ** -3]])
    # a second trainer gets a scaler of its own
    _, other = _dense_and_trainer()
    amp.init_trainer(other)
    assert other._amp_loss_scaler is not scaler


def test_amp_trains_on_each_device_in_its_default_dtype(device, amp_on):
    """amp.init() without a target: float16 on a GPU, bfloat16 on a CPU; a model built after
    it trains there with loss scaling, its master weights float32."""
    amp_on()
    want = F16 if device.device_type == "gpu" else BF16
    mx.random.seed(3)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu", in_units=4), gluon.nn.Dense(3, in_units=16))
    net.initialize(mx.init.Zero(), ctx=device)
    rng = np.random.default_rng(0)
    for p in net.collect_params().values():          # random weights drawn by NumPy
        p.set_data(mx.nd.array(rng.standard_normal(p.shape) * 0.5, ctx=device))
    net.hybridize()
    x = mx.nd.array(rng.standard_normal((32, 4)), ctx=device)
    y = mx.nd.array(rng.integers(0, 3, 32), ctx=device)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(trainer)
    losses = []
    for _ in range(30):
        with autograd.record():
            out = net(x)
            loss = -mx.nd.pick(mx.nd.log_softmax(out.astype("float32")), y, axis=1).mean()
            with amp.scale_loss(loss, trainer) as scaled:
                scaled.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    assert out.dtype == want and out.context == device
    assert net[0].weight.data(device).dtype == F32
    assert losses[-1] < 0.7 * losses[0]
