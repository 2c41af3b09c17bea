"""Gradient specs of the operators of sparse storage.

``SPECS``: rows on dense inputs (one per op, as every family's). ``SPARSE_SPECS``: rows
whose op receives a csr or row_sparse input and runs its storage rule, keyed
``"op[variant]"`` (``sparse_op_name`` reads the op back).

How a row makes a sparse input: a spec's function takes dense float64 variables, as every
row's, and turns one into a sparse array of a *fixed structure* (``_csr``/``_rsp``):
``cast_storage`` of the dense variable (its values are never exactly 0, so every entry is
stored), times a constant sparse array of ones on the structure (``elemwise_mul`` of two
sparse arrays keeps the common entries). The row is so a function of the stored values:
a finite difference moves them but never the structure (perturbing a dense entry that
``tostype`` would drop changes the sparsity instead), and the entries off the structure
get a zero gradient in both the analytic and the numeric derivative. Every row thereby
also differentiates ``cast_storage`` and the sparse ``elemwise_mul`` to order 3. Values
are drawn away from 0 and from each op's kinks and poles (``_draw``).

So the rows check the gradient at the stored entries. mxlite differentiates a sparse array
as the matrix it holds (the gradient of ``dot(csr, w)`` w.r.t. the csr operand is the
dense ``head @ w.T``; MXNet 1.9.1's sparse dot refuses a csr-stored one; off the structure
it is the dense function's derivative, as MXNet's dense fallback gives for ``sqrt``); the
rows see that part only through the structure's mask, where it is multiplied by 0.
"""
import numpy as np

from . import Spec

ROWS = np.array([2, 0, 2], dtype=np.float64)       # a repeat: kept once

SPECS = {
    "_sparse_retain": Spec([(4, 3)], lambda nd, x: nd.sparse.retain(
        x * x, nd.array(ROWS, dtype="float64"))),
    "_square_sum": Spec([(3, 4)], lambda nd, x: nd._internal._square_sum(x * x, axis=1)),
    # the scatter ops on dense inputs: the plain op's values and gradient
    "_scatter_plus_scalar": Spec([(3, 4)], lambda nd, x: nd.square(
        nd._internal._scatter_plus_scalar(x, scalar=2.5))),
    "_scatter_minus_scalar": Spec([(3, 4)], lambda nd, x: nd.square(
        nd._internal._scatter_minus_scalar(x, scalar=2.5))),
    "_scatter_elemwise_div": Spec([(3, 4), (3, 4)], lambda nd, a, b:
                                  nd._internal._scatter_elemwise_div(a, b),
                                  [(-1.0, 1.0), (0.5, 1.5)]),
}


# ---- fixed structures ----------------------------------------------------------------------
# csr (4, 5): an empty row (1), a row of one value (2), repeated and unused columns.
CSR_MASK = np.array([[1, 0, 1, 1, 0],
                     [0, 0, 0, 0, 0],
                     [0, 0, 0, 1, 0],
                     [1, 1, 0, 1, 0]], dtype=np.float64)
# another csr structure of the same shape, partly overlapping (binary ops: union, common)
CSR_MASK2 = np.array([[0, 1, 1, 0, 0],
                      [1, 0, 0, 0, 1],
                      [0, 0, 0, 1, 0],
                      [0, 0, 0, 0, 0]], dtype=np.float64)
# row_sparse (5, 3): rows 0, 2, 3 stored; and rows 2, 4 for a second operand
RSP_ROWS, RSP_ROWS2 = (0, 2, 3), (2, 4)
RSP_IDS = np.array([[2, 1, 3, 2], [0, 4, 2, 0]], dtype=np.float64)  # rows of a (5, 3) table


def _rsp_mask(rows, shape=(5, 3)):
    mask = np.zeros(shape)
    mask[list(rows)] = 1.0
    return mask


