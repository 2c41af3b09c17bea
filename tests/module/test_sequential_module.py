"""mx.mod.SequentialModule and PythonLossModule (mxlite/module/sequential_module.py,
python_module.py): a chain trains as the one symbol it stands for."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def params(rng):
    return {"fc1_weight": rng.standard_normal((4, 5)).astype("f") * 0.5,
            "fc1_bias": rng.standard_normal(4).astype("f") * 0.1,
            "fc2_weight": rng.standard_normal((3, 4)).astype("f") * 0.5,
            "fc2_bias": rng.standard_normal(3).astype("f") * 0.1}


def subset(p, names):
    return {k: mx.nd.array(p[k]) for k in names}


def fc1(data):
    return mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=4, name="fc1"),
                             act_type="tanh", name="tanh")


def fc2(data):
    return mx.sym.FullyConnected(data, num_hidden=3, name="fc2")


def train_step(mod, p, x, y, names):
    mod.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
    mod.init_params(arg_params=subset(p, names))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5, "rescale_grad": 0.25})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    mod.update()
    return mod.get_params()[0]


def reference(rng_params, x, y):
    whole = mx.mod.Module(mx.sym.SoftmaxOutput(fc2(fc1(mx.sym.var("data"))), name="softmax"))
    return train_step(whole, rng_params, x, y, list(rng_params))


def test_sequential_trains_as_the_whole_symbol(rng):
    p = params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([0, 1, 2, 1], dtype="f")
    want = reference(p, x, y)
    first = mx.mod.Module(fc1(mx.sym.var("data")), label_names=None)
    second = mx.mod.Module(mx.sym.SoftmaxOutput(fc2(mx.sym.var("hidden")), name="softmax"),
                           data_names=["hidden"])
    seq = mx.mod.SequentialModule().add(first).add(second, take_labels=True,
                                                    auto_wiring=True)
    got = train_step(seq, p, x, y, list(p))
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k].asnumpy(), want[k].asnumpy(), rtol=1e-5, atol=1e-6)
    assert seq.output_shapes == [("softmax_output", (4, 3))]
    assert seq.label_shapes[0].name == "softmax_label"


def test_python_loss_module_gives_the_loss_gradient(rng):
    p = params(rng)
    x = rng.standard_normal((4, 5)).astype("f")
    y = np.array([2, 0, 1, 1], dtype="f")
    want = reference(p, x, y)

    def softmax_grad(scores, labels):
        z = scores.asnumpy()
        g = np.exp(z - z.max(axis=1, keepdims=True))
        g /= g.sum(axis=1, keepdims=True)
        g[np.arange(len(z)), labels.asnumpy().astype(int)] -= 1
        return g

    net = mx.mod.Module(fc2(fc1(mx.sym.var("data"))), label_names=None)
    loss = mx.mod.PythonLossModule(grad_func=softmax_grad)
    seq = mx.mod.SequentialModule().add(net).add(loss, take_labels=True, auto_wiring=True)
    got = train_step(seq, p, x, y, list(p))
    for k in want:
        np.testing.assert_allclose(got[k].asnumpy(), want[k].asnumpy(), rtol=1e-5, atol=1e-6)


def test_bad_use():
    seq = mx.mod.SequentialModule()
    with pytest.raises(MXNetError, match="bind: the SequentialModule has no module"):
        seq.bind(data_shapes=[("data", (2, 3))])
    with pytest.raises(MXNetError, match=r"add: unknown keywords \['take_label'\]"):
        seq.add(mx.mod.Module(fc2(mx.sym.var("data")), label_names=None), take_label=True)
    with pytest.raises(MXNetError, match="add: module must be a module"):
        seq.add(fc2(mx.sym.var("data")))
    loss = mx.mod.PythonLossModule()
    with pytest.raises(MXNetError, match="bind: a PythonModule writes its gradients"):
        loss.bind(data_shapes=[("data", (2, 3))], grad_req="add")
