"""How a kernel reaches a CUDA device (``mxlite.cuda.launch``), checked with NVRTC and no
device: the PTX that is loaded is NVRTC's output with mxlite's IEEE options (CuPy's
RawModule would append -ftz=true), and it is cached on disk. (The launch configuration is
checked in test_device.py, without NVRTC.)"""
import types

import pytest

from mxlite.cuda import compiler, kernels, launch

if compiler.nvrtc_unavailable() is not None:      # CI installs [gpu-compile]
    pytest.skip(compiler.nvrtc_unavailable(), allow_module_level=True)
from cupy_backends.cuda.libs import nvrtc  # noqa: E402

FAMILY = "copy"


def _one_kernel():
    return next(iter(kernels.family(FAMILY).values()))


class _FakeCupy:
    """The part of CuPy the launcher touches, on a made-up device of compute capability 8.6
    with 108 multiprocessors; records what is loaded and launched."""

    def __init__(self):
        self.loaded, self.launches = [], []
        fake = self

        class Module:
            def load(self, image):
                fake.loaded.append(image)

            def get_function(self, name):
                return lambda grid, block, args: fake.launches.append((name, grid, block))

        self.cuda = types.SimpleNamespace(
            runtime=types.SimpleNamespace(
                getDevice=lambda: 0,
                getDeviceProperties=lambda dev: {"major": 8, "minor": 6,
                                                 "multiProcessorCount": 108}),
            function=types.SimpleNamespace(Module=Module))


@pytest.fixture
def fake_device(monkeypatch, tmp_path):
    fake = _FakeCupy()
    monkeypatch.setenv("MXLITE_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(launch, "_cupy", fake)
    monkeypatch.setattr(launch, "_FUNCTIONS", {})
    monkeypatch.setattr(launch, "_GRID_LIMIT", {})
    return fake


def test_the_loaded_image_is_nvrtc_ptx_with_ieee_options(fake_device, monkeypatch):
    monkeypatch.setattr(launch, "_max_threads", lambda fn: 1024)
    k = _one_kernel()
    launch.launch(k, 1000, ())
    (image,) = fake_device.loaded
    ptx = image.decode()
    assert f".entry {k.name}(" in ptx and ".target sm_86" in ptx
    assert ptx == compiler.nvrtc_check(k.source, f"{k.family}.cu", "compute_86")
    assert "--ftz=false" in compiler.options()
    assert fake_device.launches == [(k.name, (4,), (256,))]


def test_compiled_ptx_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("MXLITE_KERNEL_CACHE", str(tmp_path))
    k = _one_kernel()
    first = compiler.compile_ptx(k.source, "x.cu", "compute_80")
    (cached,) = tmp_path.iterdir()
    assert cached.read_text() == first
    cached.write_text("// the cache answered\n")
    assert compiler.compile_ptx(k.source, "x.cu", "compute_80") == "// the cache answered\n"
    other = compiler.compile_ptx(k.source, "x.cu", "compute_90")      # another key
    assert ".target sm_90" in other and len(list(tmp_path.iterdir())) == 2


def test_a_device_newer_than_nvrtc_gets_the_newest_architecture_nvrtc_knows():
    newest = max(int(a) for a in nvrtc.getSupportedArchs())
    assert compiler.target_arch(10 ** 4) == f"compute_{newest}"
    assert compiler.target_arch(80) == "compute_80"