def _sparse(nd, x, stype, mask):
    """``x``'s values on the structure of ``mask`` (a NumPy 0/1 array), as a ``stype``
    array: cast_storage of ``x`` times a constant ``stype`` array of ones there."""
    ones = nd.array(mask, dtype="float64").tostype(stype)
    return nd.elemwise_mul(nd.sparse.cast_storage(x, stype=stype), ones)


def _csr(nd, x, mask=CSR_MASK):
    return _sparse(nd, x, "csr", mask)


def _rsp(nd, x, rows=RSP_ROWS):
    return _sparse(nd, x, "row_sparse", _rsp_mask(rows, x.shape))


def _draw(*shapes, low=0.2, high=1.0, signed=True):
    """sample(rng) of inputs of ``shapes``: magnitudes in [low, high] (never 0 or near it),
    with random signs when ``signed``."""
    def sample(rng):
        return [rng.uniform(low, high, size=s) * (rng.choice([-1.0, 1.0], size=s) if signed
                                                   else 1.0) for s in shapes]
    return sample


# ---- unary functions computed on the stored values -------------------------------------------
# op -> (call(nd, s) of the sparse input s, _draw's keywords for its values)
_SIGNED = {"high": 0.9}
_UNARY = {
    "abs": (lambda nd, s: nd.abs(s), _SIGNED),
    "arcsin": (lambda nd, s: nd.arcsin(s), _SIGNED),
    "arcsinh": (lambda nd, s: nd.arcsinh(s), _SIGNED),
    "arctan": (lambda nd, s: nd.arctan(s), _SIGNED),
    "arctanh": (lambda nd, s: nd.arctanh(s), _SIGNED),
    "cbrt": (lambda nd, s: nd.cbrt(s), _SIGNED),
    "degrees": (lambda nd, s: nd.degrees(s), _SIGNED),
    "expm1": (lambda nd, s: nd.expm1(s), _SIGNED),
    "log1p": (lambda nd, s: nd.log1p(s), _SIGNED),
    "negative": (lambda nd, s: nd.negative(s), _SIGNED),
    "radians": (lambda nd, s: nd.radians(s), _SIGNED),
    "relu": (lambda nd, s: nd.relu(s), _SIGNED),
    "sin": (lambda nd, s: nd.sin(s), _SIGNED),
    "sinh": (lambda nd, s: nd.sinh(s), _SIGNED),
    "sqrt": (lambda nd, s: nd.sqrt(s), {"signed": False}),
    "square": (lambda nd, s: nd.square(s), _SIGNED),
    "tan": (lambda nd, s: nd.tan(s), _SIGNED),
    "tanh": (lambda nd, s: nd.tanh(s), _SIGNED),
    "_copy": (lambda nd, s: nd.identity(s), _SIGNED),
    "cast": (lambda nd, s: nd.square(nd.cast(s, dtype="float64")), _SIGNED),
    "clip": (lambda nd, s: nd.clip(s, -0.5, 0.5), {"high": 0.4}),
    "_mul_scalar": (lambda nd, s: s * 1.5, _SIGNED),
    "_div_scalar": (lambda nd, s: s / 1.5, _SIGNED),
    "_plus_scalar": (lambda nd, s: nd.square(s + 0), _SIGNED),
    "_minus_scalar": (lambda nd, s: nd.square(s - 0), _SIGNED),
    "_scatter_plus_scalar": (lambda nd, s: nd.square(
        nd._internal._scatter_plus_scalar(s, scalar=2.5)), _SIGNED),
    "_scatter_minus_scalar": (lambda nd, s: nd.square(
        nd._internal._scatter_minus_scalar(s, scalar=2.5)), _SIGNED),
}


def _unary_rows():
    rows = {}
    for op, (call, values) in _UNARY.items():
        rows[f"{op}[csr]"] = Spec([(4, 5)], lambda nd, x, c=call: c(nd, _csr(nd, x)),
                                  sample=_draw((4, 5), **values))
        rows[f"{op}[row_sparse]"] = Spec([(5, 3)], lambda nd, x, c=call: c(nd, _rsp(nd, x)),
                                         sample=_draw((5, 3), **values))
    return rows


