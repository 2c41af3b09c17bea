"""Third derivative of sin(x) by three nested autograd.grad(create_graph=True) calls.

d/dx sin = cos, d2/dx2 sin = -sin, d3/dx3 sin = -cos: every gradient is itself built from
registered ops, so it can be differentiated again.
"""
import numpy as np

import mxlite as mx
from mxlite import autograd


def third_derivative_of_sin(values):
    """Return (f', f'', f''') of sin at ``values`` as NumPy arrays."""
    x = mx.nd.array(values, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = mx.nd.sin(x)
        (d1,) = autograd.grad(y, x, create_graph=True)
        (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    return d1.asnumpy(), d2.asnumpy(), d3.asnumpy()


if __name__ == "__main__":
    xs = np.linspace(-2.0, 2.0, 5)
    d1, d2, d3 = third_derivative_of_sin(xs)
    print("x        ", xs)
    print("sin'     ", d1, "max error", np.abs(d1 - np.cos(xs)).max())
    print("sin''    ", d2, "max error", np.abs(d2 + np.sin(xs)).max())
    print("sin'''   ", d3, "max error", np.abs(d3 + np.cos(xs)).max())
