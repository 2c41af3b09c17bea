"""Devices and transfers: arrays on a device, copies between devices (recorded by autograd,
gradients back on the source device), context mismatches, synchronization, pickling,
save/load and DLPack. Each test taking ``device`` runs on cpu and on gpu (a CUDA device, or
the host emulator with MXLITE_GPU_EMULATOR=1): on cpu the "other" device is cpu(1)."""
import pickle
import re
import types

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.cuda import runtime
from mxlite.cuda.namespace import GpuNamespace
from mxlite.device import namespace_for
from mxlite.test_utils import check_grads


def _other(device):
    """A second device for copies: the CPU for a GPU, cpu(1) for the CPU."""
    return mx.cpu() if device.device_type == "gpu" else mx.cpu(1)


def _names(*parts):
    """A pattern matching ``parts`` (contexts, words) in this order."""
    return ".*".join(re.escape(str(p)) for p in parts)


def _real_gpu():
    return runtime.backend() == "cupy"


# ---- arrays on a device ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_array_round_trip_keeps_values_dtype_and_device(device, dtype):
    values = np.array([[0, 1, 2], [3, 4, 5]]).astype(dtype)
    x = mx.nd.array(values, ctx=device, dtype=dtype)
    assert x.context == device and x.dtype == np.dtype(dtype) and x.shape == (2, 3)
    host = x.asnumpy()
    assert isinstance(host, np.ndarray) and host.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host, values)
    host[0, 0] = 1                  # a copy: the device array keeps its value
    assert x.asnumpy()[0, 0] == values[0, 0]


def test_creation_functions_put_data_on_the_device(device):
    other = _other(device)
    made = {
        "zeros": mx.nd.zeros((2, 3), ctx=device),
        "ones": mx.nd.ones((2, 3), ctx=device, dtype="int32"),
        "full": mx.nd.full((2,), 7, ctx=device, dtype="int64"),
        "empty": mx.nd.empty((2, 3), ctx=device),
        "arange": mx.nd.arange(0, 6, 2, ctx=device),
        "uniform": mx.nd.random.uniform(shape=(3,), ctx=device),
    }
    for name, x in made.items():
        assert x.context == device, name
    with other:             # the current context does not override ctx=
        assert mx.nd.zeros((2,), ctx=device).context == device
    np.testing.assert_array_equal(made["ones"].asnumpy(), np.ones((2, 3), np.int32))
    np.testing.assert_array_equal(made["full"].asnumpy(), [7, 7])
    np.testing.assert_array_equal(made["arange"].asnumpy(), [0, 2, 4])


def test_the_run_context_belongs_to_the_device(device):
    y = mx.nd.ones((2,), ctx=device) * 2
    rctx = y.context._run or mx.device.run_context(y.context)
    assert rctx.ctx == device and rctx.xp is namespace_for(device)
    assert rctx.rng.key == (("cpu", 0) if device.device_type == "cpu" else ("gpu", 0))


# ---- copies between devices ------------------------------------------------------------------
def test_as_in_context_and_copyto_move_values_between_devices(device):
    other = _other(device)
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.nd.array(values, ctx=device)
    assert x.as_in_context(device) is x
    y = x.as_in_context(other)
    assert y.context == other and y.dtype == np.float32
    np.testing.assert_array_equal(y.asnumpy(), values)
    back = y.copyto(device)
    assert back.context == device
    np.testing.assert_array_equal(back.asnumpy(), values)
    same = x.copyto(device)                 # a copy on the same device, not the array
    assert same is not x and same.context == device
    np.testing.assert_array_equal(same.asnumpy(), values)
    with pytest.raises(TypeError, match="Context"):
        x.as_in_context("gpu(0)")


def test_copyto_into_an_array_on_another_device(device):
    other = _other(device)
    x = mx.nd.array([[1.5, -2.5], [3.25, 4.0]], ctx=device, dtype="float64")
    target = mx.nd.zeros((2, 2), ctx=other, dtype="float64")
    version = target.version
    assert x.copyto(target) is target
    assert target.context == other and target.version == version + 1
    np.testing.assert_array_equal(target.asnumpy(), x.asnumpy())
    as_int = mx.nd.zeros((2, 2), ctx=other, dtype="int32")   # cast to the target's dtype
    x.copyto(as_int)
    np.testing.assert_array_equal(as_int.asnumpy(), np.array([[1, -2], [3, 4]], np.int32))
    into_device = mx.nd.zeros((2, 2), ctx=device, dtype="float64")
    target.copyto(into_device)
    np.testing.assert_array_equal(into_device.asnumpy(), x.asnumpy())
    with pytest.raises(MXNetError, match="shape mismatch"):
        x.copyto(mx.nd.zeros((3,), ctx=other))


