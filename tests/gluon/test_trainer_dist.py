"""``Trainer(kvstore='dist_sync')`` on 2 MPI ranks equals one process
(tests/gluon/rank_trainer_dist.py); skipped where MPI jobs cannot start."""
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dist"))
from mpirun import _read_results, environment, require_mpi  # noqa: E402
from mxlite.launch import find_mpiexec  # noqa: E402


def test_dist_sync_trainer_on_two_ranks():
    require_mpi()
    env = environment()
    with tempfile.TemporaryDirectory() as folder:
        env["KV_TEST_RESULTS"] = folder
        try:
            proc = subprocess.run([find_mpiexec(), "-n", "2", sys.executable,
                                   os.path.join(HERE, "rank_trainer_dist.py")],
                                  capture_output=True, text=True, timeout=180, env=env,
                                  cwd=HERE)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"the 2-rank Trainer job hung:\n{e.stdout}\n{e.stderr}")
        results = _read_results(folder)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert results == {"sgd_and_adam_match_one_process": {0: "PASS", 1: "PASS"}}, \
        (results, proc.stderr[-5000:])
