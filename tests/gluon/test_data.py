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
    assert [len(s) for s in shards] == [4, 3, 3]
    assert sorted(s[i][0] for s in shards for i in range(len(s))) == list(range(10))
    assert len(ds.filter(lambda s: s[0] % 2 == 0)) == 5
    with pytest.raises(MXNetError, match="shard"):
        ds.shard(3, 3)


def test_shard_puts_the_larger_shards_first():
    # MXNet's sizes: n // k each, plus one for the first n % k shards; contiguous, in order
    ds = gdata.SimpleDataset(list(range(9)))
    shards = [list(ds.shard(4, k)) for k in range(4)]
    assert shards == [[0, 1, 2], [3, 4], [5, 6], [7, 8]]
    assert [len(ds.shard(12, k)) for k in range(12)] == [1] * 9 + [0] * 3
    for bad in (-1, 4):
        with pytest.raises(MXNetError, match=f"index {bad} out of range for 4 shards"):
            ds.shard(4, bad)


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


# ---- the shape rule: a sample of a 1-D array is a scalar, a batch of them (B,) ---------------
CONTAINERS = {"ndarray": lambda a: mx.nd.array(a, dtype=a.dtype), "numpy": lambda a: a,
              "list": lambda a: list(a)}
LAST_BATCH = {"keep": [4, 4, 2], "discard": [4, 4], "rollover": [4, 4]}


def _expected_batches(a, sizes):
    starts = np.cumsum([0] + sizes[:-1])
    return [a[s:s + n] for s, n in zip(starts, sizes)]


@pytest.mark.parametrize("container", ["ndarray", "numpy"])
@pytest.mark.parametrize("last_batch", sorted(LAST_BATCH))
@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_batch_shapes_and_dtypes_follow_mxnet(rng, container, last_batch,
                                                         num_workers):
    x = rng.normal(size=(10, 3, 2)).astype("float32")
    y = rng.integers(0, 5, size=10).astype("int32")
    w = rng.normal(size=10).astype("float64")
    wrap = CONTAINERS[container]
    loader = gdata.DataLoader(gdata.ArrayDataset(wrap(x), wrap(y), wrap(w)), batch_size=4,
                              last_batch=last_batch, num_workers=num_workers)
    sizes = LAST_BATCH[last_batch]
    assert len(loader) == len(sizes)        # before the pass: 'rollover' counts its leftover
    batches = list(loader)
    assert len(batches) == len(sizes)
    for (bx, by, bw), ex, ey, ew in zip(batches, *(_expected_batches(a, sizes)
                                                  for a in (x, y, w))):
        assert (bx.shape, by.shape, bw.shape) == (ex.shape, ey.shape, ew.shape)
        assert (bx.dtype, by.dtype, bw.dtype) == (np.float32, np.int32, np.float64)
        np.testing.assert_array_equal(bx.asnumpy(), ex)
        np.testing.assert_array_equal(by.asnumpy(), ey)
        np.testing.assert_array_equal(bw.asnumpy(), ew)


@pytest.mark.parametrize("container", sorted(CONTAINERS))
def test_samples_of_a_1d_array_are_scalars_in_every_dataset(container):
    a = np.array([3.0, 1.0, 4.0, 1.0, 5.0], dtype="float32")
    data = CONTAINERS[container](a)
    for ds in (gdata.ArrayDataset(data), gdata.SimpleDataset(data)):
        assert np.ndim(ds[2]) == 0 and float(ds[2]) == 4.0
        (batch,) = list(gdata.DataLoader(ds, batch_size=5))
        assert batch.shape == (5,)
        np.testing.assert_array_equal(batch.asnumpy(), a)
    (raw,) = list(gdata.DataLoader(data, batch_size=5))       # the array itself as dataset
    assert raw.shape == (5,)


def test_transforms_see_scalars_and_batch_to_b():
    x, y = mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), mx.nd.array([0.0, 1.0, 2.0])
    ds = gdata.ArrayDataset(x, y)
    seen = []

    def double_label(data, label):
        seen.append(np.ndim(label))
        return data, label * 2
    for t in (ds.transform(double_label), ds.transform(double_label, lazy=False),
              ds.transform_first(lambda d: d + 1)):
        bx, by = next(iter(gdata.DataLoader(t, batch_size=3)))
        assert bx.shape == (3, 2) and by.shape == (3,)
    assert set(seen) == {0}
    labels = gdata.ArrayDataset(y).transform(lambda v: v + 10)
    assert next(iter(gdata.DataLoader(labels, batch_size=3))).asnumpy().tolist() == \
        [10.0, 11.0, 12.0]


