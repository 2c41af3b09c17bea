"""mx.mod.Module (mxlite/module/module.py, executor_group.py, base_module.py) against
MXNet 1.9.1's documented behaviour: numbers from NumPy and from a Module checkpoint made by
MXNet (tests/fixtures/make_module_fixture.py)."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "module",
                       "mxnet_convnet")


# ---- helpers -------------------------------------------------------------------------------
def softmax_net(num_hidden=3):
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=num_hidden, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def linear_net(num_hidden=3):
    return mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=num_hidden, name="fc")


def np_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fc_params(rng, n_in=5, n_out=3):
    return {"fc_weight": rng.standard_normal((n_out, n_in)).astype("f") * 0.5,
            "fc_bias": rng.standard_normal(n_out).astype("f") * 0.1}


def nd_dict(params):
    return {k: mx.nd.array(v) for k, v in params.items()}


def bound_softmax_module(params, batch=4, context=None, **kwargs):
    mod = mx.mod.Module(softmax_net(params["fc_weight"].shape[0]),
                        context=context or mx.cpu(), **kwargs)
    mod.bind(data_shapes=[("data", (batch, params["fc_weight"].shape[1]))],
             label_shapes=[("softmax_label", (batch,))])
    mod.init_params(arg_params=nd_dict(params))
    return mod


def np_sgd_step(params, x, y, lr, rescale=None):
    """One SGD step of FC + SoftmaxOutput with MXNet's default rescale_grad 1/batch."""
    w, b = params["fc_weight"], params["fc_bias"]
    g = np_softmax(x @ w.T + b)
    g[np.arange(len(y)), y.astype(int)] -= 1
    g *= rescale if rescale is not None else 1.0 / len(y)
    return {"fc_weight": w - lr * g.T @ x, "fc_bias": b - lr * g.sum(axis=0)}


def batch_of(x, y=None):
    return mx.io.DataBatch([mx.nd.array(x)], None if y is None else [mx.nd.array(y)])


# ---- the update step -----------------------------------------------------------------------
def test_sgd_step_matches_numpy(rng):
    params = fc_params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([0, 2, 1, 2], dtype="f")
    mod = bound_softmax_module(params)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 4)
    assert mod._optimizer.idx2name == {0: "fc_weight", 1: "fc_bias"}
    mod.forward_backward(batch_of(x, y))
    mod.update()
    got, _ = mod.get_params()
    want = np_sgd_step(params, x, y, 0.5)
    for k in want:
        np.testing.assert_allclose(got[k].asnumpy(), want[k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("copies", [1, 2])
def test_sgd_step_on_each_device(device, rng, copies):
    """The step on cpu and gpu, on one context or split over two (a 'device' store, which
    sums and updates on the device; 'local' would on the CPU)."""
    params = fc_params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([2, 0, 1, 1], dtype="f")
    mod = bound_softmax_module(params, context=[device] * copies)
    mod.init_optimizer(kvstore="device", optimizer_params={"learning_rate": 0.5})
    mod.forward_backward(batch_of(x, y))
    mod.update()
    assert mod.get_outputs()[0].context == device
    want = np_sgd_step(params, x, y, 0.5)
    got = mod.get_params()[0]
    for k in want:
        np.testing.assert_allclose(got[k].asnumpy(), want[k], rtol=1e-5, atol=1e-6)


def test_explicit_rescale_grad_is_kept(rng):
    mod = bound_softmax_module(fc_params(rng))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "rescale_grad": 1.0})
    assert mod._optimizer.rescale_grad == 1.0


