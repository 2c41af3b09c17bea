"""mxlite/gluon/contrib/data: IntervalSampler against the index order written out here,
its length (the count it gives, also without rollover), use in a DataLoader, errors."""
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon.contrib.data import IntervalSampler


@pytest.mark.parametrize("length,interval,rollover,want", [
    (10, 3, True, [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]),
    (10, 3, False, [0, 3, 6, 9]),
    (6, 6, True, [0, 1, 2, 3, 4, 5]),
    (5, 1, False, [0, 1, 2, 3, 4]),
    (0, 1, True, []),
])
def test_interval_order_and_length(length, interval, rollover, want):
    sampler = IntervalSampler(length, interval, rollover=rollover)
    assert list(sampler) == want
    assert len(sampler) == len(want)


def test_interval_sampler_drives_a_data_loader():
    data = mx.gluon.data.ArrayDataset(mx.nd.arange(6))
    loader = mx.gluon.data.DataLoader(data, batch_size=2, sampler=IntervalSampler(6, 2))
    assert [b.asnumpy().tolist() for b in loader] == [[0, 2], [4, 1], [3, 5]]


@pytest.mark.parametrize("args,match", [((3, 4), "at most length=3"), ((3, 0), "at least 1"),
                                        ((-1, 1), "length must be a non-negative"),
                                        ((3, 1.5), "interval must be a non-negative")])
def test_bad_arguments_are_clear_errors(args, match):
    with pytest.raises(MXNetError, match="IntervalSampler: .*" + match):
        IntervalSampler(*args)
