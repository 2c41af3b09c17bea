"""CSRNDArray and RowSparseNDArray: creation from every form MXNet takes, conversions,
copies, indexing, pickling, save/load and format checks, against SciPy and dense NumPy."""
import pickle

import numpy as np
import pytest
import scipy.sparse as spsp

import mxlite as mx
from mxlite.base import MXNetError

FIXTURES = __file__.rsplit("/", 2)[0] + "/fixtures/"


def random_dense(rng, shape, density=0.3, dtype=np.float32):
    values = rng.standard_normal(shape).astype(dtype)
    return np.where(rng.random(shape) < density, values, 0).astype(dtype)


def random_rows(rng, shape, density=0.4, dtype=np.float32):
    dense = rng.standard_normal(shape).astype(dtype)
    keep = rng.random(shape[0]) < density
    dense[~keep] = 0
    return dense


# ---- creation ------------------------------------------------------------------------------
def test_csr_from_parts_matches_scipy(rng):
    dense = random_dense(rng, (7, 9))
    ref = spsp.csr_matrix(dense)
    a = mx.nd.sparse.csr_matrix((ref.data, ref.indices, ref.indptr), shape=(7, 9))
    assert isinstance(a, mx.nd.sparse.CSRNDArray) and a.stype == "csr"
    assert a.shape == (7, 9) and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), dense)
    np.testing.assert_array_equal(a.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(a.indices.asnumpy(), ref.indices)
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64
    np.testing.assert_array_equal(a.data.asnumpy(), ref.data)


def test_csr_shape_is_inferred_from_indptr_and_the_largest_index():
    a = mx.nd.sparse.csr_matrix(([1, 2, 3], [0, 4, 1], [0, 2, 2, 3]))
    assert a.shape == (3, 5)
    assert a.dtype == np.float32                 # lists: float32 (MXNet's default)
    with pytest.raises(MXNetError, match="shape"):
        mx.nd.sparse.csr_matrix(([], [], [0, 0]))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16])
def test_csr_dtype_follows_a_numpy_source(rng, dtype):
    dense = (random_dense(rng, (4, 5)) * 10).astype(dtype)
    assert mx.nd.sparse.csr_matrix(dense).dtype == dtype
    if dtype == np.float16:          # (SciPy holds no float16)
        return
    ref = spsp.csr_matrix(dense)
    assert mx.nd.sparse.csr_matrix(ref).dtype == dtype
    assert mx.nd.sparse.csr_matrix(ref, dtype="float32").dtype == np.float32


def test_csr_from_coordinates_sums_repeats():
    a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 5.0], ([0, 2, 0], [1, 0, 1])), shape=(3, 3))
    expected = np.zeros((3, 3), np.float32)
    expected[0, 1], expected[2, 0] = 6.0, 2.0
    np.testing.assert_array_equal(a.asnumpy(), expected)
    a.check_format()
    with pytest.raises(MXNetError, match="outside the shape"):
        mx.nd.sparse.csr_matrix(([1.0], ([3], [0])), shape=(3, 3))


def test_csr_from_dense_scipy_and_csr(rng):
    dense = random_dense(rng, (6, 4))
    for source in (dense, dense.tolist(), mx.nd.array(dense), spsp.csr_matrix(dense),
                   spsp.coo_matrix(dense), mx.nd.sparse.csr_matrix(dense)):
        a = mx.nd.sparse.csr_matrix(source)
        np.testing.assert_array_equal(a.asnumpy(), dense)
        a.check_format()
    empty = mx.nd.sparse.csr_matrix((3, 4))
    assert empty.shape == (3, 4) and empty.data.shape == (0,)
    np.testing.assert_array_equal(empty.indptr.asnumpy(), [0, 0, 0, 0])


def test_row_sparse_forms(rng):
    dense = random_rows(rng, (8, 3))
    rows = np.flatnonzero(np.abs(dense).sum(1))
    a = mx.nd.sparse.row_sparse_array((dense[rows], rows), shape=(8, 3))
    assert isinstance(a, mx.nd.sparse.RowSparseNDArray) and a.stype == "row_sparse"
    np.testing.assert_array_equal(a.asnumpy(), dense)
    np.testing.assert_array_equal(a.indices.asnumpy(), rows)
    b = mx.nd.sparse.row_sparse_array(dense)
    np.testing.assert_array_equal(b.indices.asnumpy(), rows)
    np.testing.assert_array_equal(mx.nd.sparse.row_sparse_array(b).asnumpy(), dense)
    assert mx.nd.sparse.row_sparse_array((4, 2, 3)).shape == (4, 2, 3)
    inferred = mx.nd.sparse.row_sparse_array(([[1, 2]], [5]))
    assert inferred.shape == (6, 2)


