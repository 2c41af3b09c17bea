"""The MXNet test-suite runner (python -m mxlite.tools.mxnet_suite) on a small fake MXNet tree:
outcomes recorded per test, a crash resumed after, a slow test timed out, the mxnet alias,
the nose stand-in, NumPy's removed aliases, and the comparison with a baseline side."""
import os
import subprocess
import sys
import textwrap

import pytest

from mxlite.tools.mxnet_suite import FileTally, run_file, table, unittest_dir
from mxlite.tools.mxnet_suite.__main__ import main

pytest.importorskip("pytest")

TEST_FILE = '''
import os, time
import numpy as np
import mxnet as mx
from mxnet import nd
from nose.tools import assert_equal, assert_raises, raises, with_setup

def test_passes():
    assert_equal(float(nd.ones((2,)).sum().asscalar()), 2.0)
    assert np.int is int and np.isnan(np.NaN) and np.float_ is np.float64

def test_fails():
    assert mx.nd.zeros((1,)).asnumpy()[0] == 1

@raises(ZeroDivisionError)
def test_raises():
    1 / 0

calls = []

@with_setup(lambda: calls.append("setup"), lambda: calls.append("teardown"))
def test_with_setup():
    assert calls == ["setup"]

def test_crashes():
    os.abort()

def test_after_the_crash():
    assert mx.nd.array([3]).asnumpy()[0] == 3

def test_slow():
    time.sleep(30)

def test_needs_a_module():
    import mxnet.only_in_mxnet
'''

BROKEN_FILE = '''
from mxnet.no_such_module import something

def test_never_runs():
    pass
'''

# a stand-in "MXNet install" for the baseline side: mxlite's arrays plus one module mxlite lacks
FAKE_MXNET = '''
from mxlite import nd
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("mxnet_src")
    tests = root / "tests" / "python" / "unittest"
    tests.mkdir(parents=True)
    (tests / "common.py").write_text("")
    (tests / "test_fake.py").write_text(textwrap.dedent(TEST_FILE))
    (tests / "test_broken.py").write_text(textwrap.dedent(BROKEN_FILE))
    fake = root / "fake_site" / "mxnet"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(FAKE_MXNET)
    (fake / "only_in_mxnet.py").write_text("")
    return root


def _outcomes(records):
    return {r["nodeid"].split("::")[1]: r["outcome"] for r in records if r["type"] == "result"}


def test_unittest_dir_accepts_the_tree_or_the_folder(tree, tmp_path):
    folder = str(tree / "tests" / "python" / "unittest")
    assert unittest_dir(str(tree)) == folder
    assert unittest_dir(folder) == folder
    with pytest.raises(SystemExit, match="neither an MXNet source tree"):
        unittest_dir(str(tmp_path))


def test_each_outcome_is_recorded_and_a_crash_resumed(tree, tmp_path):
    records = run_file(sys.executable, "mxlite", unittest_dir(str(tree)), "test_fake.py",
                       str(tmp_path), timeout=3)
    assert _outcomes(records) == {
        "test_passes": "passed", "test_fails": "failed", "test_raises": "passed",
        "test_with_setup": "passed", "test_crashes": "crash", "test_after_the_crash": "passed",
        "test_slow": "failed", "test_needs_a_module": "failed"}
    messages = {r["nodeid"].split("::")[1]: r["message"] for r in records
                if r["type"] == "result"}
    assert "timed out after 3 s" in messages["test_slow"]
    assert "No module named 'mxnet.only_in_mxnet'" in messages["test_needs_a_module"]


def test_an_import_error_is_a_collection_error(tree, tmp_path):
    records = run_file(sys.executable, "mxlite", unittest_dir(str(tree)), "test_broken.py",
                       str(tmp_path), timeout=10)
    errors = [r for r in records if r["type"] == "collect_error"]
    assert len(errors) == 1 and "mxnet.no_such_module" in errors[0]["message"]
    assert _outcomes(records) == {}


def test_the_comparison_with_a_baseline(tree, tmp_path, monkeypatch, capsys):
    # the baseline side runs without the alias: the fake "MXNet" on PYTHONPATH answers
    monkeypatch.setenv("PYTHONPATH", str(tree / "fake_site"))
    main([str(tree), "test_fake.py", "--out", str(tmp_path), "--timeout", "3",
          "--mxnet-python", sys.executable, "-k", "passes or fails or needs_a_module",
          "--details"])
    out = capsys.readouterr().out
    assert "test_fake.py::test_needs_a_module  [failed]" in out
    mxlite = os.path.join(str(tmp_path), "mxlite", "test_fake.py.jsonl")
    mxnet = os.path.join(str(tmp_path), "mxnet", "test_fake.py.jsonl")
    from mxlite.tools.mxnet_suite.runner import read_records
    tally = FileTally.of("test_fake.py", read_records(mxlite), read_records(mxnet))
    assert tally.passed("mxnet") == {"test_fake.py::test_passes",
                                     "test_fake.py::test_needs_a_module"}
    assert [row[0] for row in tally.missing()] == ["test_fake.py::test_needs_a_module"]
    assert table([tally]).splitlines()[2].split() == ["test_fake.py", "3", "2", "1", "1", "1"]


def test_the_module_runs_as_a_script(tree, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mxlite.tools.mxnet_suite", str(tree),
                           "test_broken.py", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "(1 collection errors)" in proc.stdout
