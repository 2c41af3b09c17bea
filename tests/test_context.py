"""Device contexts (mxlite/context.py): cpu(), gpu(i), current_context() and ``with ctx:``."""
import os
import pickle
import threading

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError


def test_cpu_context():
    c = mx.cpu()
    assert isinstance(c, mx.Context)
    assert c.device_type == "cpu" and c.device_id == 0
    assert repr(c) == "cpu(0)"
    assert mx.cpu(2).device_id == 2 and repr(mx.cpu(2)) == "cpu(2)"


def test_equality_and_hash():
    assert mx.cpu() == mx.cpu(0) == mx.Context("cpu", 0) == mx.Context("cpu")
    assert mx.cpu(0) != mx.cpu(1)
    assert mx.cpu(0) != "cpu(0)"
    assert len({mx.cpu(0), mx.cpu(), mx.cpu(1)}) == 2
    assert mx.Context(mx.cpu(3)) == mx.cpu(3)       # copy constructor


def test_unknown_device_type():
    with pytest.raises(MXNetError, match="tpu"):
        mx.Context("tpu", 0)


def test_current_context_default():
    assert mx.current_context() == mx.cpu(0)


def test_with_block_sets_and_restores():
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(1) as c:
        assert c == mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
        x = mx.nd.array([1.0, 2.0])
        assert x.context == mx.cpu(1)
        assert (x + 1).context == mx.cpu(1)
        with mx.cpu(2):
            assert mx.current_context() == mx.cpu(2)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    assert mx.nd.array([1.0]).context == mx.cpu(0)


def test_with_block_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with mx.cpu(5):
            raise RuntimeError("boom")
    assert mx.current_context() == mx.cpu(0)


def test_reentering_the_same_context_object():
    seen = []

    def worker():       # in a thread of its own: the context is per thread, a leak stays there
        c = mx.cpu(1)
        with c:
            with c:
                pass
            seen.append(mx.current_context())
        seen.append(mx.current_context())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [mx.cpu(1), mx.cpu(0)]


def test_context_is_per_thread():
    seen = {}

    def worker():
        seen["before"] = mx.current_context()
        with mx.cpu(7):
            seen["inside"] = mx.current_context()

    with mx.cpu(3):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert mx.current_context() == mx.cpu(3)
    assert seen == {"before": mx.cpu(0), "inside": mx.cpu(7)}


def test_ops_use_the_input_context_not_the_current_one():
    x = mx.nd.array([1.0], ctx=mx.cpu(4))
    with mx.cpu(1):
        assert mx.nd.exp(x).context == mx.cpu(4)


def test_creation_ops_use_current_context():
    with mx.cpu(6):
        assert mx.nd.zeros((2,)).context == mx.cpu(6)
        assert mx.nd.empty((2,)).context == mx.cpu(6)
    assert mx.nd.ones((2,), ctx=mx.cpu(2)).context == mx.cpu(2)


def test_pickle_context():
    assert pickle.loads(pickle.dumps(mx.cpu(2))) == mx.cpu(2)


def test_num_gpus_is_a_count():
    n = mx.num_gpus()
    assert isinstance(n, int) and n >= 0


def test_gpu_contexts_exist_without_a_gpu():
    """As MXNet: mx.gpu(i) is a Context whatever the machine has; data needs the device."""
    g = mx.gpu(3)
    assert g.device_type == "gpu" and g.device_id == 3 and repr(g) == "gpu(3)"
    assert mx.Context("gpu", 0) == mx.gpu()


# every way data reaches a device
TO_GPU = {
    "array": lambda: mx.nd.array([1.0], ctx=mx.gpu(0)),
    "array of an NDArray": lambda: mx.nd.array(mx.nd.ones((2,)), ctx=mx.gpu()),
    "zeros": lambda: mx.nd.zeros((2,), ctx=mx.gpu()),
    "ones": lambda: mx.nd.ones((2,), ctx=mx.gpu()),
    "empty": lambda: mx.nd.empty((2,), ctx=mx.gpu()),
    "full": lambda: mx.nd.full((2,), 3.0, ctx=mx.gpu()),
    "arange": lambda: mx.nd.arange(3, ctx=mx.gpu()),
    "random.uniform": lambda: mx.nd.random.uniform(shape=(2,), ctx=mx.gpu()),
    "random.randint": lambda: mx.nd.random.randint(0, 5, shape=(2,), ctx=mx.gpu()),
    "as_in_context": lambda: mx.nd.ones((2,)).as_in_context(mx.gpu()),
    "copyto": lambda: mx.nd.ones((2,)).copyto(mx.gpu(1)),
    "with gpu": lambda: _under(mx.gpu(), lambda: mx.nd.zeros((2,))),
    "unpickle": lambda: pickle.loads(pickle.dumps(mx.nd.ones((2,))).replace(b"cpu", b"gpu")),
}


def _under(ctx, make):
    with ctx:
        return make()


@pytest.mark.skipif(mx.num_gpus() > 0, reason="a GPU is present")
@pytest.mark.parametrize("form", sorted(TO_GPU))
def test_data_on_a_gpu_without_a_gpu_is_an_error_that_says_why(form):
    with pytest.raises(MXNetError, match="no GPU backend: CuPy"):
        TO_GPU[form]()


