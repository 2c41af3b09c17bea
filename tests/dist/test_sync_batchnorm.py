"""SyncBatchNorm on 2 ranks is BatchNorm over both ranks' batch (values, moving statistics,
first and second order gradients), and _sync_sum sums over the ranks
(tests/dist/rank_sync_batchnorm.py, one MPI job)."""
from mpirun import rank_script_tests

job, test_the_job_ends_cleanly, test_check_passes_on_every_rank = rank_script_tests(
    "rank_sync_batchnorm.py")
