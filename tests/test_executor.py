"""Executor: Symbol.bind / simple_bind, forward/backward, grad_req, aux states, reshape."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _mlp():
    """data (4, 5) -> FullyConnected(3) -> tanh -> FullyConnected(2)."""
    data = mx.sym.Variable("data")
    h = mx.sym.tanh(mx.sym.FullyConnected(data, num_hidden=3, name="fc1"))
    return mx.sym.FullyConnected(h, num_hidden=2, name="fc2")


def _mlp_values(rng):
    return {"data": rng.standard_normal((4, 5)), "fc1_weight": rng.standard_normal((3, 5)),
            "fc1_bias": rng.standard_normal(3), "fc2_weight": rng.standard_normal((2, 3)),
            "fc2_bias": rng.standard_normal(2)}


def _mlp_reference(v, head):
    """NumPy forward and backward of the MLP for head gradient ``head``."""
    a = v["data"] @ v["fc1_weight"].T + v["fc1_bias"]
    h = np.tanh(a)
    y = h @ v["fc2_weight"].T + v["fc2_bias"]
    dh = head @ v["fc2_weight"]
    da = dh * (1 - h * h)
    grads = {"fc2_weight": head.T @ h, "fc2_bias": head.sum(0), "fc1_weight": da.T @ v["data"],
             "fc1_bias": da.sum(0), "data": da @ v["fc1_weight"]}
    return y, grads


def _nd(v):
    return {k: mx.nd.array(a, dtype="float64") for k, a in v.items()}


def _zeros_like(arrays):
    return {k: mx.nd.zeros(a.shape, dtype=a.dtype) for k, a in arrays.items()}


def test_bind_forward_backward_match_numpy():
    rng = np.random.default_rng(0)
    v = _mlp_values(rng)
    head = rng.standard_normal((4, 2))
    sym = _mlp()
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    args = _nd(v)
    exe = sym.bind(mx.cpu(), args=args, args_grad=_zeros_like(args))
    y_ref, g_ref = _mlp_reference(v, head)
    out = exe.forward(is_train=True)
    assert out is exe.outputs and len(out) == 1
    np.testing.assert_allclose(out[0].asnumpy(), y_ref, rtol=1e-12)
    assert list(exe.output_dict) == ["fc2_output"]
    exe.backward(mx.nd.array(head, dtype="float64"))
    assert sorted(exe.grad_dict) == sorted(g_ref)
    for k, g in g_ref.items():
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), g, rtol=1e-10, err_msg=k)


def test_args_as_list_equal_args_as_dict():
    rng = np.random.default_rng(1)
    v = _mlp_values(rng)
    sym = _mlp()
    by_dict = sym.bind(mx.cpu(), args=_nd(v)).forward()[0].asnumpy()
    as_list = [mx.nd.array(v[n], dtype="float64") for n in sym.list_arguments()]
    exe = sym.bind(mx.cpu(), args=as_list)
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), by_dict)
    assert exe.arg_arrays[0] is as_list[0] and exe.arg_dict["fc1_bias"] is as_list[2]


def test_bind_errors():
    rng = np.random.default_rng(2)
    v = _mlp_values(rng)
    sym = _mlp()
    missing = _nd(v)
    del missing["fc2_bias"]
    with pytest.raises(MXNetError, match="fc2_bias"):
        sym.bind(mx.cpu(), args=missing)
    with pytest.raises(MXNetError, match="4 arrays"):
        sym.bind(mx.cpu(), args=list(_nd(v).values())[:4])
    with pytest.raises(MXNetError, match="grad_req"):
        sym.bind(mx.cpu(), args=_nd(v), args_grad=_zeros_like(_nd(v)), grad_req="sometimes")
    bad = _zeros_like(_nd(v))
    bad["fc1_weight"] = mx.nd.zeros((5, 3), dtype="float64")
    with pytest.raises(MXNetError, match="fc1_weight"):
        sym.bind(mx.cpu(), args=_nd(v), args_grad=bad)


def test_grad_req_add_null_and_per_argument():
    rng = np.random.default_rng(3)
    v = _mlp_values(rng)
    head = rng.standard_normal((4, 2))
    _, g_ref = _mlp_reference(v, head)
    args = _nd(v)
    reqs = {"data": "null", "fc1_weight": "add", "fc1_bias": "write", "fc2_weight": "null",
            "fc2_bias": "add"}
    exe = _mlp().bind(mx.cpu(), args=args, args_grad=_zeros_like(args), grad_req=reqs)
    assert sorted(k for k, g in exe.grad_dict.items() if g is not None) == [
        "fc1_bias", "fc1_weight", "fc2_bias"]
    assert exe.grad_dict["data"] is None and exe.grad_arrays[0] is None     # MXNet's dict
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward([mx.nd.array(head, dtype="float64")])
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(), 2 * g_ref["fc1_weight"],
                               rtol=1e-10)
    np.testing.assert_allclose(exe.grad_dict["fc2_bias"].asnumpy(), 2 * g_ref["fc2_bias"],
                               rtol=1e-10)
    np.testing.assert_allclose(exe.grad_dict["fc1_bias"].asnumpy(), g_ref["fc1_bias"],
                               rtol=1e-10)


def test_backward_needs_head_gradient_unless_loss():
    rng = np.random.default_rng(4)
    v = _mlp_values(rng)
    args = _nd(v)
    exe = _mlp().bind(mx.cpu(), args=args, args_grad=_zeros_like(args))
    exe.forward(is_train=True)
    with pytest.raises(MXNetError, match="not a loss"):
        exe.backward()
    with pytest.raises(MXNetError, match="shape"):
        exe.backward(mx.nd.zeros((2, 4), dtype="float64"))
    # a loss head: SoftmaxOutput's gradient is softmax - one_hot(label)
    sym = mx.sym.SoftmaxOutput(_mlp(), name="sm")
    assert sym.list_arguments()[-1] == "sm_label"
    label = np.array([0, 1, 1, 0])
    args = dict(_nd(v), sm_label=mx.nd.array(label, dtype="float64"))
    exe = sym.bind(mx.cpu(), args=args, args_grad={"fc2_bias": mx.nd.zeros(2, dtype="float64")})
    y_ref, _ = _mlp_reference(v, np.zeros((4, 2)))
    p = np.exp(y_ref - y_ref.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), p, rtol=1e-12)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["fc2_bias"].asnumpy(),
                               (p - np.eye(2)[label]).sum(0), rtol=1e-10, atol=1e-14)


def test_backward_follows_a_forward_in_either_mode():
    rng = np.random.default_rng(5)
    v = _mlp_values(rng)
    head = rng.standard_normal((4, 2))
    args = _nd(v)
    exe = _mlp().bind(mx.cpu(), args=args, args_grad=_zeros_like(args))
    assert [o.shape for o in exe.outputs] == [(4, 2)]      # allocated at bind, as MXNet
    with pytest.raises(MXNetError, match="call forward first"):
        exe.backward(mx.nd.ones((4, 2), dtype="float64"))
    exe.forward(is_train=False)     # MXNet's executor can run backward after this too
    exe.backward(mx.nd.array(head, dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(),
                               _mlp_reference(v, head)[1]["fc1_weight"], rtol=1e-10)


def test_forward_keywords_copy_into_arguments():
    rng = np.random.default_rng(6)
    v = _mlp_values(rng)
    exe = _mlp().bind(mx.cpu(), args=_nd(v))
    new = rng.standard_normal((4, 5))
    out = exe.forward(data=mx.nd.array(new, dtype="float64"))[0].asnumpy()
    np.testing.assert_array_equal(exe.arg_dict["data"].asnumpy(), new)
    np.testing.assert_allclose(out, _mlp_reference(dict(v, data=new), np.zeros((4, 2)))[0],
                               rtol=1e-12)
    exe.forward(data=np.ones((4, 5)))
    np.testing.assert_array_equal(exe.arg_dict["data"].asnumpy(), np.ones((4, 5)))
    with pytest.raises(MXNetError, match="not an argument"):
        exe.forward(weights=new)


def test_simple_bind_allocates_from_inferred_shapes_and_types():
    sym = mx.sym.SoftmaxOutput(_mlp(), name="softmax")
    exe = sym.simple_bind(mx.cpu(), data=(8, 5))
    shapes = {k: a.shape for k, a in exe.arg_dict.items()}
    assert shapes == {"data": (8, 5), "fc1_weight": (3, 5), "fc1_bias": (3,),
                      "fc2_weight": (2, 3), "fc2_bias": (2,), "softmax_label": (8,)}
    assert all(a.dtype == np.float32 for a in exe.arg_arrays)
    assert sorted(exe.grad_dict) == sorted(shapes)
    assert all(not g.asnumpy().any() for g in exe.grad_arrays)
    exe64 = sym.simple_bind(mx.cpu(), grad_req="null", type_dict={"data": "float64"},
                            data=(8, 5))
    assert all(a.dtype == np.float64 for a in exe64.arg_arrays)
    assert exe64.grad_dict == dict.fromkeys(shapes) and exe64.grad_arrays == [None] * 6
    with pytest.raises(MXNetError):
        _mlp().simple_bind(mx.cpu())      # no shape given: weights cannot be inferred


def _bn_net():
    data = mx.sym.Variable("data")
    return mx.sym.BatchNorm(data, momentum=0.8, eps=1e-5, fix_gamma=False, name="bn")


def test_batchnorm_moving_statistics_update_only_in_training():
    sym = _bn_net()
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    exe = sym.simple_bind(mx.cpu(), type_dict={"data": "float64"}, data=(6, 3))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 3)) * 2 + 1
    exe.arg_dict["bn_gamma"][:] = 1.0
    exe.aux_dict["bn_moving_var"][:] = 1.0
    mean0 = exe.aux_dict["bn_moving_mean"]
    out = exe.forward(is_train=False, data=x)[0].asnumpy()
    np.testing.assert_allclose(out, x / np.sqrt(1 + 1e-5), rtol=1e-12)   # moving stats
    assert not exe.aux_dict["bn_moving_mean"].asnumpy().any()
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-10)
    assert exe.aux_dict["bn_moving_mean"] is mean0        # updated in place
    np.testing.assert_allclose(mean0.asnumpy(), 0.2 * x.mean(0), rtol=1e-12)
    exe.backward(mx.nd.ones((6, 3), dtype="float64"))
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), 0.2 * x.mean(0),
                               rtol=1e-12)               # backward leaves them alone


def test_dropout_active_only_in_training():
    sym = mx.sym.Dropout(mx.sym.Variable("data"), p=0.5)
    exe = sym.simple_bind(mx.cpu(), data=(100, 10))
    exe.arg_dict["data"][:] = 1.0
    np.testing.assert_array_equal(exe.forward(is_train=False)[0].asnumpy(), 1.0)
    y = exe.forward(is_train=True)[0].asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 300 < (y == 0).sum() < 700


def test_backward_is_a_gradient_graph_over_the_forward_values(monkeypatch):
    """backward evaluates the mx.sym.grad graph built at bind: no autograd engine, no forward
    node run again; Dropout's mask (a hidden output) comes from the same forward run."""
    from mxlite.ops.registry import REGISTRY
    sym = mx.sym.Dropout(mx.sym.Variable("data") * 3, p=0.5)
    exe = sym.simple_bind(mx.cpu(), data=(50, 20), grad_req="add")
    exe.arg_dict["data"][:] = 1.0
    assert exe._plan.grad_steps and all(op.name != "Dropout" for op, *_ in exe._plan.grad_steps)
    calls = []
    op = REGISTRY["Dropout"]
    for key, fn in list(op.compute.items()):
        monkeypatch.setitem(op.compute, key,
                            lambda *a, _fn=fn: (calls.append(1), _fn(*a))[1])

    def no_engine(*a, **k):
        raise AssertionError("the executor's backward must not use the autograd engine")
    monkeypatch.setattr(mx.autograd, "backward", no_engine)
    monkeypatch.setattr(mx.autograd._engine, "backward_to_variables", no_engine)
    y = exe.forward(is_train=True)[0].asnumpy()
    assert len(calls) == 1 and 300 < (y == 0).sum() < 700
    for k in (1, 2):        # twice after one forward: 'add' accumulates, the same mask
        exe.backward(mx.nd.ones((50, 20)))
        np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), k * y)
    assert len(calls) == 1


