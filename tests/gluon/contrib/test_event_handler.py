"""mxlite/gluon/contrib/estimator/event_handler.py: each handler's behaviour with a tiny net
and counted calls (stopping, validation periods, checkpoint files and pruning, resuming,
early stopping on scripted metric values, log lines), priorities, and argument errors."""
import logging
import os
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from mxlite.base import MXNetError
from mxlite.gluon.contrib.estimator import (BatchEnd, CheckpointHandler, EarlyStoppingHandler,
                                            Estimator, EpochBegin, EpochEnd,
                                            GradientUpdateHandler, LoggingHandler,
                                            MetricHandler, StoppingHandler, TrainBegin,
                                            ValidationHandler)

N, BATCH = 8, 2          # 4 batches per epoch


def _loader(n=N, batch_size=BATCH, seed=0):
    rng = np.random.default_rng(seed)
    x = mx.nd.array(rng.normal(size=(n, 3)))
    y = mx.nd.array(rng.integers(0, 2, size=n))
    return gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=batch_size)


def _estimator(net=None, **kwargs):
    net = net or gluon.nn.Dense(2, in_units=3)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    return Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer, **kwargs)


class Counter(TrainBegin, EpochBegin, BatchEnd, EpochEnd):
    """Counts the events it sees (and records them in ``log`` when given one)."""

    def __init__(self, name="counter", log=None, priority=None):
        self.name, self.log = name, log
        if priority is not None:
            self.priority = priority
        self.epochs = self.batches = self.train_begins = 0

    def train_begin(self, estimator, *args, **kwargs):
        self.train_begins += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        pass

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1
        if self.log is not None:
            self.log.append(self.name)

    def epoch_end(self, estimator, *args, **kwargs):
        self.epochs += 1


# ---- StoppingHandler -----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, batches, epochs", [
    ({"epochs": 3}, 12, 3),
    ({"batches": 5}, 5, 2),       # stops inside the second epoch, which still ends
    ({"batches": 4}, 4, 1),
])
def test_training_stops_at_max_epoch_or_max_batch(kwargs, batches, epochs):
    count = Counter()
    _estimator().fit(_loader(), event_handlers=[count], **kwargs)
    assert (count.batches, count.epochs, count.train_begins) == (batches, epochs, 1)


def test_stopping_handler_counts_from_zero_at_each_fit():
    est, count = _estimator(), Counter()
    est.fit(_loader(), event_handlers=[count], batches=3)
    est.fit(_loader(), event_handlers=[count], batches=3)
    assert count.batches == 6


def test_a_handler_returning_true_stops_training():
    class StopAtThirdBatch(BatchEnd):
        def __init__(self):
            self.seen = 0

        def batch_end(self, estimator, *args, **kwargs):
            self.seen += 1
            return self.seen == 3

    stop, count = StopAtThirdBatch(), Counter()
    _estimator().fit(_loader(), event_handlers=[stop, count], epochs=5)
    assert (count.batches, count.epochs) == (3, 1)


# ---- ValidationHandler ---------------------------------------------------------------------
def test_validation_runs_every_epoch_period_and_batch_period():
    est, count = _estimator(), Counter()
    calls = []

    def eval_fn(val_data, batch_axis, event_handlers):
        calls.append((count.epochs, count.batches))

    # priority 0 puts it after the counter (priority -1), so it sees the counts of this event
    handler = ValidationHandler(_loader(), eval_fn, epoch_period=2, batch_period=3, priority=0)
    count.priority = -1
    est.fit(_loader(), event_handlers=[count, handler], epochs=4)
    # 16 batches: batch validations after batches 3, 6, 9, 12, 15 (batch_end comes before
    # the epoch's end), epoch validations after epochs 2 and 4
    assert calls == [(0, 3), (1, 6), (2, 8), (2, 9), (2, 12), (3, 15), (4, 16)]


def test_default_validation_handler_updates_validation_metrics_each_epoch():
    est = _estimator()
    seen = []

    class Peek(EpochEnd):
        priority = 10          # after the validation handler (-1000)

        def epoch_end(self, estimator, *args, **kwargs):
            seen.append([m.num_inst for m in estimator.val_metrics])

    est.fit(_loader(), val_data=_loader(n=6), event_handlers=[Peek()], epochs=2)
    # each validation resets the metrics and sees the 6 validation samples once
    assert seen == [[6, 6], [6, 6]]


