"""Registry-wide gradient checks: every differentiable op, finite differences to order 3."""
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY
from mxlite.test_utils import check_grads
from mxlite.ndarray import _sparse_invoke
from gradspecs import all_specs
from gradspecs.sparse import SPARSE_SPECS, sparse_op_name

SPECS = all_specs()


def _differentiable_ops():
    """Canonical names (aliases folded) of every op that declares an FGradient."""
    return sorted({op.name for op in REGISTRY.values() if op.differentiable})


def test_every_differentiable_op_has_a_spec():
    missing = [name for name in _differentiable_ops() if name not in SPECS]
    assert not missing, f"differentiable ops without a gradient spec row: {missing}"


# Ops that declare no gradient on purpose (differentiating them raises MXNetError), and why.
NO_GRADIENT = {
    "_backward_Custom": "a custom backward is Python code run as a graph kernel; as in MXNet "
                        "it has no gradient (mx.autograd differentiates a custom backward "
                        "to any order instead)",
    "_scatter_set_nd": "MXNet 1.9.1 registers no FGradient for it (NDArray's indexed "
                       "assignment kernel); mx.nd's own __setitem__ records _setitem instead",
    "batch_take": "MXNet 1.9.1 registers no FGradient for it (deprecated; pick is the "
                  "differentiable operator)",
}


def test_every_op_declares_a_gradient_or_says_it_has_none():
    undeclared = sorted({op.name for op in REGISTRY.values()
                         if op.gradient is None and op.name not in NO_GRADIENT})
    assert not undeclared, f"ops with no FGradient and no NON_DIFFERENTIABLE mark: {undeclared}"


def test_spec_rows_reach_order_three_or_say_why():
    low = [name for name, spec in SPECS.items() if spec.order < 3 and not spec.reason]
    assert not low, f"gradient specs below order 3 without a reason: {low}"
    stale = [name for name in SPECS if name not in REGISTRY]
    assert not stale, f"gradient specs for unregistered ops: {stale}"
    low = [name for name, spec in SPARSE_SPECS.items() if spec.order < 3 and not spec.reason]
    assert not low, f"sparse gradient specs below order 3 without a reason: {low}"
    stale = [name for name in SPARSE_SPECS if sparse_op_name(name) not in REGISTRY]
    assert not stale, f"sparse gradient specs for unregistered ops: {stale}"


def _inputs(spec, rng):
    if spec.sample is not None:
        return [mx.nd.array(a, dtype="float64") for a in spec.sample(rng)]
    return [mx.nd.array(rng.uniform(*spec.domain(i), size=shape), dtype="float64")
            for i, shape in enumerate(spec.shapes)]


@pytest.mark.parametrize("name", sorted(n for n, s in SPECS.items() if s.order > 0))
def test_gradient_matches_finite_differences(name, device):
    """Every row on every device (``device`` makes it current: inputs, head gradients and
    directions are created there)."""
    spec = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across runs
    check_grads(lambda *xs: spec.call(mx.nd, *xs), _inputs(spec, rng), order=spec.order,
                rtol=spec.rtol, atol=spec.atol, name=name, seed=1)


# ---- sparse inputs ---------------------------------------------------------------------------
# tests/gradspecs/sparse.py's SPARSE_SPECS: rows whose op gets a csr or row_sparse input.
# They run on the CPU alone: sparse storage lives there (docs/guide/sparse.rst).

def _sparse_differentiable_ops():
    """Differentiable ops with a storage rule that takes a sparse input (or any: ``*``), and
    those that give an input a sparse gradient (``grad_stypes``: Embedding's sparse_grad, dot)."""
    names = set()
    for op in REGISTRY.values():
        takes_sparse = any(s != "default" for rule in op.storage for s in rule.inputs)
        if op.differentiable and (takes_sparse or op.grad_stypes is not None):
            names.add(op.name)
    return sorted(names)


def test_every_sparse_op_has_a_sparse_row():
    covered = {sparse_op_name(key) for key in SPARSE_SPECS}
    missing = [name for name in _sparse_differentiable_ops() if name not in covered]
    assert not missing, f"differentiable sparse ops without a row in SPARSE_SPECS: {missing}"


@pytest.mark.parametrize("name", sorted(n for n, s in SPARSE_SPECS.items() if s.order > 0))
def test_sparse_gradient_matches_finite_differences(name):
    spec = SPARSE_SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    with mx.cpu():
        check_grads(lambda *xs: spec.call(mx.nd, *xs), _inputs(spec, rng), order=spec.order,
                    rtol=spec.rtol, atol=spec.atol, name=name, seed=1)


# The op whose storage rule a row exercises, where it is not the row's op: Embedding's
# sparse weight gradient is made by _take_grad's rule in the backward.
_RULE_OP = {"Embedding": "_take_grad"}


@pytest.mark.parametrize("name", sorted(SPARSE_SPECS))
def test_sparse_row_runs_the_storage_rule(name, monkeypatch):
    """A row checks the op's sparse kernels, not its dense fallback: some call of the op
    (forward or, with create_graph, its gradient graph) is taken by a storage rule with a
    sparse input or output."""
    spec, op_name = SPARSE_SPECS[name], sparse_op_name(name)
    calls, find = [], _sparse_invoke.find

    def spy(op, stypes, attrs, shapes):
        rule = find(op, stypes, attrs, shapes)
        if rule is not None:
            calls.append((op.name, stypes, rule.output_stypes(attrs, stypes)))
        return rule

    monkeypatch.setattr(_sparse_invoke, "find", spy)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = _inputs(spec, rng)
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        outs = spec.call(mx.nd, *xs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    mx.autograd.grad(outs, xs, head_grads=[mx.nd.ones(o.shape, dtype="float64") for o in outs],
                     create_graph=True)
    want = REGISTRY[_RULE_OP.get(op_name, op_name)].name
    sparse = [c for c in calls if c[0] == want and set(c[1] + c[2]) - {"default"}]
    assert sparse, f"{name}: no call of {want} ran a storage rule ({calls})"


def test_a_wrong_sparse_kernel_fails_its_row(monkeypatch):
    """The sparse rows can fail: one stored row of the row_sparse result of dot(csr.T,
    dense), the kernel of dot(csr, w)'s gradient of w, made 1% too large."""
    from mxlite.ops.sparse import dot as sparse_dot
    right = sparse_dot.csr_t_dense

    def wrong(x, rhs):
        out = right(x, rhs)
        out.data[0] *= 1.01
        return out

    monkeypatch.setattr(sparse_dot, "csr_t_dense", wrong)
    spec = SPARSE_SPECS["dot[csr const,default]"]
    with pytest.raises(AssertionError, match="order 1 gradient is wrong"):
        check_grads(lambda *xs: spec.call(mx.nd, *xs), _inputs(spec, np.random.default_rng(0)),
                    order=spec.order, rtol=spec.rtol, atol=spec.atol, name="wrong dot")