def test_copy_params_from():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 5))
    w = np.arange(15.0).reshape(3, 5)
    exe.copy_params_from({"fc1_weight": mx.nd.array(w)})
    np.testing.assert_array_equal(exe.arg_dict["fc1_weight"].asnumpy(), w)
    with pytest.raises(ValueError, match="unknown"):
        exe.copy_params_from({"unknown": mx.nd.zeros(2)})
    exe.copy_params_from({"unknown": mx.nd.zeros(2), "fc2_bias": mx.nd.ones(2)},
                         allow_extra_params=True)
    np.testing.assert_array_equal(exe.arg_dict["fc2_bias"].asnumpy(), [1, 1])
    bn = _bn_net().simple_bind(mx.cpu(), data=(2, 3))
    bn.copy_params_from({}, {"bn_moving_var": mx.nd.full((3,), 4.0)})
    np.testing.assert_array_equal(bn.aux_dict["bn_moving_var"].asnumpy(), [4, 4, 4])


def test_reshape_shares_parameters():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 5))
    small = exe.reshape(data=(2, 5))
    assert small.arg_dict["data"].shape == (2, 5)
    for k in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
        assert small.arg_dict[k] is exe.arg_dict[k] and small.grad_dict[k] is exe.grad_dict[k]
    assert small.forward()[0].shape == (2, 2)
    with pytest.raises(MXNetError, match="allow_up_sizing"):
        exe.reshape(data=(8, 5))
    assert exe.reshape(allow_up_sizing=True, data=(8, 5)).forward()[0].shape == (8, 2)
    with pytest.raises(MXNetError, match="partial_shaping"):
        exe.reshape(allow_up_sizing=True, data=(4, 6))   # fc1_weight changes unnamed
    wide = exe.reshape(partial_shaping=True, allow_up_sizing=True, data=(4, 6))
    assert wide.arg_dict["fc1_weight"].shape == (3, 6)


