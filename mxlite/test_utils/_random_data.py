"""Random test data: NumPy arrays, NDArrays, shapes and well-conditioned matrices.

Everything draws from NumPy's global generator (``np.random``), so a test's
``np.random.seed`` (or MXNet's ``with_seed``) makes its data reproducible.
"""
import numpy as np

from ..base import MXNetError
from ..ndarray import array
from ._context import default_context, default_dtype


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
    """A random NDArray of storage ``stype`` (float32 unless ``dtype``) on ``ctx``: standard
    normal values for 'default' (``modifier_func``, if given, applied to every element,
    which MXNet ignored for dense arrays); for 'csr' and 'row_sparse' the array of
    ``rand_sparse_ndarray``."""
    if stype != "default":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                     distribution=distribution, modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices, ctx=ctx)
        return arr
    values = random_arrays(tuple(shape))
    if modifier_func is not None:
        values = assign_each(values, modifier_func)
    dtype = default_dtype() if dtype is None else dtype
    return array(values, ctx=ctx or default_context(), dtype=dtype)


def _uniform_csr(shape, density, dtype, data_init):
    """About ``density`` of the positions stored, chosen uniformly, values in [0, 1)."""
    rows, cols = shape
    nnz = int(round(rows * cols * density))
    flat = np.sort(np.random.choice(rows * cols, size=nnz, replace=False)) if nnz else \
        np.zeros(0, np.int64)
    values = np.random.rand(nnz).astype(dtype)
    if data_init is not None:
        values.fill(data_init)
    r, c = np.divmod(flat, cols) if cols else (flat, flat)
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    return values, c.astype(np.int64), indptr


def _powerlaw_csr(shape, density, dtype):
    """Row i stores about twice as many values as row i - 1 (each row at least one), up to
    ``density`` of the positions; MXNetError when the shape cannot hold that."""
    rows, cols = shape
    budget = int(rows * cols * density)
    if budget < rows:
        raise MXNetError(f"rand_sparse_ndarray: a powerlaw csr of shape {shape} needs a "
                         f"density of at least {rows / (rows * cols):.3g}, got {density}")
    dense = np.zeros(shape, dtype)
    dense[:, 0] = 1 + np.random.uniform(0.001, 2, rows)
    budget -= rows
    width = 2
    for i in range(rows):
        extra = min(cols, width) - 1
        take = min(extra, budget)
        dense[i, 1:1 + take] = 1 + np.random.uniform(0.001, 2, take)
        budget -= take
        width *= 2
        if budget <= 0:
            break
    return dense


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random CSRNDArray or RowSparseNDArray and its parts (MXNet's test helper).

    ``density`` (default: random in [0, 1)) is the share of stored positions (csr) or
    rows (row_sparse; or the rows ``rsp_indices``); values are uniform in [0, 1) unless
    ``data_init`` (a constant) or ``modifier_func`` (applied to each value). csr takes
    ``distribution`` 'uniform' (default) or 'powerlaw' (row i stores about twice row
    i - 1's values) and ``shuffle_csr_indices`` (columns of each row in random order, a
    valid but unsorted csr matrix). Returns ``(array, (indptr, indices, data))`` for csr
    and ``(array, (data, indices))`` for row_sparse, as MXNet's.
    """
    from ..ndarray import sparse
    ctx = ctx or default_context()
    density = np.random.rand() if density is None else density
    dtype = np.dtype(default_dtype() if dtype is None else dtype)
    distribution = distribution or "uniform"
    if not 0 <= density <= 1:
        raise MXNetError(f"rand_sparse_ndarray: density must be in [0, 1], got {density}")
    if stype == "row_sparse":
        if distribution != "uniform":
            raise MXNetError(f"rand_sparse_ndarray: row_sparse takes the 'uniform' "
                             f"distribution, got {distribution!r}")
        indices = (np.asarray(rsp_indices, np.int64) if rsp_indices is not None
                   else np.flatnonzero(np.random.rand(shape[0]) < density).astype(np.int64))
        if indices.shape[0] == 0:
            return (sparse.zeros("row_sparse", shape, ctx=ctx, dtype=dtype),
                    (np.array([], dtype=dtype), np.array([], dtype=np.int64)))
        values = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            values.fill(data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func).astype(dtype)
        arr = sparse.row_sparse_array((values, indices), shape=shape, ctx=ctx, dtype=dtype)
        return arr, (values, indices)
    if stype != "csr":
        raise MXNetError(f"rand_sparse_ndarray: unknown storage type {stype!r}")
    if len(shape) != 2:
        raise MXNetError(f"rand_sparse_ndarray: csr is 2-D, got shape {tuple(shape)}")
    if distribution == "powerlaw":
        arr = sparse.csr_matrix(_powerlaw_csr(tuple(shape), density, dtype), ctx=ctx)
    elif distribution == "uniform":
        values, indices, indptr = _uniform_csr(tuple(shape), density, dtype, data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func).astype(dtype)
        if shuffle_csr_indices:
            _shuffle_rows(indices, indptr)
        arr = sparse.csr_matrix((values, indices, indptr), shape=tuple(shape), ctx=ctx,
                                dtype=dtype)
    else:
        raise MXNetError(f"rand_sparse_ndarray: unknown distribution {distribution!r}")
    return arr, (arr.indptr, arr.indices, arr.data)


def _shuffle_rows(indices, indptr):
    for i in range(indptr.shape[0] - 1):
        np.random.shuffle(indices[indptr[i]:indptr[i + 1]])


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random array of storage ``stype`` (``rand_sparse_ndarray``'s, with
    ``rsp_indices`` sorted first); a dense one is filled with ``data_init`` when given,
    else random normal values."""
    if stype == "row_sparse":
        indices = np.sort(np.asarray(rsp_indices)) if rsp_indices is not None else None
        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   data_init=data_init, rsp_indices=indices,
                                   modifier_func=modifier_func)[0]
    if stype == "csr":
        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   data_init=data_init, modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices)[0]
    if data_init is None:
        return rand_ndarray(shape, dtype=dtype, modifier_func=modifier_func)
    values = np.full(tuple(shape), data_init, dtype=dtype or default_dtype())
    return array(assign_each(values, modifier_func), ctx=default_context(),
                 dtype=dtype or default_dtype())


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` allowing zero density."""
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def shuffle_csr_column_indices(csr):
    """Put the column indices of each row of ``csr`` (a SciPy csr matrix, changed in
    place) in random order."""
    _shuffle_rows(csr.indices, csr.indptr)


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
