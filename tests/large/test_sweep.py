"""The memory-aware sweep of the full-scale rows (sweep.py), with fake workers: which rows
run side by side, and a row killed for memory beside another runs again alone."""
import threading
import time

import pytest

import sweep


class FakeWorker:
    """Answers after a short sleep; records which rows ran at the same time."""
    lock = threading.Lock()
    running = set()
    overlaps = []
    kill_beside_another = set()
    kill_always = set()
    runs = []
    durations = {}      # row -> seconds it takes (default 0.05)

    def __init__(self, p32):
        self.p32 = p32

    def run(self, name, device):
        cls = FakeWorker
        with cls.lock:
            beside = set(cls.running)
            cls.running.add(name)
            cls.runs.append((name, frozenset(beside)))
            if beside:
                cls.overlaps.append(frozenset(beside | {name}))
        time.sleep(cls.durations.get(name, 0.05))
        with cls.lock:
            cls.running.discard(name)
        if name in cls.kill_beside_another and beside or name in cls.kill_always:
            return {"op": name, "died": -9}
        return {"op": name, "ok": True, "error": "", "seconds": 0.05, "peak_gb": 1.0,
                "device": device}

    def close(self):
        pass


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(sweep, "Worker", FakeWorker)
    monkeypatch.setattr(sweep, "_meminfo_gb",
                        lambda field: {"MemTotal": 23.0, "MemAvailable": 22.0}[field])
    for name in ("running", "kill_beside_another", "kill_always"):
        setattr(FakeWorker, name, set())
    FakeWorker.overlaps, FakeWorker.runs, FakeWorker.durations = [], [], {}
    return FakeWorker


def test_rows_that_fit_together_run_side_by_side_and_big_ones_alone(fake, monkeypatch):
    # capacity 23 - 3 = 20 GB: two 8.8 GB rows fit (9.54 each with the margin), a 13 GB
    # row fits beside none of them, and a row with no record runs alone
    monkeypatch.setattr(sweep, "recorded_peaks",
                        lambda: {"a": 8.8, "b": 8.8, "c": 13.0, "d": 8.8, "e": 8.8})
    names = ["a", "b", "c", "d", "e", "new"]
    s = sweep.Sweep(names, 2 ** 32, 16.0, jobs=2)
    answers = [s.result(n) for n in names]
    assert s.close() == answers
    assert [a["op"] for a in answers] == names and all(a["ok"] for a in answers)
    together = set().union(*fake.overlaps) if fake.overlaps else set()
    assert "c" not in together and "new" not in together, fake.overlaps
    assert together, "no two rows ever ran side by side"


def test_a_row_killed_beside_another_runs_again_alone(fake, monkeypatch):
    monkeypatch.setattr(sweep, "recorded_peaks", lambda: {n: 8.0 for n in "abcd"})
    fake.kill_beside_another = {"b"}
    s = sweep.Sweep(list("abcd"), 2 ** 32, 16.0, jobs=2)
    answers = [s.result(n) for n in "abcd"]
    s.close()
    assert all(a.get("ok") for a in answers), answers
    runs_of_b = [beside for name, beside in fake.runs if name == "b"]
    assert runs_of_b[-1] == frozenset(), fake.runs        # the last run of b was alone


def test_rows_without_a_record_run_alone_and_a_death_alone_is_the_answer(fake, monkeypatch):
    monkeypatch.setattr(sweep, "recorded_peaks", lambda: {})      # nothing recorded: alone
    fake.kill_always = {"a"}
    s = sweep.Sweep(["a", "b"], 2 ** 32, 16.0, jobs=2)
    assert s.result("a") == {"op": "a", "died": -9}               # not retried: it was alone
    assert s.result("b")["ok"]
    s.close()
    assert fake.overlaps == [] and [n for n, _ in fake.runs] == ["a", "b"]


def test_one_job_runs_the_rows_one_at_a_time(fake, monkeypatch):
    monkeypatch.setattr(sweep, "recorded_peaks", lambda: {n: 1.0 for n in "abc"})
    s = sweep.Sweep(list("abc"), 2 ** 32, 16.0, jobs=1)
    assert [s.result(n)["op"] for n in "abc"] == list("abc")
    s.close()
    assert fake.overlaps == []


def test_a_big_row_runs_beside_a_small_one_from_further_back(fake, monkeypatch):
    # capacity 20 GB: the 13 GB row (13.95 with the margin) fits beside neither 8.8 GB row
    # (9.54), but beside the 4 GB one (4.5) queued after them, which goes ahead of its turn
    monkeypatch.setattr(sweep, "recorded_peaks",
                        lambda: {"a": 8.8, "b": 13.0, "c": 8.8, "d": 4.0})
    fake.durations = {"d": 1.0}         # still running when b's turn comes
    names = list("abcd")
    s = sweep.Sweep(names, 2 ** 32, 16.0, jobs=2)
    assert [s.result(n)["op"] for n in names] == names
    s.close()
    assert frozenset("bd") in fake.overlaps, fake.overlaps
    assert not any("b" in o and ("a" in o or "c" in o) for o in fake.overlaps)
