"""Bad arguments to a ``dist_sync`` store raise a clear MXNetError on every rank (also when
only one rank's arguments are bad, or the ranks disagree), and the store works afterwards
(tests/dist/rank_errors.py)."""
from mpirun import rank_script_tests

job, test_the_job_ends_cleanly, test_check_passes_on_every_rank = rank_script_tests(
    "rank_errors.py")
