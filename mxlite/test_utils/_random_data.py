"""Random test data: NumPy arrays, NDArrays, shapes and well-conditioned matrices.

Everything draws from NumPy's global generator (``np.random``), so a test's
``np.random.seed`` (or MXNet's ``with_seed``) makes its data reproducible.
"""
import numpy as np

from ..base import MXNetError
from ..ndarray import array
from ._context import default_context, default_dtype

_SPARSE_LATER = ("sparse storage ({stype!r}) is not in mxlite yet: CSR and row_sparse "
                 "NDArrays come with issue 26")


def _sparse_unsupported(where, stype):
    return MXNetError(f"{where}: " + _SPARSE_LATER.format(stype=stype))


def random_arrays(*shapes):
    """One float32 array of standard normal values per shape (a lone array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """A list with one array of uniform values in [low, high) per shape."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` distinct elements of the sequence ``population``, in random order."""
    if not 0 <= k <= len(population):
        raise MXNetError(f"random_sample: k must be in [0, {len(population)}], got {k}")
    chosen = np.random.permutation(len(population))[:k]
    return [population[i] for i in chosen]


def _dims(highs, allow_zero_size):
    low = 0 if allow_zero_size else 1
    return tuple(int(np.random.randint(low, high + 1)) for high in highs)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-d shape, each size in [1, dim] ([0, dim] with ``allow_zero_size``)."""
    return _dims((dim0, dim1), allow_zero_size)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-d shape, each size in [1, dim] ([0, dim] with ``allow_zero_size``)."""
    return _dims((dim0, dim1, dim2), allow_zero_size)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-d shape, each size in [1, dim] ([0, dim] with ``allow_zero_size``)."""
    return _dims((dim,) * num_dim, allow_zero_size)


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random int64 point ``(x, y)`` with x in [x_low, x_high), y in [y_low, y_high)."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def assign_each(the_input, function):
    """``function`` applied to each element of ``the_input`` (float64 result; a copy when
    ``function`` is None)."""
    if function is None:
        return np.array(the_input)
    values = np.asarray(the_input)
    return np.array([function(v) for v in values.ravel()], dtype=np.float64).reshape(values.shape)


def assign_each2(input1, input2, function):
    """``function(a, b)`` over the paired elements of two same-shape arrays (float64)."""
    if function is None:
        return np.array(input1)
    a, b = np.asarray(input1), np.asarray(input2)
    if a.shape != b.shape:
        raise MXNetError(f"assign_each2: shapes differ: {a.shape} and {b.shape}")
    out = [function(x, y) for x, y in zip(a.ravel(), b.ravel())]
    return np.array(out, dtype=np.float64).reshape(a.shape)


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """An NDArray of standard normal values (float32 unless ``dtype``) on ``ctx``.

    ``modifier_func``, if given, is applied to every element (MXNet ignored it for dense
    arrays). Sparse ``stype`` values raise MXNetError until sparse storage exists.
    """
    if stype != "default":
        raise _sparse_unsupported("rand_ndarray", stype)
    values = random_arrays(tuple(shape))
    if modifier_func is not None:
        values = assign_each(values, modifier_func)
    dtype = default_dtype() if dtype is None else dtype
    return array(values, ctx=ctx or default_context(), dtype=dtype)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """MXNet's random CSR/row_sparse generator: raises MXNetError (no sparse storage yet)."""
    raise _sparse_unsupported("rand_sparse_ndarray", stype)


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random array of storage ``stype``; only 'default' (dense) exists in mxlite so far.

    A dense array is filled with ``data_init`` when given, else random normal values.
    """
    if stype != "default":
        raise _sparse_unsupported("create_sparse_array", stype)
    if data_init is None:
        return rand_ndarray(shape, dtype=dtype, modifier_func=modifier_func)
    values = np.full(tuple(shape), data_init, dtype=dtype or default_dtype())
    return array(assign_each(values, modifier_func), ctx=default_context(),
                 dtype=dtype or default_dtype())


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` allowing zero density (sparse: MXNetError until issue 26)."""
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def shuffle_csr_column_indices(csr):
    """Shuffle a CSR array's column indices: raises MXNetError (no sparse storage yet)."""
    raise _sparse_unsupported("shuffle_csr_column_indices", "csr")


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``(rows, columns)`` NDArray whose row ``i`` holds ``i`` (large-tensor tests)."""
    from .. import ndarray as nd
    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape((rows, 1)),
                           shape=(rows, columns))


def create_vector(size, dtype=np.int64):
    """The NDArray ``[0, 1, ..., size - 1]``."""
    from .. import ndarray as nd
    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """The ``size x size`` float32 identity NDArray."""
    return array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """Two stacked ``size x size`` identity matrices, shape ``(2, size, size)``."""
    return array(np.stack([np.eye(size, dtype=np.float32)] * 2))


def _householder(n):
    """A random orthogonal ``n x n`` matrix ``I - 2 v v^T`` (v a random unit vector)."""
    v = np.random.uniform(-1.0, 1.0, (n, 1))
    v /= max(np.linalg.norm(v), 1e-12)
    return np.eye(n) - 2.0 * (v @ v.T)


def new_matrix_with_real_eigvals_2d(n):
    """A random ``n x n`` matrix ``Q^-1 D Q`` with real eigenvalues ``diag(D)`` in [-10, 10].

    ``Q`` is orthogonal times a diagonal with entries of magnitude in [0.5, 1], so its
    condition number is at most 2 by construction (no rejection loop).
    """
    signs = np.where(np.random.uniform(size=n) < 0.5, -1.0, 1.0)
    q = _householder(n) @ np.diag(signs * np.random.uniform(0.5, 1.0, n))
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.linalg.inv(q) @ d @ q


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of ``new_matrix_with_real_eigvals_2d`` matrices of shape ``(..., n, n)``."""
    return _batched(new_matrix_with_real_eigvals_2d, shape)


def new_orthonormal_matrix_2d(n):
    """A random ``n x n`` orthonormal matrix (the Q of a random Gaussian matrix's QR)."""
    return np.linalg.qr(np.random.randn(n, n))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n x n`` matrix ``Q^T D Q`` with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of ``new_sym_matrix_with_real_eigvals_2d`` matrices of shape ``(..., n, n)``."""
    return _batched(new_sym_matrix_with_real_eigvals_2d, shape)


def _batched(make, shape):
    shape = tuple(shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise MXNetError(f"{make.__name__[:-3]}_nd: shape must end in two equal sizes, "
                         f"got {shape}")
    count = int(np.prod(shape[:-2], dtype=np.int64))
    return np.array([make(shape[-1]) for _ in range(count)]).reshape(shape)
