"""mx.callback: log lines against MXNet 1.9.1's formats computed from the inputs,
checkpoints at the right epochs, ProgressBar strings, bad counts rejected."""
import logging
import math
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.model import BatchEndParam


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.INFO)
    return caplog


def messages(caplog):
    return [r.getMessage() for r in caplog.records]


def accuracy(correct, total):
    """An Accuracy metric after ``total`` predictions of which ``correct`` were right."""
    metric = mx.metric.Accuracy()
    labels = np.zeros(total)
    preds = np.zeros((total, 2))
    preds[:correct, 0] = 1          # class 0: right
    preds[correct:, 1] = 1          # class 1: wrong
    metric.update([mx.nd.array(labels)], [mx.nd.array(preds)])
    return metric


class FakeClock:
    """A clock advancing by ``step`` seconds per read: speeds become exact."""

    def __init__(self, step):
        self.now, self.step = 100.0, step

    def __call__(self):
        self.now += self.step
        return self.now


# ---- Speedometer -----------------------------------------------------------------------------
def test_speedometer_logs_mxnet_format_and_resets_the_metric(info):
    metric = accuracy(3, 4)
    spd = mx.callback.Speedometer(batch_size=8, frequent=2)
    spd._clock = FakeClock(0.5)
    for nbatch in range(5):
        spd(BatchEndParam(epoch=1, nbatch=nbatch, eval_metric=metric, locals=None))
        if nbatch == 2:
            assert metric.num_inst == 0     # auto_reset: local statistics cleared
            metric.update([mx.nd.array([0, 0])], [mx.nd.array([[1, 0], [0, 1]])])
    # each line: frequent * batch_size samples over the 0.5 s between two clock reads
    speed = 2 * 8 / 0.5
    assert messages(info) == [
        "Epoch[1] Batch [0-2]\tSpeed: %.2f samples/sec\taccuracy=%f" % (speed, 0.75),
        "Epoch[1] Batch [2-4]\tSpeed: %.2f samples/sec\taccuracy=%f" % (speed, 0.5)]
    assert metric.global_num_inst == 6   # the global statistics are kept


def test_speedometer_without_auto_reset_accumulates(info):
    metric = accuracy(1, 2)
    spd = mx.callback.Speedometer(4, frequent=1, auto_reset=False)
    spd._clock = FakeClock(0.25)
    for nbatch in range(3):
        spd(BatchEndParam(0, nbatch, metric, None))
    speed = 1 * 4 / 0.25
    line = "Epoch[0] Batch [0-%d]\tSpeed: %.2f samples/sec\taccuracy=%f"
    assert messages(info) == [line % (1, speed, 0.5), line % (2, speed, 0.5)]
    assert metric.num_inst == 2


def test_speedometer_several_metrics_and_no_metric(info):
    metric = mx.metric.CompositeEvalMetric([accuracy(1, 4), accuracy(2, 4)])
    metric.metrics[1].name = "acc2"
    spd = mx.callback.Speedometer(2, frequent=1)
    spd._clock = FakeClock(1.0)
    spd(BatchEndParam(0, 0, metric, None))
    spd(BatchEndParam(0, 1, metric, None))
    bare = mx.callback.Speedometer(2, frequent=1)
    bare._clock = FakeClock(1.0)
    bare(BatchEndParam(3, 0, None, None))
    bare(BatchEndParam(3, 1, None, None))
    assert messages(info) == [
        "Epoch[0] Batch [0-1]\tSpeed: 2.00 samples/sec\taccuracy=%f\tacc2=%f" % (0.25, 0.5),
        "Iter[3] Batch [1]\tSpeed: 2.00 samples/sec"]


def test_speedometer_restarts_each_epoch_and_real_speed_is_positive(info):
    spd = mx.callback.Speedometer(16, frequent=2)
    for epoch in range(2):
        for nbatch in range(3):
            spd(BatchEndParam(epoch, nbatch, None, None))
    lines = messages(info)
    # batch 0 of each epoch only starts the clock: one line per epoch, at batch 2
    assert [re.match(r"Iter\[(\d)\] Batch \[2\]\tSpeed: (\S+) samples/sec$", m).group(1)
            for m in lines] == ["0", "1"]
    for m in lines:
        assert float(m.split("Speed: ")[1].split()[0]) > 0


def test_speedometer_zero_interval_is_inf(info):
    spd = mx.callback.Speedometer(1, frequent=1)
    spd._clock = lambda: 5.0
    spd(BatchEndParam(0, 0, None, None))
    spd(BatchEndParam(0, 1, None, None))
    assert messages(info) == ["Iter[0] Batch [1]\tSpeed: inf samples/sec"]


