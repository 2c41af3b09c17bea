"""A rank that raises or exits ends the job with a clear error within seconds, never a hang
(tests/dist/rank_faults.py; every launch also has a timeout)."""
import time

import pytest

from mpirun import launch

BOUND = 30      # seconds: the job must end well within this (each launch times out at 60)


def run(mode, via_launcher=False):
    start = time.monotonic()
    proc = launch("rank_faults.py", mode, timeout=60, via_launcher=via_launcher)
    elapsed = time.monotonic() - start
    assert elapsed < BOUND, f"{mode}: the job took {elapsed:.1f} s"
    return proc, proc.stdout + proc.stderr


def test_a_rank_that_raises_aborts_the_job(mpi):
    proc, out = run("raise")
    assert proc.returncode != 0
    assert "RuntimeError: rank 1 failed on purpose" in out
    assert "uncaught RuntimeError; aborting the MPI job" in out
    assert "finished" not in out


@pytest.mark.parametrize("mode", ["exit", "return"])
def test_a_rank_that_leaves_makes_the_others_fail(mpi, mode):
    proc, out = run(mode)
    assert proc.returncode != 0, out
    assert "kv.pushpull: rank 1 has left the job" in out, out
    assert "rank 0 finished" not in out


def test_a_rank_that_dies_ends_the_job(mpi):
    proc, out = run("os_exit")
    assert proc.returncode != 0, out
    assert "finished" not in out


def test_catching_the_error_still_fails_the_job(mpi):
    proc, out = run("caught")
    assert proc.returncode != 0, out
    assert "rank 0 caught: kv.pushpull: rank 1 has left the job" in out
    assert "exits after rank 1 left the job early" in out


def test_a_late_rank_is_waited_for(mpi):
    proc, out = run("late")
    assert proc.returncode == 0, out
    assert "rank 0 finished with [2.0, 2.0, 2.0]" in out
    assert "rank 1 finished with [2.0, 2.0, 2.0]" in out


@pytest.mark.parametrize("mode", ["early_raise", "early_exit"])
def test_the_launcher_aborts_a_rank_failing_before_mpi_starts(mpi, mode):
    proc, out = run(mode, via_launcher=True)
    assert proc.returncode != 0, out
    assert "aborting the MPI job" in out
    assert "finished" not in out
