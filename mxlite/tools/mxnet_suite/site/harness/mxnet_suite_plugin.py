"""pytest plugin the MXNet test runner loads into every file's process (either side).

- Writes one JSON line per event to ``$MXNET_SUITE_RESULTS``: ``start`` before a test runs
  (so the runner knows which test a crashed process was in), ``result`` after it (nodeid,
  outcome, duration, the first lines of the failure), ``collect_error`` for a file or
  class that cannot be imported.
- Deselects the tests listed in ``$MXNET_SUITE_DONE`` (the runner resumes a file after a
  crash without rerunning what finished).
- Fails a test that runs longer than ``$MXNET_SUITE_TIMEOUT`` seconds (SIGALRM).
- Restores the NumPy aliases (``np.int``, ``np.float``, ...) that NumPy 2 removed and the
  test files use, as the same builtins NumPy 1 gave, on both sides alike.
"""
import json
import os
import signal
import time

import numpy_aliases  # noqa: F401  (restores NumPy's removed aliases)
import pytest

_RESULTS = os.environ.get("MXNET_SUITE_RESULTS")
_TIMEOUT = float(os.environ.get("MXNET_SUITE_TIMEOUT", "0"))
_outcomes = {}


def _write(record):
    if _RESULTS:
        with open(_RESULTS, "a") as f:
            f.write(json.dumps(record) + "\n")


def _summary(longrepr, lines=6):
    text = str(longrepr) if longrepr is not None else ""
    return "\n".join(text.strip().splitlines()[-lines:])


def pytest_collection_modifyitems(config, items):
    done_file = os.environ.get("MXNET_SUITE_DONE")
    if not done_file or not os.path.exists(done_file):
        return
    with open(done_file) as f:
        done = set(line.strip() for line in f)
    keep = [item for item in items if item.nodeid not in done]
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
    items[:] = keep


def pytest_collectreport(report):
    if report.failed:
        _write({"type": "collect_error", "nodeid": report.nodeid,
                "message": _summary(report.longrepr)})


def pytest_runtest_logstart(nodeid, location):
    _outcomes[nodeid] = ("passed", "", time.time())
    _write({"type": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    # the first phase that does not pass decides: a failing call is "failed", a failing
    # setup or teardown "error", a skip (or an expected failure) "skipped"
    outcome, message, started = _outcomes.get(report.nodeid, ("passed", "", time.time()))
    if report.when == "call":
        phase = report.outcome
    elif report.failed:
        phase = "error"
    elif report.skipped:
        phase = "skipped"
    else:
        return
    if outcome == "passed" and phase != "passed":
        _outcomes[report.nodeid] = (phase, _summary(report.longrepr), started)


def pytest_runtest_logfinish(nodeid, location):
    outcome, message, started = _outcomes.pop(nodeid, ("passed", "", time.time()))
    _write({"type": "result", "nodeid": nodeid, "outcome": outcome,
            "duration": round(time.time() - started, 3), "message": message})


def _on_alarm(signum, frame):
    pytest.fail("timed out after %g s" % _TIMEOUT, pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _TIMEOUT > 0:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    try:
        yield
    finally:
        if _TIMEOUT > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