def test_zeros_empty_and_stype_keywords():
    for stype in ("csr", "row_sparse"):
        for make in (lambda: mx.nd.sparse.zeros(stype, (3, 4)),
                     lambda: mx.nd.zeros((3, 4), stype=stype),
                     lambda: mx.nd.empty((3, 4), stype=stype),
                     lambda: mx.nd.sparse.empty(stype, (3, 4), dtype="float64")):
            z = make()
            assert z.stype == stype and z.shape == (3, 4)
            np.testing.assert_array_equal(z.asnumpy(), np.zeros((3, 4)))
    assert mx.nd.zeros((2, 2), stype="default").stype == "default"
    with pytest.raises(MXNetError, match="2-D"):
        mx.nd.sparse.zeros("csr", (2, 3, 4))
    with pytest.raises(MXNetError, match="storage type"):
        mx.nd.empty((2,), stype="coo")


def test_nd_array_keeps_sparse_sources_sparse(rng):
    dense = random_dense(rng, (3, 5))
    assert mx.nd.array(spsp.csr_matrix(dense)).stype == "csr"
    a = mx.nd.sparse.csr_matrix(dense)
    assert mx.nd.array(a).stype == "csr"
    assert mx.nd.sparse.array(mx.nd.sparse.row_sparse_array(dense)).stype == "row_sparse"


@pytest.mark.parametrize("bad,match", [
    ((np.ones(3), [0, 1], [0, 2, 3]), "one entry per stored value"),
    ((np.ones(2), [0, 1], [0, 2]), None),              # valid, 1 row
    ((np.ones((2, 2)), [0, 1], [0, 2]), "1-D"),
])
def test_csr_part_shapes_are_checked(bad, match):
    if match is None:
        mx.nd.sparse.csr_matrix(bad, shape=(1, 2)).check_format()
        return
    with pytest.raises(MXNetError, match=match):
        mx.nd.sparse.csr_matrix(bad, shape=(2, 2))


def test_negative_shape_is_refused():
    with pytest.raises(MXNetError, match="negative"):
        mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, -2))


# ---- check_format --------------------------------------------------------------------------
@pytest.mark.parametrize("data,indices,indptr,shape,match", [
    ([1, 2], [0, 5], [0, 1, 2], (2, 3), "outside"),                 # column out of range
    ([1, 2], [0, -1], [0, 1, 2], (2, 3), "outside"),                # negative column
    ([1, 2], [0, 1], [0, 2, 1], (2, 3), "decreases|end at nnz"),    # indptr decreases
    ([1, 2], [0, 1], [1, 2, 2], (2, 3), "start at 0"),              # indptr starts at 1
])
def test_check_format_finds_bad_csr(data, indices, indptr, shape, match):
    a = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=shape)
    a.check_format(full_check=False)                 # the sizes agree
    with pytest.raises(MXNetError, match=match):
        a.check_format()
    # no kernel follows a bad index: every use is the same clear error
    for use in (lambda: a.asnumpy(), lambda: mx.nd.dot(a, mx.nd.ones((shape[1], 2))),
                lambda: a.tostype("default"), lambda: mx.nd.sqrt(a), lambda: a[0:1],
                lambda: a + a):
        with pytest.raises(MXNetError, match="invalid sparse format"):
            use()


@pytest.mark.parametrize("indices", [[2, 0, 1], [1, 1, 0]])
def test_unsorted_or_repeated_columns(indices):
    """check_format refuses them; the kernels that add terms in any order read them as
    SciPy does (repeats add up); merges of two formats need the canonical format."""
    data, indptr = [1.0, 2.0, 4.0], [0, 3, 3]
    a = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(2, 3))
    with pytest.raises(MXNetError, match="strictly increasing"):
        a.check_format()
    ref = spsp.csr_matrix((data, indices, indptr), shape=(2, 3))
    np.testing.assert_array_equal(a.asnumpy(), ref.toarray())
    rhs = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(mx.nd.dot(a, mx.nd.array(rhs)).asnumpy(), ref @ rhs)
    np.testing.assert_array_equal(mx.nd.sum(a, axis=1).asnumpy(), ref.sum(axis=1).A1)
    with pytest.raises(MXNetError, match="strictly increasing"):
        a + a


