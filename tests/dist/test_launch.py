"""``python -m mxlite.launch``: ranks, arguments, ``[rank R]`` prefixes, the thread
default, the timeout, and the example run on 2 ranks against 1 process."""
import os
import re
import subprocess
import sys
import time

import pytest

from mpirun import HERE, environment, launch
from mxlite.launch import find_mpiexec

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples",
                       "distributed_train.py")


def test_find_mpiexec_prefers_the_one_beside_python():
    found = find_mpiexec()
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(beside, os.X_OK):
        assert found == beside
    else:
        assert found is None or os.path.basename(found) == "mpiexec"


def test_ranks_arguments_and_prefixes(mpi):
    proc = launch("rank_hello.py", "a", "--b=1", via_launcher=True)
    assert proc.returncode == 0, proc.stderr
    lines = sorted(proc.stdout.splitlines())
    assert lines == [f"[rank {r}] hello rank={r} workers=2 args=['a', '--b=1'] omp=1 sum=3"
                     for r in (0, 1)], proc.stdout


def test_threads_default_to_cores_per_rank(mpi):
    env = environment()
    del env["OMP_NUM_THREADS"]
    proc = subprocess.run([sys.executable, "-m", "mxlite.launch", "-n", "2", "--no-prefix",
                           os.path.join(HERE, "rank_hello.py")], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    want = max(1, (os.cpu_count() or 1) // 2)
    assert re.findall(r"omp=(\S+)", proc.stdout) == [str(want)] * 2, proc.stdout
    assert "[rank" not in proc.stdout


def test_timeout_ends_the_job(mpi):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mxlite.launch", "-n", "2", "--timeout", "3",
                           os.path.join(HERE, "rank_hello.py"), "--sleep"],
                          capture_output=True, text=True, timeout=120, env=environment())
    assert proc.returncode == 124
    assert time.monotonic() - start < 30
    assert "ran past --timeout 3 s" in proc.stderr


def test_usage_errors():
    proc = subprocess.run([sys.executable, "-m", "mxlite.launch", "script.py"],
                          capture_output=True, text=True, timeout=60, env=environment())
    assert proc.returncode == 2 and "-n N" in proc.stderr


def final_loss(stdout):
    return float(re.search(r"final loss = (\S+)", stdout).group(1))


@pytest.mark.skipif(not os.path.exists(EXAMPLE), reason="examples/ is not beside tests/")
def test_the_example_on_two_ranks_matches_one_process(mpi):
    cmd = [sys.executable, "-m", "mxlite.launch", "-n", "2", EXAMPLE, "--steps", "20"]
    two = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=environment())
    assert two.returncode == 0, two.stderr
    one = subprocess.run([sys.executable, EXAMPLE, "--steps", "20", "--kvstore", "local"],
                         capture_output=True, text=True, timeout=120, env=environment())
    assert one.returncode == 0, one.stderr
    assert len(re.findall(r"rank [01]/2: [\d,]+ samples/s", two.stdout)) == 2, two.stdout
    assert final_loss(two.stdout) == pytest.approx(final_loss(one.stdout), rel=1e-4)
    assert final_loss(one.stdout) < 1.2        # it learned (chance level is ln 4 = 1.39)