@pytest.mark.parametrize("update_on_kvstore", ["1", "0"])
@pytest.mark.parametrize("workload", [None, [1, 3]])
def test_two_contexts_sum_gradients(rng, monkeypatch, update_on_kvstore, workload):
    """A batch split over cpu(0) and cpu(1) trains as one context: the gradients are
    summed (in the store, or summed then applied on each context)."""
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", update_on_kvstore)
    params = fc_params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([1, 0, 2, 2], dtype="f")
    one = bound_softmax_module(params)
    two = bound_softmax_module(params, context=[mx.cpu(0), mx.cpu(1)],
                               work_load_list=workload)
    sizes = [s.stop - s.start for s in two._exec_group.slices]
    assert sizes == ([2, 2] if workload is None else [1, 3])
    for mod in (one, two):
        # wd: biases get none (wd_mult 0 by name), whether the store (keys are names) or
        # the module (indices) updates
        mod.init_optimizer(optimizer_params={"learning_rate": 0.5, "momentum": 0.9,
                                             "wd": 0.1})
        for _ in range(2):
            mod.forward_backward(batch_of(x, y))
            mod.update()
    assert (two._kvstore is not None) and two._update_on_kvstore == (update_on_kvstore == "1")
    # the gradient of context k is that of its slice; their sum is the whole batch's
    g_one = one._exec_group.grad_arrays[0][0].asnumpy()
    g_two = sum(g.asnumpy() for g in two._exec_group.grad_arrays[0]) \
        if update_on_kvstore == "1" else two._exec_group.grad_arrays[0][0].asnumpy()
    np.testing.assert_allclose(g_two, g_one, rtol=1e-5, atol=1e-6)
    p_one, p_two = one.get_params()[0], two.get_params()[0]
    for k in p_one:
        np.testing.assert_allclose(p_two[k].asnumpy(), p_one[k].asnumpy(), rtol=1e-5,
                                   atol=1e-6)
        for w in two._exec_group.param_arrays[two._param_names.index(k)]:
            np.testing.assert_allclose(w.asnumpy(), p_one[k].asnumpy(), rtol=1e-5, atol=1e-6)


def test_fixed_params_are_not_updated(rng):
    params = fc_params(rng)
    mod = bound_softmax_module(params, fixed_param_names=["fc_weight"])
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    x = rng.standard_normal((4, 5)).astype("f")
    mod.forward_backward(batch_of(x, np.zeros(4)))
    mod.update()
    got = mod.get_params()[0]
    np.testing.assert_array_equal(got["fc_weight"].asnumpy(), params["fc_weight"])
    assert not np.allclose(got["fc_bias"].asnumpy(), params["fc_bias"])


def test_input_grads_and_grad_req_add(rng):
    params = fc_params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    head = rng.standard_normal((4, 3)).astype("f")
    mod = mx.mod.Module(linear_net(), label_names=None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 5))], inputs_need_grad=True, grad_req="add")
    mod.init_params(arg_params=nd_dict(params))
    for _ in range(2):
        mod.forward(batch_of(x), is_train=True)
        mod.backward([mx.nd.array(head)])
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(),
                               2 * head @ params["fc_weight"], rtol=1e-5, atol=1e-5)
    w_grads = [g.asnumpy() for g in mod._exec_group.grad_arrays[0]]
    np.testing.assert_allclose(sum(w_grads), 2 * head.T @ x, rtol=1e-5, atol=1e-5)


# ---- outputs, predict, score ----------------------------------------------------------------
def test_outputs_merge_along_the_layout_batch_axis():
    data = mx.sym.var("data")
    net = mx.sym.Activation(data, act_type="relu", name="relu", __layout__="TNC")
    mod = mx.mod.Module(net, label_names=None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (2, 6, 3), layout="TNC")])
    mod.init_params()
    x = np.arange(36, dtype="f").reshape(2, 6, 3) - 10
    mod.forward(batch_of(x))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape for p in parts] == [(2, 3, 3), (2, 3, 3)]
    np.testing.assert_array_equal(parts[1].asnumpy(), np.maximum(x[:, 3:], 0))
    assert mod.output_shapes == [("relu_output", (2, 6, 3))]


def predict_module(params, batch):
    mod = mx.mod.Module(linear_net(), label_names=None)
    mod.bind(data_shapes=[("data", (batch, 5))], for_training=False)
    mod.init_params(arg_params=nd_dict(params))
    return mod


