"""mx.io.CSVIter: MXNet 1.9.1's batch loader on small CSV files, the batches written out
from the definition of round_batch."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


@pytest.fixture
def files(tmp_path):
    rows = np.arange(12).reshape(3, 4) + 1         # examples 0, 1, 2 hold 1..4, 5..8, 9..12
    data = tmp_path / "d.csv"
    data.write_text("".join(",".join(map(str, r)) + "\n" for r in rows))
    label = tmp_path / "l.csv"
    label.write_text("1\n2\n3\n")
    return str(data), str(label), rows


def _epoch(it):
    return [(b.data[0].asnumpy(), b.label[0].asnumpy().tolist(), b.pad,
             b.index.tolist()) for b in it]


def test_round_batch_wraps_and_next_epoch_continues(files):
    data, label, rows = files
    it = mx.io.CSVIter(data_csv=data, data_shape=(2, 2), label_csv=label, batch_size=2)
    assert it.provide_data[0].shape == (2, 2, 2) and it.provide_label[0].shape == (2,)
    epoch = _epoch(it)
    assert [e[1:] for e in epoch] == [([1, 2], 0, [0, 1]), ([3, 1], 1, [2, 0])]
    np.testing.assert_array_equal(epoch[1][0], rows[[2, 0]].reshape(2, 2, 2))
    it.reset()
    # example 0 was used to complete the last batch: this epoch goes on after it
    assert [e[1:] for e in _epoch(it)] == [([2, 3], 0, [1, 2])]
    it.reset()
    assert [e[1:] for e in _epoch(it)] == [([1, 2], 0, [0, 1]), ([3, 1], 1, [2, 0])]


def test_no_round_batch_pads_with_zeros(files):
    data, _, rows = files
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=2, round_batch=False)
    epoch = _epoch(it)
    assert [e[1:3] for e in epoch] == [([0, 0], 0), ([0, 0], 1)]     # no label file: zeros
    np.testing.assert_array_equal(epoch[1][0], [rows[2], [0, 0, 0, 0]])
    it.reset()
    assert len(_epoch(it)) == 2


@pytest.mark.parametrize("dtype, text, value", [("int32", "200000001", 200000001),
                                                ("int64", "2147483648", 2147483648),
                                                ("float32", "0.5", 0.5)])
def test_dtypes(tmp_path, dtype, text, value):
    path = tmp_path / "d.csv"
    path.write_text((",".join([text] * 3) + "\n") * 2)
    batch = mx.io.CSVIter(data_csv=str(path), data_shape=(3,), batch_size=2, dtype=dtype).next()
    assert batch.data[0].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(batch.data[0].asnumpy(), np.full((2, 3), value, dtype))


def test_label_shape(tmp_path, files):
    data, _, _ = files
    label = tmp_path / "l2.csv"
    label.write_text("1,2\n3,4\n5,6\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), label_csv=str(label), label_shape=(2,),
                       batch_size=3)
    np.testing.assert_array_equal(it.next().label[0].asnumpy(), [[1, 2], [3, 4], [5, 6]])
    assert it.getlabel().shape == (3, 2) and it.getdata().shape == (3, 4)


def test_bad_files(tmp_path, files):
    data, label, _ = files
    with pytest.raises(MXNetError, match="has 4 values, the shape needs 3"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=1).next()
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3,4\n1,x,3,4\n")
    with pytest.raises(MXNetError, match="line 2"):
        list(mx.io.CSVIter(data_csv=str(bad), data_shape=(4,), batch_size=1))
    short = tmp_path / "short.csv"
    short.write_text("1\n")
    with pytest.raises(MXNetError, match="fewer rows"):
        list(mx.io.CSVIter(data_csv=data, data_shape=(4,), label_csv=str(short), batch_size=1))
    with pytest.raises(MXNetError, match="exceeds"):
        mx.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=8).next()
    with pytest.raises(MXNetError, match="cannot open"):
        mx.io.CSVIter(data_csv=str(tmp_path / "none.csv"), data_shape=(4,), batch_size=1)
    with pytest.raises(MXNetError, match="dtype"):
        mx.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=1, dtype="float16")
    with pytest.raises(MXNetError, match="data_shape"):
        mx.io.CSVIter(data_csv=data, data_shape=(0,), batch_size=1)
    with pytest.raises(MXNetError, match="batch_size"):
        mx.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=0)
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), batch_size=1)
    with pytest.raises(MXNetError, match="no current batch"):
        it.getdata()
