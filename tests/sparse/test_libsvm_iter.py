"""``mx.io.LibSVMIter``: csr batches of LibSVM files, labels from the lines or from a label
file, MXNet's round_batch, parts, folders, and clear errors for bad lines."""
import numpy as np
import pytest

import mxlite as mx

DATA = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n"
LABELS = "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n"
ROWS = np.array([[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2], [0, 0, -1.2]], np.float32)
LABEL_ROWS = np.array([[0, 0, 0], [0.125, 0, 0], [0, 0, 1.2], [0, 1.0, -1.2]], np.float32)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "data.t").write_text(DATA)
    (tmp_path / "label.t").write_text(LABELS)
    return str(tmp_path / "data.t"), str(tmp_path / "label.t")


def test_batches_are_csr_and_round_the_last_one(files):
    data, labels = files
    it = mx.io.LibSVMIter(data_libsvm=data, label_libsvm=labels, data_shape=(3,),
                          label_shape=(3,), batch_size=3)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 2]
    want = [[0, 1, 2], [3, 0, 1]]          # the last batch completed from the start
    for b, rows in zip(batches, want):
        x, y = b.data[0], b.label[0]
        assert x.stype == "csr" and y.stype == "csr" and x.shape == (3, 3)
        x.check_format()
        np.testing.assert_array_equal(x.asnumpy(), ROWS[rows])
        np.testing.assert_array_equal(y.asnumpy(), LABEL_ROWS[rows])
    assert it.provide_data[0].shape == (3, 3) and it.provide_label[0].shape == (3, 3)
    it.reset()                               # the next epoch goes on after the reused rows
    nxt = next(iter(it))
    np.testing.assert_array_equal(nxt.data[0].asnumpy(), ROWS[[2, 3, 0]])


def test_labels_from_the_lines(files):
    it = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(3,), batch_size=2)
    got = [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in it]
    np.testing.assert_array_equal(got[0][0], ROWS[:2])
    np.testing.assert_array_equal(got[1][1], [-3.0, 4.0])
    assert got[0][1].dtype == np.float32 and it.provide_label[0].shape == (2,)


def test_parts_cover_the_lines_once(files, tmp_path):
    seen = []
    for k in range(3):
        it = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(3,), batch_size=1,
                              num_parts=3, part_index=k)
        seen += [b.data[0].asnumpy()[0].tolist() for b in it]
    assert sorted(map(tuple, seen)) == sorted(map(tuple, ROWS.tolist()))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.t").write_text(DATA[:DATA.index("-3.0")])
    (folder / "b.t").write_text(DATA[DATA.index("-3.0"):])
    it = mx.io.LibSVMIter(data_libsvm=str(folder), data_shape=(3,), batch_size=4)
    np.testing.assert_array_equal(next(iter(it)).data[0].asnumpy(), ROWS)


@pytest.mark.parametrize("line,match", [("1 -1:0.5", "outside"), ("1 3:0.5", "outside"),
                                        ("1 2:0.5 1:1", "increasing"), ("1 a:b", "not")])
def test_bad_lines_are_clear_errors(tmp_path, line, match):
    path = tmp_path / "bad.t"
    path.write_text("1 0:1\n" + line + "\n")
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=2)
    with pytest.raises(mx.MXNetError, match=f"line 2 .*{match}"):
        list(it)


def test_bad_arguments(files):
    with pytest.raises(mx.MXNetError, match="round_batch"):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(3,), batch_size=2,
                         round_batch=False)
    with pytest.raises(mx.MXNetError, match="part_index"):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(3,), batch_size=2, num_parts=2,
                         part_index=2)
    with pytest.raises(mx.MXNetError, match="cannot read"):
        mx.io.LibSVMIter(data_libsvm=files[0] + ".missing", data_shape=(3,), batch_size=2)