def test_validation_handler_passes_its_event_handlers_to_eval_fn():
    est, inner = _estimator(), Counter()
    val = ValidationHandler(_loader(n=6), est.evaluate, event_handlers=[inner])
    est.fit(_loader(), event_handlers=[val], epochs=2)
    assert (inner.batches, inner.epochs) == (6, 2)     # 3 validation batches per epoch


# ---- MetricHandler, GradientUpdateHandler, priorities ----------------------------------------
def test_metric_handler_resets_at_epoch_begin_and_updates_per_batch():
    acc, loss = mx.metric.Accuracy(), mx.metric.Loss()
    handler = MetricHandler([acc, loss])
    label, pred = mx.nd.array([0, 1]), mx.nd.array([[0.9, 0.1], [0.8, 0.2]])
    handler.batch_end(None, pred=[pred], label=[label], loss=[mx.nd.array([1.0, 3.0])])
    assert acc.get()[1] == 0.5 and loss.get()[1] == 2.0
    handler.epoch_begin(None)
    assert np.isnan(acc.get()[1]) and np.isnan(loss.get()[1])


def test_handlers_run_in_priority_order_ties_in_given_order():
    log = []
    late, early, plain = (Counter("late", log, priority=5), Counter("early", log, -3000),
                          Counter("plain", log))
    est = _estimator()
    handlers = est._prepare_default_handlers(None, [late, early, plain])
    kinds = [h.name if isinstance(h, Counter) else type(h).__name__ for h in handlers]
    assert kinds == ["early", "GradientUpdateHandler", "MetricHandler", "plain",
                     "StoppingHandler", "late", "LoggingHandler"]
    est.fit(_loader(), event_handlers=[late, early, plain], batches=1)
    assert log == ["early", "plain", "late"]


def test_gradient_update_runs_before_other_batch_end_handlers():
    est = _estimator()
    weight = est.net.weight
    before = []

    class Grab(BatchEnd):
        def __init__(self, priority):
            self.priority = priority

        def batch_end(self, estimator, *args, **kwargs):
            before.append(weight.data().asnumpy().copy())

    est.fit(_loader(), event_handlers=[Grab(-3000), Grab(0)], batches=1)
    assert not np.array_equal(before[0], before[1])      # the step came between them
    assert GradientUpdateHandler().priority < MetricHandler([]).priority < 0
    assert LoggingHandler().priority == float("inf")


# ---- CheckpointHandler ---------------------------------------------------------------------
def _files(path):
    return sorted(os.listdir(path))


def test_checkpoints_at_epoch_period_pruned_to_max_checkpoints(tmp_path):
    est = _estimator()
    ckpt = CheckpointHandler(tmp_path, "m", epoch_period=2, max_checkpoints=1)
    est.fit(_loader(), event_handlers=[ckpt], epochs=5)
    # saved after epochs 1 and 3 (indices), named by batches trained; the first is pruned
    assert _files(tmp_path) == ["m-epoch3batch16.params", "m-epoch3batch16.states"]
    assert (ckpt.current_epoch, ckpt.current_batch) == (5, 20)


def test_checkpoints_at_batch_period_named_by_batch_index(tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(2, in_units=3))
    net.hybridize()
    est = _estimator(net)
    ckpt = CheckpointHandler(tmp_path, "m", epoch_period=None, batch_period=3,
                             max_checkpoints=2)
    est.fit(_loader(), event_handlers=[ckpt], batches=10)
    # batches 2, 5, 8 (indices); the graph is saved once, after the first batch
    assert _files(tmp_path) == ["m-epoch1batch5.params", "m-epoch1batch5.states",
                                "m-epoch2batch8.params", "m-epoch2batch8.states",
                                "m-symbol.json"]
    graph = mx.sym.load(str(tmp_path / "m-symbol.json"))
    assert graph.list_arguments() == ["data"] + list(net.collect_params())