def test_backward_twice_after_one_forward_accumulates_with_add():
    rng = np.random.default_rng(9)
    v = _mlp_values(rng)
    head = rng.standard_normal((4, 2))
    _, g_ref = _mlp_reference(v, head)
    args = _nd(v)
    exe = _mlp().bind(mx.cpu(), args=args, args_grad=_zeros_like(args), grad_req="add")
    exe.forward(is_train=True)
    for _ in range(2):
        exe.backward(mx.nd.array(head, dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(), 2 * g_ref["fc1_weight"],
                               rtol=1e-10)


def test_outputs_that_are_arguments_or_constants():
    """A variable as an output gets the head gradient; 'write' gives zeros to an argument no
    gradient reaches (here through BlockGrad)."""
    x = mx.sym.Variable("x")
    y = mx.sym.Variable("y")
    sym = mx.sym.Group([x, mx.sym.BlockGrad(y) * 2])
    args = {"x": mx.nd.array([1.0, 2.0]), "y": mx.nd.array([3.0, 4.0])}
    grads = {"x": mx.nd.full((2,), 7.0), "y": mx.nd.full((2,), 7.0)}
    exe = sym.bind(mx.cpu(), args=args, args_grad=grads)
    out = exe.forward(is_train=True)
    np.testing.assert_array_equal(out[1].asnumpy(), [6, 8])
    exe.backward([mx.nd.array([0.5, -1.0]), mx.nd.ones(2)])
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), [0.5, -1.0])
    np.testing.assert_array_equal(exe.grad_dict["y"].asnumpy(), [0, 0])
    only = (mx.sym.BlockGrad(y) * 2).bind(mx.cpu(), args={"y": args["y"]},
                                          args_grad={"y": mx.nd.full((2,), 7.0)})
    only.forward(is_train=True)
    only.backward(mx.nd.ones(2))
    np.testing.assert_array_equal(only.grad_dict["y"].asnumpy(), [0, 0])


