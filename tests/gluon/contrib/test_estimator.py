"""mxlite/gluon/contrib/estimator/estimator.py and batch_processor.py: default metrics and
handlers, argument checks, evaluate against NumPy, the gradient step against its closed
form, batch_axis, custom batch processors, and a small CNN trained end to end on a
synthetic image dataset through gluon.data.vision.transforms."""
import re
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from mxlite.base import MXNetError
from mxlite.gluon.contrib.estimator import (BatchProcessor, Estimator, EpochBegin, EpochEnd,
                                            LoggingHandler, StoppingHandler)
from mxlite.gluon.data.vision import transforms


def _loader(rng, n=8, batch_size=2, classes=2):
    x = mx.nd.array(rng.normal(size=(n, 3)))
    y = mx.nd.array(rng.integers(0, classes, size=n))
    return gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=batch_size)


def _net(units=2):
    net = gluon.nn.Dense(units, in_units=3)
    net.initialize()
    return net


def _trainer(net, lr=0.01):
    return gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})


def _estimator(loss=None, **kwargs):
    net = kwargs.pop("net", None) or _net()
    return Estimator(net, loss or gluon.loss.SoftmaxCrossEntropyLoss(),
                     trainer=kwargs.pop("trainer", None) or _trainer(net), **kwargs)


# ---- defaults ------------------------------------------------------------------------------
def test_default_metrics_follow_the_loss():
    est = _estimator()
    assert [type(m) for m in est.train_metrics] == [mx.metric.Accuracy, mx.metric.Loss]
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                   "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                 "validation softmaxcrossentropyloss"]
    assert not set(map(id, est.train_metrics)) & set(map(id, est.val_metrics))
    l2 = _estimator(gluon.loss.L2Loss())
    assert [(type(m), m.name) for m in l2.train_metrics] == [(mx.metric.Loss,
                                                              "training l2loss")]


def test_given_metrics_get_prefixes_once():
    acc, rmse = mx.metric.Accuracy(), mx.metric.RMSE()
    est = _estimator(train_metrics=acc, val_metrics=[rmse])
    assert est.train_metrics == [acc] and est.val_metrics == [rmse]
    assert (acc.name, rmse.name) == ("training accuracy", "validation rmse")
    # a second estimator over the same metric (MXNet made it 'training training accuracy')
    _estimator(train_metrics=acc)
    assert acc.name == "training accuracy"
    composite = mx.metric.CompositeEvalMetric([mx.metric.MAE(), mx.metric.MSE()])
    est = _estimator(train_metrics=composite)
    assert [m.name for m in est.train_metrics] == ["training mae", "training mse"]
    # a metric named 'pretraining...' keeps its name inside the prefix
    est = _estimator(train_metrics=mx.metric.Accuracy(name="pretraining acc"))
    assert est.val_metrics[0].name == "validation pretraining acc"


def test_default_trainer_context_and_initialization():
    net = gluon.nn.Dense(2, in_units=3)
    with pytest.warns(UserWarning, match="No trainer specified, default SGD"):
        est = Estimator(net, gluon.loss.L2Loss())
    assert type(est.trainer.optimizer).__name__ == "SGD"
    assert est.trainer.learning_rate == pytest.approx(0.001)
    assert est.context == ([mx.gpu(0)] if mx.context.num_gpus() else [mx.cpu()])
    assert net.weight.list_ctx() == est.context            # initialized by the estimator
    with pytest.warns(UserWarning, match="Network already fully initialized"):
        Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net),
                  initializer=mx.init.Xavier())


def test_a_partly_initialized_net_gets_its_missing_parameters():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
    net[0].initialize(mx.init.Constant(0.5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.One())
    # only the missing parameters are initialized: no "already initialized" warnings
    assert [str(w.message)[:20] for w in caught] == ["No trainer specified"]
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), np.full((4, 3), 0.5))
    np.testing.assert_array_equal(net[1].weight.data().asnumpy(), np.ones((2, 4)))


# ---- argument errors -----------------------------------------------------------------------
def _make(**kwargs):
    net = _net()
    args = {"net": net, "loss": gluon.loss.L2Loss(), "trainer": _trainer(net)}
    args.update(kwargs)
    return Estimator(**args)


