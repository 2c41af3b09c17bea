"""csr and row_sparse arrays on a GPU: every storage rule of tests/sparse/rule_cases.py
(the one case list of the CPU's rule tests) run on the GPU against the same call on the CPU
(the oracle): the same storage type, identical indices, and values identical bit for bit
where the CPU's order of summation is defined (see mxlite/cuda/ops/sparse_dot.py for the
row sums it leaves to NumPy); plus conversions, copies, saving, and bad formats."""
import os
import sys
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ndarray._sparse_invoke import front_invoke, stype_of
from mxlite.ops.registry import REGISTRY

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "sparse"))
from rule_cases import CASES, CSR, DNS, RSP, UNARY, UPDATES, label  # noqa: E402
from test_sparse_rules import _inputs  # noqa: E402
from gpu_guard import refuse_cpu_kernels  # noqa: E402

pytestmark = pytest.mark.gpu

# calls whose CPU result NumPy sums in an order of its own (blocked/SIMD): equal to rounding
ROUNDING = {("sum", 1), ("mean", 1), ("_square_sum", 1)}


def _rounding_only(c):
    axis = c["attrs"].get("axis")
    return c["op"] in UNARY or (axis is not None and (c["op"], axis % 2) in ROUNDING)


def _parts(x):
    """(stype, [host arrays]) of an NDArray: its stored values and indices, or its data."""
    if stype_of(x) == DNS:
        return DNS, [x.asnumpy()]
    aux = [x.indices.asnumpy()] + ([x.indptr.asnumpy()] if stype_of(x) == CSR else [])
    return stype_of(x), [x.data.asnumpy()] + aux


def _same(got, want, exact):
    gs, gp = _parts(got)
    ws, wp = _parts(want)
    assert gs == ws
    for k, (g, w) in enumerate(zip(gp, wp)):
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g, w)
        if k and gs != DNS:
            np.testing.assert_array_equal(g, w)             # indices, indptr
        elif exact:
            assert g.tobytes() == w.tobytes(), (g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7, equal_nan=True)


def _on_gpu(x):
    return x.as_in_context(mx.gpu(0))


@pytest.mark.parametrize("c", CASES, ids=label)
def test_gpu_rule_equals_cpu_rule(c, rng, monkeypatch):
    op = REGISTRY[c["op"]]
    cpu_in = _inputs(c, rng)
    gpu_in = [_on_gpu(x) for x in cpu_in]
    with mx.cpu():
        want = front_invoke(op, list(cpu_in), dict(c["attrs"]))
    refuse_cpu_kernels(monkeypatch)
    from mxlite.cuda.ops.sparse_rules import FALLBACK
    with mx.gpu(0), warnings.catch_warnings():
        if c["op"] not in FALLBACK:
            warnings.simplefilter("error")          # a GPU kernel runs: no storage fallback
        else:
            warnings.simplefilter("ignore")
        got = front_invoke(op, list(gpu_in), dict(c["attrs"]))
    assert got.context == mx.gpu(0)
    if stype_of(got) != DNS:
        got.check_format()
    monkeypatch.undo()
    _same(got, want, exact=not _rounding_only(c))
    if c["op"] in UPDATES:                          # states updated in place alike
        for g, w in zip(gpu_in[2:], cpu_in[2:]):
            _same(g, w, exact=True)