def test_array_of_an_ndarray_copies_across_devices(device):
    other = _other(device)
    x = mx.nd.array([1, 2, 3], ctx=device, dtype="int64")
    for ctx in (device, other):
        y = mx.nd.array(x, ctx=ctx)
        assert y.context == ctx and y.dtype == np.int64
        np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])
    z = mx.nd.array(x, ctx=other, dtype="float16")
    assert z.dtype == np.float16 and z.asnumpy().tolist() == [1.0, 2.0, 3.0]


def test_zero_size_arrays_cross_devices(device):
    x = mx.nd.zeros((0, 3), ctx=device)
    y = x.as_in_context(_other(device))
    assert y.shape == (0, 3) and y.asnumpy().shape == (0, 3)


def test_setitem_copies_a_value_from_another_device(device):
    x = mx.nd.zeros((2, 3), ctx=device)
    x[1] = mx.nd.array([1, 2, 3], ctx=_other(device))
    np.testing.assert_array_equal(x.asnumpy(), [[0, 0, 0], [1, 2, 3]])


# ---- autograd across devices -----------------------------------------------------------------
def test_gradient_through_a_copy_arrives_on_the_source_device(device):
    """x on the device, the math on the other one: x.grad is on x's device."""
    other = _other(device)
    x = mx.nd.array([1.0, -2.0, 3.0], ctx=other, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = x.as_in_context(device)
        z = y * y * 3
    z.backward()
    assert x.grad.context == other
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, -12.0, 18.0])
    w = mx.nd.array([0.5, 1.0], ctx=device, dtype="float64")
    w.attach_grad()
    target = mx.nd.zeros((2,), ctx=other, dtype="float64")
    with mx.autograd.record():
        w.copyto(target)                # into an array on another device: recorded too
    target.backward()
    assert w.grad.context == device
    np.testing.assert_array_equal(w.grad.asnumpy(), [1.0, 1.0])


def test_cross_device_copies_differentiate_to_order_3(device):
    """f(x) = sin(x) * (x copied away and back): gradients of every order flow through both
    copies (the gradient of a copy is the copy back)."""
    other = _other(device)

    def f(x):
        away = x.as_in_context(other)
        return mx.nd.sin(x) * away.as_in_context(device) * x

    x = mx.nd.array(np.linspace(-1, 1, 6).reshape(2, 3), dtype="float64")
    assert x.context == device
    check_grads(f, [x], order=3, name="copy round trip")


def test_head_gradient_on_another_device_is_an_error(device):
    x = mx.nd.array([1.0, 2.0], ctx=device)
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    with pytest.raises(MXNetError, match=_names(_other(device), device)):
        y.backward(mx.nd.ones((2,), ctx=_other(device)))
    y.backward(mx.nd.array([1.0, 0.0], ctx=device))
    assert x.grad.context == device
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 0.0])


# ---- mixing devices in one op ----------------------------------------------------------------
def test_mixing_devices_in_one_operator_names_both(device):
    other = _other(device)
    a = mx.nd.ones((2,), ctx=device)
    b = mx.nd.ones((2,), ctx=other)
    with pytest.raises(MXNetError, match=_names("broadcast_add", device, other)):
        a + b
    with pytest.raises(MXNetError, match=_names("dot", other, device)):
        mx.nd.dot(b.reshape((1, 2)), a.reshape((2, 1)))
    with pytest.raises(MXNetError, match=_names("out= is on", other, "runs on", device)):
        mx.nd.sin(a, out=mx.nd.zeros((2,), ctx=other))


# ---- synchronization, pickling, files ----------------------------------------------------------
def test_wait_to_read_and_waitall_synchronize_the_device(device, monkeypatch):
    xp = namespace_for(device)
    calls = []
    monkeypatch.setattr(xp, "synchronize", lambda: calls.append("sync"), raising=False)
    x = mx.nd.ones((3,), ctx=device)
    x.wait_to_read()
    x.wait_to_write()
    assert calls == ["sync", "sync"]
    mx.nd.waitall()     # synchronizes every GPU in use (through its own namespace)


