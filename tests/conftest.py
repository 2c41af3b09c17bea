"""Shared test set-up: a hypothesis profile for a slow shared CI box, and a seeded RNG."""
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Timing varies on a 2-core machine shared with the build: no per-example deadline.
# Each test still chooses its own max_examples.
settings.register_profile(
    "mxlite", deadline=None, derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("mxlite")


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's id, so every test is reproducible."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# ---- devices -------------------------------------------------------------------------------
# Tests that take the ``device`` fixture run once per device: cpu, and gpu (marked ``gpu``;
# it runs on a CUDA device, or on the host emulator of mxlite's CUDA kernels when
# MXLITE_GPU_EMULATOR=1, and skips otherwise). A test module marked ``cpu_only`` (a CPU
# implementation detail: SIMD levels, threads) gets the cpu run alone.
import mxlite as mx                        # noqa: E402
from mxlite.base import MXNetError         # noqa: E402
from gpu_guard import refuse_cpu_kernels   # noqa: E402


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        devices = ["cpu"]
        if metafunc.definition.get_closest_marker("cpu_only") is None:
            devices.append(pytest.param("gpu", marks=pytest.mark.gpu))
        metafunc.parametrize("device", devices, indirect=True)


def pytest_collection_modifyitems(config, items):
    if mx.num_gpus() == 0:
        skip = pytest.mark.skip(reason="no GPU: needs CuPy with a CUDA device, or "
                                       "MXLITE_GPU_EMULATOR=1 for the host emulator")
        for item in items:
            if item.get_closest_marker("gpu") is not None:
                item.add_marker(skip)


@pytest.fixture
def device(request, monkeypatch):
    """The Context a test runs on (made current with ``with ctx:``). Under the host
    emulator the CPU kernels of mxlite._core refuse to run, so a GPU compute function that
    calls one fails instead of passing on NumPy storage."""
    if request.param == "cpu":
        ctx = mx.cpu()
    else:
        ctx = mx.gpu(0)
        from mxlite.cuda import runtime
        if runtime.backend() == "emulator":
            refuse_cpu_kernels(monkeypatch)
    with ctx:
        yield ctx


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """On GPU, an operator exempt from GPU kernels (mxlite.cuda.ops.EXEMPT) skips the test
    with the documented reason instead of failing."""
    outcome = yield
    if outcome.excinfo is None or "device" not in pyfuncitem.fixturenames:
        return
    err = outcome.excinfo[1]
    if isinstance(err, MXNetError) and "has no kernel for gpu" in str(err):
        from mxlite.cuda.ops import EXEMPT
        op = str(err).split(":", 1)[0].strip()
        if op in EXEMPT:
            outcome.force_exception(pytest.skip.Exception(
                f"{op} has no GPU kernel: {EXEMPT[op]}", _use_item_location=True))