def test_check_format_accepts_rows_separately_sorted():
    a = mx.nd.sparse.csr_matrix(([1, 2, 3], [2, 0, 1], [0, 1, 3]), shape=(2, 3))
    a.check_format()          # row 0 ends at column 2, row 1 starts again at 0


@pytest.mark.parametrize("indices,match", [([2, 1], "strictly increasing"),
                                           ([1, 1], "strictly increasing"),
                                           ([0, 4], "outside"), ([-1, 0], "outside")])
def test_check_format_finds_bad_row_sparse(indices, match):
    a = mx.nd.sparse.row_sparse_array((np.ones((2, 2)), indices), shape=(4, 2))
    with pytest.raises(MXNetError, match=match):
        a.check_format()
    with pytest.raises(MXNetError, match="invalid sparse format"):
        a.asnumpy()


def test_row_sparse_data_rows_must_match_shape():
    with pytest.raises(MXNetError, match="rows"):
        mx.nd.sparse.row_sparse_array((np.ones((2, 3)), [0, 1]), shape=(4, 2))


# ---- conversions and copies ----------------------------------------------------------------
def test_tostype_round_trips(rng):
    dense = random_dense(rng, (5, 6))
    d = mx.nd.array(dense)
    for stype in ("csr", "row_sparse"):
        s = d.tostype(stype)
        assert s.stype == stype
        np.testing.assert_array_equal(s.asnumpy(), dense)
        back = s.tostype("default")
        assert back.stype == "default" and isinstance(back, mx.nd.NDArray)
        np.testing.assert_array_equal(back.asnumpy(), dense)
        np.testing.assert_array_equal(mx.nd.cast_storage(d, stype=stype).asnumpy(), dense)
        s.check_format()
    with pytest.raises(MXNetError, match="does not convert"):
        d.tostype("csr").tostype("row_sparse")
    with pytest.raises(MXNetError, match="does not convert"):
        d.tostype("row_sparse").tostype("csr")


def test_nan_is_stored_not_dropped():
    d = mx.nd.array([[0, np.nan], [0, 0]])
    s = d.tostype("csr")
    assert s.data.shape == (1,) and np.isnan(s.data.asnumpy()[0])
    assert np.isnan(s.tostype("row_sparse" if False else "default").asnumpy()[0, 1])


def test_row_sparse_of_higher_rank(rng):
    dense = random_rows(rng, (6, 2, 3))
    s = mx.nd.array(dense).tostype("row_sparse")
    assert s.data.shape[1:] == (2, 3)
    np.testing.assert_array_equal(s.asnumpy(), dense)


def test_copies_are_deep(rng):
    a = mx.nd.sparse.csr_matrix(random_dense(rng, (4, 4), 0.5))
    before = a.asnumpy()
    data = a.data
    data[:] = 100                      # .data is a copy (MXNet: "a deep copy")
    np.testing.assert_array_equal(a.asnumpy(), before)
    b = a.copy()
    assert b is not a and b.stype == "csr"
    np.testing.assert_array_equal(b.asnumpy(), before)


def test_copyto_and_astype(rng):
    dense = random_dense(rng, (4, 3))
    a = mx.nd.sparse.csr_matrix(dense)
    target = mx.nd.zeros((4, 3))
    a.copyto(target)
    np.testing.assert_array_equal(target.asnumpy(), dense)
    other = mx.nd.sparse.zeros("csr", (4, 3), dtype="float64")
    a.copyto(other)
    assert other.dtype == np.float64
    np.testing.assert_array_equal(other.asnumpy(), dense)
    c = a.copyto(mx.cpu(0))
    assert c.stype == "csr" and c is not a
    assert a.as_in_context(mx.cpu(0)) is a
    with pytest.raises(MXNetError, match="cannot be copied"):
        a.copyto(mx.nd.sparse.zeros("row_sparse", (4, 3)))
    i = a.astype("int32")
    assert i.stype == "csr" and i.dtype == np.int32
    assert a.astype("float32", copy=False) is a