def test_asnumpy_is_one_device_to_host_copy(device, monkeypatch):
    xp = namespace_for(device)
    seen = []
    for name in ("asnumpy", "to_host"):
        fn = getattr(xp, name)
        monkeypatch.setattr(xp, name, lambda a, _fn=fn, _n=name: seen.append(_n) or _fn(a),
                            raising=False)
    x = mx.nd.arange(5, ctx=device)
    host = x.asnumpy()
    assert seen == ["asnumpy"] and host.tolist() == [0, 1, 2, 3, 4]


def test_pickle_keeps_the_device(device):
    x = mx.nd.array([[1, 2], [3, 4]], ctx=device, dtype="int32")
    y = pickle.loads(pickle.dumps(x))
    assert y.context == device and y.dtype == np.int32
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_save_and_load_restore_the_device(device, tmp_path):
    path = str(tmp_path / "arrays.nd")
    x = mx.nd.array([1.5, 2.5], ctx=device)
    mx.nd.save(path, {"x": x})
    y = mx.nd.load(path)["x"]
    assert y.context == device
    np.testing.assert_array_equal(y.asnumpy(), [1.5, 2.5])


# ---- DLPack ----------------------------------------------------------------------------------
def test_dlpack_device_is_the_storage(device):
    x = mx.nd.ones((2,), ctx=device)
    if _real_gpu() and device.device_type == "gpu":
        assert x.__dlpack_device__() == (2, device.device_id)
    else:                           # CPU memory (the emulator's GPU arrays are host memory)
        assert x.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_from_dlpack_shares_numpy_memory(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    x = mx.nd.from_dlpack(a)
    assert x.context == mx.cpu() and x.dtype == np.dtype(dtype) and x.shape == (2, 3)
    a[0, 0] = 1
    assert x.asnumpy()[0, 0] == 1
    x[1, 2] = 0
    assert a[1, 2] == 0


def test_dlpack_capsules_round_trip_without_a_copy():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]], dtype="int64")
    y = mx.nd.from_dlpack(x.to_dlpack_for_read())
    assert y.dtype == np.int64 and y.shape == (2, 3)
    x[0, 0] = 9
    assert y.asnumpy()[0, 0] == 9
    z = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(x))
    z[1, 1] = -1
    assert x.asnumpy()[1, 1] == -1
    a = np.from_dlpack(x)               # NDArray.__dlpack__: any consumer
    a[1, 0] = 7
    assert x.asnumpy()[1, 0] == 7
    capsule = x.to_dlpack_for_read()
    mx.nd.from_dlpack(capsule)
    with pytest.raises(MXNetError, match="imported once"):
        mx.nd.from_dlpack(capsule)


def test_from_dlpack_refuses_what_an_ndarray_cannot_hold():
    with pytest.raises(MXNetError, match="int16"):
        mx.nd.from_dlpack(np.zeros(3, np.int16))
    with pytest.raises(MXNetError, match="expected a DLPack capsule"):
        mx.nd.from_dlpack([1, 2])


class _Producer:
    """An object with the DLPack protocol on a given device (it is never asked for data)."""

    def __init__(self, device):
        self.device = device

    def __dlpack__(self, **kwargs):
        raise AssertionError("not to be read")

    def __dlpack_device__(self):
        return self.device


def test_from_dlpack_refuses_other_devices():
    with pytest.raises(MXNetError, match="device type 4 is neither host memory nor a CUDA"):
        mx.nd.from_dlpack(_Producer((4, 0)))        # OpenCL


@pytest.mark.gpu
@pytest.mark.skipif(runtime.backend() != "emulator", reason="the emulator's refusal")
def test_the_emulator_cannot_import_cuda_memory():
    with pytest.raises(MXNetError, match="emulator"):
        mx.nd.from_dlpack(_Producer((2, 0)))


def test_torch_tensors_cross_without_a_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = mx.nd.from_dlpack(t)
    t[0, 1] = 100.0
    assert x.shape == (3, 4) and x.asnumpy()[0, 1] == 100.0
    u = torch.from_dlpack(x)
    u[2, 3] = -5.0
    assert x.asnumpy()[2, 3] == -5.0 and t[2, 3].item() == -5.0
    strided = mx.nd.from_dlpack(t.T)    # not C-contiguous: copied, with the right values
    np.testing.assert_array_equal(strided.asnumpy(), t.T.numpy())
    assert mx.nd.from_dlpack(torch.tensor([1, 0], dtype=torch.bool)).dtype == np.bool_
    capsule = torch.utils.dlpack.to_dlpack(t)       # torch's capsule, as MXNet users pass
    y = mx.nd.from_dlpack(capsule)
    t[1, 1] = 42.0
    assert y.context == mx.cpu() and y.asnumpy()[1, 1] == 42.0


