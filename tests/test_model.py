"""mx.model.save_checkpoint / load_params / load_checkpoint (MXNet's checkpoint files)."""
import os
import struct

import numpy as np
import pytest

import mxlite as mx
import mxlite.model as model
from mxlite.base import MXNetError

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


class RecordingSymbol:
    """Stands in for a Symbol: records the save call."""

    def __init__(self):
        self.calls = []

    def save(self, fname, remove_amp_cast=True):
        self.calls.append((fname, remove_amp_cast))
        with open(fname, "w") as f:
            f.write("{}")


def params():
    w = np.arange(6, dtype="float32").reshape(2, 3) / 7
    b = np.array([0.5, -1.5], dtype="float32")
    m = np.array([1, 2], dtype="float64")
    return {"fc_weight": w, "fc_bias": b}, {"bn_moving_mean": m}


def test_params_round_trip_and_file_layout(tmp_path):
    args, aux = params()
    prefix = str(tmp_path / "net")
    sym = RecordingSymbol()
    model.save_checkpoint(prefix, 7, sym,
                          {k: mx.nd.array(v) for k, v in args.items()},
                          {k: mx.nd.array(v, dtype=v.dtype) for k, v in aux.items()})
    assert sym.calls == [(prefix + "-symbol.json", True)]
    # the params file is an nd.save dict keyed arg:/aux:, named prefix-%04d.params
    raw = mx.nd.load(prefix + "-0007.params")
    assert list(raw) == ["arg:fc_weight", "arg:fc_bias", "aux:bn_moving_mean"]
    a2, x2 = model.load_params(prefix, 7)
    assert set(a2) == set(args) and set(x2) == set(aux)
    for k, v in args.items():
        assert same(a2[k].asnumpy(), v)
    assert same(x2["bn_moving_mean"].asnumpy(), aux["bn_moving_mean"])


def test_symbol_none_writes_only_params(tmp_path):
    prefix = str(tmp_path / "p")
    model.save_checkpoint(prefix, 12345, None, {"w": mx.nd.ones((2,))}, {})
    assert sorted(os.listdir(tmp_path)) == ["p-12345.params"]
    assert list(model.load_params(prefix, 12345)[0]) == ["w"]


def test_mxnet_checkpoint_params_load():
    a, x = model.load_params(os.path.join(FIXTURES, "convnet"), 0)
    assert sorted(a) == ["bn1_beta", "bn1_gamma", "conv1_bias", "conv1_weight", "fc_bias",
                         "fc_weight"]
    assert sorted(x) == ["bn1_moving_mean", "bn1_moving_var"]
    assert (x["bn1_moving_var"].asnumpy() > 0).all()


def test_empty_params_file(tmp_path):
    prefix = str(tmp_path / "e")
    model.save_checkpoint(prefix, 0, None, {}, None)
    assert model.load_params(prefix, 0) == ({}, {})


def test_other_key_types_are_skipped(tmp_path):
    prefix = str(tmp_path / "o")
    mx.nd.save(prefix + "-0001.params", {"arg:w": mx.nd.ones(1), "opt:state": mx.nd.zeros(1)})
    a, x = model.load_params(prefix, 1)
    assert list(a) == ["w"] and x == {}


def test_bad_params_files(tmp_path):
    prefix = str(tmp_path / "bad")
    mx.nd.save(prefix + "-0000.params", [mx.nd.ones(1)])
    with pytest.raises(MXNetError, match="list of 1 arrays"):
        model.load_params(prefix, 0)
    mx.nd.save(prefix + "-0001.params", {"weight": mx.nd.ones(1)})
    with pytest.raises(MXNetError, match="'weight'.*no 'arg:'/'aux:' prefix"):
        model.load_params(prefix, 1)
    with open(prefix + "-0002.params", "wb") as f:
        f.write(struct.pack("<QQ", 0x112, 0))
    with pytest.raises(MXNetError, match="bad-0002.params"):
        model.load_params(prefix, 2)
    with pytest.raises(MXNetError, match="bad-0003.params"):
        model.load_params(prefix, 3)


def test_bad_save_arguments(tmp_path):
    prefix = str(tmp_path / "s")
    with pytest.raises(MXNetError, match=r"arg_params\['w'\] must be an NDArray"):
        model.save_checkpoint(prefix, 0, None, {"w": np.ones(2)}, {})
    with pytest.raises(MXNetError, match="aux_params must be a dict"):
        model.save_checkpoint(prefix, 0, None, {}, [mx.nd.ones(1)])
    sym = RecordingSymbol()
    with pytest.raises(MXNetError):
        model.save_checkpoint(prefix, 0, sym, {"w": 3}, {})
    assert os.listdir(tmp_path) == [] and sym.calls == []     # nothing written


def test_checkpoint_round_trip_with_symbol(tmp_path):
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    net = mx.sym.BatchNorm(fc, name="bn")
    args = {"fc_weight": mx.nd.array(np.arange(12).reshape(3, 4) / 5), "fc_bias": mx.nd.ones((3,)),
            "bn_gamma": mx.nd.array([1, 2, 3]), "bn_beta": mx.nd.zeros((3,))}
    aux = {"bn_moving_mean": mx.nd.array([0.5, 0, -0.5]), "bn_moving_var": mx.nd.array([1, 2, 4])}
    prefix = str(tmp_path / "rt")
    mx.model.save_checkpoint(prefix, 3, net, args, aux)
    assert sorted(os.listdir(tmp_path)) == ["rt-0003.params", "rt-symbol.json"]
    sym2, args2, aux2 = mx.model.load_checkpoint(prefix, 3)
    assert sym2.tojson() == net.tojson()
    assert sym2.list_arguments() == ["data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"]
    assert sym2.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    for got, want in ((args2, args), (aux2, aux)):
        assert list(got) == list(want)
        for k in want:
            assert same(got[k].asnumpy(), want[k].asnumpy())


def test_load_checkpoint_missing_symbol_file(tmp_path):
    prefix = str(tmp_path / "nosym")
    model.save_checkpoint(prefix, 0, None, {"w": mx.nd.ones(1)}, {})
    with pytest.raises(MXNetError, match="nosym-symbol.json"):
        model.load_checkpoint(prefix, 0)
