"""mx.monitor.Monitor over a bound executor: statistics against NumPy, names as MXNet's
executor reports them, pattern, sort, interval, the printed lines, bad input."""
import logging

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

RNG = np.random.default_rng(7)
DATA = RNG.standard_normal((3, 4)).astype(np.float32)
WEIGHT = RNG.standard_normal((5, 4)).astype(np.float32)
BIAS = RNG.standard_normal(5).astype(np.float32)


def rms(a):
    a = np.asarray(a, dtype=np.float64)
    return np.sqrt((a ** 2).sum() / a.size)


def mlp_executor():
    """data -> FullyConnected 'fc' -> relu 'act', bound to fixed arrays; with the NumPy
    values of every array the monitor sees."""
    net = mx.sym.relu(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc"),
                      name="act")
    exe = net.bind(mx.cpu(), args={"data": mx.nd.array(DATA), "fc_weight": mx.nd.array(WEIGHT),
                                   "fc_bias": mx.nd.array(BIAS)})
    fc = DATA.astype(np.float64) @ WEIGHT.T + BIAS
    return exe, {"data": DATA, "fc_weight": WEIGHT, "fc_bias": BIAS, "fc_data": DATA,
                 "fc_output": fc, "act_data": fc, "act_output": np.maximum(fc, 0)}


def run(mon, exe):
    mon.tic()
    exe.forward()
    return mon.toc()


def test_default_statistic_is_the_rms_of_each_array():
    exe, arrays = mlp_executor()
    mon = mx.mon.Monitor(1)
    mon.install(exe)
    res = run(mon, exe)
    # outputs as the forward reports them, then the arguments in list_arguments() order
    assert [(step, name) for step, name, _ in res] == [
        (1, "fc_output"), (1, "act_output"), (1, "data"), (1, "fc_weight"), (1, "fc_bias")]
    for _, name, text in res:
        assert text.endswith("\t") and text.count("\t") == 1
        assert float(text) == pytest.approx(rms(arrays[name]), rel=1e-5)


def test_monitor_all_reports_inputs_and_variables_by_name():
    exe, arrays = mlp_executor()
    mon = mx.monitor.Monitor(1, monitor_all=True, pattern="fc|act")
    mon.install(exe)
    res = run(mon, exe)
    # MXNet's executor: a variable input under its own name, then <node>_<input>
    assert [name for _, name, _ in res] == [
        "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias", "fc_output",
        "act_data", "act_output", "fc_weight", "fc_bias"]
    for _, name, text in res:
        assert float(text) == pytest.approx(rms(arrays[name]), rel=1e-5)


def test_monitor_all_sees_an_input_before_the_op_updates_it():
    data = RNG.standard_normal((6, 2)).astype(np.float32) + 3
    net = mx.sym.BatchNorm(mx.sym.var("x"), name="bn", fix_gamma=False)
    exe = net.simple_bind(mx.cpu(), x=data.shape)
    exe.arg_dict["x"][:] = data
    exe.arg_dict["bn_gamma"][:] = 1
    mon = mx.mon.Monitor(1, stat_func=lambda a: a.copy(), pattern="bn_moving_mean",
                         monitor_all=True)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=True)       # updates the moving mean (an auxiliary state)
    seen = {}
    for _, name, text in mon.toc():
        seen.setdefault(name, []).append(text)
    # as the variable and as bn's input 'moving_mean' (both named so), then at toc()
    *before, after = seen["bn_moving_mean"]
    assert before == [str(np.zeros(2, np.float32)) + "\t"] * 2
    expected = (0.1 * data.mean(axis=0)).astype(np.float32)    # momentum 0.9 from zeros
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), expected, rtol=1e-5)
    assert after == str(exe.aux_dict["bn_moving_mean"].asnumpy()) + "\t"


