"""mxlite quick start: the MXNet 1.x NDArray API on a lean core.

Run with ``python examples/quickstart.py``. Each result is printed as ``label = value``
(a Python literal), which tests/test_examples.py checks against NumPy.
"""
import numpy as np

import mxlite as mx


def show(label, x):
    """Print an NDArray (or number) as a Python literal, rounded for reading."""
    value = x.asnumpy() if isinstance(x, mx.nd.NDArray) else np.asarray(x)
    if value.dtype.kind == "f":
        value = np.round(value.astype(np.float64), 4)
    print(f"{label} = {value.tolist()}")


# Creation: float32 by default, like MXNet; every op takes a dtype where MXNet does.
x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
b = mx.nd.arange(10, 40, 10)                 # [10, 20, 30]
ones = mx.nd.ones((2, 3), dtype="int32")
show("x", x)
show("ones + 1 (int32)", ones + 1)

# Arithmetic broadcasts as in NumPy: (2, 3) * scalar + (3,)
show("x * 2 + b", x * 2 + b)
show("broadcast_mul(x, col)", mx.nd.broadcast_mul(x, mx.nd.array([[1], [-1]])))

# Unary math runs in Cython kernels (float16 is computed in float32).
z = mx.nd.exp(x / 6)
show("exp(x / 6)", z)
show("sqrt(x)", mx.nd.sqrt(x))

# Reductions (integer inputs accumulate in 64 bits).
show("sum(z, axis=1)", mx.nd.sum(z, axis=1))
show("mean(x)", mx.nd.mean(x))
show("argmax(x, axis=1)", mx.nd.argmax(x, axis=1))

# A first-axis slice is a view that writes through, as in MXNet.
y = x.copy()
row = y[1]
row[:] = 0
show("y after y[1][:] = 0", y)
show("x (unchanged)", x)

# Matrix product through NumPy's BLAS.
show("dot(x, x.T)", mx.nd.dot(x, x.T))

# Gradients of any order: each operator's gradient is built from registered operators,
# so the gradient itself can be differentiated. f(t) = t sin t.
t = mx.nd.array([0.5, 1.0])
t.attach_grad()
with mx.autograd.record():
    f = mx.nd.sin(t) * t
    (df,) = mx.autograd.grad(f, t, create_graph=True)   # sin t + t cos t, still on the tape
df.backward()                                         # t.grad = f'' = 2 cos t - t sin t
show("f'(t)", df)
show("f''(t)", t.grad)

# Bad arguments raise MXNetError naming the operator and the shapes.
try:
    mx.nd.broadcast_add(x, mx.nd.ones((4,)))
except mx.MXNetError as err:
    print("error:", err)
