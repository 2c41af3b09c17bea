"""Training equivalence: 2 ranks on half of each batch give the weights of 1 process on the
whole batch, after several SGD (momentum) and Adam steps, with the optimizer in the store
(push/pull) or on each worker (pushpull): bit-identical to one process summing the two
halves' gradients, within float32 tolerance of one backward over the whole batch
(tests/dist/rank_training.py)."""
import pytest

from mpirun import check_names, launch

CHECKS = check_names("rank_training.py")


@pytest.fixture(scope="module")
def job(mpi):
    return launch("rank_training.py")


def test_the_job_ends_cleanly(job):
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-5000:]


@pytest.mark.parametrize("check", CHECKS)
def test_check_passes_on_every_rank(job, check):
    got = job.results.get(check, {})
    assert got == {0: "PASS", 1: "PASS"}, (got, job.stderr[-5000:])
