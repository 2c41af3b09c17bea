"""Random test data helpers: shapes, dtypes, reproducibility, sparse refusals."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import (assign_each, assign_each2, create_2d_tensor, create_sparse_array,
                               create_vector, get_identity_mat_batch,
                               new_matrix_with_real_eigvals_nd,
                               new_sym_matrix_with_real_eigvals_nd, rand_coord_2d, rand_ndarray,
                               rand_shape_2d, rand_shape_3d, rand_shape_nd, rand_sparse_ndarray,
                               random_arrays, random_sample, random_uniform_arrays,
                               shuffle_csr_column_indices)


def test_random_arrays_follow_numpy_seed():
    np.random.seed(7)
    a, b = random_arrays((2, 3), ())
    np.random.seed(7)
    want = np.random.randn(2, 3).astype(np.float32)
    np.testing.assert_array_equal(a, want)
    assert a.dtype == np.float32 and b.shape == () and b.dtype == np.float32
    assert random_arrays((4,)).shape == (4,)          # one shape: the array itself


def test_random_uniform_arrays():
    arrays = random_uniform_arrays((100,), (3, 2), low=2.0, high=3.0, dtype=np.float64)
    assert [x.shape for x in arrays] == [(100,), (3, 2)]
    assert all(x.dtype == np.float64 and x.min() >= 2.0 and x.max() < 3.0 for x in arrays)
    with pytest.raises(TypeError):
        random_uniform_arrays((2,), scale=3)


def test_rand_ndarray():
    np.random.seed(3)
    a = rand_ndarray((4, 5))
    np.random.seed(3)
    np.testing.assert_array_equal(a.asnumpy(), np.random.randn(4, 5).astype(np.float32))
    assert isinstance(a, mx.nd.NDArray) and a.dtype == np.float32 and a.context == mx.cpu()
    assert rand_ndarray((2,), dtype="float64").dtype == np.float64
    squared = rand_ndarray((3, 3), modifier_func=lambda v: v * v).asnumpy()
    assert (squared >= 0).all()
    for stype in ("csr", "row_sparse"):
        for arr in (rand_ndarray((30, 40), stype=stype, density=0.25),
                    rand_sparse_ndarray((30, 40), stype, density=0.25)[0],
                    create_sparse_array((30, 40), stype, density=0.25)):
            assert arr.stype == stype and arr.shape == (30, 40) and arr.dtype == np.float32
            arr.check_format()
            values = arr.asnumpy()
            assert ((values >= 0) & (values < 1)).all()
            stored = (values != 0).mean() if stype == "csr" else (values != 0).any(1).mean()
            assert 0.1 < stored < 0.4
    arr, (indptr, indices, data) = rand_sparse_ndarray((6, 64), "csr", density=0.5,
                                                       distribution="powerlaw")
    counts = np.diff(indptr.asnumpy())
    assert (counts[1:4] == 2 * counts[:3]).all()          # each row twice the last
    arr, (values, rows) = rand_sparse_ndarray((9, 2), "row_sparse", rsp_indices=[1, 4],
                                              data_init=3.0)
    np.testing.assert_array_equal(arr.indices.asnumpy(), [1, 4])
    assert (arr.data.asnumpy() == 3.0).all()
    shuffled = create_sparse_array((8, 50), "csr", density=0.5, shuffle_csr_indices=True)
    with pytest.raises(MXNetError, match="strictly increasing"):
        shuffled.check_format()                  # the columns of a row are out of order
    assert (shuffled.asnumpy() != 0).sum() == shuffled.data.shape[0]    # none repeated
    import scipy.sparse as spsp
    m = spsp.random(5, 30, density=0.5, format="csr", random_state=1)
    before = [sorted(m.indices[m.indptr[i]:m.indptr[i + 1]]) for i in range(5)]
    shuffle_csr_column_indices(m)                # (MXNet's: the indices alone move)
    assert [sorted(m.indices[m.indptr[i]:m.indptr[i + 1]]) for i in range(5)] == before
    np.testing.assert_array_equal(create_sparse_array((2, 2), "default", data_init=4).asnumpy(),
                                  np.full((2, 2), 4, np.float32))


def test_random_shapes_and_coords():
    for _ in range(20):
        assert all(1 <= d <= 3 for d in rand_shape_2d(3, 3))
        assert len(rand_shape_3d()) == 3
        shape = rand_shape_nd(4, dim=2, allow_zero_size=True)
        assert len(shape) == 4 and all(0 <= d <= 2 and isinstance(d, int) for d in shape)
        x, y = rand_coord_2d(0, 5, 10, 12)
        assert 0 <= x < 5 and 10 <= y < 12
    sample = random_sample(list(range(10)), 4)
    assert len(set(sample)) == 4 and set(sample) <= set(range(10))
    with pytest.raises(MXNetError):
        random_sample([1, 2], 3)


def test_assign_each():
    x = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(assign_each(x, lambda v: v * 2), x * 2.0)
    np.testing.assert_array_equal(assign_each2(x, x + 1, lambda a, b: a * b), x * (x + 1.0))
    with pytest.raises(MXNetError):
        assign_each2(x, x.T, lambda a, b: a)


def test_large_tensor_helpers():
    np.testing.assert_array_equal(create_2d_tensor(3, 2).asnumpy(), [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(create_vector(4).asnumpy(), np.arange(4))
    np.testing.assert_array_equal(get_identity_mat_batch(2).asnumpy(), [np.eye(2)] * 2)


def test_matrices_with_real_eigenvalues():
    m = new_matrix_with_real_eigvals_nd((3, 4, 4))
    eig = np.linalg.eigvals(m)
    assert m.shape == (3, 4, 4)
    assert np.abs(eig.imag).max() < 1e-8 and np.abs(eig.real).max() <= 10 + 1e-8
    s = new_sym_matrix_with_real_eigvals_nd((2, 3, 3))
    np.testing.assert_allclose(s, np.swapaxes(s, -1, -2), atol=1e-12)
    with pytest.raises(MXNetError, match="equal sizes"):
        new_matrix_with_real_eigvals_nd((3, 4))
