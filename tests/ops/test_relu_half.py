"""Activation(act_type='relu') on float16 runs on the bits (mxlite/_core/activation.pyx
``relu_half``): every float16 bit pattern must give what relu in float32 and the cast back
give, in place and not, over sizes that take the threaded chunks."""
import numpy as np
import pytest

import mxlite as mx

pytestmark = pytest.mark.cpu_only       # the CPU's kernel (the GPU runs its own)


def _reference(x):
    """relu in float32 (x < 0 ? 0 : x) rounded back to float16, as bits."""
    w = x.astype(np.float32)
    return np.where(w < 0, np.float32(0), w).astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("size", [7, 65536, 3 * 2 ** 20 + 5])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_float16_bits(size, inplace):
    x = np.resize(np.arange(65536, dtype=np.uint16), size).view(np.float16)
    a = mx.nd.array(x, dtype="float16")
    y = mx.nd.Activation(a, act_type="relu", out=a if inplace else None)
    assert (y.asnumpy().view(np.uint16) == _reference(x)).all()


def test_relu_float16_in_place_mixed_chunks():
    """In place, chunks without negatives are skipped: the others still get written."""
    x = np.ones(2 ** 20, np.float16)
    x[[5, 300000, 2 ** 20 - 1]] = -2
    x[400000] = -0.0
    a = mx.nd.array(x, dtype="float16")
    mx.nd.Activation(a, act_type="relu", out=a)
    assert (a.asnumpy().view(np.uint16) == _reference(x)).all()
