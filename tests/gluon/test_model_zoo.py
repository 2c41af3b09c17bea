"""gluon.model_zoo against MXNet 1.9.1 (fixtures made by
tests/fixtures/make_model_zoo_fixture.py): every model's parameter names, order and shapes;
outputs of small models with fixed weights; loading MXNet's ``.params`` files; the offline
model store (file names, sha1 checks, errors)."""
import gzip
import hashlib
import json
import os
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon.model_zoo import model_store, vision

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, os.pardir, "fixtures")

with gzip.open(os.path.join(FIXTURES, "model_zoo_mxnet.json.gz"), "rt") as _f:
    TABLES = json.load(_f)
OUTPUTS = np.load(os.path.join(FIXTURES, "model_zoo_mxnet.npz"))

# the output cases of the fixture script, built with mxlite's classes
CASES = {
    "resnet_v1_basic": lambda: vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8],
                                               classes=5, thumbnail=True),
    "resnet_v1_bottleneck": lambda: vision.ResNetV1(vision.BottleneckV1, [1, 1], [4, 8, 16],
                                                    classes=5),
    "resnet_v2_basic": lambda: vision.ResNetV2(vision.BasicBlockV2, [1, 1], [4, 4, 8],
                                               classes=5),
    "resnet_v2_bottleneck": lambda: vision.ResNetV2(vision.BottleneckV2, [1, 2], [4, 8, 16],
                                                    classes=5, thumbnail=True),
    "densenet_tiny": lambda: vision.DenseNet(8, 4, [2, 2], bn_size=2, classes=5),
    "squeezenet1.1": lambda: vision.get_model("squeezenet1.1", classes=5),
    "mobilenet0.25": lambda: vision.get_model("mobilenet0.25", classes=5),
    "mobilenetv2_0.25": lambda: vision.get_model("mobilenetv2_0.25", classes=5),
    "vgg_tiny_bn": lambda: vision.VGG([1, 2], [4, 8], classes=5, batch_norm=True),
    "alexnet": lambda: vision.get_model("alexnet", classes=5),
    "inceptionv3": lambda: vision.get_model("inceptionv3", classes=5),
}
WITH_PARAMS = sorted({k.split("/")[0] for k in OUTPUTS.files if k.endswith("/params")})