def test_accuracy_of_1d_labels_reads_like_mxnet():
    # the user's metric from the adversarial run: 3 of 4 predictions right
    pred, label = mx.nd.array([1, 2, 1, 1]), mx.nd.array([1, 2, 1, 2])
    (p, l), = list(gdata.DataLoader(gdata.ArrayDataset(pred, label), batch_size=4))
    assert p.shape == l.shape == (4,)
    assert (p == l).mean().asscalar() == 0.75


def test_default_batchify_of_scalars_arrays_and_tuples():
    b = gdata.default_batchify_fn([np.int32(1), np.int32(2), np.int32(3)])
    assert b.shape == (3,) and b.dtype == np.int32
    b = gdata.default_batchify_fn([1.5, 2.5])           # NumPy's rule: Python floats, float64
    assert b.shape == (2,) and b.dtype == np.float64
    b = gdata.default_batchify_fn([mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))])
    assert b.shape == (2, 2, 3)
    bx, by = gdata.default_batchify_fn([(np.ones(2, "float32"), 0), (np.zeros(2, "float32"), 1)])
    assert bx.shape == (2, 2) and by.asnumpy().tolist() == [0, 1]


@pytest.mark.parametrize("samples,match", [
    ([], "no samples"),
    ([mx.nd.ones((2,)), mx.nd.ones((3,))], r"differ in shape \(\['\(2,\)', '\(3,\)'\]\)"),
    ([np.ones(2), np.ones(3)], r"differ in shape"),
    ([[1, 2], [3]], r"differ in shape"),
    ([mx.nd.ones((2,)), np.ones(2)], r"sample 0 \(NDArray of shape \(2,\)\) and sample 1 "
                                     r"\(ndarray of shape \(2,\)\) differ in kind"),
    ([(1, 2), (3,)], r"sample 1 \(tuple of 1\) are not tuples of one length"),
    ([(1, mx.nd.ones(2)), (2, np.ones(2))], "field 1 of the tuple samples.*differ in kind"),
    (["a", "b"], "cannot stack samples of type str"),
])
def test_default_batchify_errors_name_the_samples(samples, match):
    with pytest.raises(MXNetError, match="default_batchify_fn: .*" + match):
        gdata.default_batchify_fn(samples)


@pytest.mark.parametrize("make,match", [
    (lambda: gdata.ArrayDataset(mx.nd.array(3.0)), r"ArrayDataset \(array 0\): a 0-d NDArray"),
    (lambda: gdata.ArrayDataset(np.ones(2), np.float32(1)),
     r"ArrayDataset \(array 1\): an object of type float32 is not indexable"),
    (lambda: gdata.SimpleDataset(7), "SimpleDataset: an object of type int is not indexable"),
    (lambda: gdata.DataLoader((i for i in range(3)), batch_size=2),
     "DataLoader: an object of type generator"),
])
def test_datasets_without_samples_are_refused(make, match):
    with pytest.raises(MXNetError, match=match):
        make()


def test_record_file_dataset_gives_raw_records_also_in_workers(tmp_path):
    rec, idx = str(tmp_path / "r.rec"), str(tmp_path / "r.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    payloads = [bytes([i]) * (i + 1) for i in range(5)]
    for i, p in enumerate(payloads):
        writer.write_idx(i, p)
    writer.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 5
    assert [ds[i] for i in range(5)] == payloads
    lengths = gdata.RecordFileDataset(rec).transform(len)         # read in the workers
    loader = gdata.DataLoader(lengths, batch_size=2, num_workers=2)
    assert np.concatenate([b.asnumpy() for b in loader]).tolist() == [1, 2, 3, 4, 5]


def test_filter_sampler_keeps_the_matching_indices_in_order():
    ds = gdata.SimpleDataset([5, 2, 8, 1, 9, 4])
    sampler = gdata.FilterSampler(lambda x: x > 3, ds)
    assert list(sampler) == [0, 2, 4, 5] and len(sampler) == 4
    batches = list(gdata.BatchSampler(sampler, 3, "keep"))
    assert batches == [[0, 2, 4], [5]]
