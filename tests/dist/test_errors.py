"""Bad arguments to a ``dist_sync`` store raise a clear MXNetError on every rank (also when
only one rank's arguments are bad, or the ranks disagree), and the store works afterwards
(tests/dist/rank_errors.py)."""
import pytest

from mpirun import check_names, launch

CHECKS = check_names("rank_errors.py")


@pytest.fixture(scope="module")
def job(mpi):
    return launch("rank_errors.py")


def test_the_job_ends_cleanly(job):
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-5000:]


@pytest.mark.parametrize("check", CHECKS)
def test_check_passes_on_every_rank(job, check):
    got = job.results.get(check, {})
    assert got == {0: "PASS", 1: "PASS"}, (got, job.stderr[-5000:])
