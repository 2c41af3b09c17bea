"""Image resize (``mx.nd.image.resize``): the compiled tap filter (mxlite/_core/resample.pyx)
beside the NumPy tap path it replaced on the CPU and torch's ``F.interpolate`` (an optional
benchmark dependency; torch >= 2 resizes uint8 and float channels-last tensors), bilinear and
bicubic, on a decoded-photo size (375x500x3 uint8 to 256x341, the ImageIter case) and a
float32 batch (32, 224, 224, 3) to 112x112.

    python benchmarks/bench_resize.py                       # medians, quartiles, ratios
    /tmp/torchvenv/bin/python benchmarks/bench_resize.py    # with torch beside
    python benchmarks/bench_resize.py --repeat 41 --json out.json
    pytest benchmarks/bench_resize.py                       # pytest-benchmark tables

"numpy path" is the same operator with ``_interpolate`` switched to the NumPy tap path
(``mxlite.ops.image._interpolate_xp``, what the GPU namespace still runs), so both include
the operator's overhead and tap tables. The backends are interleaved (one call of each per
repeat, in turn), so load that comes and goes on a shared machine falls on all alike; each
reports its median time with the quartiles, and the median of the per-repeat ratios
``kernel / other`` with their quartiles (below 1: the kernel is faster). Results are
checked before timing: the kernel against the NumPy path bit for bit, torch within its
rounding (float: 1e-4 of the range; uint8: within 1 of torch's float32 result rounded and
clipped, since torch's own uint8 path clips the overshoot of bicubic between its passes).
"""
import argparse
import contextlib
import json
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:                 # run from a checkout without installing
    sys.path.insert(0, ROOT)

import mxlite as mx  # noqa: E402
from mxlite.ops import image as _image  # noqa: E402
from timing import interleaved, quartiles  # noqa: E402

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None

# (name, input shape, dtype, (out height, out width))
SIZES = [("photo", (375, 500, 3), "uint8", (256, 341)),
         ("batch", (32, 224, 224, 3), "float32", (112, 112))]
MODES = {1: "bilinear", 2: "bicubic"}


@contextlib.contextmanager
def numpy_path():
    """The resize operators on the NumPy tap path (the code before the kernel)."""
    kernel = _image._interpolate

    def xp_path(rctx, x, out, taps_h, taps_w):
        _image._interpolate_xp(rctx.xp, x, out, taps_h, taps_w)
    _image._interpolate = xp_path
    try:
        yield
    finally:
        _image._interpolate = kernel


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.random(shape).astype(dtype)


def mxlite_steps(size, interp):
    """{"kernel": fn, "numpy path": fn}, each returning the resized NDArray."""
    _, shape, dtype, (oh, ow) = size
    x = mx.nd.array(_data(shape, dtype), dtype=dtype)

    def kernel():
        y = mx.nd.image.resize(x, size=(ow, oh), interp=interp)
        y.wait_to_read()
        return y

    def numpy_tap_path():
        with numpy_path():
            return kernel()

    return {"kernel": kernel, "numpy path": numpy_tap_path}


def torch_step(size, interp):
    """F.interpolate of the same data as an (N, C, H, W) view of channels-last memory."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    _, shape, dtype, (oh, ow) = size
    x = torch.from_numpy(_data(shape, dtype))
    x = (x[None] if x.dim() == 3 else x).permute(0, 3, 1, 2)     # NCHW, channels-last strides

    def step():
        y = torch.nn.functional.interpolate(x, size=(oh, ow), mode=MODES[interp],
                                            align_corners=False)
        return y.permute(0, 2, 3, 1)                              # back to NHWC (a view)

    return step


def _as_numpy(v):
    return v.asnumpy() if isinstance(v, mx.nd.NDArray) else v.numpy()


def check(size, interp):
    """The kernel equals the NumPy path bit for bit, and torch within its rounding."""
    steps = mxlite_steps(size, interp)
    got = _as_numpy(steps["kernel"]())
    np.testing.assert_array_equal(got, _as_numpy(steps["numpy path"]()))
    if torch is not None:
        want = _torch_float(size, interp).reshape(got.shape)
        if got.dtype == np.uint8:       # torch's own uint8 path clips between its passes
            want = np.clip(np.rint(want), 0, 255)
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
        else:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def _torch_float(size, interp):
    """torch's float32 interpolation of the data (the reference of the check)."""
    _, shape, dtype, (oh, ow) = size
    x = torch.from_numpy(_data(shape, dtype).astype(np.float32))
    x = (x[None] if x.dim() == 3 else x).permute(0, 3, 1, 2)
    y = torch.nn.functional.interpolate(x, size=(oh, ow), mode=MODES[interp],
                                        align_corners=False)
    return y.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("backend", ["kernel", "numpy path", "torch"])
@pytest.mark.parametrize("interp", sorted(MODES))
@pytest.mark.parametrize("size", SIZES, ids=[s[0] for s in SIZES])
def test_resize(benchmark, size, interp, backend):
    fn = torch_step(size, interp) if backend == "torch" else mxlite_steps(size, interp)[backend]
    if fn is None:
        pytest.skip("torch is not installed")
    check(size, interp)
    benchmark.group = f"resize {size[0]} {MODES[interp]}"
    benchmark(fn)


def measure(size, interp, repeat):
    """{backend or ratio: summary} of one size and mode."""
    check(size, interp)
    fns = dict(mxlite_steps(size, interp))
    step = torch_step(size, interp)
    if step is not None:
        fns["torch"] = step
    rounds = interleaved(fns, repeat)
    out = {k: quartiles(v) for k, v in rounds.items()}
    for other in ("numpy path", "torch"):
        if other in rounds:
            ratio = np.asarray(rounds["kernel"]) / np.asarray(rounds[other])
            out[f"kernel / {other}"] = quartiles(ratio)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    results = {}
    for size in SIZES:
        name, shape, dtype, (oh, ow) = size
        for interp, mode in MODES.items():
            res = measure(size, interp, args.repeat)
            results[f"{name} {mode}"] = res
            print(f"resize {shape} {dtype} to {oh}x{ow}, {mode}:")
            for key, s in res.items():
                unit, scale = ("x", 1) if "/" in key else ("ms", 1e3)
                print(f"  {key:24s} median {s['median'] * scale:9.3f} {unit}  "
                      f"(q1 {s['q1'] * scale:.3f}, q3 {s['q3'] * scale:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
