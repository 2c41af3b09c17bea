"""Training equivalence: 2 ranks on half of each batch give the weights of 1 process on the
whole batch, after several SGD (momentum) and Adam steps, with the optimizer in the store
(push/pull) or on each worker (pushpull): bit-identical to one process summing the two
halves' gradients, within float32 tolerance of one backward over the whole batch
(tests/dist/rank_training.py)."""
from mpirun import rank_script_tests

job, test_the_job_ends_cleanly, test_check_passes_on_every_rank = rank_script_tests(
    "rank_training.py")