@pytest.mark.parametrize("kwargs, match", [
    ({"net": "resnet"}, "Estimator: net must be a gluon.Block, got 'resnet'"),
    ({"val_net": print}, "Estimator: val_net must be a gluon.Block"),
    ({"loss": "mse"}, "Estimator: loss must be a gluon.loss.Loss, got 'mse'"),
    ({"val_loss": mx.metric.MSE()}, "Estimator: val_loss must be a gluon.loss.Loss"),
    ({"trainer": "sgd"}, "Estimator: trainer must be a gluon.Trainer, got 'sgd'"),
    ({"train_metrics": "acc"}, "Estimator: train_metrics must be an mx.metric.EvalMetric"),
    ({"val_metrics": [mx.metric.MAE(), "mse"]}, "Estimator: val_metrics must be an"),
    ({"context": "cpu"}, "Estimator: context must be a Context or a list of Context"),
    ({"batch_processor": object()}, "batch_processor must have fit_batch() and "
                                    "evaluate_batch() methods"),
])
def test_constructor_errors_name_the_argument(kwargs, match):
    with pytest.raises(MXNetError, match=re.escape(match)):
        _make(**kwargs)


def test_a_bad_argument_changes_nothing():
    acc = mx.metric.Accuracy()
    with pytest.raises(MXNetError, match="trainer must be a gluon.Trainer"):
        _make(train_metrics=acc, trainer="sgd")
    assert acc.name == "accuracy"


def test_a_context_other_than_the_nets_is_an_error():
    net = _net()                                         # on cpu(0)
    with pytest.raises(MXNetError, match=re.escape(
            "Estimator: context [cpu(1)] differs from the contexts [cpu(0)] the net's "
            "parameters are initialized on")):
        Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net), context=mx.cpu(1))


def test_an_unavailable_gpu_is_an_assertion_error_too():
    # MXNet asserted here; mxlite's error is an MXNetError and an AssertionError
    with pytest.raises(AssertionError, match=r"context gpu\(100\) is not available") as err:
        _make(context=[mx.cpu(), mx.gpu(100)])
    assert isinstance(err.value, MXNetError)


@pytest.mark.parametrize("kwargs, match", [
    ({}, "give exactly one of epochs or batches, got epochs=None, batches=None"),
    ({"epochs": 1, "batches": 2}, "give exactly one of epochs or batches"),
    ({"epochs": 0}, "Estimator.fit: epochs must be an int >= 1, got 0"),
    ({"epochs": -1}, "Estimator.fit: epochs must be an int >= 1, got -1"),
    ({"epochs": 2.5}, "Estimator.fit: epochs must be an int >= 1, got 2.5"),
    ({"batches": True}, "Estimator.fit: batches must be an int >= 1, got True"),
    ({"epochs": 1, "batch_axis": -1}, "Estimator.fit: batch_axis must be an int >= 0"),
    ({"epochs": 1, "val_data": [1, 2]}, "Estimator.fit: val_data must be a "
                                         "gluon.data.DataLoader, got list"),
    ({"epochs": 1, "event_handlers": ["log"]}, "event_handlers must be an EventHandler or"),
])
def test_fit_errors_name_the_argument(rng, kwargs, match):
    with pytest.raises(MXNetError, match=re.escape(match)):
        _estimator().fit(_loader(rng), **kwargs)


def test_fit_and_evaluate_take_only_data_loaders():
    est = _estimator()
    x, y = mx.nd.ones((4, 3)), mx.nd.zeros((4,))
    with pytest.raises(MXNetError, match="Estimator.fit: train_data must be a "
                                         "gluon.data.DataLoader, got NDArrayIter"):
        est.fit(mx.io.NDArrayIter(x, y, batch_size=2), epochs=1)
    with pytest.raises(MXNetError, match="Estimator.evaluate: val_data must be a"):
        est.evaluate([x])


def test_empty_training_data_is_an_error_not_a_hang():
    est = _estimator()
    empty = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.ones((1, 3)), mx.nd.ones((1,))),
                                  batch_size=2, last_batch="discard")
    with pytest.raises(MXNetError, match="train_data yielded no batches"):
        est.fit(empty, batches=3)


