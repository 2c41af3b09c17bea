"""mx.io's batch protocol: DataDesc, DataBatch, DataIter, ResizeIter, PrefetchingIter."""
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _ids(batch):
    return batch.data[0].asnumpy()[:, 0].astype(int).tolist()


def _counting(n=10, batch_size=3, **kwargs):
    data = np.repeat(np.arange(n, dtype=np.float32)[:, None], 2, axis=1)
    return mx.io.NDArrayIter(data, np.arange(n), batch_size=batch_size, **kwargs)


def test_data_desc():
    desc = mx.io.DataDesc("x", (2, 3), "float16", "NTC")
    name, shape = desc
    assert (name, shape, desc.dtype, desc.layout) == ("x", (2, 3), "float16", "NTC")
    assert desc == ("x", (2, 3))
    assert repr(desc) == "DataDesc[x,(2, 3),float16,NTC]"
    copy = pickle.loads(pickle.dumps(desc))
    assert (copy.dtype, copy.layout) == ("float16", "NTC")
    assert [mx.io.DataDesc.get_batch_axis(lay) for lay in ("NCHW", "TNC", "TC", None)] == \
        [0, 1, -1, 0]
    descs = mx.io.DataDesc.get_list([("a", (1,)), ("b", (2,))], [("b", np.int32), ("a", "f")])
    assert [(d.name, d.shape, d.dtype) for d in descs] == [("a", (1,), "f"), ("b", (2,), np.int32)]
    assert mx.io.DataDesc.get_list([("a", (1,))], None)[0].dtype == np.float32


def test_data_batch():
    batch = mx.io.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((7, 8))], [mx.nd.ones((4, 5))])
    assert str(batch) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"
    assert str(mx.io.DataBatch([mx.nd.ones((2,))])).endswith("label shapes: None")
    with pytest.raises(MXNetError, match="list"):
        mx.io.DataBatch(mx.nd.ones((2,)))


def test_data_iter_protocol():
    class Three(mx.io.DataIter):
        def __init__(self):
            super().__init__(batch_size=1)
            self.i = 0

        def reset(self):
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 3

        def getdata(self):
            return [mx.nd.array([self.i])]

        def getlabel(self):
            return None

        def getpad(self):
            return 0

    it = Three()
    assert [b.data[0].asscalar() for b in it] == [1, 2, 3]
    it.reset()
    assert it.next().index is None and next(it).data[0].asscalar() == 2


def test_resize_iter_wraps_and_stops():
    inner = _counting(n=7, batch_size=3, last_batch_handle="discard")   # 2 batches an epoch
    it = mx.io.ResizeIter(inner, 5)
    assert [_ids(b) for b in it] == [[0, 1, 2], [3, 4, 5], [0, 1, 2], [3, 4, 5], [0, 1, 2]]
    it.reset()                                    # reset_internal: the inner one starts again
    assert _ids(it.next()) == [0, 1, 2]
    it = mx.io.ResizeIter(_counting(n=7, batch_size=3, last_batch_handle="discard"), 1,
                          reset_internal=False)
    assert [_ids(b) for b in it] == [[0, 1, 2]]
    it.reset()
    assert [_ids(b) for b in it] == [[3, 4, 5]]
    assert it.provide_data == inner.provide_data and it.batch_size == 3


def test_prefetching_iter_joins_and_renames():
    first = _counting(n=6, batch_size=2)
    second = mx.io.NDArrayIter(np.arange(6, dtype=np.float32) * 10, batch_size=2)
    it = mx.io.PrefetchingIter([first, second], rename_data=[{"data": "a"}, {"data": "b"}])
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.name for d in it.provide_label] == ["softmax_label"]
    for epoch in range(2):
        batches = list(it)
        assert len(batches) == 3
        for k, batch in enumerate(batches):
            assert _ids(batch) == [2 * k, 2 * k + 1]
            np.testing.assert_array_equal(batch.data[1].asnumpy(), [20 * k, 20 * k + 10])
            np.testing.assert_array_equal(batch.label[0].asnumpy(), [2 * k, 2 * k + 1])
        with pytest.raises(StopIteration):
            it.next()
        it.reset()
    it.next()
    it.reset()                                     # mid-epoch reset starts again
    assert _ids(it.next()) == [0, 1]


def test_prefetching_iter_errors():
    it = mx.io.PrefetchingIter([_counting(n=4, batch_size=2), _counting(n=6, batch_size=2)])
    it.next()
    it.next()
    with pytest.raises(MXNetError, match="differ"):
        it.next()
    with pytest.raises(MXNetError, match="rename_data"):
        mx.io.PrefetchingIter([_counting()], rename_data=[{}, {}])

    class Broken(mx.io.NDArrayIter):
        def next(self):
            raise ValueError("broken source")

    it = mx.io.PrefetchingIter(Broken(np.zeros((4, 1)), batch_size=2))
    with pytest.raises(ValueError, match="broken source"):    # raised in the caller's thread
        it.next()


def test_not_implemented_iterators():
    with pytest.raises(MXNetError, match="cannot read data_libsvm"):
        mx.io.LibSVMIter(data_libsvm="x", data_shape=(3,), batch_size=1)  # (tests/sparse)
    assert issubclass(mx.io.CSVIter, mx.io.MXDataIter)
