"""``dist_sync`` allreduce and broadcast on 2 ranks: every dtype, odd and empty sizes, many
int and str keys, lists of values and outputs, fusion buckets, pieces below MPI's count
limit, autograd gradients, the optimizer in the store and its saved states
(tests/dist/rank_collectives.py, one MPI job for all checks)."""
import pytest

from mpirun import check_names, launch

CHECKS = check_names("rank_collectives.py")


@pytest.fixture(scope="module")
def job(mpi):
    return launch("rank_collectives.py")


def test_the_job_ends_cleanly(job):
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-5000:]


def test_there_are_checks():
    assert len(CHECKS) >= 15, CHECKS


@pytest.mark.parametrize("check", CHECKS)
def test_check_passes_on_every_rank(job, check):
    got = job.results.get(check, {})
    assert got == {0: "PASS", 1: "PASS"}, (got, job.stderr[-5000:])
