"""Gluon under NumPy array semantics: blocks return ``mx.np.ndarray``, parameters made in
np mode are np arrays, hybridized np code (traced ``mx.sym.np`` symbols) computes what
the imperative code computes (values, shapes, dtypes), and a model trains and round-trips
through export/imports."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import autograd, gluon, np, npx
from mxlite.base import MXNetError


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


class _Mixed(gluon.HybridBlock):
    """Promotion, 0-d reductions, comparisons, indexing and shape functions."""

    def hybrid_forward(self, F, x, i):
        y = x * i + 1                     # float32 with int32: float32 (MXNet's rule)
        return (F.np.sum(y), y > 2, y[:, -1], y.reshape(-1)[1:4], F.np.mean(y, axis=0),
                F.np.sin(i), F.np.concatenate([y, y], axis=1).T, F.np.argmax(y))


def _inputs():
    x = np.array(onp.arange(6, dtype=onp.float32).reshape(2, 3) / 4)
    i = np.array(onp.array([1, 2, 3], dtype=onp.int32), dtype="int32")
    return x, i


def _expected(x, i):
    y = (x * i).astype(onp.float32) + 1
    return (y.sum(), y > 2, y[:, -1], y.reshape(-1)[1:4], y.mean(axis=0),
            onp.sin(i.astype(onp.float32)), onp.concatenate([y, y], axis=1).T, y.argmax())


@pytest.mark.parametrize("hybridize", [False, True])
def test_np_block_matches_numpy(np_mode, hybridize):
    block = _Mixed()
    if hybridize:
        block.hybridize()
    x, i = _inputs()
    outs = block(x, i)
    for out, ref in zip(outs, _expected(x.asnumpy(), i.asnumpy())):
        ref = onp.asarray(ref)
        assert isinstance(out, np.ndarray)
        assert out.shape == ref.shape
        want = onp.float32 if ref.dtype == onp.float64 else ref.dtype
        assert out.dtype == want
        onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)


def test_hybridized_block_retraces_for_a_new_dtype(np_mode):
    block = _Mixed()
    block.hybridize()
    x, i = _inputs()
    assert block(x, i)[0].dtype == onp.float32
    out = block(x.astype("float64"), i)
    assert out[0].dtype == onp.float64 and out[5].dtype == onp.float32
    onp.testing.assert_allclose(out[0].item(), _expected(x.asnumpy(), i.asnumpy())[0])


def test_parameters_are_np_arrays_in_np_mode_only():
    legacy = gluon.nn.Dense(3, in_units=2)
    legacy.initialize()
    assert type(legacy.weight.data()) is mx.nd.NDArray
    npx.set_np()
    try:
        net = gluon.nn.Dense(3, in_units=2)
        net.initialize()
        assert type(net.weight.data()) is np.ndarray
        assert type(net.weight.grad()) is np.ndarray
        out = legacy(np.ones((4, 2)))       # a legacy parameter joins np code as a view
        assert isinstance(out, np.ndarray) and out.shape == (4, 3)
    finally:
        npx.reset_np()


def test_use_np_class_initializes_np_parameters():
    @npx.use_np
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3, 2))

        def hybrid_forward(self, F, x, w):
            return F.np.dot(x, w)

    net = Net()
    net.initialize()            # inherited from Block, yet run with np semantics
    assert type(net.w.data()) is np.ndarray
    out = net(np.ones((4, 3)))
    assert isinstance(out, np.ndarray) and out.shape == (4, 2)
    assert not npx.is_np_array()


def test_deferred_shapes_and_zero_grad_in_np_mode(np_mode):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(5), gluon.nn.Dense(2))
    net.hybridize()
    net.initialize()
    assert net(np.ones((4, 3))).shape == (4, 2)
    for p in net.collect_params().values():
        p.grad()[()] = 1
    net.collect_params().zero_grad()
    for p in net.collect_params().values():
        assert not p.grad().asnumpy().any()


@pytest.mark.parametrize("hybridize", [False, True])
def test_np_regression_trains(np_mode, hybridize):
    rng = onp.random.default_rng(0)
    true_w = onp.array([[2.0], [-3.4]], dtype=onp.float32)
    features = rng.normal(size=(200, 2)).astype(onp.float32)
    labels = features @ true_w + 4.2
    net = gluon.nn.Dense(1)
    net.initialize(mx.init.Normal(0.01))
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    X, Y = np.array(features), np.array(labels)
    for _ in range(60):
        with autograd.record():
            loss = ((net(X) - Y) ** 2).mean()
        loss.backward()
        trainer.step(1)
    assert isinstance(loss, np.ndarray) and loss.shape == ()
    onp.testing.assert_allclose(net.weight.data().asnumpy(), true_w.T, atol=1e-2)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), [4.2], atol=1e-2)


def test_export_and_imports_round_trip(np_mode, tmp_path):
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.fc = gluon.nn.Dense(4, flatten=False)

        def hybrid_forward(self, F, x, y):
            return self.fc(x[:, -1, :] + y[:, -1, :]).sum(axis=1)

    net = Net()
    net.initialize()
    net.hybridize()
    x = np.array(onp.random.default_rng(1).normal(size=(3, 2, 5)).astype(onp.float32))
    out = net(x, x * 2)
    sym_file, params_file = net.export(str(tmp_path / "net"))
    loaded = gluon.SymbolBlock.imports(sym_file, ["data0", "data1"], params_file)
    again = loaded(x, x * 2)
    assert isinstance(again, np.ndarray)
    onp.testing.assert_allclose(again.asnumpy(), out.asnumpy(), rtol=1e-6)


def test_symbolic_np_slicing_of_a_multi_output_symbol_picks_outputs(np_mode):
    class Split(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            parts = F.np.split(x, 3, axis=1)
            return F.np.concatenate(parts[1:], axis=1)

    block = Split()
    block.hybridize()
    x = np.array(onp.arange(12, dtype=onp.float32).reshape(2, 6))
    onp.testing.assert_array_equal(block(x).asnumpy(), x.asnumpy()[:, 2:])


def test_np_model_exports_to_onnx(np_mode, tmp_path):
    ort = pytest.importorskip("onnxruntime")    # (the [test] extra installs it)

    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.fc = gluon.nn.Dense(4)

        def hybrid_forward(self, F, x):
            h = self.fc(x)
            return F.np.tanh(h).sum(axis=1) / 2 + F.np.mean(h)

    net = Net()
    net.initialize()
    net.hybridize()
    x = np.array(onp.random.default_rng(0).normal(size=(3, 5)).astype(onp.float32))
    out = net(x)
    sym_file, params_file = net.export(str(tmp_path / "net"))
    path = mx.onnx.export_model(sym_file, params_file, [(3, 5)], [onp.float32],
                                str(tmp_path / "net.onnx"))
    session = ort.InferenceSession(path)
    got = session.run(None, {session.get_inputs()[0].name: x.asnumpy()})[0]
    onp.testing.assert_allclose(got, out.asnumpy(), rtol=1e-5, atol=1e-6)


class _Unique(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.np.unique(x) * 2


def test_a_block_needing_input_values_runs_imperatively_when_hybridized():
    """np.unique's result shape depends on the data: no graph can hold it, so the hybridized
    block warns once and runs imperatively, with the imperative results; export says why."""
    mx.npx.set_np()
    try:
        block = _Unique()
        block.hybridize()
        x = mx.np.array([3, 1, 3, 2, 1])
        with pytest.warns(UserWarning, match="unique.*runs imperatively"):
            out = block(x)
        onp.testing.assert_array_equal(out.asnumpy(), [2, 4, 6])
        onp.testing.assert_array_equal(block(mx.np.array([5, 5])).asnumpy(), [10])
        with pytest.raises(MXNetError, match="export: .*unique"):
            block.export("unused")
    finally:
        mx.npx.reset_np()
