"""oneDNN is optional at import: without its library mxlite imports, says why, and computes
every op on the reference kernels."""
import os
import subprocess
import sys


def test_without_the_library_every_op_runs_on_the_reference_kernels():
    code = ("import numpy as np, mxlite as mx; from mxlite.ops import onednn\n"
            "x = mx.nd.array(np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5))\n"
            "w = mx.nd.ones((4, 3, 3, 3))\n"
            "y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)\n"
            "d = mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((4, 2)))\n"
            "print(onednn.available(), y.asnumpy()[1, 2, 0, 0], d.asnumpy()[0, 0])\n"
            "print(onednn.status())")
    env = {**os.environ, "MXLITE_ONEDNN_LIBRARY": "/nonexistent/libdnnl.so.3"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    # y[1, 2, 0, 0] = the sum of image 1's 3x3x3 corner window: x = 75 + 25c + 5i + j
    corner = sum(75 + 25 * c + 5 * i + j for c in range(3) for i in range(3) for j in range(3))
    assert out[0] == f"False {float(corner)} 4.0"
    assert out[1].startswith("oneDNN not loaded (/nonexistent/libdnnl.so.3)")