@pytest.mark.gpu
@pytest.mark.skipif(not _real_gpu(), reason="CUDA memory needs a real GPU")
def test_cuda_dlpack_with_cupy_and_torch():
    import cupy
    x = mx.nd.array([1.0, 2.0, 3.0], ctx=mx.gpu(0))
    c = cupy.from_dlpack(x)
    c[0] = 7.0
    assert x.asnumpy()[0] == 7.0
    y = mx.nd.from_dlpack(cupy.arange(4, dtype=cupy.float32))
    assert y.context == mx.gpu(0) and y.asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = torch.ones(3, device="cuda")
        z = mx.nd.from_dlpack(t)
        t[1] = 4.0
        assert z.context == mx.gpu(0) and z.asnumpy().tolist() == [1.0, 4.0, 1.0]


# ---- GPU specifics ---------------------------------------------------------------------------
@pytest.mark.gpu
def test_a_gpu_past_the_last_is_an_error_naming_the_count():
    with pytest.raises(MXNetError, match=_names(mx.gpu(mx.num_gpus()), "no such GPU")):
        mx.nd.zeros((2,), ctx=mx.gpu(mx.num_gpus()))


@pytest.mark.gpu
@pytest.mark.skipif(not _real_gpu(), reason="GPU memory runs out on a real GPU only")
def test_out_of_gpu_memory_is_an_error_with_the_size():
    import cupy
    free, _ = cupy.cuda.runtime.memGetInfo()
    n = free // 4 + (1 << 30)
    with pytest.raises(MXNetError, match=rf"{n * 4} bytes.*out of memory"):
        mx.nd.empty((n,), ctx=mx.gpu(0))


class _FakeCudaDevice:
    """Stands for cupy.cuda.Device: records the current device while it is entered."""

    current = [0]

    def __init__(self, i):
        self.i = i

    def __enter__(self):
        self.saved = _FakeCudaDevice.current[0]
        _FakeCudaDevice.current[0] = self.i

    def __exit__(self, *exc):
        _FakeCudaDevice.current[0] = self.saved


def test_each_gpu_namespace_runs_on_its_device():
    """With several GPUs, gpu(i)'s namespace calls the library with CuPy's current device set
    to i (restored after); with one GPU, the namespace is used as it is."""
    seen = []
    lib = types.SimpleNamespace(
        ndarray=np.ndarray, cuda=types.SimpleNamespace(Device=_FakeCudaDevice),
        empty=lambda shape, dtype: seen.append(("empty", _FakeCudaDevice.current[0]))
        or np.empty(shape, dtype))
    launched = []

    def launcher(kernel, n, args):
        launched.append(_FakeCudaDevice.current[0])

    one = GpuNamespace(lib, launcher, "gpu", devices=1)
    assert one.on_device(0) is one
    several = GpuNamespace(lib, launcher, "gpu", devices=3)
    ns2 = several.on_device(2)
    assert ns2 is several.on_device(2) and ns2 is not several
    ns2.empty((2,), np.float32)
    ns2.launch(None, 4)
    several.on_device(1).launch(None, 4)
    assert seen == [("empty", 2)] and launched == [2, 1]
    assert _FakeCudaDevice.current[0] == 0
    assert ns2.lib is lib and ns2.ndarray is np.ndarray
    assert set(several.device_namespaces()) == {ns2, several.on_device(1)}


class _FakeCupy:
    """Stands for the cupy module in launch.py: one device of compute capability 9.0 with 2
    multiprocessors; loaded kernels record their launch configuration."""

    def __init__(self):
        self.launches, self.loaded = [], []
        fake = self
        props = {"major": 9, "minor": 0, "multiProcessorCount": 2}
        runtime_ = types.SimpleNamespace(getDevice=lambda: 0, getDeviceProperties=lambda d: props)

        class Module:
            def load(self, image):
                fake.loaded.append(image)

            def get_function(self, name):
                return lambda grid, block, args: fake.launches.append((grid, block, args))

        self.cuda = types.SimpleNamespace(runtime=runtime_,
                                          function=types.SimpleNamespace(Module=Module))