def test_forward_keyword_of_another_shape_raises():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 5))
    for value in (np.ones((4, 4)), mx.nd.ones((1, 5)), 3.0):
        with pytest.raises(MXNetError, match="shape"):
            exe.forward(data=value)


def test_bound_arrays_keep_their_own_autograd_state():
    """The executor marks its arguments as autograd variables only while it runs."""
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    own = x.grad
    exe = (mx.sym.Variable("x") * 3).bind(mx.cpu(), args={"x": x},
                                          args_grad={"x": mx.nd.zeros(2)})
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(2))
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), [3, 3])
    assert x.grad is own and not own.asnumpy().any()
    with mx.autograd.record():          # x is still the user's variable
        y = x * x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4])
    unmarked = mx.nd.array([1.0])
    (mx.sym.Variable("u") + 1).bind(mx.cpu(), {"u": unmarked},
                                    {"u": mx.nd.zeros(1)}).forward(is_train=True)
    with mx.autograd.record():
        z = unmarked * 2
    with pytest.raises(MXNetError):     # not a variable: no gradient to compute
        mx.autograd.grad(z, [unmarked])


def test_training_step_matches_mxnet_1_9_1():
    """Output, every gradient, the updated moving statistics and the inference output of a
    BatchNorm + FullyConnected + SoftmaxOutput step equal MXNet 1.9.1's (float32 rounding;
    tests/fixtures/make_executor_fixture.py made the file with MXNet)."""
    import importlib.util
    import os
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    spec = importlib.util.spec_from_file_location(
        "make_executor_fixture", os.path.join(here, "make_executor_fixture.py"))
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    ref = np.load(os.path.join(here, "executor_mxnet.npz"))
    exe = maker.network(mx).simple_bind(mx.cpu(), data=ref["x"].shape)
    for name, a in exe.arg_dict.items():
        if "p_" + name in ref:
            a[:] = ref["p_" + name]
    exe.aux_dict["bn_moving_var"][:] = 1.0
    exe.forward(is_train=True, data=ref["x"], softmax_label=ref["label"])
    exe.backward()

    def close(name, value):
        np.testing.assert_allclose(value.asnumpy(), ref[name], rtol=2e-5, atol=1e-6,
                                   err_msg=name)
    close("out", exe.outputs[0])
    grads = {k: g for k, g in exe.grad_dict.items() if g is not None}
    assert sorted("g_" + k for k in grads) == sorted(k for k in ref if k.startswith("g_"))
    for name, g in grads.items():
        close("g_" + name, g)
    for name, a in exe.aux_dict.items():
        close("aux_" + name, a)
    close("out_inf", exe.forward(is_train=False)[0])