# ---- the other ops --------------------------------------------------------------------------
IDS = np.array([[3, 0], [3, 5]], dtype=np.float64)     # a repeated row, unused rows


def _nd64(nd, a):
    return nd.array(a, dtype="float64")


_OTHER = {
    # dot: the csr operand's values and the dense operand
    "dot[csr,default]": Spec([(4, 5), (5, 3)], lambda nd, x, b: nd.dot(_csr(nd, x), b),
                             sample=_draw((4, 5), (5, 3))),
    "dot[csr,default.T]": Spec([(4, 5), (3, 5)], lambda nd, x, b: nd.dot(
        _csr(nd, x), b, transpose_b=True), sample=_draw((4, 5), (3, 5))),
    "dot[csr.T,default]": Spec([(4, 5), (4, 3)], lambda nd, x, b: nd.dot(
        _csr(nd, x), b, transpose_a=True), sample=_draw((4, 5), (4, 3))),
    "dot[csr,row_sparse]": Spec([(4, 5), (5, 3)], lambda nd, x, b: nd.dot(
        _csr(nd, x), _rsp(nd, b)), sample=_draw((4, 5), (5, 3))),
    "dot[default,csr]": Spec([(3, 4), (4, 5)], lambda nd, a, x: nd.dot(a, _csr(nd, x)),
                             sample=_draw((3, 4), (4, 5))),
    "dot[default.T,csr]": Spec([(4, 3), (4, 5)], lambda nd, a, x: nd.dot(
        a, _csr(nd, x), transpose_a=True), sample=_draw((4, 3), (4, 5))),
    # dot(csr, dense) with the csr operand constant: the rhs gradient alone (row_sparse)
    "dot[csr const,default]": Spec([(5, 3)], lambda nd, b: nd.dot(
        _nd64(nd, CSR_MASK * np.arange(1, 21).reshape(4, 5) / 10).tostype("csr"), b)),
    # element-wise binary ops of two structures
    "sum[csr,axis=0]": Spec([(4, 5)], lambda nd, x: nd.sum(_csr(nd, x), axis=0),
                            sample=_draw((4, 5))),
    "sum[csr,axis=1]": Spec([(4, 5)], lambda nd, x: nd.square(nd.sum(_csr(nd, x), axis=1)),
                            sample=_draw((4, 5))),
    "mean[csr,axis=0]": Spec([(4, 5)], lambda nd, x: nd.square(nd.mean(_csr(nd, x), axis=0)),
                             sample=_draw((4, 5))),
    "mean[csr,axis=1]": Spec([(4, 5)], lambda nd, x: nd.mean(_csr(nd, x), axis=1),
                             sample=_draw((4, 5))),
    "slice[csr]": Spec([(4, 5)], lambda nd, x: nd.square(nd.slice(
        _csr(nd, x), begin=(1,), end=(4,))), sample=_draw((4, 5))),
    "take[csr]": Spec([(4, 5)], lambda nd, x: nd.square(nd.take(
        _csr(nd, x), _nd64(nd, [3, 0, 3]))), sample=_draw((4, 5))),
    "_sparse_retain[row_sparse]": Spec([(5, 3)], lambda nd, x: nd.square(nd.sparse.retain(
        _rsp(nd, x), _nd64(nd, [3, 1, 0]))), sample=_draw((5, 3))),
    "_square_sum[row_sparse,axis=1]": Spec([(5, 3)], lambda nd, x: nd._internal._square_sum(
        _rsp(nd, x), axis=1), sample=_draw((5, 3))),
    "_square_sum[row_sparse,axis=1,keepdims]": Spec(
        [(5, 3)], lambda nd, x: nd._internal._square_sum(_rsp(nd, x), axis=1, keepdims=True),
        sample=_draw((5, 3))),
    "add_n[row_sparse]": Spec([(5, 3), (5, 3)], lambda nd, x, y: nd.square(nd.add_n(
        _rsp(nd, x), _rsp(nd, y, RSP_ROWS2), _rsp(nd, x * y))), sample=_draw((5, 3), (5, 3))),
    "broadcast_mul[csr,row]": Spec([(4, 5), (1, 5)], lambda nd, x, v: nd.broadcast_mul(
        _csr(nd, x), v), sample=_draw((4, 5), (1, 5))),
    "broadcast_mul[csr,column]": Spec([(4, 5), (4, 1)], lambda nd, x, v: nd.broadcast_mul(
        _csr(nd, x), v), sample=_draw((4, 5), (4, 1))),
    "broadcast_div[csr,row]": Spec([(4, 5), (1, 5)], lambda nd, x, v: nd.broadcast_div(
        _csr(nd, x), v), sample=_draw((4, 5), (1, 5))),
    "broadcast_div[csr,column]": Spec([(4, 5), (4, 1)], lambda nd, x, v: nd.broadcast_div(
        _csr(nd, x), v), sample=_draw((4, 5), (4, 1))),
    # cast_storage both ways (csr to row_sparse is no conversion of MXNet 1.9.1's either)
    "cast_storage[default->csr]": Spec([(4, 5)], lambda nd, x: nd.sparse.cast_storage(
        x * _nd64(nd, CSR_MASK), stype="csr"), sample=_draw((4, 5))),
    "cast_storage[default->row_sparse]": Spec([(5, 3)], lambda nd, x: nd.sparse.cast_storage(
        x * _nd64(nd, _rsp_mask(RSP_ROWS)), stype="row_sparse"), sample=_draw((5, 3))),
    "cast_storage[csr->default]": Spec([(4, 5)], lambda nd, x: nd.square(
        nd.sparse.cast_storage(_csr(nd, x), stype="default")), sample=_draw((4, 5))),
    "cast_storage[row_sparse->default]": Spec([(5, 3)], lambda nd, x: nd.square(
        nd.sparse.cast_storage(_rsp(nd, x), stype="default")), sample=_draw((5, 3))),
    # Embedding(sparse_grad=True): the weight's gradient is row_sparse
    "Embedding[sparse_grad]": Spec([(6, 3)], lambda nd, w: nd.Embedding(
        _nd64(nd, IDS), w, input_dim=6, output_dim=3, dtype="float64", sparse_grad=True)),
    "Embedding[sparse_grad,square]": Spec([(6, 3)], lambda nd, w: nd.Embedding(
        _nd64(nd, IDS), nd.square(w), input_dim=6, output_dim=3, dtype="float64", sparse_grad=True)),
    # a row_sparse weight (a Gluon row_sparse parameter's pulled rows): rows 0, 2, 3 stored,
    # ids reading stored rows (2 twice) and rows not stored (1, 4)
    "Embedding[row_sparse weight]": Spec([(5, 3)], lambda nd, w: nd.Embedding(
        _nd64(nd, RSP_IDS), _rsp(nd, w), input_dim=5, output_dim=3, dtype="float64",
        sparse_grad=True), sample=_draw((5, 3))),
    "_contrib_SparseEmbedding[row_sparse weight]": Spec([(5, 3)], lambda nd, w: nd.square(
        nd.contrib.SparseEmbedding(_nd64(nd, RSP_IDS), _rsp(nd, w), input_dim=5, output_dim=3,
                                   dtype="float64")), sample=_draw((5, 3))),
    # where with a csr condition: x where it stores a non-zero (CSR_MASK's entries), else y
    "where[csr,default,default]": Spec([(4, 5), (4, 5), (4, 5)], lambda nd, c, x, y: nd.where(
        _csr(nd, c), x * x, y * x), sample=_draw((4, 5), (4, 5), (4, 5))),
    # Embedding's weight gradient with a row_sparse weight giving the shape only
    "_take_grad[default,default,row_sparse]": Spec([(4, 3), (5, 3)], lambda nd, g, w: nd.square(
        nd._internal._take_grad(g, _nd64(nd, RSP_IDS[0]), _rsp(nd, w), axis=0, mode="raise",
                                sparse_grad=True)), sample=_draw((4, 3), (5, 3))),
    # _scatter_elemwise_div of a row_sparse lhs: its rows divided (a row_sparse rhs stores
    # every row: its gradient w.r.t. lhs, head / rhs, is the dense formula's)
    "_scatter_elemwise_div[row_sparse,default]": Spec(
        [(5, 3), (5, 3)], lambda nd, x, b: nd._internal._scatter_elemwise_div(_rsp(nd, x), b),
        sample=_draw((5, 3), (5, 3), low=0.5)),
    "_scatter_elemwise_div[row_sparse,row_sparse]": Spec(
        [(5, 3), (5, 3)], lambda nd, x, b: nd._internal._scatter_elemwise_div(
            _rsp(nd, x), _rsp(nd, b, range(5))), sample=_draw((5, 3), (5, 3), low=0.5)),
    # quadratic of csr with c = 0 keeps the structure
    "_contrib_quadratic[csr]": Spec([(4, 5)], lambda nd, x: nd.contrib.quadratic(
        _csr(nd, x), a=2.0, b=-1.0), sample=_draw((4, 5))),
}

