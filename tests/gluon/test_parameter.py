"""Parameter, Constant and ParameterDict: names, deferred initialization, data/grad
access, set_data, grad_req, save/load, errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon.parameter import DeferredInitializationError

nd = mx.nd


def test_initialize_data_grad():
    p = gluon.Parameter("w", shape=(2, 3), init=mx.init.Constant(2.0))
    p.initialize()
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))
    assert p.list_ctx() == [mx.cpu()]
    with autograd.record():
        (p.data() * 3).sum().backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.full((2, 3), 3.0))
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    p.initialize(mx.init.One(), force_reinit=True)
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))


def test_default_init_is_uniform_007():
    p = gluon.Parameter("w", shape=(1000,))
    mx.random.seed(3)
    p.initialize()
    data = p.data().asnumpy()
    assert data.min() >= -0.07 and data.max() <= 0.07 and data.std() > 0.03


def test_grad_req():
    p = gluon.Parameter("w", shape=(2,), grad_req="add", init=mx.init.One())
    p.initialize()
    for _ in range(2):
        with autograd.record():
            (p.data() * 2).sum().backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [4.0, 4.0])
    p.grad_req = "null"
    with pytest.raises(mx.MXNetError, match="grad_req='null'"):
        p.grad()
    p.grad_req = "write"
    assert p.grad().asnumpy().tolist() == [0.0, 0.0]
    with pytest.raises(mx.MXNetError, match="grad_req"):
        p.grad_req = "sometimes"
    q = gluon.Parameter("q", shape=(1,), differentiable=False)
    assert q.grad_req == "null"


def test_deferred_initialization():
    p = gluon.Parameter("w", shape=(3, 0), allow_deferred_init=True, init=mx.init.One())
    p.initialize()
    with pytest.raises(DeferredInitializationError, match="not been initialized yet"):
        p.data()
    assert p.list_ctx() == [mx.cpu()]
    p.shape = (3, 4)
    p._finish_deferred_init()
    assert p.data().shape == (3, 4)
    with pytest.raises(mx.MXNetError, match="incompatible"):
        p.shape = (2, 4)
    q = gluon.Parameter("q", shape=(3, 0))
    with pytest.raises(mx.MXNetError, match="invalid shape"):
        q.initialize()


def test_set_data_and_uninitialized_errors():
    p = gluon.Parameter("w", shape=(2,))
    with pytest.raises(mx.MXNetError, match="has not been initialized"):
        p.data()
    p.initialize()
    p.set_data(nd.array([5.0, 6.0]))
    assert p.data().asnumpy().tolist() == [5.0, 6.0]
    with pytest.raises(mx.MXNetError, match="incompatible|shape"):
        p.set_data(nd.array([1.0, 2.0, 3.0]))
    with pytest.raises(mx.MXNetError, match="not initialized on context"):
        p.data(mx.cpu(1))


def test_several_contexts():
    p = gluon.Parameter("w", shape=(2,), init=mx.init.One())
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert [d.context for d in p.list_data()] == [mx.cpu(0), mx.cpu(1)]
    p.set_data(nd.array([3.0, 4.0]))
    for d in p.list_data():
        assert d.asnumpy().tolist() == [3.0, 4.0]
    assert p.data(mx.cpu(1)).context == mx.cpu(1)


def test_constant():
    c = gluon.Constant("c", [[1, 2], [3, 4]])
    assert c.grad_req == "null"
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    with pytest.warns(UserWarning):
        c.grad_req = "write"
    assert c.grad_req == "null"


def test_parameter_dict(tmp_path):
    params = gluon.ParameterDict("net_")
    w = params.get("weight", shape=(2, 0), allow_deferred_init=True)
    assert params.get("weight", shape=(2, 3)) is w and w.shape == (2, 3)
    with pytest.raises(mx.MXNetError, match="does not match"):
        params.get("weight", shape=(4, 3))
    shared = gluon.ParameterDict("net_", shared=params)
    assert shared.get("weight") is w
    b = params.get("bias", shape=(2,))
    c = params.get_constant("const", [1.0, 2.0])
    assert list(params.keys()) == ["net_weight", "net_bias", "net_const"]
    assert list(params.select(".*bias").keys()) == ["net_bias"]
    params.initialize(mx.init.One())
    params.setattr("lr_mult", 0.5)
    assert w.lr_mult == b.lr_mult == 0.5
    b.set_data(nd.array([7.0, 8.0]))
    fname = str(tmp_path / "p.params")
    params.save(fname, strip_prefix="net_")
    assert sorted(nd.load(fname)) == ["bias", "const", "weight"]
    other = gluon.ParameterDict("net_")
    other.get("weight", shape=(2, 3))
    other.get("bias", shape=(2,))
    with pytest.raises(mx.MXNetError, match="not present"):
        other.load(fname, restore_prefix="net_")
    other.load(fname, restore_prefix="net_", ignore_extra=True)
    assert other["net_bias"].data().asnumpy().tolist() == [7.0, 8.0]
    missing = gluon.ParameterDict("net_")
    missing.get("other", shape=(1,))
    with pytest.raises(mx.MXNetError, match="missing"):
        missing.load(fname, restore_prefix="net_", ignore_extra=True)
    assert c.data().asnumpy().tolist() == [1.0, 2.0]


def test_load_dtype_checks(tmp_path):
    fname = str(tmp_path / "d.params")
    nd.save(fname, {"w": nd.array([1.0, 2.0], dtype="float64")})
    params = gluon.ParameterDict()
    params.get("w", shape=(2,))
    with pytest.raises(mx.MXNetError, match="dtype"):
        params.load(fname)
    params.load(fname, cast_dtype=True)
    assert params["w"].data().dtype == np.float32
    params.load(fname, cast_dtype=True, dtype_source="saved")
    assert params["w"].data().dtype == np.float64


# ---- several contexts: one copy of each parameter is saved ----------------------------------
TWO_CPUS = [mx.cpu(0), mx.cpu(1)]


def _dense_on(ctxs, rng):
    """A Dense(3, in_units=4) on ``ctxs`` with known weights; returns it and the values."""
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(ctx=ctxs)
    values = {"weight": rng.standard_normal((3, 4)).astype(np.float32),
              "bias": rng.standard_normal(3).astype(np.float32)}
    for name, v in values.items():
        getattr(net, name).set_data(nd.array(v))
    return net, values


def _assert_saved(loaded, want):
    assert sorted(loaded) == sorted(want)
    for key, value in want.items():
        assert loaded[key].context == mx.cpu() and loaded[key].dtype == value.dtype
        np.testing.assert_array_equal(loaded[key].asnumpy(), value)


def test_save_parameters_from_several_contexts(tmp_path, rng):
    net, values = _dense_on(TWO_CPUS, rng)
    net.save_parameters(str(tmp_path / "net.params"))
    _assert_saved(nd.load(str(tmp_path / "net.params")), values)
    again = gluon.nn.Dense(3, in_units=4)
    again.load_parameters(str(tmp_path / "net.params"), ctx=TWO_CPUS)
    for c in TWO_CPUS:
        np.testing.assert_array_equal(again.weight.data(c).asnumpy(), values["weight"])


def test_parameter_dict_save_from_several_contexts(tmp_path, rng):
    net, values = _dense_on(TWO_CPUS, rng)
    net.collect_params().save(str(tmp_path / "p.params"), strip_prefix=net.prefix)
    _assert_saved(nd.load(str(tmp_path / "p.params")), values)


def test_export_from_several_contexts(tmp_path, rng):
    net, values = _dense_on(TWO_CPUS, rng)
    net.hybridize()
    net(nd.ones((2, 4), ctx=mx.cpu(1)))
    _, params_file = net.export(str(tmp_path / "net"))
    _assert_saved(nd.load(params_file),
                  {f"arg:{net.prefix}{k}": v for k, v in values.items()})


def test_reset_ctx_from_several_contexts(rng):
    net, values = _dense_on(TWO_CPUS, rng)
    net.collect_params().reset_ctx(mx.cpu(2))
    assert net.weight.list_ctx() == [mx.cpu(2)] and net.bias.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(net.weight.data().asnumpy(), values["weight"])
    net.weight.reset_ctx(TWO_CPUS)
    for c in TWO_CPUS:
        np.testing.assert_array_equal(net.weight.data(c).asnumpy(), values["weight"])


def test_copies_that_agree_are_saved_bit_for_bit(rng):
    """Three equal float32 copies: (x + x + x) / 3 differs from x in about one element in
    seven; the saved value must be x itself. float16 copies of 40000: x + x overflows."""
    x = rng.standard_normal(1000).astype(np.float32)
    p = gluon.Parameter("w", shape=x.shape)
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    p.set_data(nd.array(x))
    np.testing.assert_array_equal(p._reduce().asnumpy(), x)
    h = gluon.Parameter("h", shape=(4,), dtype="float16")
    h.initialize(ctx=TWO_CPUS)
    h.set_data(nd.full((4,), 40000, dtype="float16"))
    np.testing.assert_array_equal(h._reduce().asnumpy(), np.full(4, 40000, np.float16))


def test_copies_that_differ_are_saved_as_their_mean(tmp_path):
    d = gluon.ParameterDict()
    p = d.get("w", shape=(3,))
    p.initialize(ctx=TWO_CPUS)
    p.data(mx.cpu(0))[:] = nd.array([1.0, 2.0, -4.0])
    p.data(mx.cpu(1))[:] = nd.array([3.0, 2.0, 8.0])
    d.save(str(tmp_path / "w.params"))
    _assert_saved(nd.load(str(tmp_path / "w.params")),
                  {"w": np.array([2.0, 2.0, 2.0], np.float32)})


def test_gradient_buffers_take_memory_only_once_written():
    """An inference-only model never writes its gradients: their buffers are zeros that
    take no resident memory (a 64 MiB weight adds about 64 MiB, not 128) until backward
    writes them, and then read back as the gradient."""
    import subprocess
    import sys
    probe = """