def test_predict_merges_batches_and_drops_pad(rng):
    params = fc_params(rng)
    x = rng.standard_normal((10, 5)).astype("f")
    want = x @ params["fc_weight"].T + params["fc_bias"]
    mod = predict_module(params, 4)
    it = mx.io.NDArrayIter(x, batch_size=4, last_batch_handle="pad")
    np.testing.assert_allclose(mod.predict(it).asnumpy(), want, rtol=1e-5, atol=1e-6)
    listed = mod.predict(it, always_output_list=True)
    assert isinstance(listed, list) and listed[0].shape == (10, 3)
    per_batch = mod.predict(it, merge_batches=False)
    assert [len(b) for b in per_batch] == [1, 1, 1]
    assert [b[0].shape[0] for b in per_batch] == [4, 4, 2]
    assert mod.predict(it, num_batch=1).shape == (4, 3)
    seen = [(n, outs[0].shape[0]) for outs, n, _ in mod.iter_predict(it)]
    assert seen == [(0, 4), (1, 4), (2, 2)]
    # an array is one batch (a different batch size reshapes the executor)
    np.testing.assert_allclose(mod.predict(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_forward_reshapes_for_a_new_batch_size(rng):
    params = fc_params(rng)
    mod = bound_softmax_module(params)
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    x = rng.standard_normal((6, 5)).astype("f")
    y = np.array([0, 1, 2, 0, 1, 2], dtype="f")
    mod.forward_backward(batch_of(x, y))
    assert mod.get_outputs()[0].shape == (6, 3)
    mod.update()
    # rescale_grad was fixed by init_optimizer at 1 / the bound batch size (as MXNet)
    want = np_sgd_step(params, x, y, 0.5, rescale=1 / 4)
    np.testing.assert_allclose(mod.get_params()[0]["fc_weight"].asnumpy(),
                               want["fc_weight"], rtol=1e-5, atol=1e-6)


def test_score_and_update_metric(rng):
    params = fc_params(rng)
    x = rng.standard_normal((8, 5)).astype("f")
    pred = np.argmax(x @ params["fc_weight"].T + params["fc_bias"], axis=1)
    y = pred.copy().astype("f")
    y[:3] = (y[:3] + 1) % 3                  # three wrong
    mod = bound_softmax_module(params)
    calls = []
    res = mod.score(mx.io.NDArrayIter(x, y, batch_size=4), "acc",
                    batch_end_callback=lambda p: calls.append(p.nbatch),
                    score_end_callback=lambda p: calls.append(("end", p.nbatch)))
    assert res == [("accuracy", pytest.approx(5 / 8))]
    assert calls == [0, 1, ("end", 2)]


# ---- fit ------------------------------------------------------------------------------------
def separable_images(rng, n):
    """Class k lights up quarter k of a 1x8x8 image (plus noise)."""
    y = np.arange(n) % 4
    x = rng.normal(0, 0.3, (n, 1, 8, 8)).astype("f")
    for k in range(4):
        r, c = divmod(k, 2)
        x[y == k, 0, 4 * r:4 * r + 4, 4 * c:4 * c + 4] += 1.0
    return x, y.astype("f")


def small_cnn():
    x = mx.sym.Convolution(mx.sym.var("data"), kernel=(3, 3), num_filter=4, pad=(1, 1),
                           name="conv")
    x = mx.sym.Activation(x, act_type="relu")
    x = mx.sym.Pooling(x, kernel=(4, 4), stride=(4, 4), pool_type="avg")
    x = mx.sym.FullyConnected(mx.sym.flatten(x), num_hidden=4, name="fc")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def test_fit_trains_a_cnn_and_calls_back(rng):
    mx.random.seed(3)
    x, y = separable_images(rng, 96)
    xv, yv = separable_images(rng, 32)
    train = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=True)
    val = mx.io.NDArrayIter(xv, yv, batch_size=16)
    mod = mx.mod.Module(small_cnn())
    batches, epochs, evals = [], [], []
    mod.fit(train, eval_data=val, num_epoch=6, optimizer="sgd",
            optimizer_params={"learning_rate": 0.2, "momentum": 0.9},
            initializer=mx.init.Xavier(magnitude=2.0),
            batch_end_callback=lambda p: batches.append((p.epoch, p.nbatch)),
            epoch_end_callback=lambda e, sym, arg, aux: epochs.append((e, sorted(arg))),
            eval_end_callback=lambda p: evals.append((p.epoch, p.nbatch)))
    assert batches[:7] == [(0, k) for k in range(6)] + [(1, 0)] and len(batches) == 36
    assert epochs == [(e, ["conv_bias", "conv_weight", "fc_bias", "fc_weight"])
                      for e in range(6)]
    assert evals == [(e, 2) for e in range(6)]
    (name, acc), = mod.score(val, "acc")
    assert acc >= 0.9, acc       # chance is 0.25


def test_fit_without_data_or_epochs():
    mod = mx.mod.Module(softmax_net())
    with pytest.raises(MXNetError, match="fit: train_data"):
        mod.fit(None, num_epoch=1)
    it = mx.io.NDArrayIter(np.zeros((4, 5), "f"), np.zeros(4, "f"), batch_size=2)
    with pytest.raises(MXNetError, match="fit: num_epoch"):
        mod.fit(it)


# ---- checkpoints ----------------------------------------------------------------------------
def test_checkpoint_round_trip_with_optimizer_states(rng, tmp_path):
    params = fc_params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([0, 1, 2, 1], dtype="f")
    mod = bound_softmax_module(params)
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    mod.forward_backward(batch_of(x, y))
    mod.update()
    prefix = str(tmp_path / "net")
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ["net-0002.params", "net-0002.states",
                                            "net-symbol.json"]
    back = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    back.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    back.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    assert back.symbol.tojson() == mod.symbol.tojson()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(back.get_params()[0][k].asnumpy(), v.asnumpy())
    for i, s in mod._updater.states.items():
        np.testing.assert_array_equal(back._updater.states[i].asnumpy(), s.asnumpy())
    for m in (mod, back):            # the momentum carries on alike
        m.forward_backward(batch_of(x, y))
        m.update()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(back.get_params()[0][k].asnumpy(), v.asnumpy())


def test_save_and_load_params(rng, tmp_path):
    params = fc_params(rng)
    mod = bound_softmax_module(params)
    fname = str(tmp_path / "p.params")
    mod.save_params(fname)
    other = bound_softmax_module(fc_params(rng))
    other.load_params(fname)
    for k, v in params.items():
        np.testing.assert_array_equal(other.get_params()[0][k].asnumpy(), v)
    mx.nd.save(fname, {"weird:fc_bias": mx.nd.zeros(3)})
    with pytest.raises(MXNetError, match="load_params: key 'weird:fc_bias'"):
        other.load_params(fname)


def test_mxnet_checkpoint_predicts_as_mxnet():
    io = np.load(FIXTURE + "_io.npz")
    mod = mx.mod.Module.load(FIXTURE, 3)
    mod.bind(data_shapes=[("data", io["x"].shape)], for_training=False)
    np.testing.assert_allclose(mod.predict(io["x"]).asnumpy(), io["prob"], rtol=1e-4,
                               atol=1e-6)


def test_training_from_mxnet_initial_params_matches_mxnet():
    """Three SGD-momentum steps of the fixture's convnet (BatchNorm included) from MXNet's
    initial parameters reach MXNet's parameters, moving statistics and momentum."""
    io = np.load(FIXTURE + "_io.npz")
    mod = mx.mod.Module.load(FIXTURE, 0)
    mod.bind(data_shapes=[("data", io["x"].shape)],
             label_shapes=[("softmax_label", io["y"].shape)])
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    batch = batch_of(io["x"], io["y"])
    for _ in range(3):
        mod.forward_backward(batch)
        mod.update()
    _, want_arg, want_aux = mx.model.load_checkpoint(FIXTURE, 3)
    got_arg, got_aux = mod.get_params()
    for got, want in ((got_arg, want_arg), (got_aux, want_aux)):
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_allclose(got[k].asnumpy(), want[k].asnumpy(), rtol=1e-4,
                                       atol=1e-5, err_msg=k)
    states = FIXTURE + "-0003.states"
    with pytest.raises(MXNetError, match="allow_pickle"):
        mod.load_optimizer_states(states)
    mod.load_optimizer_states(states, allow_pickle=True)
    index = mod._exec_group.param_names.index("fc_bias")
    np.testing.assert_allclose(mod._updater.states[index].asnumpy(), io["fc_bias_momentum"],
                               rtol=1e-6)


# ---- sharing, states, monitor ---------------------------------------------------------------
def test_shared_module_shares_parameters_and_optimizer(rng):
    params = fc_params(rng)
    first = bound_softmax_module(params)
    first.init_optimizer(optimizer_params={"learning_rate": 0.5})
    second = mx.mod.Module(softmax_net())
    second.bind(data_shapes=[("data", (2, 5))], label_shapes=[("softmax_label", (2,))],
                shared_module=first)
    assert second.params_initialized and second.optimizer_initialized
    assert second._updater is first._updater
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([0, 1, 2, 0], dtype="f")
    first.forward_backward(batch_of(x, y))
    first.update()
    second.forward(batch_of(x[:2]), is_train=False)
    w = np_sgd_step(params, x, y, 0.5)
    np.testing.assert_allclose(second.get_outputs()[0].asnumpy(),
                               np_softmax(x[:2] @ w["fc_weight"].T + w["fc_bias"]),
                               rtol=1e-5, atol=1e-6)


def test_state_inputs():
    data, state = mx.sym.var("data"), mx.sym.var("state")
    mod = mx.mod.Module(data + 2 * state, label_names=None, state_names=["state"],
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 3))], for_training=False)
    mod.init_params()
    assert mod._param_names == []
    mod.set_states(value=1.5)
    mod.forward(batch_of(np.ones((4, 3), "f")))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((4, 3), 4.0))
    assert mod.get_states(merge_multi_context=False)[0][1].shape == (2, 3)


