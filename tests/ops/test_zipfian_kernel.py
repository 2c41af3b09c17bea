"""_sample_unique_zipfian's distinct draws (mxlite/_core/random.pyx ``distinct_rows``: a hash
set per row, rows across threads; and its NumPy twin for the GPU path,
``mxlite.ops.sampling.distinct_rows_host``) against a plain Python reference: each row holds
the first ``need`` distinct values of its draws in draw order, and counts the draws that
took, across rounds; the operator is that reference applied to its rounds of draws; bad
arguments are clear errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite._core import random as _k
from mxlite.ops import sampling as _sampling

pytestmark = pytest.mark.cpu_only      # the host kernel (both devices build rows on the host)


def _first_distinct(stream, need):
    """The first ``need`` distinct values of ``stream`` in order, and how many draws that
    took (all of them when fewer are distinct)."""
    seen, order = set(), []
    for used, v in enumerate(stream, 1):
        if len(order) == need:
            return order, used - 1
        if v not in seen:
            seen.add(v)
            order.append(v)
    return order, len(stream)


def _empty(rows, need):
    tables = np.full((rows, 1 << _k.distinct_table_bits(need)), -1, np.int64)
    return (tables, np.zeros((rows, need), np.int64), np.zeros(rows, np.int64),
            np.zeros(rows, np.int64))


@pytest.mark.parametrize("distinct", [_k.distinct_rows, _sampling.distinct_rows_host],
                         ids=["kernel", "host"])
@pytest.mark.parametrize("rows, need, width, classes", [
    (5, 7, 9, 8), (40, 30, 31, 40), (3, 1, 4, 3), (300, 50, 66, 1 << 40), (2, 0, 5, 3),
    (64, 100, 116, 130)])
def test_rows_hold_their_first_distinct_draws_across_rounds(rows, need, width, classes,
                                                           distinct):
    """Several rounds (the pending rows only, in an order of their own) against the
    reference on each row's concatenated draws; rows over PARALLEL_MIN draws take threads."""
    rng = np.random.default_rng(need * 7 + rows)
    tables, order, held, tries = _empty(rows, need)
    streams = [[] for _ in range(rows)]
    pending = np.arange(rows, dtype=np.int64)
    for _ in range(40):
        if not pending.size:
            break
        pending = rng.permutation(pending)
        # Zipf-like: small classes often, so rows repeat values within and across rounds
        draws = np.minimum(rng.zipf(1.3, (pending.size, width)) - 1, classes - 1)
        for k, r in enumerate(pending):
            streams[r] += draws[k].tolist()
        distinct(tables, order, held, tries, pending, draws.astype(np.int64))
        pending = pending[held[pending] < need]
    for r in range(rows):
        want, used = _first_distinct(streams[r], need)
        assert held[r] == len(want) and tries[r] == used
        assert order[r, :held[r]].tolist() == want


def test_operator_is_the_reference_on_its_rounds(monkeypatch):
    """The operator's samples and num_tries are the reference applied to the rounds of draws
    it made (recorded from its class function)."""
    rounds = []
    classes = _sampling.zipf_classes

    def recorded(u, range_max, out):
        classes(u, range_max, out)
        rounds.append(out.copy())
    monkeypatch.setattr(_sampling, "zipf_classes", recorded)
    need, batch = 40, 25
    s, tries = mx.nd._internal._sample_unique_zipfian(range_max=60, shape=(batch, need))
    s, tries = s.asnumpy(), tries.asnumpy()
    assert len(rounds) > 1                                 # some rows needed a second round
    streams, pending = [[] for _ in range(batch)], list(range(batch))
    for draws in rounds:                                   # one group: rows in order
        for k, r in enumerate(pending):
            streams[r] += draws[k].tolist()
        pending = [r for r in pending if len(_first_distinct(streams[r], need)[0]) < need]
    for r in range(batch):
        want, used = _first_distinct(streams[r], need)
        assert s[r].tolist() == want and tries[r] == used


def test_table_bits_keep_the_table_at_most_two_thirds_full():
    for need in (0, 1, 2, 3, 5, 100, 1 << 20, 3 << 19):
        size = 1 << _k.distinct_table_bits(need)
        assert size > need + need // 2 and (size == 2 or size // 2 <= need + need // 2)


def test_gpu_path_matches_cpu(monkeypatch):
    """The operator with the NumPy twin (the GPU's host step) gives the kernel's rows."""
    from mxlite.ops.registry import REGISTRY
    op = REGISTRY["_sample_unique_zipfian"]
    mx.random.seed(8)
    want = [a.asnumpy() for a in mx.nd._internal._sample_unique_zipfian(range_max=3000,
                                                                         shape=(30, 700))]
    monkeypatch.setitem(op.compute, "cpu", _sampling.zipf_compute(
        _sampling._cpu_uniform, _sampling.distinct_rows_host))
    mx.random.seed(8)
    got = [a.asnumpy() for a in mx.nd._internal._sample_unique_zipfian(range_max=3000,
                                                                        shape=(30, 700))]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_bad_arguments_are_clear_errors():
    tables, order, held, tries = _empty(3, 4)
    rows, draws = np.arange(2, dtype=np.int64), np.zeros((2, 5), np.int64)
    with pytest.raises(ValueError, match="draws must be >= 0"):
        _k.distinct_rows(tables, order, held, tries, rows, draws - 1)
    with pytest.raises(ValueError, match="rows must be distinct indices in"):
        _k.distinct_rows(tables, order, held, tries, np.array([1, 1]), draws)
    with pytest.raises(ValueError, match="rows must be distinct indices in"):
        _k.distinct_rows(tables, order, held, tries, np.array([0, 3]), draws)
    with pytest.raises(ValueError, match="need tables"):
        _k.distinct_rows(tables[:, :4].copy(), order, held, tries, rows, draws)
    with pytest.raises(ValueError, match="draws must be a C-contiguous int64"):
        _k.distinct_rows(tables, order, held, tries, rows, draws.astype(np.int32))
    with pytest.raises(ValueError, match="need must be >= 0"):
        _k.distinct_table_bits(-1)