import mxlite as mx
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
dense = mx.gluon.nn.Dense(4096, in_units=4096, use_bias=False)
before = rss()
dense.initialize(mx.init.One())
initialised = rss() - before
w = dense.weight
assert float(w.grad().sum().asscalar()) == 0.0
x = mx.nd.ones((1, 4096))
with mx.autograd.record():
    y = dense(x)
y.backward()
written = rss() - before
print(initialised, written, float(w.grad()[:, :2].sum().asscalar()))
"""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/status")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    initialised, written, grad_sum = map(float, out)
    assert 56 < initialised < 100, out          # the weight alone (64 MiB)
    assert written > initialised + 56, out      # the gradient, once written
    assert grad_sum == 2 * 4096, out            # d(sum y)/dW = x: ones


def test_initialize_keeps_the_array_it_made_instead_of_a_copy():
    """The array the initializer fills is the parameter's data (no second copy of the
    weights while a model is built); an array the caller passes is copied."""
    filled = []

    class Recording(mx.init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 3
            filled.append(arr)

    p = gluon.Parameter("w", shape=(3, 4), init=Recording())
    p.initialize()
    assert len(filled) == 1 and p.data()._data is filled[0]._data
    assert float(p.data().sum().asscalar()) == 36
    q = gluon.Parameter("v", shape=(2,), allow_deferred_init=True)
    q.initialize()
    given = mx.nd.array([1.0, 2.0])
    q.set_data(given)
    given[:] = 7
    assert q.data().asnumpy().tolist() == [1.0, 2.0]    # the caller's array was copied