def test_batches_that_are_not_pairs_are_rejected():
    est = _estimator()
    data_only = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.ones((4, 3))),
                                      batch_size=2)
    with pytest.raises(MXNetError, match="BatchProcessor: a batch must be a \\(data, label\\) "
                                         "pair, got NDArray"):
        est.fit(data_only, epochs=1)


def test_an_uninitialized_val_net_fails_before_training(rng):
    # MXNet trained a whole epoch, then raised RuntimeError at the first validation
    net = _net()
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net),
                    val_net=gluon.nn.Dense(2, in_units=3))
    step = net.weight.data().asnumpy().copy()
    with pytest.raises(RuntimeError, match="val_net has parameters that are not initialized"):
        est.fit(_loader(rng), val_data=_loader(rng), epochs=1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), step)
    with pytest.raises(MXNetError, match="val_net has parameters"):
        est.evaluate(_loader(rng))


def test_the_callers_handler_list_is_not_extended(rng):
    est = _estimator()
    handlers = [LoggingHandler(metrics=est.train_metrics)]
    est.fit(_loader(rng), val_data=_loader(rng), event_handlers=handlers, epochs=1)
    assert len(handlers) == 1 and isinstance(handlers[0], LoggingHandler)


# ---- what a batch does ---------------------------------------------------------------------
def _softmax_ce(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels]


def test_evaluate_matches_numpy(rng):
    x = rng.normal(size=(10, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=10)
    net = _net(3)
    est = _estimator(net=net)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                   batch_size=4)
    est.evaluate(loader)
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    logits = x @ w.T + b
    acc, loss = (m.get()[1] for m in est.val_metrics)
    assert acc == pytest.approx(np.mean(logits.argmax(axis=1) == y))
    assert loss == pytest.approx(_softmax_ce(logits, y).mean(), rel=1e-5)


@pytest.mark.parametrize("contexts", [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]], ids=["1ctx", "2ctx"])
def test_one_fit_batch_is_one_sgd_step_on_the_mean_gradient(rng, contexts):
    # L2Loss = (w.x - y)^2 / 2 per sample; Trainer.step(n) averages the summed gradient,
    # n counting the samples of every context's share of the batch
    x = rng.normal(size=(4, 3)).astype(np.float32)
    y = rng.normal(size=(4, 1)).astype(np.float32)
    net = gluon.nn.Dense(1, in_units=3, use_bias=False)
    net.initialize(mx.init.Constant(mx.nd.array(rng.normal(size=(1, 3)))), ctx=contexts)
    w0 = net.weight.data().asnumpy().copy()
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net, lr=0.1))
    assert est.context == contexts            # the default follows the net's parameters
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                   batch_size=4)
    est.fit(loader, batches=1)
    grad = ((x @ w0.T - y) * x).sum(axis=0, keepdims=True)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w0 - 0.1 * grad / 4, rtol=1e-5)


def test_fit_and_evaluate_on_each_device(device, rng):
    # the estimator initializes the net on its context and moves each batch there
    x = rng.normal(size=(6, 3)).astype(np.float32)
    y = rng.integers(0, 2, size=6)
    net = gluon.nn.Dense(2, in_units=3)
    with pytest.warns(UserWarning, match="No trainer specified"):
        # a constant weight: random initializers are not the estimator's to test on GPU
        weight = mx.init.Constant(mx.nd.array(rng.normal(size=(2, 3))))
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), context=device,
                        initializer=weight)
    assert est.context == [device] and net.weight.list_ctx() == [device]
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y)),
                                   batch_size=3)
    w0 = net.weight.data().asnumpy().copy()
    est.fit(loader, batches=2)
    assert not np.array_equal(net.weight.data().asnumpy(), w0)
    est.evaluate(loader)
    logits = x @ net.weight.data().asnumpy().T + net.bias.data().asnumpy()
    assert est.val_metrics[0].get()[1] == pytest.approx(np.mean(logits.argmax(axis=1) == y))