def test_install_monitor_reaches_every_executor(rng):
    class Recorder:
        def __init__(self):
            self.names = []

        def install(self, exe):
            exe.set_monitor_callback(lambda name, arr: self.names.append(name))

    mon = Recorder()
    mod = bound_softmax_module(fc_params(rng), context=[mx.cpu(0), mx.cpu(1)])
    mod.install_monitor(mon)
    mod.forward(batch_of(np.ones((4, 5), "f"), np.zeros(4, "f")), is_train=False)
    assert mon.names.count("fc_output") == 2


# ---- bad input ------------------------------------------------------------------------------
def test_unbound_module_errors_name_the_method(rng):
    mod = mx.mod.Module(softmax_net())
    with pytest.raises(MXNetError, match=r"forward: the module is not binded .*bind\(\)"):
        mod.forward(batch_of(np.ones((4, 5), "f")))
    with pytest.raises(MXNetError, match="init_params: the module is not binded"):
        mod.init_params()
    mod = bound_softmax_module(fc_params(rng))
    with pytest.raises(MXNetError, match=r"update: .*init_optimizer\(\)"):
        mod.update()
    with pytest.raises(MXNetError, match="get_input_grads: .*inputs_need_grad=True"):
        mod.get_input_grads()


def test_bad_names_and_shapes():
    with pytest.raises(MXNetError, match="data_names=\\['x'\\] but 'x'"):
        mx.mod.Module(softmax_net(), data_names=["x"])
    mod = mx.mod.Module(softmax_net())
    with pytest.raises(MXNetError, match=r"bind: data_shapes name \['input'\].*\['data'\]"):
        mod.bind(data_shapes=[("input", (4, 5))], label_shapes=[("softmax_label", (4,))])
    with pytest.raises(TypeError, match="bind: the shape of data 'data'"):
        mod.bind(data_shapes=[("data", mx.nd.array([4, 5]))])
    with pytest.raises(MXNetError, match="bind: data_shapes must be given"):
        mod.bind(data_shapes=None)
    assert not mod.binded
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    with pytest.raises(MXNetError, match="forward: the batch has 2 data arrays"):
        mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5)), mx.nd.ones((4, 5))]))
    with pytest.raises(MXNetError, match="split over 2 contexts"):
        two = mx.mod.Module(softmax_net(), context=[mx.cpu(0), mx.cpu(1)])
        two.bind(data_shapes=[("data", (1, 5))], label_shapes=[("softmax_label", (1,))])