def test_a_second_fit_overwrites_and_keeps_its_checkpoints(tmp_path):
    est = _estimator()
    ckpt = CheckpointHandler(tmp_path, "m", max_checkpoints=3)
    est.fit(_loader(), event_handlers=[ckpt], epochs=2)
    # the same two names again: MXNet counted four checkpoints and pruned the "oldest",
    # deleting the epoch0 files it had just written
    est.fit(_loader(), event_handlers=[ckpt], epochs=2)
    assert _files(tmp_path) == ["m-epoch0batch4.params", "m-epoch0batch4.states",
                                "m-epoch1batch8.params", "m-epoch1batch8.states"]


def test_pruning_deletes_only_its_own_files(tmp_path):
    # MXNet deleted every file starting with the pruned prefix: m-epoch0batch1 took
    # m-epoch0batch10.params with it
    (tmp_path / "m-epoch0batch10.params").write_bytes(b"someone else's")
    est = _estimator()
    ckpt = CheckpointHandler(tmp_path, "m", epoch_period=None, batch_period=1,
                             max_checkpoints=1)
    est.fit(_loader(), event_handlers=[ckpt], batches=3)
    assert _files(tmp_path) == ["m-epoch0batch10.params", "m-epoch0batch2.params",
                                "m-epoch0batch2.states"]


class Scripted(mx.metric.EvalMetric):
    """A metric whose value a ScriptHandler sets at each epoch end."""

    def __init__(self, name):
        super().__init__(name)

    def update(self, labels, preds):
        pass

    def set(self, value):
        self.sum_metric, self.num_inst = float(value), 1


class ScriptHandler(EpochEnd):
    """Sets ``metric`` to the next of ``values`` at each epoch end, before the others."""
    priority = -1500

    def __init__(self, metric, values):
        self.metric, self.values = metric, list(values)

    def epoch_end(self, estimator, *args, **kwargs):
        self.metric.set(self.values.pop(0))


def _scripted_estimator(name, values):
    metric = Scripted(name)
    est = _estimator(train_metrics=[metric])
    return est, metric, ScriptHandler(metric, values)


def test_save_best_keeps_the_parameters_of_the_best_epoch(tmp_path, caplog):
    est, metric, script = _scripted_estimator("acc", [0.5, 0.7, 0.6])
    est.logger.addHandler(caplog.handler)
    ckpt = CheckpointHandler(tmp_path, "m", monitor=metric, save_best=True, mode="max",
                             verbose=1)
    est.fit(_loader(), event_handlers=[script, ckpt], epochs=3)
    best = mx.nd.load(str(tmp_path / "m-best.params"))
    second = mx.nd.load(str(tmp_path / "m-epoch1batch8.params"))
    third = mx.nd.load(str(tmp_path / "m-epoch2batch12.params"))
    for key in best:
        np.testing.assert_array_equal(best[key].asnumpy(), second[key].asnumpy())
        assert not np.array_equal(best[key].asnumpy(), third[key].asnumpy())
    assert os.path.isfile(tmp_path / "m-best.states")
    text = caplog.text
    # MXNet logged the new best as the old one ("improved from 0.7 to 0.7")
    assert "training acc improved from 0.50000 to 0.70000" in text
    assert "[Epoch 2] CheckpointHandler: training acc did not improve from 0.70000" in text


def test_save_best_auto_mode_minimises_a_loss(tmp_path):
    # MXNet's auto mode maximised everything ('acc' or ... was always true)
    est, metric, script = _scripted_estimator("loss", [3.0, 2.0, 2.5])
    ckpt = CheckpointHandler(tmp_path, "m", monitor=metric, save_best=True)
    est.fit(_loader(), event_handlers=[script, ckpt], epochs=3)
    assert ckpt.best == 2.0


