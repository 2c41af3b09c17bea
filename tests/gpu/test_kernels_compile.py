"""Every CUDA kernel mxlite can launch compiles, without a GPU: each family (every op x
dtype instantiation of it) through NVRTC, the compiler a pip-installed CuPy uses, and
through the host C++ compiler of the emulator. A compile error fails the suite."""
import re

import pytest

from mxlite.cuda import compiler, emulator, kernels

FAMILIES = kernels.families()
# CI installs [gpu-compile] and checks NVRTC loads before the tests; [test] alone skips these
needs_nvrtc = pytest.mark.skipif(compiler.nvrtc_unavailable() is not None,
                                 reason=str(compiler.nvrtc_unavailable()))


def test_there_are_kernels_to_check():
    assert "copy" in FAMILIES and sum(len(kernels.family(f)) for f in FAMILIES) >= 4


@needs_nvrtc
@pytest.mark.parametrize("family", FAMILIES)
def test_family_compiles_with_nvrtc(family):
    ptx = compiler.nvrtc_check(kernels.family_source(family), f"{family}.cu")
    for name in kernels.family(family):
        assert f".entry {name}(" in ptx
    # IEEE float32 on the device: no arithmetic, comparison or conversion flushes subnormals
    # (.ftz: what -ftz=true makes of every float32 instruction); the math library's own
    # approximate seeds (rcp/ex2/lg2/rsqrt.approx.ftz, refined and range-reduced around) are
    # its business.
    flushing = sorted({i for i in re.findall(r"\b[a-z0-9]+(?:\.[a-z0-9]+)*\.ftz[a-z0-9.]*", ptx)
                       if ".approx." not in i})
    assert not flushing, f"{family}: subnormal-flushing instructions {flushing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_family_compiles_for_the_host_emulator(family):
    if emulator.available() is not None:
        pytest.fail(emulator.available())
    lib = emulator._library(family)
    for name in kernels.family(family):
        assert hasattr(lib, name)


@needs_nvrtc
def test_a_compile_error_is_reported():
    with pytest.raises(compiler.CompileError, match="undefined|identifier"):
        compiler.nvrtc_check(kernels.PREAMBLE + 'extern "C" __global__ void k() { nope(); }')
