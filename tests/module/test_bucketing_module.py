"""mx.mod.BucketingModule (mxlite/module/bucketing_module.py): buckets of several lengths
share one set of parameters; numbers from NumPy."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

N_IN, N_OUT, BATCH = 3, 2, 4


def sym_gen(seq_len):
    """(batch, seq_len, 3) -> the same FullyConnected at every step -> mean over the steps
    -> SoftmaxOutput: the parameters do not depend on seq_len. Automatic names (no name=)
    must agree across buckets."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=N_OUT, flatten=False)
    out = mx.sym.SoftmaxOutput(mx.sym.mean(fc, axis=1), name="softmax")
    return out, ("data",), ("softmax_label",)


def np_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_forward(params, x):
    return np_softmax((x @ params["fullyconnected0_weight"].T).mean(axis=1) +
                      params["fullyconnected0_bias"])


def np_sgd_step(params, x, y, lr):
    g = np_forward(params, x)
    g[np.arange(len(y)), y.astype(int)] -= 1
    g /= len(y)                                            # rescale_grad = 1 / batch
    w, b = params["fullyconnected0_weight"], params["fullyconnected0_bias"]
    gw = np.einsum("no,nti->oi", g, x) / x.shape[1]        # through the mean
    return {"fullyconnected0_weight": w - lr * gw, "fullyconnected0_bias": b - lr * g.sum(0)}


def batch(x, y, key):
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=key,
                           provide_data=[mx.io.DataDesc("data", x.shape)],
                           provide_label=[mx.io.DataDesc("softmax_label", y.shape)])


def bound(rng, default_key=6):
    params = {"fullyconnected0_weight": rng.standard_normal((N_OUT, N_IN)).astype("f"),
              "fullyconnected0_bias": rng.standard_normal(N_OUT).astype("f")}
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=default_key)
    mod.bind(data_shapes=[("data", (BATCH, default_key, N_IN))],
             label_shapes=[("softmax_label", (BATCH,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in params.items()})
    mod.init_optimizer(optimizer_params={"learning_rate": 0.5})
    return mod, params


def test_two_bucket_lengths_share_weights(rng):
    mod, params = bound(rng)
    x6 = rng.standard_normal((BATCH, 6, N_IN)).astype("f")
    x4 = rng.standard_normal((BATCH, 4, N_IN)).astype("f")
    y = np.array([0, 1, 1, 0], dtype="f")
    mod.forward(batch(x4, y, 4), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(params, x4),
                               rtol=1e-5, atol=1e-6)
    b4, b6 = mod._buckets[4], mod._buckets[6]
    assert b4._exec_group.execs[0].arg_dict["fullyconnected0_weight"] is \
        b6._exec_group.execs[0].arg_dict["fullyconnected0_weight"]
    assert b4._updater is b6._updater
    # a step in bucket 6 moves the weights bucket 4 predicts with, as NumPy's step
    mod.forward_backward(batch(x6, y, 6))
    mod.update()
    params = np_sgd_step(params, x6, y, 0.5)
    mod.forward(batch(x4, y, 4), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(params, x4),
                               rtol=1e-5, atol=1e-6)
    # and a step in bucket 4 moves them for bucket 6
    mod.forward_backward(batch(x4, y, 4))
    mod.update()
    params = np_sgd_step(params, x4, y, 0.5)
    got = mod.get_params()[0]
    for k, v in params.items():
        np.testing.assert_allclose(got[k].asnumpy(), v, rtol=1e-5, atol=1e-6)
    assert mod.symbol.list_arguments() == ["data", "fullyconnected0_weight",
                                           "fullyconnected0_bias", "softmax_label"]


def test_grad_req_add_accumulates_across_buckets(rng):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6)
    mod.bind(data_shapes=[("data", (BATCH, 6, N_IN))],
             label_shapes=[("softmax_label", (BATCH,))], grad_req="add")
    mod.init_params()
    y = np.zeros(BATCH, "f")
    grads = []
    for key in (6, 4):
        mod.forward_backward(batch(np.ones((BATCH, key, N_IN), "f"), y, key))
        grads.append(mod._curr_module._exec_group.grad_arrays[1][0].asnumpy().copy())
    # the same input statistics in both buckets: the second backward adds as much again
    np.testing.assert_allclose(grads[1], 2 * grads[0], rtol=1e-5)


def test_fit_over_buckets_and_checkpoint(rng, tmp_path):
    mod, _ = bound(rng)

    class Batches(mx.io.DataIter):
        def __init__(self):
            super().__init__(BATCH)
            self.provide_data = [mx.io.DataDesc("data", (BATCH, 6, N_IN))]
            self.provide_label = [mx.io.DataDesc("softmax_label", (BATCH,))]
            self.batches = []
            for key in (6, 4, 6, 4):
                x = rng.standard_normal((BATCH, key, N_IN)).astype("f")
                y = (x[:, :, 0].mean(axis=1) > 0).astype("f")
                self.batches.append(batch(x, y, key))
            self.i = 0

        def reset(self):
            self.i = 0

        def next(self):
            if self.i == len(self.batches):
                raise StopIteration
            self.i += 1
            return self.batches[self.i - 1]

    seen = []
    mod.fit(Batches(), num_epoch=2, batch_end_callback=lambda p: seen.append(
        mod._curr_bucket_key))
    assert seen == [6, 4, 6, 4] * 2
    prefix = str(tmp_path / "bucket")
    mod.save_checkpoint(prefix, 1)
    back = mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=6)
    back.bind(data_shapes=[("data", (BATCH, 6, N_IN))],
              label_shapes=[("softmax_label", (BATCH,))])
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(back.get_params()[0][k].asnumpy(), v.asnumpy())
    x4 = rng.standard_normal((BATCH, 4, N_IN)).astype("f")
    outs = []
    for m in (mod, back):               # bucket 4 from its saved symbol, the same weights
        m.forward(batch(x4, np.zeros(BATCH, "f"), 4), is_train=False)
        outs.append(m.get_outputs()[0].asnumpy())
    np.testing.assert_array_equal(outs[1], outs[0])


def test_bad_arguments():
    with pytest.raises(MXNetError, match="default_bucket_key must be given"):
        mx.mod.BucketingModule(sym_gen)
    with pytest.raises(MXNetError, match=r"sym_gen\(3\) must return"):
        mx.mod.BucketingModule(lambda key: mx.sym.var("data"), default_bucket_key=3)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6)
    with pytest.raises(MXNetError, match="switch_bucket: the module is not binded"):
        mod.switch_bucket(4, [("data", (BATCH, 4, N_IN))])
    with pytest.raises(MXNetError, match="forward: the module is not binded"):
        mod.forward(batch(np.ones((BATCH, 4, N_IN), "f"), np.zeros(BATCH, "f"), 4))