def test_resume_from_checkpoint_continues_the_epoch_count(tmp_path):
    est = _estimator()
    est.fit(_loader(), event_handlers=[CheckpointHandler(tmp_path, "m")], epochs=2)
    saved = mx.nd.load(str(tmp_path / "m-epoch1batch8.params"))
    est.net.weight.set_data(mx.nd.zeros((2, 3)))          # lose the trained weights

    loaded = []

    class Grab(TrainBegin):
        def train_begin(self, estimator, *args, **kwargs):
            loaded.append(estimator.net.weight.data().asnumpy().copy())

    count = Counter()
    resume = CheckpointHandler(tmp_path, "m", max_checkpoints=2, resume_from_checkpoint=True)
    est.fit(_loader(), event_handlers=[resume, Grab(), count], epochs=5)
    assert est.max_epoch == 3 and count.epochs == 3
    weight_key = [k for k in saved if k.endswith("weight")][0]
    np.testing.assert_array_equal(loaded[0], saved[weight_key].asnumpy())
    # numbering goes on from epoch 1 / batch 8; the resumed files count towards the limit
    assert _files(tmp_path) == ["m-epoch3batch16.params", "m-epoch3batch16.states",
                                "m-epoch4batch20.params", "m-epoch4batch20.states"]


def test_resume_batches_continues_the_batch_count(tmp_path):
    est = _estimator()
    first = CheckpointHandler(tmp_path, "m", epoch_period=None, batch_period=2)
    est.fit(_loader(), event_handlers=[first], batches=6)        # saves batches 1, 3, 5
    count = Counter()
    resume = CheckpointHandler(tmp_path, "m", epoch_period=None, batch_period=2,
                               resume_from_checkpoint=True)
    est.fit(_loader(), event_handlers=[resume, count], batches=10)
    assert est.max_batch == 4 and count.batches == 4
    # batch indices 1 and 3 of the new run are 7 and 9 overall; the run is epoch 2 overall
    assert [f for f in _files(tmp_path) if f.endswith(".params")] == \
        ["m-epoch0batch1.params", "m-epoch0batch3.params", "m-epoch1batch5.params",
         "m-epoch2batch7.params", "m-epoch2batch9.params"]


def test_resume_errors(tmp_path):
    est = _estimator()
    est.fit(_loader(), event_handlers=[CheckpointHandler(tmp_path, "m")], epochs=2)
    done = CheckpointHandler(tmp_path, "m", resume_from_checkpoint=True)
    with pytest.raises(MXNetError, match="already reach 2 epochs"):
        est.fit(_loader(), event_handlers=[done], epochs=2)
    mixed = CheckpointHandler(tmp_path, "m", batch_period=2, resume_from_checkpoint=True)
    with pytest.raises(AssertionError, match="epoch_period set and batch_period=None"):
        est.fit(_loader(), event_handlers=[mixed], epochs=4)
    (tmp_path / "m-epochXbatch1.params").write_bytes(b"")
    bad = CheckpointHandler(tmp_path, "m", resume_from_checkpoint=True)
    with pytest.raises(MXNetError, match="cannot parse checkpoint file 'm-epochXbatch1"):
        est.fit(_loader(), event_handlers=[bad], epochs=4)


def test_resume_without_checkpoints_trains_from_scratch(tmp_path, caplog):
    est, count = _estimator(), Counter()
    est.logger.addHandler(caplog.handler)
    resume = CheckpointHandler(tmp_path / "new", "m", resume_from_checkpoint=True)
    est.fit(_loader(), event_handlers=[resume, count], epochs=2)
    assert count.epochs == 2
    assert "No checkpoint found, training from scratch for 2 epochs" in caplog.text


# ---- EarlyStoppingHandler ------------------------------------------------------------------
@pytest.mark.parametrize("values, kwargs, stopped", [
    # max: 0.6 does not beat 0.6, 0.55 neither: the second miss (patience 2) at epoch 3
    ([0.5, 0.6, 0.6, 0.55, 0.7, 0.8], {"mode": "max", "patience": 2}, 3),
    # an improvement must exceed min_delta: 0.6 - 0.5 = 0.1 < 0.15
    ([0.5, 0.6, 0.6, 0.9, 0.9, 0.9], {"mode": "max", "patience": 2, "min_delta": 0.15}, 2),
    # auto minimises a name without 'acc'/'f1' (MXNet maximised it and stopped at epoch 1)
    ([3.0, 2.0, 2.5, 1.0, 0.5, 0.1], {"patience": 0}, 2),
    # auto maximises an accuracy
    ([0.1, 0.2, 0.3, 0.3, 0.9, 0.9], {"name": "val acc", "patience": 0}, 3),
])
def test_early_stopping_after_patience(values, kwargs, stopped):
    kwargs = dict(kwargs)
    est, metric, script = _scripted_estimator(kwargs.pop("name", "loss"), values)
    early, count = EarlyStoppingHandler(metric, **kwargs), Counter()
    est.fit(_loader(), event_handlers=[script, early, count], epochs=len(values))
    assert (early.stopped_epoch, early.current_epoch, count.epochs) == \
        (stopped, stopped + 1, stopped + 1)