# ---- log_train_metric, LogValidationMetricsCallback ------------------------------------------
def test_log_train_metric_period_and_auto_reset(info):
    metric = accuracy(1, 4)
    cb = mx.callback.log_train_metric(3, auto_reset=True)
    for nbatch in range(1, 4):
        cb(BatchEndParam(2, nbatch, metric, None))
    assert messages(info) == ["Iter[2] Batch[3] Train-accuracy=%f" % 0.25]
    assert metric.num_inst == 0
    kept = accuracy(1, 2)
    mx.callback.log_train_metric(1)(BatchEndParam(0, 5, kept, None))
    assert kept.num_inst == 2          # auto_reset defaults to False
    mx.callback.log_train_metric(1)(BatchEndParam(0, 5, None, None))   # no metric: nothing
    assert len(info.records) == 2


def test_log_validation_metrics(info):
    cb = mx.callback.LogValidationMetricsCallback()
    cb(BatchEndParam(4, 0, accuracy(3, 8), None))
    cb(BatchEndParam(4, 0, None, None))
    assert messages(info) == ["Epoch[4] Validation-accuracy=%f" % (3 / 8)]


# ---- ProgressBar -----------------------------------------------------------------------------
@pytest.mark.parametrize("count,total,length", [(0, 4, 8), (1, 3, 10), (2, 4, 16), (4, 4, 5),
                                                (7, 9, 80)])
def test_progress_bar_string(info, count, total, length):
    mx.callback.ProgressBar(total, length)(BatchEndParam(0, count, None, None))
    filled = int(round(length * count / total))
    percent = math.ceil(100 * count / total)
    assert messages(info) == ["[" + "=" * filled + "-" * (length - filled) + "] "
                              + str(percent) + "%\r"]


def test_progress_bar_past_total_stays_its_length():
    bar = mx.callback.ProgressBar(total=2, length=4).bar(3)
    assert bar == "[====] 150%\r"


# ---- checkpoints -----------------------------------------------------------------------------
def test_do_checkpoint_writes_every_period_numbered_from_one(tmp_path):
    prefix = str(tmp_path / "net")
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    cb = mx.callback.do_checkpoint(prefix, period=2)
    weights = {}
    for iter_no in range(5):
        arg = {"fc_weight": mx.nd.full((3, 4), iter_no), "fc_bias": mx.nd.zeros(3)}
        weights[iter_no + 1] = arg["fc_weight"].asnumpy()
        cb(iter_no, net, arg, {})
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["net-0002.params", "net-0004.params", "net-symbol.json"]
    for epoch in (2, 4):
        sym, arg, aux = mx.model.load_checkpoint(prefix, epoch)
        assert sym.list_arguments() == net.list_arguments()
        np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), weights[epoch])
        assert aux == {}


def test_module_checkpoint_calls_the_module(tmp_path):
    class Recorder:
        def __init__(self):
            self.calls = []

        def save_checkpoint(self, prefix, epoch, save_optimizer_states=False):
            self.calls.append((prefix, epoch, save_optimizer_states))

    mod = Recorder()
    cb = mx.callback.module_checkpoint(mod, "m", period=3, save_optimizer_states=True)
    for iter_no in range(7):
        cb(iter_no)
    assert mod.calls == [("m", 3, True), ("m", 6, True)]


# ---- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("make,func,arg", [
    (lambda: mx.callback.do_checkpoint("p", period=0), "do_checkpoint", "period"),
    (lambda: mx.callback.do_checkpoint("p", period=-2), "do_checkpoint", "period"),
    (lambda: mx.callback.do_checkpoint("p", period=1.5), "do_checkpoint", "period"),
    (lambda: mx.callback.do_checkpoint(None), "do_checkpoint", "prefix"),
    (lambda: mx.callback.module_checkpoint(object(), "p"), "module_checkpoint", "mod"),
    (lambda: mx.callback.log_train_metric(0), "log_train_metric", "period"),
    (lambda: mx.callback.Speedometer(-1), "Speedometer", "batch_size"),
    (lambda: mx.callback.Speedometer(8, frequent=0), "Speedometer", "frequent"),
    (lambda: mx.callback.Speedometer("8"), "Speedometer", "batch_size"),
    (lambda: mx.callback.ProgressBar(0), "ProgressBar", "total"),
    (lambda: mx.callback.ProgressBar(10, length=True), "ProgressBar", "length"),
])
def test_bad_input_names_function_and_argument(make, func, arg):
    with pytest.raises(MXNetError, match=rf"{func}: {arg}"):
        make()


def test_integral_float_period_is_accepted(tmp_path):
    assert mx.callback.Speedometer(np.int64(4)).batch_size == 4
    cb = mx.callback.do_checkpoint(str(tmp_path / "f"), period=2.0)
    cb(1, None, {"w": mx.nd.ones(2)}, {})
    assert (tmp_path / "f-0002.params").exists()