@pytest.mark.parametrize("stype,shape", [(CSR, (7, 5)), (RSP, (6, 2, 3)), (RSP, (4,))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8", "bool"])
def test_conversions_and_copies_round_trip(stype, shape, dtype, rng):
    if stype == CSR and len(shape) != 2:
        return
    dense = rng.standard_normal(shape) * (rng.random(shape) < 0.4) * 3
    dense = dense.astype(dtype)
    cpu = mx.nd.array(dense, dtype=dtype).tostype(stype)
    gpu = mx.nd.array(dense, dtype=dtype, ctx=mx.gpu(0)).tostype(stype)
    _same(gpu, cpu, exact=True)
    np.testing.assert_array_equal(gpu.asnumpy(), dense)
    back = gpu.as_in_context(mx.cpu())
    assert back.context == mx.cpu() and back.stype == stype
    _same(back, cpu, exact=True)
    _same(cpu.copyto(mx.gpu(0)), gpu, exact=True)
    _same(gpu.tostype(DNS), cpu.tostype(DNS), exact=True)
    target = mx.nd.sparse.zeros(stype, shape, ctx=mx.gpu(0), dtype=dtype)
    cpu.copyto(target)
    _same(target, cpu, exact=True)


def test_creation_on_gpu_matches_cpu():
    g, c = mx.gpu(0), mx.cpu()
    args = (([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 2, 3]),)
    _same(mx.nd.sparse.csr_matrix(*args, shape=(3, 4), ctx=g),
          mx.nd.sparse.csr_matrix(*args, shape=(3, 4), ctx=c), True)
    rsp = (([[1, 2], [3, 4]], [1, 3]),)
    _same(mx.nd.sparse.row_sparse_array(*rsp, shape=(5, 2), ctx=g),
          mx.nd.sparse.row_sparse_array(*rsp, shape=(5, 2), ctx=c), True)
    for stype, shape in ((CSR, (3, 4)), (RSP, (5, 2))):
        z = mx.nd.sparse.zeros(stype, shape, ctx=g)
        assert z.context == g and z.stype == stype
        _same(z, mx.nd.sparse.zeros(stype, shape, ctx=c), True)
    m = mx.nd.sparse.csr_matrix(*args, shape=(3, 4), ctx=g)
    assert m.indptr.context == g and m.data.context == g
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(m, axis=1).asnumpy(), [2, 0, 1])


def test_save_of_a_gpu_array_writes_the_cpu_bytes(tmp_path):
    """The same bytes as the CPU array's, but for the device fields (as a dense array's)."""
    arrays = [mx.nd.sparse.csr_matrix(([1.5, 2.0], [3, 0], [0, 1, 2]), shape=(2, 5)),
              mx.nd.sparse.row_sparse_array(([[1, 2]], [4]), shape=(6, 2))]
    from mxlite.ndarray.io import _dumps
    cpu_bytes = _dumps(arrays)
    gpu_bytes = _dumps([a.as_in_context(mx.gpu(0)) for a in arrays])
    assert len(cpu_bytes) == len(gpu_bytes)
    differ = [i for i in range(len(cpu_bytes)) if cpu_bytes[i] != gpu_bytes[i]]
    assert len(differ) == len(arrays)           # the device type of each record: 2, not 1
    assert all(gpu_bytes[i] == 2 and cpu_bytes[i] == 1 for i in differ)
    path = str(tmp_path / "sparse.params")
    mx.nd.save(path, [a.as_in_context(mx.gpu(0)) for a in arrays])
    for got, want in zip(mx.nd.load(path), arrays):
        assert got.context == mx.gpu(0)
        _same(got, want, True)


BAD = [
    ("csr", ([1.0, 2.0], [0, 9], [0, 1, 2]), (2, 4)),       # a column out of range
    ("csr", ([1.0, 2.0], [2, 1], [0, 2, 2]), (2, 4)),       # unsorted in a row
    ("csr", ([1.0, 2.0], [0, 1], [0, 2, 1]), (2, 4)),       # indptr ends at the wrong place
    ("csr", ([1.0, 2.0], [0, 1], [0, 3, 2]), (2, 4)),       # indptr decreases
    ("row_sparse", ([[1.0], [2.0]], [1, 9]), (4, 1)),        # a row out of range
    ("row_sparse", ([[1.0], [2.0]], [3, 1]), (4, 1)),        # unsorted rows
]


@pytest.mark.parametrize("stype,parts,shape", BAD, ids=lambda v: str(v)[:20])
def test_bad_formats_raise_the_cpus_error(stype, parts, shape):
    make = mx.nd.sparse.csr_matrix if stype == "csr" else mx.nd.sparse.row_sparse_array
    errors = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        x = make(parts, shape=shape, ctx=ctx)
        msgs = []
        # (a conversion to dense takes unsorted columns, as MXNet's: it may pass)
        for call in (x.check_format, lambda: x.tostype("default").asnumpy(),
                     lambda: mx.nd.sparse.zeros(stype, shape, ctx=ctx) + x):
            try:
                got = call()
                msgs.append(("ok", None if got is None else got.tolist()))
            except MXNetError as e:
                msgs.append(("error", str(e)))
        assert msgs[0][0] == "error" and msgs[2][0] == "error"
        errors.append(msgs)
    assert errors[0] == errors[1]