def test_early_stopping_baseline_and_the_log_of_a_stop_at_epoch_zero(caplog):
    est, metric, script = _scripted_estimator("acc", [0.5, 0.9])
    est.logger.addHandler(caplog.handler)
    early = EarlyStoppingHandler(metric, baseline=0.6, mode="max")
    est.fit(_loader(), event_handlers=[script, early], epochs=2)
    assert early.stop_training and early.current_epoch == 1
    # MXNet logged only stops after epoch 0
    assert "[Epoch 0] EarlyStoppingHandler: early stopping due to training acc not " \
        "improving" in caplog.text


def test_early_stopping_warns_while_the_monitor_is_not_updated():
    est, metric, _ = _scripted_estimator("acc", [])
    early = EarlyStoppingHandler(metric, mode="max")
    with pytest.warns(RuntimeWarning, match="training acc has not been updated"):
        est.fit(_loader(), event_handlers=[early], epochs=2)
    assert not early.stop_training


# ---- LoggingHandler ------------------------------------------------------------------------
NUM = r"\d+\.\d{4}"


def test_logging_lines_per_epoch(caplog):
    est = _estimator()
    est.logger.addHandler(caplog.handler)
    est.fit(_loader(), val_data=_loader(n=4), epochs=2)
    lines = [r.getMessage() for r in caplog.records]
    patterns = [
        r"Training begin: using optimizer SGD with current learning rate 0\.0100 ",
        r"Train for 2 epochs\.",
        r"\[Epoch 0\] Begin, current learning rate: 0\.0100",
        r"Validation Begin",
        rf"\[Epoch 0\] Finished in \d+\.\d{{3}}s, validation accuracy: {NUM}, "
        rf"validation softmaxcrossentropyloss: {NUM}",
        rf"\[Epoch 0\] Finished in \d+\.\d{{3}}s, training accuracy: {NUM}, "
        rf"training softmaxcrossentropyloss: {NUM}",
        r"\[Epoch 1\] Begin, current learning rate: 0\.0100",
        r"Validation Begin",
        rf"\[Epoch 0\] Finished in .*validation accuracy: {NUM}, .*",
        rf"\[Epoch 1\] Finished in .*training accuracy: {NUM}, .*",
        rf"Train finished using total \d+s with 2 epochs\. training accuracy: {NUM}, "
        rf"training softmaxcrossentropyloss: {NUM}",
    ]
    assert len(lines) == len(patterns), lines
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), (line, pattern)


def test_logging_tells_validation_by_the_name_prefix(caplog):
    est = _estimator(train_metrics=mx.metric.Accuracy(name="pretraining acc"))
    est.logger.addHandler(caplog.handler)
    est.evaluate(_loader())
    assert caplog.records[0].getMessage() == "Validation Begin"


def test_logging_every_k_batches_counts_samples(caplog):
    est = _estimator()
    est.logger.addHandler(caplog.handler)
    logger = LoggingHandler(log_interval=3, metrics=est.train_metrics)
    est.fit(_loader(n=14), event_handlers=[logger], epochs=1)      # 7 batches of 2
    batch_lines = [r.getMessage() for r in caplog.records if "][Batch" in r.getMessage()]
    assert [re.match(r"\[Epoch 0\]\[Batch (\d+)\]\[Samples (\d+)\] time/interval: "
                     rf"\d+\.\d{{3}}s training accuracy: {NUM}, training "
                     rf"softmaxcrossentropyloss: {NUM}$", line).groups()
            for line in batch_lines] == [("0", "2"), ("3", "8"), ("6", "14")]
    assert (logger.current_epoch, logger.batch_index) == (1, 0)