def test_set_params_missing_and_extra(rng):
    params = fc_params(rng)
    mod = bound_softmax_module(params)
    missing = {"fc_weight": mx.nd.array(params["fc_weight"])}
    with pytest.raises(RuntimeError, match="init_params: 'fc_bias' is not in the given"):
        mod.set_params(missing, {})
    mod.set_params(missing, {}, allow_missing=True)
    extra = dict(nd_dict(params), other=mx.nd.zeros(2))
    with pytest.raises(MXNetError, match=r"set_params: arg_params has names \['other'\]"):
        mod.set_params(extra, {}, allow_missing=True)
    mod.set_params(extra, {}, allow_extra=True)


def test_fit_make_loss_without_label_names_ignores_the_iterators_labels(rng):
    """label_names=None with an iterator that has labels: MXNet's warning, and the labels
    are left out (MakeLoss needs none); one SGD step of sum((x W^T + b)^2) as NumPy."""
    w = rng.standard_normal((1, 3)).astype("f")
    b = np.array([0.5], "f")
    x = rng.standard_normal((8, 3)).astype("f")
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, name="fc")
    mod = mx.mod.Module(mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(fc))), label_names=None)
    mod.fit(mx.io.NDArrayIter(x, np.zeros(8, "f"), batch_size=8), num_epoch=1,
            eval_metric="loss", arg_params={"fc_weight": mx.nd.array(w),
                                            "fc_bias": mx.nd.array(b)},
            optimizer_params={"learning_rate": 0.1})
    assert mod.label_shapes is None
    out = x @ w.T + b
    got = mod.get_params()[0]
    np.testing.assert_allclose(got["fc_bias"].asnumpy(), b - 0.1 / 8 * 2 * out.sum(0),
                               rtol=1e-5)
    np.testing.assert_allclose(got["fc_weight"].asnumpy(), w - 0.1 / 8 * 2 * out.T @ x,
                               rtol=1e-5)


