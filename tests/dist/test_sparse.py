"""row_sparse values in ``dist_sync`` on 2 ranks: exact sums of overlapping, disjoint and
empty row sets against NumPy, only stored rows handed to MPI, init and row_sparse_pull,
lazy optimizer updates, a sparse-gradient Embedding trained by a Trainer as in one process,
storage types that differ between ranks (tests/dist/rank_sparse.py, one MPI job); and
``merge_rows``, the merge every rank runs, against NumPy without MPI."""
import numpy as np
import pytest

from mxlite.kvstore.buffers import merge_rows
from mpirun import check_names, rank_script_tests

job, test_the_job_ends_cleanly, test_check_passes_on_every_rank = rank_script_tests(
    "rank_sparse.py")


def test_there_are_checks():
    assert len(check_names("rank_sparse.py")) >= 8


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_merge_rows_sums_in_rank_order(dtype):
    rng = np.random.default_rng(5)
    parts = [np.sort(rng.choice(50, k, replace=False)) for k in (7, 0, 12, 30)]
    rows = [(rng.random((p.size, 3)) < 0.5) if dtype == "bool"
            else rng.integers(-9, 9, (p.size, 3)).astype(dtype) for p in parts]
    ids, summed = merge_rows(np.concatenate(parts).astype(np.int64), np.concatenate(rows),
                             [p.size for p in parts])
    dense = np.zeros((50, 3), dtype)
    for p, r in zip(parts, rows):
        part = np.zeros((50, 3), dtype)
        part[p] = r
        dense = dense | part if dtype == "bool" else dense + part
    np.testing.assert_array_equal(ids, np.unique(np.concatenate(parts)))
    np.testing.assert_array_equal(summed, dense[ids])


def test_merge_rows_of_disjoint_parts_is_a_sort():
    ids, rows = merge_rows(np.array([4, 9, 1, 2], np.int64),
                           np.array([[4.0], [9.0], [1.0], [2.0]]), [2, 2])
    assert ids.tolist() == [1, 2, 4, 9] and rows.ravel().tolist() == [1.0, 2.0, 4.0, 9.0]
    ids, rows = merge_rows(np.zeros(0, np.int64), np.zeros((0, 2)), [0, 0])
    assert ids.size == 0 and rows.shape == (0, 2)