for _op in ("elemwise_add", "elemwise_sub", "elemwise_mul"):
    _OTHER[f"{_op}[csr,csr]"] = Spec(
        [(4, 5), (4, 5)], lambda nd, x, y, o=_op: getattr(nd, o)(
            _csr(nd, x), _csr(nd, y, CSR_MASK2)), sample=_draw((4, 5), (4, 5)))
    _OTHER[f"{_op}[row_sparse,row_sparse]"] = Spec(
        [(5, 3), (5, 3)], lambda nd, x, y, o=_op: getattr(nd, o)(
            _rsp(nd, x), _rsp(nd, y, RSP_ROWS2)), sample=_draw((5, 3), (5, 3)))
    _OTHER[f"{_op}[csr,default]"] = Spec(
        [(4, 5), (4, 5)], lambda nd, x, y, o=_op: getattr(nd, o)(_csr(nd, x), y),
        sample=_draw((4, 5), (4, 5)))
    _OTHER[f"{_op}[default,row_sparse]"] = Spec(
        [(5, 3), (5, 3)], lambda nd, x, y, o=_op: getattr(nd, o)(x, _rsp(nd, y)),
        sample=_draw((5, 3), (5, 3)))

# A gradient defined rather than derived: finite differences cannot see it (as their dense
# rows); tests/sparse/test_sparse_gradients.py checks them on sparse inputs against it.
_DEFINED = "its gradient is defined (zero, the head gradient, grad_scale), not the " \
           "derivative of its output; tests/sparse/test_sparse_gradients.py checks it on " \
           "csr and row_sparse inputs"
for _op, _call in (("BlockGrad", lambda nd, s: nd.BlockGrad(s)),
                   ("MakeLoss", lambda nd, s: nd.MakeLoss(s)),
                   ("_contrib_round_ste", lambda nd, s: nd.contrib.round_ste(s)),
                   ("_contrib_sign_ste", lambda nd, s: nd.contrib.sign_ste(s))):
    _OTHER[f"{_op}[csr]"] = Spec([(4, 5)], lambda nd, x, c=_call: c(nd, _csr(nd, x)),
                                 order=0, reason=_DEFINED)

SPARSE_SPECS = {**_unary_rows(), **_OTHER}


def sparse_op_name(key):
    """The registered op a ``SPARSE_SPECS`` key checks: ``"dot[csr,default]"`` -> ``"dot"``."""
    return key.split("[", 1)[0]
