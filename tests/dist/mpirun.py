"""Launching the rank scripts of this directory with ``mpiexec`` (2 ranks by default).

The scripts run with the Python running pytest and the ``mxlite`` it imported (the
installed wheel in CI), found relative to this file, so the suite also runs from a copy of
``tests/`` outside the source tree. Every launch has a timeout, so a hang fails the test
instead of the suite. The tests skip only where MPI itself cannot start (no mpi4py or
mpiexec, or a sandbox where two MPI processes cannot talk).
"""
import ast
import functools
import os
import re
import subprocess
import sys
import tempfile

import pytest

import mxlite as mx
from mxlite.launch import find_mpiexec

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))


def environment():
    """The environment of a launched rank: mxlite importable, one OpenMP thread each."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PACKAGE_DIR + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    return env


@functools.lru_cache(maxsize=None)
def mpi_unavailable():
    """Why MPI jobs cannot run here (None when they can)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install mxlite[dist])"
    mpiexec = find_mpiexec()
    if mpiexec is None:
        return "mpiexec not found next to Python or on PATH (pip install mxlite[dist])"
    probe = ("from mpi4py import MPI; import numpy as np; a = np.ones(1); "
             "MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, a); assert a[0] == 2")
    try:
        proc = subprocess.run([mpiexec, "-n", "2", sys.executable, "-c", probe],
                              capture_output=True, text=True, timeout=60, env=environment())
    except subprocess.TimeoutExpired:
        return "a 2-rank mpi4py allreduce did not finish in 60 s on this machine"
    if proc.returncode != 0:
        return f"mpiexec cannot run a 2-rank mpi4py job here: {proc.stderr.strip()[-500:]}"
    return None


def require_mpi():
    """Skip the calling test unless 2-rank MPI jobs run on this machine."""
    reason = mpi_unavailable()
    if reason:
        pytest.skip(reason)


def launch(script, *args, n=2, timeout=120, via_launcher=False):
    """Run ``tests/dist/<script>`` on ``n`` ranks; the CompletedProcess (text output), with
    ``results``: what ``results()`` reads from the ranks' report files.
    ``via_launcher`` runs it with ``python -m mxlite.launch``."""
    path = os.path.join(HERE, script)
    if via_launcher:
        cmd = [sys.executable, "-m", "mxlite.launch", "-n", str(n), path]
    else:
        cmd = [find_mpiexec(), "-n", str(n), sys.executable, path]
    env = environment()
    with tempfile.TemporaryDirectory() as folder:
        env["KV_TEST_RESULTS"] = folder
        env["EXPECT_RANKS"] = str(n)
        try:
            proc = subprocess.run(cmd + [str(a) for a in args], capture_output=True,
                                  text=True, timeout=timeout, env=env, cwd=HERE)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{script} {args} did not finish within {timeout} s (a hang):\n"
                        f"{e.stdout}\n{e.stderr}")
        proc.results = _read_results(folder)
    return proc


def check_names(script):
    """The ``check_*`` functions a rank script defines, without importing it."""
    with open(os.path.join(HERE, script), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return [node.name[len("check_"):] for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("check_")]


def _read_results(folder):
    """``{check: {rank: 'PASS' or 'FAIL: message'}}`` from the ranks' report files."""
    found = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"rank (\d+) (PASS|FAIL) (\w+)(.*)$", line)
                if m:
                    found.setdefault(m.group(3), {})[int(m.group(1))] = m.group(2) + m.group(4)
    return found


def rank_script_tests(script):
    """The tests of a rank script made of ``check_*`` functions: a module-scoped ``job``
    fixture (one 2-rank launch), a test that the job ended cleanly, and one test per check
    that it passed on both ranks. A test module assigns the three to its own names."""
    checks = check_names(script)

    @pytest.fixture(scope="module")
    def job(mpi):
        return launch(script)

    def test_the_job_ends_cleanly(job):
        assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-5000:]

    @pytest.mark.parametrize("check", checks)
    def test_check_passes_on_every_rank(job, check):
        got = job.results.get(check, {})
        assert got == {0: "PASS", 1: "PASS"}, (got, job.stderr[-5000:])

    return job, test_the_job_ends_cleanly, test_check_passes_on_every_rank