# ---- argument errors -----------------------------------------------------------------------
@pytest.mark.parametrize("make, match", [
    (lambda: StoppingHandler(max_epoch=0), "StoppingHandler: max_epoch must be an int >= 1"),
    (lambda: MetricHandler("acc"), "MetricHandler: metrics must be an mx.metric.EvalMetric"),
    (lambda: ValidationHandler(None, "evaluate"), "ValidationHandler: eval_fn must be callable"),
    (lambda: ValidationHandler(None, print, epoch_period=-1),
     "ValidationHandler: epoch_period must be an int >= 0 or None, got -1"),
    (lambda: ValidationHandler(None, print, batch_period=1.5),
     "ValidationHandler: batch_period must be an int >= 0 or None, got 1.5"),
    (lambda: LoggingHandler(log_interval=0), "LoggingHandler: log_interval must be 'epoch' or"),
    (lambda: LoggingHandler(log_interval="batch"), "log_interval must be 'epoch' or an int"),
    (lambda: CheckpointHandler("/tmp", save_best=True),
     "CheckpointHandler: monitor must be one of the metric objects"),
    (lambda: CheckpointHandler("/tmp", max_checkpoints=-1),
     "CheckpointHandler: max_checkpoints must be an int >= 0, got -1"),
    (lambda: CheckpointHandler("/tmp", model_prefix="a/b"),
     "CheckpointHandler: model_prefix must be a non-empty file name"),
    (lambda: CheckpointHandler("/tmp", monitor=mx.metric.Accuracy(), save_best=True,
                               mode="maximum"),
     "CheckpointHandler: mode must be 'auto', 'min' or 'max', got 'maximum'"),
    (lambda: CheckpointHandler("/tmp", mode="best"),
     "CheckpointHandler: mode must be 'auto', 'min' or 'max', got 'best'"),
    (lambda: EarlyStoppingHandler(None), "EarlyStoppingHandler: monitor must be one of"),
    (lambda: EarlyStoppingHandler(mx.metric.CompositeEvalMetric([mx.metric.Accuracy()])),
     "EarlyStoppingHandler: monitor must be a single metric"),
    (lambda: EarlyStoppingHandler(mx.metric.Accuracy(), patience=-1),
     "EarlyStoppingHandler: patience must be an int >= 0"),
    (lambda: EarlyStoppingHandler(mx.metric.Accuracy(), min_delta=float("nan")),
     "EarlyStoppingHandler: min_delta must be a finite number >= 0"),
    (lambda: EarlyStoppingHandler(mx.metric.Accuracy(), mode="up"),
     "EarlyStoppingHandler: mode must be 'auto', 'min' or 'max'"),
])
def test_handler_argument_errors(make, match):
    with pytest.raises(MXNetError, match=re.escape(match)):
        make()


def test_checkpoint_log_counts_the_batches_trained(tmp_path, caplog):
    est = _estimator()
    est.logger.addHandler(caplog.handler)
    est.fit(_loader(), epochs=1, event_handlers=[CheckpointHandler(tmp_path, "m", verbose=1)])
    # MXNet said 5 after the 4 batches of the epoch
    assert "[Epoch 0] CheckpointHandler: trained total 4 batches, saving model at " \
        f"{tmp_path} with prefix: m-epoch0batch4" in caplog.text


def test_handlers_referring_to_foreign_metrics_are_rejected():
    est = _estimator()
    foreign = mx.metric.Accuracy(name="mine")
    with pytest.raises(MXNetError, match="LoggingHandler refers to metric 'mine'"):
        est.fit(_loader(), event_handlers=[LoggingHandler(metrics=[foreign])], epochs=1)
    # MXNet's check missed monitors ('metric' or 'monitor' is 'metric')
    with pytest.raises(MXNetError, match="EarlyStoppingHandler refers to metric 'mine'"):
        est.fit(_loader(), event_handlers=[EarlyStoppingHandler(foreign, mode="max")],
                epochs=1)
    # the estimator's own metrics are fine (without validation data this one stays empty)
    with pytest.warns(RuntimeWarning, match="validation accuracy has not been updated"):
        est.fit(_loader(), epochs=1,
                event_handlers=[EarlyStoppingHandler(est.val_metrics[0], mode="max")])
