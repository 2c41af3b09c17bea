"""Files written by the reference MXNet 1.9.1 (tests/fixtures, made by make_mxnet_fixtures.py).

mxlite must load them bit-exact, write the same bytes back (so MXNet loads mxlite's files),
and compute MXNet's outputs from MXNet's checkpoints.
"""
import os

import numpy as np
import pytest

import mxlite as mx

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def fixture(name):
    return os.path.join(FIXTURES, name)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# The values make_mxnet_fixtures.py gave MXNet, restated here.
EXPECTED_DTYPES = {
    "float32": np.array([[1.5, -2.25, 3e38], [0.0, -0.0, 1e-38]], dtype="float32"),
    "float64": np.array([np.pi, -1e300, 5e-324], dtype="float64"),
    "float16": np.array([[1.0, -65504.0], [0.00006103515625, 0.5]], dtype="float16"),
    "uint8": np.array([0, 1, 127, 255], dtype="uint8"),
    "int8": np.array([[-128, 127, 0]], dtype="int8"),
    "int32": np.array([-2 ** 31, 2 ** 31 - 1, 7], dtype="int32"),
    "int64": np.array([-2 ** 62, 2 ** 62 + 3, -1], dtype="int64"),
    "bool": np.array([[True, False, True]]),
    "3d": np.arange(24, dtype="float32").reshape(2, 3, 4),
}


def test_dtypes_file_loads_bit_exact():
    back = mx.nd.load(fixture("dtypes.params"))
    assert list(back) == list(EXPECTED_DTYPES)
    for k, v in EXPECTED_DTYPES.items():
        assert same(back[k].asnumpy(), v), k


def test_list_file_loads_as_list():
    back = mx.nd.load(fixture("list.params"))
    assert isinstance(back, list) and len(back) == 2
    assert same(back[0].asnumpy(), EXPECTED_DTYPES["int32"])
    assert same(back[1].asnumpy(), EXPECTED_DTYPES["float16"])


def test_np_shape_file_loads_zero_d_and_empty():
    z, e, v = mx.nd.load(fixture("npshape.params"))
    assert same(z.asnumpy(), np.array(2.5, dtype="float32"))
    assert same(e.asnumpy(), np.zeros((0, 3), dtype="int32"))
    assert same(v.asnumpy(), np.array([1.0, 2.0]))


@pytest.mark.parametrize("name,stype", [("csr.params", "csr"), ("row_sparse.params", "row_sparse")])
def test_sparse_files_load(name, stype):
    loaded = mx.nd.load(fixture(name))
    arr = loaded[0] if isinstance(loaded, list) else loaded["w"]
    assert arr.stype == stype
    assert same(arr.asnumpy(), np.array([[0, 1.5], [0, 0]], dtype="float32"))


@pytest.mark.parametrize("name", ["dtypes.params", "list.params", "npshape.params",
                                  "csr.params", "row_sparse.params",
                                  "mlp-0000.params", "convnet-0000.params", "mlp-io.params",
                                  "convnet-io.params"])
def test_resave_writes_mxnets_bytes(tmp_path, name):
    """Saving what was loaded reproduces MXNet's file byte for byte, so MXNet reads ours."""
    out = str(tmp_path / name)
    mx.nd.save(out, mx.nd.load(fixture(name)))
    with open(fixture(name), "rb") as f, open(out, "rb") as g:
        assert f.read() == g.read()


def test_checkpoint_param_names_and_shapes():
    mlp = mx.nd.load(fixture("mlp-0000.params"))
    assert {k: v.shape for k, v in mlp.items()} == {
        "arg:fc1_weight": (6, 5), "arg:fc1_bias": (6,), "arg:fc2_weight": (3, 6),
        "arg:fc2_bias": (3,)}
    conv = mx.nd.load(fixture("convnet-0000.params"))
    assert {k: v.shape for k, v in conv.items()} == {
        "arg:conv1_weight": (3, 2, 3, 3), "arg:conv1_bias": (3,), "arg:bn1_gamma": (3,),
        "arg:bn1_beta": (3,), "arg:fc_weight": (4, 12), "arg:fc_bias": (4,),
        "aux:bn1_moving_mean": (3,), "aux:bn1_moving_var": (3,)}
    assert all(v.dtype == np.float32 for v in list(mlp.values()) + list(conv.values()))


def test_mlp_imperative_forward_matches_mxnet():
    p = mx.nd.load(fixture("mlp-0000.params"))
    io = mx.nd.load(fixture("mlp-io.params"))
    h = mx.nd.FullyConnected(io["data"], p["arg:fc1_weight"], p["arg:fc1_bias"], num_hidden=6)
    h = mx.nd.Activation(h, act_type="relu")
    h = mx.nd.FullyConnected(h, p["arg:fc2_weight"], p["arg:fc2_bias"], num_hidden=3)
    out = mx.nd.SoftmaxOutput(h, mx.nd.zeros((2,)))
    np.testing.assert_allclose(out.asnumpy(), io["output"].asnumpy(), rtol=1e-5, atol=1e-7)


def test_convnet_imperative_forward_matches_mxnet():
    p = mx.nd.load(fixture("convnet-0000.params"))
    io = mx.nd.load(fixture("convnet-io.params"))
    h = mx.nd.Convolution(io["data"], p["arg:conv1_weight"], p["arg:conv1_bias"],
                          kernel=(3, 3), pad=(1, 1), num_filter=3)
    h = mx.nd.BatchNorm(h, p["arg:bn1_gamma"], p["arg:bn1_beta"], p["aux:bn1_moving_mean"],
                        p["aux:bn1_moving_var"], fix_gamma=False)
    h = mx.nd.Activation(h, act_type="tanh")
    h = mx.nd.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
    h = mx.nd.FullyConnected(mx.nd.Flatten(h), p["arg:fc_weight"], p["arg:fc_bias"], num_hidden=4)
    out = mx.nd.SoftmaxOutput(h, mx.nd.zeros((2,)))
    np.testing.assert_allclose(out.asnumpy(), io["output"].asnumpy(), rtol=1e-5, atol=1e-7)