def test_a_batch_that_does_not_fit_leaves_the_module_working(rng):
    params = fc_params(rng)
    mod = predict_module(params, 4)
    with pytest.raises(MXNetError, match=r"forward: the batch's data shapes \[\(4, 5, 2\)\] "
                                         r"do not fit the module bound for \[\(4, 5\)\]"):
        mod.forward(batch_of(np.ones((4, 5, 2), "f")))
    x = rng.standard_normal((4, 5)).astype("f")
    mod.forward(batch_of(x))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               x @ params["fc_weight"].T + params["fc_bias"], rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(MXNetError, match="predict: eval_data must be a data iterator"):
        mod.predict("x")
    with pytest.raises(MXNetError, match="Module: symbol must be an mx.sym.Symbol"):
        mx.mod.Module("x")


def test_predict_an_array_in_inference_mode_with_every_output(rng):
    """An array given to predict runs with is_train=False (Dropout off) even in a module
    bound for training, and every output comes back (MXNet: the binding's mode, the first
    output only)."""
    data = mx.sym.var("data")
    net = mx.sym.Group([mx.sym.Dropout(data, p=0.5), 2 * data])
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (4, 3))], for_training=True)
    mod.init_params()
    x = rng.standard_normal((4, 3)).astype("f")
    first, second = mod.predict(x)
    np.testing.assert_array_equal(first.asnumpy(), x)
    np.testing.assert_array_equal(second.asnumpy(), 2 * x)
