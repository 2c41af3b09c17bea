"""Every CUDA kernel mxlite can launch compiles, without a GPU: each family (every op x
dtype instantiation of it) through NVRTC, the compiler a pip-installed CuPy uses, and
through the host C++ compiler of the emulator. A compile error fails the suite."""
import pytest

from mxlite.cuda import compiler, emulator, kernels

FAMILIES = kernels.families()


def test_there_are_kernels_to_check():
    assert "copy" in FAMILIES and sum(len(kernels.family(f)) for f in FAMILIES) >= 4


@pytest.mark.parametrize("family", FAMILIES)
def test_family_compiles_with_nvrtc(family):
    ptx = compiler.nvrtc_check(kernels.family_source(family), f"{family}.cu")
    for name in kernels.family(family):
        assert f".entry {name}(" in ptx.decode() if isinstance(ptx, bytes) else ptx


@pytest.mark.parametrize("family", FAMILIES)
def test_family_compiles_for_the_host_emulator(family):
    if emulator.available() is not None:
        pytest.fail(emulator.available())
    lib = emulator._library(family)
    for name in kernels.family(family):
        assert hasattr(lib, name)


def test_a_compile_error_is_reported():
    with pytest.raises(compiler.CompileError, match="undefined|identifier"):
        compiler.nvrtc_check(kernels.PREAMBLE + 'extern "C" __global__ void k() { nope(); }')