@pytest.mark.skipif(mx.num_gpus() > 0, reason="a GPU is present")
def test_load_without_a_gpu_puts_saved_gpu_arrays_on_the_cpu(tmp_path):
    """A file written on a GPU machine (device type 2 in MXNet's format) still loads."""
    import struct
    path = str(tmp_path / "a.nd")
    mx.nd.save(path, [mx.nd.array([1.5, 2.5])])
    buf = bytearray(open(path, "rb").read())
    # the context record (cpu(0), float32 flag) before the data: cpu(0) -> gpu(0)
    at = buf.find(struct.pack("<iii", 1, 0, 0) + np.array([1.5, 2.5], "f4").tobytes())
    assert at > 0
    buf[at:at + 4] = struct.pack("<i", 2)
    (x,) = mx.nd.load_frombuffer(bytes(buf))
    assert x.context == mx.cpu() and x.asnumpy().tolist() == [1.5, 2.5]


def _run_without_cupy(code):
    """Run ``code`` in a fresh interpreter where ``import cupy`` fails."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "MXLITE_GPU_EMULATOR"}
    prelude = "import sys\nsys.modules['cupy'] = None\n"
    run = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_without_cupy_mxlite_imports_and_says_cupy_is_missing():
    out = _run_without_cupy(
        "import mxlite as mx\n"
        "assert mx.num_gpus() == 0\n"
        "print((mx.nd.ones((2,)) + 1).asnumpy().tolist())\n"
        "try:\n    mx.nd.zeros((2,), ctx=mx.gpu())\n"
        "except mx.MXNetError as e:\n    print(e)\n")
    assert "[2.0, 2.0]" in out and "no GPU backend: CuPy is not installed" in out


@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs a GPU")
def test_a_gpu_past_the_last_is_an_error():
    with pytest.raises(MXNetError, match="no such GPU"):
        mx.nd.zeros((2,), ctx=mx.gpu(mx.num_gpus()))


@pytest.mark.parametrize("kind", ["cpu_pinned", "cpu_shared"])
def test_pinned_and_shared_cpu_memory_run_the_cpu_kernels(kind):
    ctx = mx.Context(kind)
    x = mx.nd.array([1.0, 2.0, 3.0], ctx=ctx)
    y = mx.nd.sin(x) * 2 + mx.nd.sum(x)
    assert y.context == ctx
    np.testing.assert_allclose(y.asnumpy(), np.sin([1.0, 2.0, 3.0]) * 2 + 6, rtol=1e-6)
    z = mx.nd.zeros((2, 3), ctx=ctx)
    assert z.context == ctx and z.asnumpy().sum() == 0
    with pytest.raises(mx.MXNetError, match="different devices"):
        x + mx.nd.array([1.0, 2.0, 3.0])        # cpu_pinned(0) and cpu(0) are two contexts


def test_gpu_memory_info():
    from mxlite.cuda import runtime
    if runtime.backend() == "cupy":
        free, total = mx.context.gpu_memory_info(0)
        assert 0 < free <= total
        with pytest.raises(MXNetError, match="no GPU"):
            mx.context.gpu_memory_info(mx.num_gpus())
    else:       # no GPU, or the emulator (host memory): says why
        why = "host memory" if runtime.backend() == "emulator" else "CuPy"
        with pytest.raises(MXNetError, match=f"gpu_memory_info: no GPU memory to report: .*{why}"):
            mx.context.gpu_memory_info()


def test_empty_cache_releases_pooled_gpu_memory():
    from mxlite.cuda import runtime
    mx.cpu().empty_cache()              # nothing to release on the CPU
    if runtime.backend() != "cupy":
        mx.gpu().empty_cache()          # no GPU memory was allocated: nothing to do
        return
    import cupy
    pool = cupy.get_default_memory_pool()
    x = mx.nd.zeros((1 << 20,), ctx=mx.gpu())
    del x
    assert pool.total_bytes() - pool.used_bytes() > 0       # the freed buffer is pooled
    mx.gpu().empty_cache()
    assert pool.total_bytes() == pool.used_bytes()


# ---- MXNet's Context extras: device_typeid, devtype2str, default_ctx, cpu_pinned ----------
def test_device_typeid_and_the_type_tables():
    for ctx, typeid in [(mx.cpu(), 1), (mx.gpu(3), 2), (mx.context.cpu_pinned(), 3),
                        (mx.Context("cpu_shared"), 5)]:
        assert ctx.device_typeid == typeid
        assert mx.Context.devtype2str[typeid] == ctx.device_type
        assert mx.Context.devstr2type[ctx.device_type] == typeid


def test_cpu_pinned_holds_cpu_memory():
    ctx = mx.cpu_pinned(1)
    assert (ctx.device_type, ctx.device_id, ctx.compute_device) == ("cpu_pinned", 1, "cpu")
    x = mx.nd.ones((2,), ctx=ctx)
    assert x.context == ctx and x.asnumpy().tolist() == [1.0, 1.0]


def _default_ctx():
    with pytest.warns(DeprecationWarning, match="default_ctx"):
        return mx.Context.default_ctx


def _set_default_ctx(ctx):
    with pytest.warns(DeprecationWarning, match="default_ctx"):
        mx.Context.default_ctx = ctx


def test_default_ctx_reads_and_sets_this_threads_context():
    seen = []
    try:
        assert _default_ctx() == mx.cpu()
        _set_default_ctx(mx.gpu(11))
        assert mx.current_context() == mx.gpu(11) and _default_ctx() == mx.gpu(11)
        t = threading.Thread(target=lambda: seen.append(mx.current_context()))
        t.start()
        t.join()
        assert seen == [mx.cpu()]                   # other threads keep their own
        with mx.cpu(5):
            _set_default_ctx(mx.cpu(7))             # replaces the with block's context
            assert mx.current_context() == mx.cpu(7)
        assert mx.current_context() == mx.gpu(11)   # until the block ends
    finally:
        _set_default_ctx(mx.cpu())
    assert mx.current_context() == mx.cpu()


def test_default_ctx_takes_only_a_context():
    with pytest.raises(MXNetError, match="default_ctx: expected a Context"):
        _set_default_ctx("gpu")
