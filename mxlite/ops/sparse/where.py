"""Storage rule of ``where`` with a csr condition (MXNet's native case): ``y`` copied, then
``x`` at the condition's stored non-zero entries (a stored 0 is false, NaN true, as in the
dense kernel; a column a user's format repeats counts as the sum of its values). The result is dense; its gradient is ``where`` with the same csr condition,
so every order runs this rule."""
import numpy as np

from . import formats as F
from .rules import StorageRule, add_rule

CPU = "cpu"


def _matrix_condition(attrs, shapes):
    return len(shapes[0]) == 2 and tuple(shapes[0]) == tuple(shapes[1])


def _where_csr(rctx, values, attrs, shapes, dtypes):
    cond, x, y = values
    cond = F.checked(cond, "where", canonical=False)
    out = np.array(y, dtype=dtypes[0], copy=True)
    rows = np.repeat(np.arange(cond.shape[0], dtype=F.INDEX), np.diff(cond.indptr))
    cols, values = cond.indices, cond.data
    if not cond.valid:          # a user's format: a repeated column counts as its sum
        keys, where = np.unique(rows * cond.shape[1] + cols, return_inverse=True)
        values = np.zeros(keys.size, np.float64 if values.dtype.kind != "c" else values.dtype)
        np.add.at(values, where, cond.data)
        rows, cols = np.divmod(keys, cond.shape[1])
    true = values != 0
    out[rows[true], cols[true]] = x[rows[true], cols[true]]
    return [out]


add_rule("where", StorageRule((F.CSR_STYPE, F.DEFAULT, F.DEFAULT), (F.DEFAULT,),
                              {CPU: _where_csr}, when=_matrix_condition))