def test_pattern_is_anchored_at_the_start_and_sort_orders_by_name():
    exe, _ = mlp_executor()
    mon = mx.mon.Monitor(1, pattern=".*weight|.*output", sort=True)
    mon.install(exe)
    assert [name for _, name, _ in run(mon, exe)] == ["act_output", "fc_output", "fc_weight"]
    mon = mx.mon.Monitor(1, pattern="output")       # re.match: no name starts with it
    mon.install(exe)
    assert run(mon, exe) == []


def test_interval_collects_every_interval_th_batch():
    exe, _ = mlp_executor()
    mon = mx.mon.Monitor(2, pattern="act")
    mon.install(exe)
    steps = [run(mon, exe) for _ in range(5)]
    assert steps == [[(1, "act_output", steps[0][0][2])], [], [(3, "act_output", steps[0][0][2])],
                     [], [(5, "act_output", steps[0][0][2])]]
    assert mon.toc() == []      # toc without tic: nothing collected


def test_stat_func_lists_and_arrays_are_formatted_as_mxnet():
    exe, arrays = mlp_executor()
    mon = mx.mon.Monitor(1, stat_func=lambda a: [a.max(), a.min()], pattern="act")
    mon.install(exe)
    ((_, _, text),) = run(mon, exe)
    top, bottom, rest = text.split("\t")
    assert rest == "" and float(bottom) == 0
    assert float(top) == pytest.approx(arrays["act_output"].max(), rel=1e-6)
    mon = mx.mon.Monitor(1, stat_func=lambda a: a + 0, pattern="fc_bias")
    mon.install(exe)
    ((_, _, text),) = run(mon, exe)
    assert text == str(BIAS.copy()) + "\t"          # not a (1,) array: NumPy's text


def test_several_executors_and_bytes_names():
    exe1, _ = mlp_executor()
    exe2, _ = mlp_executor()
    mon = mx.mon.Monitor(1, pattern="act|data")
    mon.install(exe1)
    mon.install(exe2)
    mon.tic()
    exe1.forward()
    exe2.forward()
    mon.stat_helper(b"act_output", mx.nd.ones((2, 2)))     # MXNet's C callback passes bytes
    names = [name for _, name, _ in mon.toc()]
    assert names == ["act_output", "act_output", "act_output", "data", "data"]


def test_toc_print_logs_mxnet_lines(caplog):
    caplog.set_level(logging.INFO)
    exe, _ = mlp_executor()
    mon = mx.mon.Monitor(1, pattern="fc_bias")
    mon.install(exe)
    mon.tic()
    exe.forward()
    mon.toc_print()
    (record,) = caplog.records
    # MXNet's 'Batch: {:7d} {:30s} {:s}': the step right-aligned in 7, the name padded to 30
    head, value = record.getMessage()[:46], record.getMessage()[46:]
    assert head == "Batch: " + " " * 6 + "1 " + "fc_bias" + " " * 23 + " "
    assert value.endswith("\t") and float(value) == pytest.approx(rms(BIAS), rel=1e-5)


@pytest.mark.parametrize("kwargs,match", [
    ({"interval": 0}, "Monitor: interval"),
    ({"interval": -3}, "Monitor: interval"),
    ({"interval": 1.5}, "Monitor: interval"),
    ({"interval": 1, "stat_func": 3}, "Monitor: stat_func"),
    ({"interval": 1, "pattern": "(unclosed"}, "Monitor: pattern"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(MXNetError, match=match):
        mx.mon.Monitor(**kwargs)


def test_bad_install_and_bad_statistic():
    with pytest.raises(MXNetError, match="Monitor.install: exe"):
        mx.mon.Monitor(1).install(object())
    exe, _ = mlp_executor()
    mon = mx.mon.Monitor(1, stat_func=lambda a: 1.0, pattern="act")
    mon.install(exe)
    mon.tic()
    exe.forward()
    with pytest.raises(MXNetError, match="stat_func .*'act_output'"):
        mon.toc()
