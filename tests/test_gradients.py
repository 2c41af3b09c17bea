"""Registry-wide gradient checks: every differentiable op, finite differences to order 3."""
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY
from mxlite.test_utils import check_grads
from gradspecs import all_specs

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
