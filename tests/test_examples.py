"""The examples run as users run them (a fresh interpreter) and print correct numbers."""
import ast
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_example(name):
    """Run ``examples/<name>`` from the repository root; return its stdout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def printed_values(stdout):
    """The ``label = literal`` lines of an example's output as a dict."""
    values = {}
    for line in stdout.splitlines():
        label, sep, rest = line.rpartition(" = ")
        if sep:
            values[label] = ast.literal_eval(rest)
    return values


@pytest.fixture(scope="module")
def quickstart():
    return run_example("quickstart.py")


def numpy_expectations():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    b = np.arange(10, 40, 10, dtype=np.float32)
    z = np.exp(x / np.float32(6))
    y = x.copy()
    y[1] = 0
    t = np.array([0.5, 1.0])
    return {
        "x": x,
        "ones + 1 (int32)": np.ones((2, 3), np.int32) + 1,
        "x * 2 + b": x * 2 + b,
        "broadcast_mul(x, col)": x * np.array([[1], [-1]], np.float32),
        "exp(x / 6)": z,
        "sqrt(x)": np.sqrt(x),
        "sum(z, axis=1)": z.sum(axis=1),
        "mean(x)": x.mean(),
        "argmax(x, axis=1)": x.argmax(axis=1),
        "y after y[1][:] = 0": y,
        "x (unchanged)": x,
        "dot(x, x.T)": x @ x.T,
        # f(t) = t sin t
        "f'(t)": np.sin(t) + t * np.cos(t),
        "f''(t)": 2 * np.cos(t) - t * np.sin(t),
    }


def test_quickstart_values_match_numpy(quickstart):
    got = printed_values(quickstart)
    expected = numpy_expectations()
    assert sorted(got) == sorted(expected), "quickstart printed a different set of results"
    for label, want in expected.items():
        # the example rounds floats to 4 decimals for reading
        np.testing.assert_allclose(np.asarray(got[label], np.float64), want, rtol=1e-4,
                                   atol=1e-4, err_msg=label)


def test_quickstart_integer_results_stay_integer(quickstart):
    got = printed_values(quickstart)
    assert all(isinstance(v, int) for row in got["ones + 1 (int32)"] for v in row)


def test_quickstart_reports_bad_broadcast(quickstart):
    errors = [line for line in quickstart.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "broadcast_add" in errors[0] and "(2, 3)" in errors[0] and "(4,)" in errors[0]


def test_d2l_numpy_chapter_trains():
    got = printed_values(run_example("d2l_numpy.py"))
    # linear regression from scratch lands on NumPy's least-squares fit of the same data
    np.testing.assert_allclose(got["linreg w"], got["lstsq w"], atol=0.01)
    assert abs(got["linreg b"] - got["lstsq b"]) < 0.01
    np.testing.assert_allclose(got["lstsq w"], [2, -3.4], atol=0.01)
    assert got["linreg loss"] < 1e-4           # the noise's variance / 2 is 5e-5
    # the blobs are well separated: both classifiers must nearly always be right
    for model in ("softmax", "mlp"):
        assert got[f"{model} train accuracy"] > 0.95
        assert got[f"{model} test accuracy"] > 0.95
