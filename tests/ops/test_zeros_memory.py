"""``mx.nd.zeros`` on the CPU (OpDef.cpu_result): a large array of zeros takes no memory and
no time until it is written, as NumPy's does; what it holds and what a write, a graph and
``out=`` give are the same as before."""
import numpy as np
import pytest

import mxlite as mx

pytestmark = pytest.mark.cpu_only

MB = 2 ** 20


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def test_a_large_zeros_takes_memory_only_where_written():
    before = rss_mb()
    x = mx.nd.zeros((256 * MB // 4,), dtype="float32")
    assert rss_mb() - before < 32
    assert float(x.sum().asscalar()) == 0.0       # reading zeros maps no new memory
    assert rss_mb() - before < 32
    x[:MB] = 1.0                                  # 4 MB written
    assert float(x.sum().asscalar()) == MB
    x[:] = 2.0                                    # now all of it
    assert rss_mb() - before > 200


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "bool", "bfloat16"])
def test_zeros_of_every_dtype_and_shape(dtype):
    for shape in [(0,), (3,), (2, 3, 4), (1, 0, 2)]:
        x = mx.nd.zeros(shape, dtype=dtype)
        assert x.shape == shape and x.dtype == mx.nd.array([0], dtype=dtype).dtype
        assert not np.asarray(x.asnumpy(), np.float64).any()


def test_out_and_graphs_still_fill_their_arrays():
    out = mx.nd.ones((4, 5))
    mx.nd.zeros((4, 5), out=out)
    assert not out.asnumpy().any()
    y = mx.sym.zeros((2, 3)) + mx.sym.var("a")
    got = y.eval(a=mx.nd.ones((2, 3)))[0].asnumpy()
    np.testing.assert_array_equal(got, np.ones((2, 3), np.float32))