def test_csr_row_indexing(rng):
    dense = random_dense(rng, (6, 5), 0.5)
    a = mx.nd.sparse.csr_matrix(dense)
    np.testing.assert_array_equal(a[2].asnumpy(), dense[2:3])
    assert a[2].stype == "csr" and a[2].shape == (1, 5)
    np.testing.assert_array_equal(a[-1].asnumpy(), dense[5:6])
    np.testing.assert_array_equal(a[1:4].asnumpy(), dense[1:4])
    np.testing.assert_array_equal(a[4:].asnumpy(), dense[4:])
    assert a[:] is a
    a[1:4].check_format()
    with pytest.raises(MXNetError, match="contiguous"):
        a[::2]
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(MXNetError):
        a[1, 2]


def test_setitem_replaces_everything(rng):
    dense = random_dense(rng, (3, 4))
    a = mx.nd.sparse.zeros("csr", (3, 4))
    a[:] = mx.nd.array(dense)
    np.testing.assert_array_equal(a.asnumpy(), dense)
    a[:] = dense * 2
    np.testing.assert_array_equal(a.asnumpy(), dense * 2)
    with pytest.raises(MXNetError):
        a[:] = 1.0
    r = mx.nd.sparse.zeros("row_sparse", (3, 4))
    r[:] = 2.5
    np.testing.assert_array_equal(r.asnumpy(), np.full((3, 4), 2.5))
    r[:] = 0
    assert r.data.shape[0] == 0


def test_attributes_and_repr(rng):
    a = mx.nd.sparse.csr_matrix(random_dense(rng, (3, 4)))
    assert repr(a) == "\n<CSRNDArray 3x4 @cpu(0)>"
    assert a.ndim == 2 and a.context == mx.cpu(0)
    assert a._num_aux == 2 and a._aux_types == [np.int64, np.int64]
    with pytest.raises(NotImplementedError):
        a.size
    r = mx.nd.sparse.zeros("row_sparse", (2, 3))
    assert repr(r) == "\n<RowSparseNDArray 2x3 @cpu(0)>"


def test_asscipy_and_pickle(rng):
    dense = random_dense(rng, (5, 7))
    a = mx.nd.sparse.csr_matrix(dense)
    s = a.asscipy()
    assert isinstance(s, spsp.csr_matrix)
    np.testing.assert_array_equal(s.toarray(), dense)
    for x in (a, mx.nd.array(dense).tostype("row_sparse")):
        y = pickle.loads(pickle.dumps(x))
        assert type(y) is type(x) and y.shape == x.shape
        np.testing.assert_array_equal(y.asnumpy(), dense)


# ---- save / load ---------------------------------------------------------------------------
@pytest.mark.parametrize("name,stype", [("csr.params", "csr"), ("row_sparse.params", "row_sparse")])
def test_mxnet_sparse_files_load_and_resave_byte_for_byte(tmp_path, name, stype):
    loaded = mx.nd.load(FIXTURES + name)
    arr = loaded[0] if isinstance(loaded, list) else loaded["w"]
    assert arr.stype == stype
    np.testing.assert_array_equal(arr.asnumpy(), [[0, 1.5], [0, 0]])
    out = str(tmp_path / name)
    mx.nd.save(out, loaded)
    with open(FIXTURES + name, "rb") as f, open(out, "rb") as g:
        assert f.read() == g.read()


def test_save_load_round_trip_mixed(tmp_path, rng):
    dense = random_dense(rng, (6, 5))
    arrays = {"c": mx.nd.sparse.csr_matrix(dense), "r": mx.nd.array(dense).tostype("row_sparse"),
              "d": mx.nd.array(dense), "e": mx.nd.sparse.zeros("csr", (3, 2), dtype="float64")}
    path = str(tmp_path / "mixed.params")
    mx.nd.save(path, arrays)
    back = mx.nd.load(path)
    for k, v in arrays.items():
        assert back[k].stype == v.stype and back[k].dtype == v.dtype
        np.testing.assert_array_equal(back[k].asnumpy(), v.asnumpy())


def test_a_file_with_bad_indices_is_refused(tmp_path):
    good = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
    path = str(tmp_path / "bad.params")
    mx.nd.save(path, [good])
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    # the last int64 before the (empty) key count is the last column index: make it 7
    raw[-16:-8] = (7).to_bytes(8, "little")
    with open(path, "wb") as f:
        f.write(bytes(raw))
    with pytest.raises(MXNetError, match="outside"):
        mx.nd.load(path)
    with pytest.raises(MXNetError, match="truncated"):
        mx.nd.load_frombuffer(bytes(raw[:-20]))
