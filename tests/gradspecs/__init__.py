"""The gradient spec table: one row per differentiable operator, split by family.

Each family module defines ``SPECS = {op_name: Spec(...)}``; ``all_specs()`` merges them.
tests/test_gradients.py checks every row to its order and fails for any differentiable
registered op without a row (or with order < 3 and no written reason).

Rows whose op gets a csr or row_sparse input are ``sparse.SPARSE_SPECS`` (keyed
``"op[variant]"``, several per op), outside ``all_specs()``: test_gradients.py checks them
on the CPU, where sparse storage lives. The other checkers of ``all_specs()`` trace graphs
(symbols, ONNX, the duality checks), run on a GPU or in bfloat16, where sparse arguments
run densely or do not exist, so a sparse row would repeat its dense row there.
"""
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence


@dataclass
class Spec:
    """How to check one op: input shapes, the sampling domain of each input (kept away from
    kinks and poles), the call, and the order (3 unless ``reason`` says why not)."""

    shapes: Sequence[tuple]
    call: Callable                       # call(nd, *inputs) -> NDArray or list
    domains: Sequence[tuple] = ((-1.0, 1.0),)
    order: int = 3
    reason: Optional[str] = None
    rtol: float = 1e-5
    atol: float = 1e-7
    sample: Optional[Callable] = field(default=None)   # sample(rng) -> list of NumPy inputs

    def domain(self, i):
        return self.domains[i] if i < len(self.domains) else self.domains[-1]


def all_specs():
    """{op name: Spec} merged over every module of this package."""
    specs = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        overlap = set(specs) & set(module.SPECS)
        assert not overlap, f"ops with two gradient specs: {sorted(overlap)}"
        specs.update(module.SPECS)
    return specs
