"""``dot`` with a csr operand against SciPy, across dtypes, densities and transposes."""
import numpy as np
import pytest
import scipy.sparse as spsp

import mxlite as mx


def random_csr(rng, shape, density, dtype):
    m = spsp.random(*shape, density=density, format="csr", dtype=np.float64,
                    random_state=np.random.RandomState(int(rng.integers(1 << 30))))
    if np.dtype(dtype).kind in "iu":
        m.data = np.round(m.data * 10) + 1
    return m.astype(dtype)


def tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.3, 1.0])
def test_csr_dense_and_transposed(rng, dtype, density):
    s = random_csr(rng, (37, 53), density, dtype)
    rhs = (rng.standard_normal((53, 9)) * 4).astype(dtype)
    lhs_t = (rng.standard_normal((37, 9)) * 4).astype(dtype)
    a = mx.nd.sparse.csr_matrix(s)
    got = mx.nd.dot(a, mx.nd.array(rhs, dtype=dtype))
    assert got.stype == "default" and got.dtype == dtype
    np.testing.assert_allclose(got.asnumpy(), s @ rhs, **tolerance(dtype))
    got = mx.nd.dot(a, mx.nd.array(rhs.T, dtype=dtype), transpose_b=True)
    np.testing.assert_allclose(got.asnumpy(), s @ rhs, **tolerance(dtype))
    got = mx.nd.dot(a, mx.nd.array(lhs_t, dtype=dtype), transpose_a=True)
    assert got.stype == "row_sparse"
    got.check_format()
    np.testing.assert_allclose(got.asnumpy(), s.T @ lhs_t, **tolerance(dtype))
    # a row for each column of s that stores a value, no more
    np.testing.assert_array_equal(got.indices.asnumpy(), np.unique(s.indices))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dense_csr(rng, dtype):
    s = random_csr(rng, (23, 31), 0.1, dtype)
    lhs = (rng.standard_normal((6, 23)) * 4).astype(dtype)
    got = mx.nd.dot(mx.nd.array(lhs, dtype=dtype), mx.nd.sparse.csr_matrix(s))
    assert got.stype == "csr"
    got.check_format()
    np.testing.assert_allclose(got.asnumpy(), lhs @ s, **tolerance(dtype))
    st = random_csr(rng, (31, 23), 0.1, dtype)
    got = mx.nd.dot(mx.nd.array(lhs, dtype=dtype), mx.nd.sparse.csr_matrix(st),
                    transpose_b=True)
    np.testing.assert_allclose(got.asnumpy(), lhs @ st.T, **tolerance(dtype))


def test_each_row_sums_in_stored_order(rng):
    """One thread per output row, terms added in stored order: bit-identical to a sequential
    float32 sum, whatever the number of threads."""
    s = random_csr(rng, (300, 200), 0.05, np.float32)
    rhs = rng.standard_normal((200, 7)).astype(np.float32)
    want = np.zeros((300, 7), np.float32)
    for i in range(300):
        for j in range(s.indptr[i], s.indptr[i + 1]):
            want[i] += s.data[j] * rhs[s.indices[j]]
    got = mx.nd.dot(mx.nd.sparse.csr_matrix(s), mx.nd.array(rhs)).asnumpy()
    np.testing.assert_array_equal(got, want)


def test_structural_zeros_do_not_meet_the_dense_operand():
    a = mx.nd.sparse.csr_matrix(([2.0], [0], [0, 1, 1]), shape=(2, 2))
    rhs = mx.nd.array([[1.0, 1.0], [np.inf, np.nan]])
    np.testing.assert_array_equal(mx.nd.dot(a, rhs).asnumpy(), [[2, 2], [0, 0]])


def test_shape_mismatch_is_a_clear_error():
    a = mx.nd.sparse.zeros("csr", (3, 4))
    with pytest.raises(mx.MXNetError, match="dot.*not aligned"):
        mx.nd.dot(a, mx.nd.ones((5, 2)))