# ---- MXNet's checkpoints through mx.sym and the executor ---------------------------------------
NETS = {
    "mlp": dict(args=["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "softmax_label"],
                aux=[]),
    "convnet": dict(args=["data", "conv1_weight", "conv1_bias", "bn1_gamma", "bn1_beta",
                          "fc_weight", "fc_bias", "softmax_label"],
                    aux=["bn1_moving_mean", "bn1_moving_var"]),
}


@pytest.mark.parametrize("name", sorted(NETS))
def test_checkpoint_symbol_structure(name):
    sym, args, aux = mx.model.load_checkpoint(fixture(name), 0)
    assert sym.list_arguments() == NETS[name]["args"]
    assert sym.list_auxiliary_states() == NETS[name]["aux"]
    assert sym.list_outputs() == ["softmax_output"]
    data = mx.nd.load(fixture(f"{name}-io.params"))["data"]
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(data=data.shape)
    for n, s in zip(sym.list_arguments(), arg_shapes):
        if n in args:
            assert args[n].shape == s, n
    assert [aux[n].shape for n in sym.list_auxiliary_states()] == aux_shapes
    assert out_shapes == [mx.nd.load(fixture(f"{name}-io.params"))["output"].shape]


@pytest.mark.parametrize("name", sorted(NETS))
def test_checkpoint_bind_forward_matches_mxnet(name):
    sym, args, aux = mx.model.load_checkpoint(fixture(name), 0)
    io = mx.nd.load(fixture(f"{name}-io.params"))
    batch = io["data"].shape[0]
    exe = sym.bind(mx.cpu(), dict(args, data=io["data"], softmax_label=mx.nd.zeros((batch,))),
                   aux_states=aux, grad_req="null")
    out = exe.forward(is_train=False)[0]
    np.testing.assert_allclose(out.asnumpy(), io["output"].asnumpy(), rtol=1e-5, atol=1e-7)
    # inference leaves BatchNorm's moving statistics as MXNet saved them
    for k, v in mx.nd.load(fixture(f"{name}-0000.params")).items():
        if k.startswith("aux:"):
            assert same(exe.aux_dict[k[4:]].asnumpy(), v.asnumpy())


@pytest.mark.parametrize("name", sorted(NETS))
def test_checkpoint_resave_round_trip(tmp_path, name):
    """mxlite re-saves MXNet's checkpoint: the same params bytes, a graph that reloads the same."""
    sym, args, aux = mx.model.load_checkpoint(fixture(name), 0)
    prefix = str(tmp_path / name)
    mx.model.save_checkpoint(prefix, 0, sym, args, aux)
    with open(fixture(f"{name}-0000.params"), "rb") as f, open(prefix + "-0000.params", "rb") as g:
        assert f.read() == g.read()
    sym2, args2, aux2 = mx.model.load_checkpoint(prefix, 0)
    assert sym2.tojson() == sym.tojson()
    io = mx.nd.load(fixture(f"{name}-io.params"))
    batch = io["data"].shape[0]
    exe = sym2.bind(mx.cpu(), dict(args2, data=io["data"], softmax_label=mx.nd.zeros((batch,))),
                    aux_states=aux2, grad_req="null")
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), io["output"].asnumpy(), rtol=1e-5,
                               atol=1e-7)


# ---- the other direction: MXNet 1.9.1 ran the checkpoint mxlite wrote ---------------------------
def _mxlite_fixture_script():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_mxlite_fixtures",
                                                  fixture("make_mxlite_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mxnet_ran_mxlites_checkpoint(tmp_path):
    """mxlite_net-* were written by mxlite's save_checkpoint (make_mxlite_fixtures.py) and
    loaded and run by MXNet 1.9.1 (make_mxnet_fixtures.py): mxlite computes MXNet's outputs,
    and still writes the same params bytes."""
    script = _mxlite_fixture_script()
    net = script.build(mx)
    data, args, aux = script.params(mx, net, (2, 3, 4, 4))
    prefix = str(tmp_path / "again")
    mx.model.save_checkpoint(prefix, 2, net, args, aux)
    with open(fixture("mxlite_net-0002.params"), "rb") as f, open(prefix + "-0002.params", "rb") as g:
        assert f.read() == g.read()
    assert same(mx.nd.load(fixture("mxlite_net-io.params"))["data"].asnumpy(), data.asnumpy())
    sym, args2, aux2 = mx.model.load_checkpoint(fixture("mxlite_net"), 2)
    assert sym.list_arguments() == net.list_arguments()
    assert sym.list_auxiliary_states() == net.list_auxiliary_states()
    assert sym.list_outputs() == net.list_outputs()
    want = mx.nd.load(fixture("mxlite_net-mxnet-out.params"))
    assert sorted(want) == ["output0", "output1"]
    for graph, a, x in ((net, args, aux), (sym, args2, aux2)):
        exe = graph.bind(mx.cpu(), dict(a, data=data), aux_states=x, grad_req="null")
        outs = exe.forward(is_train=False)
        for i, o in enumerate(outs):
            np.testing.assert_allclose(o.asnumpy(), want[f"output{i}"].asnumpy(), rtol=1e-5,
                                       atol=1e-6)
