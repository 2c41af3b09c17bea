"""``dist_sync`` allreduce and broadcast on 2 ranks: every dtype, odd and empty sizes, many
int and str keys, lists of values and outputs, fusion buckets, pieces below MPI's count
limit, autograd gradients, the optimizer in the store and its saved states
(tests/dist/rank_collectives.py, one MPI job for all checks)."""
from mpirun import check_names, rank_script_tests

job, test_the_job_ends_cleanly, test_check_passes_on_every_rank = rank_script_tests(
    "rank_collectives.py")


def test_there_are_checks():
    assert len(check_names("rank_collectives.py")) >= 15