def test_simple_bind_errors_and_partial_types():
    with pytest.raises(MXNetError, match=r"\['data', 'fc1_weight'"):
        _mlp().simple_bind(mx.cpu())
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), mx.sym.Variable("w", dtype="float64"),
                                num_hidden=3, no_bias=True)
    exe = sym.simple_bind(mx.cpu(), data=(2, 4))   # data's dtype comes from the weight's
    assert [a.dtype for a in exe.arg_arrays] == [np.float64, np.float64]


def test_simple_bind_shares_arguments_with_shared_exec():
    """MXNet's Module buckets: parameters (and their gradients) shared, data not."""
    first = _mlp().simple_bind(mx.cpu(), data=(4, 5))
    params = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    second = _mlp().simple_bind(mx.cpu(), data=(2, 5), shared_exec=first,
                                shared_arg_names=params)
    for name in params:
        assert second.arg_dict[name] is first.arg_dict[name]
        assert second.grad_dict[name] is first.grad_dict[name]
    assert second.arg_dict["data"].shape == (2, 5)
    with pytest.raises(MXNetError, match="shared argument 'data'"):
        _mlp().simple_bind(mx.cpu(), data=(2, 5), shared_exec=first, shared_arg_names=["data"])


# ---- MXNet's executor semantics (issue 21) ------------------------------------------------
def test_forward_writes_into_the_same_output_arrays():
    x = mx.sym.var("x")
    exe = (x * 2).bind(mx.cpu(), args={"x": mx.nd.array([1., 2.])})
    held = exe.outputs[0]
    exe.forward()
    assert exe.outputs[0] is held
    np.testing.assert_array_equal(held.asnumpy(), [2., 4.])
    exe.forward(x=mx.nd.array([5., 6.]))
    np.testing.assert_array_equal(held.asnumpy(), [10., 12.])


