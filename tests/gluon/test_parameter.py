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