@pytest.fixture
def fake_cupy(monkeypatch):
    """launch.py on a _FakeCupy; NVRTC stands aside (its PTX is "<ptx of NAME for ARCH>"),
    and a kernel can run 1024 threads a block unless a test says otherwise."""
    from mxlite.cuda import compiler, launch
    fake = _FakeCupy()
    monkeypatch.setattr(launch, "_cupy", fake)
    monkeypatch.setattr(launch, "_FUNCTIONS", {})
    monkeypatch.setattr(launch, "_GRID_LIMIT", {})
    monkeypatch.setattr(launch, "_max_threads", lambda fn: 1024)
    monkeypatch.setattr(compiler, "compile_ptx",
                        lambda source, name, arch: f"<ptx of {name} for {arch}>")
    return fake


def test_launch_caps_the_grid_and_runs_every_item(fake_cupy):
    from mxlite.cuda import kernels, launch
    k = kernels.family("copy")["copy_4"]
    launch.launch(k, 10 ** 6, ("a",))
    launch.launch(k, 300, ("b",))
    launch.launch(k, 0, ("c",))                 # nothing to do: no launch
    assert fake_cupy.launches == [((64,), (launch.BLOCK,), ("a",)),
                                  ((2,), (launch.BLOCK,), ("b",))]
    assert fake_cupy.loaded == [b"<ptx of copy.cu for compute_90>"]       # compiled once


def test_a_block_has_at_most_the_threads_the_kernel_can_run(fake_cupy, monkeypatch):
    from mxlite.cuda import kernels, launch
    monkeypatch.setattr(launch, "_max_threads", lambda fn: 96)   # a register-heavy kernel
    monkeypatch.setattr(launch, "BLOCK", 1024)
    launch.launch(kernels.family("copy")["copy_4"], 1000, ())
    assert fake_cupy.launches == [((11,), (96,), ())]


def test_a_kernel_that_fails_to_compile_names_itself(fake_cupy, monkeypatch):
    from mxlite.cuda import compiler, kernels, launch

    def fail(source, name, arch):
        raise compiler.CompileError("error: identifier 'nope' is undefined")
    monkeypatch.setattr(compiler, "compile_ptx", fail)
    with pytest.raises(MXNetError, match=r"copy/copy_8 .*failed to compile.*nope"):
        launch.launch(kernels.family("copy")["copy_8"], 5, ())


def test_copies_with_more_axes_than_a_kernel_layout_holds(device):
    """tile of a 9-D array with every rep > 1 moves 18 unmergeable axes (a layout holds 16):
    the copy goes one leading index at a time, the values stay NumPy's."""
    x = np.arange(2 ** 9, dtype="float32").reshape((2,) * 9)
    got = mx.nd.tile(mx.nd.array(x), reps=(2,) * 9)
    np.testing.assert_array_equal(got.asnumpy(), np.tile(x, (2,) * 9))


@pytest.mark.gpu
def test_head_gradients_and_gradient_buffers_must_be_on_the_arrays_device():
    """A head gradient (backward, grad) or a gradient buffer (mark_variables) on another
    device than its array is a clear error, not a backward pass on the wrong device."""
    x = mx.nd.ones((2,))
    x.attach_grad()
    on_gpu = mx.nd.ones((2,), ctx=mx.gpu())
    for run in (lambda y: mx.autograd.backward([y], [on_gpu]),
                lambda y: mx.autograd.grad([y], [x], [on_gpu])):
        with mx.autograd.record():
            y = x * 2
        with pytest.raises(MXNetError, match=r"head_grads\[0\] is on gpu\(0\) but its head is on cpu\(0\)"):
            run(y)
    with pytest.raises(MXNetError, match="gradient buffer is on gpu"):
        mx.autograd.mark_variables([mx.nd.ones((2,))], [mx.nd.zeros((2,), ctx=mx.gpu())])


@pytest.mark.gpu
def test_check_grads_works_on_the_inputs_device_outside_a_with_block():
    """check_grads makes its variables, directions and head gradients on the inputs' device,
    so it needs no ``with ctx:`` around it."""
    x = mx.nd.array([0.5, 1.0], ctx=mx.gpu(), dtype="float64")
    check_grads(lambda a: mx.nd.sin(a) * a, [x], order=3)