def test_reshape_shares_memory_with_the_original():
    x = mx.sym.var("x")
    exe = mx.sym.FullyConnected(x, num_hidden=4, name="fc").simple_bind(
        mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_dict["x"][:] = 1
    exe.arg_dict["fc_weight"][:] = 1
    small = exe.reshape(x=(3, 4))
    # a smaller argument is a view of the start of the original's buffer
    small.arg_dict["x"][:] = 2
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy()[:3], np.full((3, 4), 2.))
    np.testing.assert_array_equal(exe.arg_dict["x"].asnumpy()[3:], np.ones((2, 4)))
    assert small.arg_dict["fc_weight"] is exe.arg_dict["fc_weight"]
    # so are its outputs: the new executor's forward shows in the original's first rows
    small.forward()
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((3, 4), 8.))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[:3], np.full((3, 4), 8.))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_dict["x"][:] = 0        # a larger one is a new array
    assert exe.arg_dict["x"].asnumpy()[3:].tolist() == np.ones((2, 4)).tolist()


def test_monitor_callback_sees_every_output_and_with_monitor_all_the_inputs():
    x = mx.sym.var("x")
    y = mx.sym.sin(mx.sym.relu(x, name="r"), name="s")
    exe = y.bind(mx.cpu(), args={"x": mx.nd.array([0.5])})
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append((name, float(arr.asnumpy()[0]))))
    exe.forward()
    assert [n for n, _ in seen] == ["r_output", "s_output"]
    assert seen[1][1] == pytest.approx(np.sin(0.5))
    seen.clear()
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    exe.forward()
    assert seen == ["x", "r_data", "r_output", "s_data", "s_output"]   # x: a variable
    exe.set_monitor_callback(None)
    seen.clear()
    exe.forward()
    assert seen == []


def test_bind_refuses_gradient_names_the_symbol_lacks_and_ignores_other_extras():
    """A misnamed gradient buffer would never be written: an error. Extra names among the
    arguments or auxiliary states are ignored (MXNet's rule), the needed ones still checked."""
    x = mx.sym.var("x")
    y = x * 2
    with pytest.raises(MXNetError, match=r"args_grad has names \['z'\]"):
        y.bind(mx.cpu(), args={"x": mx.nd.ones(2)}, args_grad={"z": mx.nd.ones(2)})
    exe = y.bind(mx.cpu(), args={"x": mx.nd.ones(2), "z": mx.nd.ones(2), "s": 9},
                 aux_states={"m": mx.nd.ones(2)})
    assert exe.forward()[0].asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(MXNetError, match=r"args lacks an array for 'x'"):
        y.bind(mx.cpu(), args={"z": mx.nd.ones(2)})


def test_backward_before_forward_raises():
    x = mx.sym.var("x")
    exe = (x * 2).bind(mx.cpu(), args={"x": mx.nd.ones(2)}, args_grad={"x": mx.nd.zeros(2)})
    with pytest.raises(MXNetError, match="forward first"):
        exe.backward(mx.nd.ones(2))


def _square_chain(n):
    data = mx.sym.var("data")
    for _ in range(n):
        data = data * data
    return data


def _total_mb(exe):
    import re
    return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))


def test_inference_releases_intermediates_and_debug_str_counts_them():
    shape = (4, 256, 256)           # 1 MiB of float32 per array
    keep_all = _total_mb(_square_chain(6).simple_bind(mx.cpu(), data=shape))
    inference = _total_mb(_square_chain(6).simple_bind(mx.cpu(), data=shape, grad_req="null"))
    # the backward of x*x reads every input: all six outputs stay; inference holds two
    assert keep_all == 6 and inference == 2
    exe = _square_chain(3).simple_bind(mx.cpu(), data=(3,), grad_req="null")
    exe.arg_dict["data"][:] = mx.nd.array([1., 2., 3.])
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [1., 256., 6561.])


