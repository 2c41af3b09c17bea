"""gluon.data: datasets, samplers, batching, DataLoader (against plain Python/NumPy)."""
import threading

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import data as gdata


def test_array_dataset_zips_and_checks_lengths(rng):
    x, y = rng.normal(size=(7, 3)).astype("float32"), np.arange(7)
    ds = gdata.ArrayDataset(x, y)
    assert len(ds) == 7
    a, b = ds[4]
    np.testing.assert_array_equal(a, x[4]) and b == 4
    assert gdata.ArrayDataset(x)[2] is not None and np.array_equal(gdata.ArrayDataset(x)[2], x[2])
    with pytest.raises(MXNetError, match="length 6"):
        gdata.ArrayDataset(x, y[:6])


def test_transform_first_take_shard_filter():
    ds = gdata.SimpleDataset([(i, -i) for i in range(10)])
    t = ds.transform_first(lambda v: v * 10)
    assert t[3] == (30, -3) and len(t) == 10
    assert ds.transform(lambda a, b: a + b, lazy=False)[5] == 0
    assert [ds.take(3)[i] for i in range(3)] == [(0, 0), (1, -1), (2, -2)]
    shards = [ds.shard(3, k) for k in range(3)]
    assert [len(s) for s in shards] == [3, 3, 4]
    assert sorted(s[i][0] for s in shards for i in range(len(s))) == list(range(10))
    assert len(ds.filter(lambda s: s[0] % 2 == 0)) == 5
    with pytest.raises(MXNetError, match="shard"):
        ds.shard(3, 3)


@pytest.mark.parametrize("last_batch,sizes", [("keep", [4, 4, 2]), ("discard", [4, 4]),
                                              ("rollover", [4, 4])])
def test_batch_sampler_last_batch(last_batch, sizes):
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 4, last_batch)
    assert len(bs) == len(sizes)
    batches = list(bs)
    assert [len(b) for b in batches] == sizes
    if last_batch == "rollover":     # the leftover opens the next pass
        assert len(bs) == 3 and list(bs)[0] == [8, 9, 0, 1]


def test_random_sampler_is_a_permutation_each_pass():
    mx.random.seed(3)
    np.random.seed(3)
    s = gdata.RandomSampler(50)
    a, b = list(s), list(s)
    assert sorted(a) == list(range(50)) == sorted(b) and a != b


def test_dataloader_batches_match_numpy(rng):
    x = rng.normal(size=(10, 2, 3)).astype("float32")
    y = rng.integers(0, 5, size=10).astype("int32")
    loader = gdata.DataLoader(gdata.ArrayDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 == len(batches)
    for k, (bx, by) in enumerate(batches):
        np.testing.assert_array_equal(bx.asnumpy(), x[4 * k:4 * k + 4])
        assert by.dtype == np.int32 and by.asnumpy().tolist() == y[4 * k:4 * k + 4].tolist()


def test_dataloader_stacks_ndarray_samples_and_shuffles(rng):
    x = mx.nd.array(rng.normal(size=(9, 2)))
    mx.random.seed(0)
    np.random.seed(0)
    seen = np.concatenate([b.asnumpy() for b in gdata.DataLoader(x, batch_size=4,
                                                                  shuffle=True)])
    assert seen.shape == (9, 2)
    order = [int(np.argmin(np.abs(x.asnumpy()[:, 0] - v))) for v in seen[:, 0]]
    assert sorted(order) == list(range(9)) and order != list(range(9))


def test_dataloader_workers_give_the_same_batches_in_order(rng):
    x = rng.normal(size=(23, 4)).astype("float32")
    threads = set()

    def batchify(samples):
        threads.add(threading.get_ident())
        return gdata.default_batchify_fn(samples)
    serial = [b.asnumpy() for b in gdata.DataLoader(x, batch_size=5)]
    pooled = [b.asnumpy() for b in gdata.DataLoader(x, batch_size=5, num_workers=3,
                                                     batchify_fn=batchify)]
    assert len(serial) == len(pooled) == 5
    for a, b in zip(serial, pooled):
        np.testing.assert_array_equal(a, b)
    assert threading.get_ident() not in threads


def test_dataloader_pin_memory_and_bad_arguments():
    x = np.ones((4, 2), "float32")
    b = next(iter(gdata.DataLoader(x, batch_size=2, pin_memory=True)))
    assert b.context == mx.Context("cpu_pinned", 0)
    with pytest.raises(MXNetError, match="batch_size"):
        gdata.DataLoader(x)
    with pytest.raises(MXNetError, match="shuffle"):
        gdata.DataLoader(x, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(4))
    with pytest.raises(MXNetError, match="batch_sampler"):
        gdata.DataLoader(x, batch_size=2, batch_sampler=gdata.BatchSampler(
            gdata.SequentialSampler(4), 2))
    with pytest.raises(MXNetError, match="last_batch"):
        gdata.DataLoader(x, batch_size=2, last_batch="drop")
