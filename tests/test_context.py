"""Device contexts (mxlite/context.py): cpu(), gpu(i), current_context() and ``with ctx:``."""
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


@pytest.mark.skipif(mx.num_gpus() > 0, reason="a GPU is present")
def test_data_on_a_gpu_without_a_gpu_is_an_error_that_says_why():
    for make in (lambda: mx.nd.array([1.0], ctx=mx.gpu(0)), lambda: mx.nd.zeros((2,), ctx=mx.gpu()),
                 lambda: mx.nd.ones((2,)).as_in_context(mx.gpu())):
        with pytest.raises(MXNetError, match="no GPU backend: CuPy"):
            make()


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