def test_a_blocked_gradient_computes_nothing_upstream():
    """MXNet's zero propagation: the gradient through stop_gradient is zeros, so nothing
    upstream of it runs and the forward need not keep its values."""
    shape = (4, 256, 256)
    blocked = mx.sym.stop_gradient(_square_chain(6))
    exe = blocked.simple_bind(mx.cpu(), data=shape)
    assert exe._plan.grad_steps == [] and _total_mb(exe) == 2
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(shape))
    assert float(exe.grad_dict["data"].abs().sum().asscalar()) == 0.0


def test_simple_bind_reuses_a_shared_buffer():
    sym = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, no_bias=True, name="fc")
    buffer = {}
    first = sym.simple_bind(mx.cpu(), x=(4, 3), shared_buffer=buffer)
    assert sorted(buffer) == ["fc_weight", "grad of fc_weight", "grad of x", "x"]
    assert buffer["x"] is first.arg_dict["x"]
    second = sym.simple_bind(mx.cpu(), x=(2, 3), shared_buffer=buffer)
    second.arg_dict["x"][:] = 7          # a view of the first rows of the buffer's array
    np.testing.assert_array_equal(first.arg_dict["x"].asnumpy()[:2], np.full((2, 3), 7.))
    sym.simple_bind(mx.cpu(), x=(8, 3), shared_buffer=buffer)
    assert buffer["x"].shape == (8, 3)   # too small: replaced by a new array


def test_common_expressions_are_merged_at_bind_unless_disabled(monkeypatch):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = mx.sym.Group([(a + b) * (a + b), mx.sym.sin(a) + 1, mx.sym.sin(a) + 1])
    args = {"a": mx.nd.array([0.5, 1.0]), "b": mx.nd.array([2.0, -1.0])}
    merged = sym.bind(mx.cpu(), args=args)
    # (a+b) once, sin(a)+1 once plus a copy for the repeated output
    assert len(merged.get_optimized_symbol().get_internals()) == \
        len(sym.get_internals()) - 3 + 1
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
    plain = sym.bind(mx.cpu(), args=args)
    assert plain.get_optimized_symbol() is sym
    for x, y in zip(merged.forward(), plain.forward()):
        np.testing.assert_allclose(x.asnumpy(), y.asnumpy(), rtol=1e-6)
    out = merged.outputs
    assert out[1] is not out[2]
    np.testing.assert_allclose(out[0].asnumpy(), [6.25, 0.0])


def test_random_ops_are_never_merged():
    a = mx.sym.var("a")
    sym = mx.sym.Dropout(a, p=0.5) + mx.sym.Dropout(a, p=0.5)
    exe = sym.bind(mx.cpu(), args={"a": mx.nd.ones((4, 4))})
    assert len(exe.get_optimized_symbol().get_internals()) == len(sym.get_internals())


def test_backward_of_a_blocked_head_needs_no_head_gradient():
    """A stop_gradient head ignores its head gradient (its gradient is zero), so backward()
    runs without out_grads, as MXNet's, and writes zeros."""
    x = mx.sym.var("x")
    z = mx.sym.stop_gradient(mx.sym.sin(x) * 3)
    exe = z.simple_bind(mx.cpu(), x=(4,))
    exe.forward(is_train=True, x=mx.nd.array([0.5, 1.0, 2.0, -1.0]))
    exe.grad_dict["x"][:] = 7
    exe.backward()
    assert exe.grad_dict["x"].asnumpy().tolist() == [0.0] * 4
    plain = (mx.sym.sin(x) * 3).simple_bind(mx.cpu(), x=(4,))
    plain.forward(is_train=True, x=mx.nd.ones(4))
    with pytest.raises(MXNetError, match="not a loss layer"):
        plain.backward()