def seeded_value(name, shape):
    """The fixture script's parameter values (the same NumPy calls, so the same numbers)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if name.endswith(("running_var", "gamma")):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if name.endswith(("running_mean", "beta", "bias")):
        return rng.normal(0.0, 0.1, shape).astype(np.float32)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def fresh(build):
    """A model built in a fresh name scope: the prefix a new process gives."""
    with mx.name.NameManager():
        return build()


def case_input(case):
    return mx.nd.array(OUTPUTS[f"{case}/x"].astype(np.float32) / 4)


def test_every_model_is_in_the_fixture():
    assert sorted(vision._MODELS) == sorted(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_parameter_names_and_shapes_match_mxnet(name):
    net = fresh(lambda: vision.get_model(name))
    expected = TABLES[name]["params"]
    assert list(net.collect_params().keys()) == [n for n, _ in expected]
    # the shapes a forward pass would give, by inference on the traced graph (a forward of
    # every model at 224x224 would take a minute)
    out = net(mx.sym.var("data"))
    args, outs, aux = out.infer_shape(data=tuple(TABLES[name]["input"]))
    shapes = dict(zip(out.list_arguments(), args))
    shapes.update(zip(out.list_auxiliary_states(), aux))
    assert {n: shapes[n] for n, _ in expected} == {n: tuple(s) for n, s in expected}
    assert outs == [(1, 1000)]


def _seeded_net(case):
    net = fresh(CASES[case])
    net.initialize()
    net(case_input(case))                   # finishes the deferred shapes
    prefix = net.prefix
    for key, p in net.collect_params().items():
        p.set_data(mx.nd.array(seeded_value(key[len(prefix):], p.shape)))
    return net


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_match_mxnet(case):
    net = _seeded_net(case)
    expected = OUTPUTS[f"{case}/y"]
    np.testing.assert_allclose(net(case_input(case)).asnumpy(), expected, rtol=1e-4, atol=1e-4)
    net.hybridize()
    np.testing.assert_allclose(net(case_input(case)).asnumpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", WITH_PARAMS)
def test_loads_mxnet_save_parameters_file(case, tmp_path):
    path = tmp_path / "net.params"
    path.write_bytes(OUTPUTS[f"{case}/params"].tobytes())
    net = fresh(CASES[case])
    net.load_parameters(str(path))
    prefix = net.prefix
    for key, p in net.collect_params().items():
        expected = seeded_value(key[len(prefix):], p.shape)
        if key.endswith("gamma") and p.grad_req == "null":
            # a BatchNorm(scale=False) (fix_gamma): MXNet's forward writes 1 into gamma
            expected = np.ones_like(expected)
        np.testing.assert_array_equal(p.data().asnumpy(), expected, err_msg=key)
    np.testing.assert_allclose(net(case_input(case)).asnumpy(), OUTPUTS[f"{case}/y"],
                               rtol=1e-4, atol=1e-4)


def test_training_step_changes_weights_and_reduces_loss():
    """A model-zoo network trains: gradients reach the first convolution through every
    residual block."""
    net = fresh(CASES["resnet_v2_bottleneck"])
    net.initialize(mx.init.Xavier())
    x = case_input("resnet_v2_bottleneck")
    label = mx.nd.array([1, 3])
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    losses = []
    for _ in range(5):
        with mx.autograd.record():
            loss = loss_fn(net(x), label)
        loss.backward()
        trainer.step(2)
        losses.append(float(loss.mean().asscalar()))
    first = net.collect_params()[net.prefix + "conv0_weight"]
    assert np.abs(first.grad().asnumpy()).sum() > 0
    assert losses[-1] < losses[0]


# ---- the model store ----------------------------------------------------------------------

def test_store_sha1_table_is_mxnets():
    assert {n: model_store._MODEL_SHA1[n] for n in TABLES} == \
        {n: t["sha1"] for n, t in TABLES.items()}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_pretrained_missing_file_names_file_and_sha1(name, tmp_path):
    sha1 = TABLES[name]["sha1"]
    with pytest.raises(MXNetError) as err:
        vision.get_model(name, pretrained=True, root=str(tmp_path))
    message = str(err.value)
    assert f"{name}-{sha1[:8]}.params" in message
    assert sha1 in message and str(tmp_path) in message


def test_pretrained_file_with_other_content_is_refused(tmp_path):
    path = tmp_path / "resnet18_v1-a0666292.params"
    path.write_bytes(b"not the weights")
    with pytest.raises(MXNetError) as err:
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    message = str(err.value)
    assert hashlib.sha1(b"not the weights").hexdigest() in message
    assert "a0666292f0a30ff61f857b0b66efc0228eb6a54b" in message


def test_pretrained_loads_a_file_with_the_expected_sha1(tmp_path, monkeypatch):
    source = _seeded_net("squeezenet1.1")
    saved = tmp_path / "saved.params"
    source.save_parameters(str(saved))
    sha1 = hashlib.sha1(saved.read_bytes()).hexdigest()
    monkeypatch.setitem(model_store._MODEL_SHA1, "squeezenet1.1", sha1)
    saved.rename(tmp_path / f"squeezenet1.1-{sha1[:8]}.params")
    net = vision.get_model("squeezenet1.1", classes=5, pretrained=True, root=str(tmp_path))
    np.testing.assert_allclose(net(case_input("squeezenet1.1")).asnumpy(),
                               OUTPUTS["squeezenet1.1/y"], rtol=1e-4, atol=1e-4)


def test_default_root_follows_mxnet_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    with pytest.raises(MXNetError, match=str(tmp_path / "models")):
        model_store.get_model_file("alexnet")


def test_purge_removes_params_files_only(tmp_path):
    (tmp_path / "a.params").write_bytes(b"")
    (tmp_path / "keep.txt").write_bytes(b"")
    model_store.purge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_model_url_is_mxnets_layout(monkeypatch):
    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    assert model_store.model_url("vgg16_bn") == (
        "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/gluon/models/"
        "vgg16_bn-7f01cf05.zip")
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror.example")
    assert model_store.model_url("alexnet") == \
        "http://mirror.example/gluon/models/alexnet-44335d1f.zip"


# ---- names and bad input ------------------------------------------------------------------

def test_get_model_is_case_insensitive():
    net = fresh(lambda: vision.get_model("ResNet18_V1", classes=3))
    assert isinstance(net, vision.ResNetV1) and net.prefix == "resnetv10_"


def test_constructors_are_the_named_models():
    assert isinstance(vision.mobilenet_v2_0_5(), vision.MobileNetV2)
    assert isinstance(vision.vgg13_bn(), vision.VGG)
    assert any(isinstance(b, mx.gluon.nn.BatchNorm) for b in vision.vgg13_bn().features)
    assert not any(isinstance(b, mx.gluon.nn.BatchNorm) for b in vision.vgg13().features)
    assert mx.gluon.model_zoo.vision.get_model is vision.get_model


@pytest.mark.parametrize("call, words", [
    (lambda: vision.get_model("resnet19_v1"), ["get_model", "resnet19_v1", "resnet18_v1"]),
    (lambda: vision.get_model(18), ["get_model", "str", "int"]),
    (lambda: vision.get_resnet(3, 18), ["get_resnet", "version", "3"]),
    (lambda: vision.get_resnet(1, 19), ["get_resnet", "num_layers", "19"]),
    (lambda: vision.densenet.get_densenet(100), ["get_densenet", "num_layers", "100"]),
    (lambda: vision.get_vgg(12), ["get_vgg", "num_layers", "12"]),
    (lambda: vision.SqueezeNet("1.2"), ["SqueezeNet", "version", "1.2"]),
    (lambda: vision.ResNetV1(vision.BasicBlockV1, [2, 2], [64, 64]),
     ["ResNetV1", "layers", "channels"]),
    (lambda: vision.VGG([1, 1], [8]), ["VGG", "layers", "filters"]),
    (lambda: model_store.get_model_file("resnet200_v1"), ["resnet200_v1", "pretrained"]),
])
def test_bad_arguments_raise_mxneterror(call, words):
    with pytest.raises(MXNetError) as err:
        call()
    for word in words:
        assert word in str(err.value)
