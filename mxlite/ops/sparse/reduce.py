"""Storage rules of ``sum`` and ``mean`` of a csr matrix along one axis (0 or 1, or -1/-2):
a dense result, from the stored values alone (MXNet 1.9.1's; other reductions of sparse
arrays run on dense copies)."""
import numpy as np

from . import formats as F
from .rules import StorageRule, add_rule

CPU = "cpu"


def _one_axis(attrs, shapes):
    return attrs.axis is not None and len(attrs.axis) == 1 and not attrs.exclude \
        and attrs.axis[0] in (0, 1, -1, -2)


def _row_sums(x, dtype):
    return F.segment_sums(x.data.astype(dtype, copy=False), x.indptr)


def _col_sums(x, dtype):
    out = np.zeros(x.shape[1], dtype)
    np.add.at(out, x.indices, x.data.astype(dtype, copy=False))
    return out


def _reduce(mean):
    def compute(rctx, values, attrs, shapes, dtypes):
        x = F.checked(values[0], "sum", canonical=False)
        axis = attrs.axis[0] % 2
        out = _col_sums(x, dtypes[0]) if axis == 0 else _row_sums(x, dtypes[0])
        if mean:
            out = (out / x.shape[axis]).astype(dtypes[0], copy=False) if x.shape[axis] else \
                np.full(out.shape, np.nan, dtypes[0])
        return [out.reshape(shapes[0])]
    return compute


add_rule("sum", StorageRule((F.CSR_STYPE,), (F.DEFAULT,), {CPU: _reduce(False)},
                            when=_one_axis))
add_rule("mean", StorageRule((F.CSR_STYPE,), (F.DEFAULT,), {CPU: _reduce(True)},
                             when=_one_axis))
