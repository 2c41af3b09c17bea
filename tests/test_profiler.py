"""mx.profiler: operator timing from the dispatch path, user scopes, the Chrome trace and the
aggregate statistics."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import profiler
from mxlite.base import MXNetError
from mxlite.ops.registry import REGISTRY


@pytest.fixture(autouse=True)
def fresh_profiler(tmp_path):
    """Each test starts stopped, with a trace file of its own and no events or statistics."""
    trace_file = str(tmp_path / "profile.json")
    profiler.set_state("stop")
    profiler.set_config(**{**profiler._DEFAULTS, "filename": trace_file})
    profiler.dumps(reset=True)
    profiler._STATE.reset_trace()
    yield trace_file
    profiler.set_state("stop")
    profiler.set_config(**profiler._DEFAULTS)
    profiler.dumps(reset=True)
    profiler._STATE.reset_trace()


def run_profiled(**config):
    profiler.set_config(**config)
    profiler.set_state("run")


def stats():
    return json.loads(profiler.dumps(format="json"))


def trace_events(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def test_aggregate_counts_each_operator_call():
    run_profiled(aggregate_stats=True)
    x = mx.nd.zeros((10, 10))
    mx.nd.sqrt(x)
    x = x + 1
    x = x + 1
    profiler.set_state("stop")
    ops = stats()["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1
    assert ops["_zeros"]["Count"] == 1      # MXNet's name of the kernel behind nd.zeros
    assert ops["_plus_scalar"]["Count"] == 2
    row = ops["_plus_scalar"]
    assert 0 <= row["Min"] <= row["Avg"] <= row["Max"] <= row["Total"]
    assert row["Total"] == pytest.approx(row["Avg"] * 2)


def test_results_are_unchanged_while_profiling():
    data = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    run_profiled()
    y = (mx.nd.exp(mx.nd.array(data)) * 3).sum(axis=1)
    profiler.set_state("stop")
    np.testing.assert_allclose(y.asnumpy(), (np.exp(data) * 3).sum(axis=1), rtol=1e-6)


def test_stopped_profiler_leaves_the_registry_untouched():
    """Off means off: every record holds its own kernels again (nothing to test per call)."""
    before = {name: (op.compute, op.cpu_kernel, op.gradient) for name, op in REGISTRY.items()}
    run_profiled()
    assert REGISTRY["sin"].compute is not before["sin"][0]     # swapped while running
    profiler.set_state("stop")
    for name, op in REGISTRY.items():
        assert (op.compute, op.cpu_kernel, op.gradient) == before[name], name


def test_kernels_attached_while_profiling_survive_stop():
    """A backend attaching a kernel meanwhile (cuda.ops.attach) must not lose it at stop."""
    op = REGISTRY["sin"]
    original = op.compute

    def fake_kernel(rctx, ins, outs, attrs):
        pass

    run_profiled()
    op.compute["fake"] = fake_kernel
    profiler.set_state("stop")
    try:
        assert op.compute is original and op.compute["fake"] is fake_kernel
    finally:
        del original["fake"]


def test_no_operator_profiling_when_every_operator_switch_is_off():
    run_profiled(profile_symbolic=False, profile_imperative=False, aggregate_stats=True)
    mx.nd.ones((2,)) + 1
    profiler.set_state("stop")
    assert "operator" not in stats()["Time"]


def test_dump_writes_a_chrome_trace(fresh_profiler):
    run_profiled()
    mx.nd.sin(mx.nd.ones((4,)))
    profiler.dump(finished=False)
    events = trace_events(fresh_profiler)
    sin = [e for e in events if e["name"] == "sin"]
    assert len(sin) == 1
    assert sin[0]["ph"] == "X" and sin[0]["cat"] == "operator" and sin[0]["dur"] >= 0
    assert {"ts", "pid", "tid"} <= set(sin[0])


def test_dump_finished_starts_a_new_trace(fresh_profiler):
    run_profiled()
    mx.nd.sin(mx.nd.ones((4,)))
    profiler.dump(finished=True)
    mx.nd.cos(mx.nd.ones((4,)))
    profiler.dump(finished=True)
    names = {e["name"] for e in trace_events(fresh_profiler)}
    assert "cos" in names and "sin" not in names


def test_symbolic_execution_is_timed():
    run_profiled(aggregate_stats=True)
    a = mx.sym.Variable("a")
    ex = mx.sym.dot(a, a).bind(mx.cpu(), {"a": mx.nd.ones((3, 3))})
    out = ex.forward()[0]
    profiler.set_state("stop")
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 3), 3.0))
    assert stats()["Time"]["operator"]["dot"]["Count"] == 1


def test_pause_and_resume():
    run_profiled(aggregate_stats=True)
    profiler.pause()
    mx.nd.sin(mx.nd.ones((2,)))
    with profiler.Event("paused"):
        pass
    profiler.resume()
    mx.nd.cos(mx.nd.ones((2,)))
    profiler.set_state("stop")
    time_stats = stats()["Time"]
    assert "sin" not in time_stats["operator"] and "cos" in time_stats["operator"]
    assert "event" not in time_stats


def test_task_frame_event_are_spans_in_their_domains(fresh_profiler):
    run_profiled(aggregate_stats=True)
    domain = profiler.Domain("mydomain")
    task, frame = profiler.Task(domain, "task"), domain.new_frame("frame")
    event = profiler.Event("event1")
    for scope in (task, frame, event):
        scope.start()
        scope.stop()
    profiler.dump(False)
    time_stats = stats()["Time"]
    assert set(time_stats["mydomain"]) == {"task", "frame"}
    assert time_stats["event"]["event1"]["Count"] == 1
    spans = {e["name"]: e["cat"] for e in trace_events(fresh_profiler) if e["ph"] == "X"}
    assert spans == {"task": "mydomain", "frame": "mydomain", "event1": "event"}


def test_counter_and_marker(fresh_profiler):
    run_profiled()
    domain = profiler.Domain("d")
    counter = profiler.Counter(domain, "c", 5)
    counter += 2
    counter -= 1
    assert counter.value == 6
    profiler.Marker(domain, "m").mark("global")
    profiler.dump(False)
    events = trace_events(fresh_profiler)
    samples = [e for e in events if e["ph"] == "C"]
    assert samples[-1]["args"] == {"c": 6}
    (marker,) = [e for e in events if e["ph"] == "i"]
    assert marker["name"] == "m" and marker["s"] == "g" and marker["cat"] == "d"


def test_counter_in_a_tight_loop_keeps_few_samples(fresh_profiler):
    """Samples closer than COUNTER_RESOLUTION_US replace each other; the last value stays."""
    run_profiled()
    counter = profiler.Counter(profiler.Domain("d"), "c")
    for _ in range(20000):
        counter += 1
    profiler.dump(False)
    samples = [e for e in trace_events(fresh_profiler) if e["ph"] == "C"]
    assert samples[-1]["args"]["c"] == 20000
    assert len(samples) < 20000


def test_events_are_capped(monkeypatch, fresh_profiler):
    monkeypatch.setattr(profiler, "MAX_EVENTS", 3)
    run_profiled()
    for _ in range(5):
        profiler.Marker(profiler.Domain("d"), "m").mark()
    profiler.dump(False)
    with open(fresh_profiler) as f:
        data = json.load(f)
    assert len([e for e in data["traceEvents"] if e["ph"] != "M"]) == 3
    assert data["otherData"]["dropped_events"] == 2


def test_continuous_dump_writes_while_running(fresh_profiler):
    run_profiled(continuous_dump=True, dump_period=1e-9)
    mx.nd.sin(mx.nd.ones((2,)))
    assert os.path.exists(fresh_profiler)     # written by the operator's own record


def test_continuous_dump_to_a_bad_path_warns_and_the_operator_runs(tmp_path):
    run_profiled(filename=str(tmp_path / "missing" / "p.json"), continuous_dump=True,
                 dump_period=1e-9)
    with pytest.warns(RuntimeWarning, match="cannot write"):
        y = mx.nd.sin(mx.nd.zeros((2,)))
    np.testing.assert_array_equal(y.asnumpy(), [0.0, 0.0])


def test_dumps_sorts_within_each_domain():
    run_profiled(aggregate_stats=True)
    x = mx.nd.ones((50, 50))
    for _ in range(3):
        x = mx.nd.sin(x)
    mx.nd.cos(x)
    mx.nd.dot(x, x)
    profiler.set_state("stop")
    for key, field in (("count", "Count"), ("total", "Total"), ("avg", "Avg")):
        for ascending in (False, True):
            rows = json.loads(profiler.dumps(format="json", sort_by=key, ascending=ascending),
                              object_pairs_hook=list)
            ops = dict(rows)["Time"]
            values = [dict(stat)[field] for _, stat in dict(ops)["operator"]]
            assert values == sorted(values, reverse=not ascending)


def test_dumps_table_names_every_operator():
    run_profiled(aggregate_stats=True)
    mx.nd.sin(mx.nd.ones((2,)))
    profiler.set_state("stop")
    table = profiler.dumps()
    assert "operator" in table and "sin" in table and "Avg Time (ms)" in table


def test_dumps_reset_clears_statistics():
    run_profiled(aggregate_stats=True)
    mx.nd.sin(mx.nd.ones((2,)))
    profiler.dumps(reset=True)
    assert stats()["Time"] == {}


class _AddOne(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("vp_add_one")
class _AddOneProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return [in_shape[0]], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _AddOne()


def test_custom_operators_have_their_own_domain():
    run_profiled(aggregate_stats=True)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="vp_add_one")
    y.backward()
    profiler.set_state("stop")
    np.testing.assert_array_equal(y.asnumpy(), [2.0, 3.0])
    custom = stats()["Time"]["Custom Operator"]
    assert {"vp_add_one::pure_python", "_backward_vp_add_one::pure_python",
            "vp_add_one::_plus_scalar"} <= set(custom)


@pytest.mark.parametrize("call, words", [
    (lambda: profiler.set_config(bogus=1), ["set_config", "bogus"]),
    (lambda: profiler.set_config(aggregate_stats="maybe"), ["aggregate_stats", "maybe"]),
    (lambda: profiler.set_config(dump_period=-1), ["dump_period", "-1"]),
    (lambda: profiler.set_state("go"), ["set_state", "go"]),
    (lambda: profiler.set_state("run", "server"), ["server"]),
    (lambda: profiler.dumps(sort_by="median"), ["sort_by", "median"]),
    (lambda: profiler.dumps(format="xml"), ["format", "xml"]),
    (lambda: profiler.Counter(profiler.Domain("d"), "c").increment(1.5), ["c", "1.5"]),
    (lambda: profiler.Marker(profiler.Domain("d"), "m").mark("galaxy"), ["scope", "galaxy"]),
    (lambda: profiler.Event("e").stop(), ["'e'", "start"]),
    (lambda: profiler.Task("not a domain", "t"), ["Task", "domain"]),
])
def test_bad_input_names_the_argument(call, words):
    with pytest.raises(MXNetError) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_dump_to_an_unwritable_path_raises(tmp_path):
    profiler.set_config(filename=str(tmp_path / "missing" / "p.json"))
    with pytest.raises(MXNetError, match="profiler.dump"):
        profiler.dump()


def test_continuous_dump_writes_at_exit(tmp_path):
    trace_file = tmp_path / "exit.json"
    code = ("import mxlite as mx\n"
            f"mx.profiler.set_config(filename={str(trace_file)!r}, continuous_dump=True,"
            " dump_period=3600)\n"
            "mx.profiler.set_state('run')\n"
            "mx.nd.sin(mx.nd.ones((2,)))\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert "sin" in {e["name"] for e in trace_events(str(trace_file))}