def test_batch_axis_splits_and_counts_along_that_axis(rng, caplog):
    class ColumnDataset(gluon.data.Dataset):
        """Samples are columns: a batch of them stacks along axis 0, so batches are
        transposed back to put the samples on axis 1."""

        def __init__(self, x, y):
            self.x, self.y = x, y

        def __getitem__(self, i):
            return self.x[:, i], self.y[:, i]

        def __len__(self):
            return self.x.shape[1]

    def batchify(samples):
        xs, ys = zip(*samples)
        return [mx.nd.array(np.stack(xs, axis=1)), mx.nd.array(np.stack(ys, axis=1))]

    x = rng.normal(size=(3, 6)).astype(np.float32)
    y = rng.integers(0, 2, size=(1, 6)).astype(np.float32)
    loader = gluon.data.DataLoader(ColumnDataset(x, y), batch_size=2, batchify_fn=batchify)

    class Transposed(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            assert batch_axis == 1 and train_batch[0].shape == (3, 2)
            return super().fit_batch(estimator, [train_batch[0].T, train_batch[1][0]], 0)

    est = _estimator(batch_processor=Transposed())
    est.logger.addHandler(caplog.handler)
    est.fit(loader, epochs=1, batch_axis=1,
            event_handlers=[LoggingHandler(log_interval=1, metrics=est.train_metrics)])
    samples = [int(m) for m in re.findall(r"\[Samples (\d+)\]", caplog.text)]
    # 2 samples a batch along axis 1 (MXNet counted axis 0, 3 rows a batch: [3, 6, 9])
    assert samples == [2, 4, 6]


def test_a_custom_batch_processor_is_used(rng):
    calls = []

    class Recording(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append("fit")
            return super().fit_batch(estimator, train_batch, batch_axis)

        def evaluate_batch(self, estimator, val_batch, batch_axis=0):
            calls.append("eval")
            return super().evaluate_batch(estimator, val_batch, batch_axis)

    est = _estimator(batch_processor=Recording())
    est.fit(_loader(rng, n=4), val_data=_loader(rng, n=2), epochs=1)
    assert calls == ["fit", "fit", "eval"]


def test_default_handlers_are_added_once_and_sorted():
    est = _estimator()
    est.max_epoch, est.max_batch = 1, None
    kinds = [type(h).__name__ for h in est._prepare_default_handlers(None, None)]
    assert kinds == ["GradientUpdateHandler", "MetricHandler", "StoppingHandler",
                     "LoggingHandler"]
    val_kinds = [type(h).__name__ for h in est._prepare_default_validation_handlers(None)]
    assert val_kinds == ["MetricHandler", "LoggingHandler"]


def test_categorize_handlers_by_mixin():
    class Both(StoppingHandler, EpochBegin):
        pass

    est = _estimator()
    groups = est._categorize_handlers([Both(), LoggingHandler()])
    assert [len(g) for g in groups] == [2, 2, 1, 2, 2, 1]


# ---- end to end ----------------------------------------------------------------------------
def _quadrant_images(rng, n, size=16):
    """uint8 HWC images whose class (0..3) is the quadrant that is bright."""
    labels = rng.integers(0, 4, size=n)
    images = rng.integers(0, 60, size=(n, size, size, 3)).astype(np.uint8)
    half = size // 2
    for image, label in zip(images, labels):
        r, c = divmod(int(label), 2)
        image[r * half:(r + 1) * half, c * half:(c + 1) * half] += 160
    return mx.nd.array(images, dtype="uint8"), mx.nd.array(labels)


def test_a_small_cnn_learns_the_bright_quadrant(rng):
    mx.random.seed(7)
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.3, 0.3)])

    def loader(n, shuffle):
        dataset = gluon.data.ArrayDataset(*_quadrant_images(rng, n))
        return gluon.data.DataLoader(dataset.transform_first(transform), batch_size=32,
                                     shuffle=shuffle)

    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, kernel_size=3, padding=1, activation="relu"),
            gluon.nn.MaxPool2D(pool_size=4), gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.02})
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
    history = []

    class Record(EpochEnd):
        priority = 1          # after validation

        def epoch_end(self, estimator, *args, **kwargs):
            history.append(estimator.val_metrics[0].get()[1])

    val_data = loader(128, False)
    est.evaluate(val_data)
    before = est.val_metrics[0].get()[1]
    est.fit(loader(256, True), val_data=val_data, epochs=3, event_handlers=[Record()])
    assert len(history) == 3
    assert before < 0.5 and history[-1] > 0.9, (before, history)     # chance is 0.25
