"""Registry-wide GPU coverage: every registered operator has a GPU compute function, or an
explicit exemption in mxlite.cuda.ops.EXEMPT that says why."""
import mxlite  # noqa: F401  (registers every operator and its GPU compute functions)
from mxlite.cuda.ops import EXEMPT
from mxlite.ops.registry import REGISTRY


def test_every_operator_has_a_gpu_kernel_or_a_documented_exemption():
    missing = sorted({op.name for op in REGISTRY.values()
                      if "gpu" not in op.compute and op.name not in EXEMPT})
    assert not missing, f"{len(missing)} operators with no GPU kernel and no exemption: {missing}"


def test_exemptions_are_real_and_explained():
    for name, why in EXEMPT.items():
        assert name in REGISTRY, f"EXEMPT names unknown operator {name}"
        assert "gpu" not in REGISTRY[name].compute, f"{name} is exempt but has a GPU kernel"
        assert len(why) > 20, f"{name}: say why it has no GPU kernel"


def test_coverage_report():
    """The tally, printed with -s: GPU kernels, device-generic, exempt."""
    ops = {op.name: op for op in REGISTRY.values()}
    generic = [n for n, op in ops.items() if op.compute.get("gpu") is op.compute.get("cpu")]
    with_gpu = [n for n, op in ops.items() if "gpu" in op.compute]
    print(f"\n{len(ops)} operators: {len(with_gpu)} run on GPU ({len(generic)} through the "
          f"device-generic CPU code), {len(EXEMPT)} exempt")
    assert len(with_gpu) + len([n for n in EXEMPT if n in ops]) <= len(ops)
