"""Random numbers on GPU (mxlite/cuda/ops/random.py): for one seed the GPU gives the CPU's
numbers, whatever the launch configuration.

The CPU's samples are computed first (a module fixture, before the ``device`` fixture
refuses the CPU kernels), then each test draws the same call on the GPU with the GPU's
stream seeded alike. Bit-identical: uniform, randint, Dropout, multinomial's indices,
shuffle, _rrelu_slope. normal/exponential: within a few ulp (the CUDA math library against
the host's libm); exactly under the host emulator, which runs the host's libm. The
rejection samplers (gamma, Poisson, negative binomials): exactly under the emulator, and on
a CUDA device all but a rare element whose accept/reject test an ulp flips.
"""
import re

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError
from mxlite.cuda import emulator, kernels, launch, runtime
from mxlite.device.rng import device_key
from mxlite.ops import random as R

SEED = 20261123
ODD = (1, 7, 4099)                 # a partial Philox block, a few blocks, many


def _rows(k):
    p = np.random.default_rng(k).random((6, k))
    p[1, : k // 2] = 0.0           # zero probabilities are never drawn
    return p


def _rrelu_slopes():
    with autograd.train_mode():
        x = mx.nd.array(np.linspace(-3, 3, 1001))
        return mx.nd.LeakyReLU(x, act_type="rrelu")


# name -> a call; every call is made on the current context
EXACT = {
    **{f"uniform-{dt}-{n}": (lambda dt=dt, n=n: mx.nd.random.uniform(-2, 3, shape=(n,), dtype=dt))
       for dt in ("float16", "float32", "float64") for n in ODD},
    "uniform-float16-to-high": lambda: mx.nd.random.uniform(0, 1, shape=(4099,), dtype="float16"),
    "uniform-width-overflows": lambda: mx.nd.random.uniform(-1e308, 1e308, shape=(9,),
                                                            dtype="float64"),
    "uniform-like": lambda: mx.nd.random.uniform_like(mx.nd.ones((3, 5), dtype="float16")),
    **{f"randint-{dt}-{lo}-{hi}-{n}": (lambda dt=dt, lo=lo, hi=hi, n=n:
                                       mx.nd.random.randint(lo, hi, shape=(n,), dtype=dt))
       for dt, lo, hi in (("int32", -3, 4), ("int32", -2 ** 31, 2 ** 31),
                          ("int32", -2 ** 31, 1), ("int64", 0, 3 * 2 ** 30 + 1),
                          ("int64", 5, 2 ** 40 + 3), ("int64", -2 ** 62, 2 ** 62 + 1),
                          ("int64", -2 ** 63, 2 ** 63), ("int64", -2 ** 63, 2 ** 63 - 1),
                          ("int64", 2 ** 63 - 1, 2 ** 63))
       for n in ODD},
    "multinomial-float64": lambda: mx.nd.random.multinomial(
        mx.nd.array(_rows(13), dtype="float64"), shape=(7, 3), get_prob=True)[0],
    "multinomial-float32-float16-index": lambda: mx.nd.random.multinomial(
        mx.nd.array(_rows(300), dtype="float32"), shape=5, dtype="float16"),
    "shuffle-rows": lambda: mx.nd.random.shuffle(mx.nd.arange(3000).reshape((1000, 3))),
    "shuffle-int8": lambda: mx.nd.random.shuffle(mx.nd.array(np.arange(513) % 100, dtype="int8")),
    "shuffle-float16": lambda: mx.nd.random.shuffle(mx.nd.array(np.arange(77.0), dtype="float16")),
    "dropout-float32": lambda: mx.nd.Dropout(mx.nd.ones((31, 43)), p=0.3, mode="always"),
    "dropout-float64-axes": lambda: mx.nd.Dropout(mx.nd.ones((31, 43, 5), dtype="float64"),
                                                  p=0.6, mode="always", axes=(0, 2)),
    "dropout-float16": lambda: mx.nd.Dropout(
        mx.nd.array(np.linspace(-2000, 2000, 4099), dtype="float16"), p=0.3, mode="always"),
    "dropout-float16-axes": lambda: mx.nd.Dropout(
        mx.nd.array(np.linspace(-7, 7, 31 * 43 * 5).reshape(31, 43, 5), dtype="float16"),
        p=0.6, mode="always", axes=(1,)),
    "rrelu-slopes": _rrelu_slopes,
    "rrelu_slope-float16": lambda: mx.nd._internal._rrelu_slope(
        mx.nd.array(np.linspace(-3, 3, 101), dtype="float16"),
        mx.nd.array(np.linspace(-1, 2, 101), dtype="float16")),
}
# name -> (call, most ulps apart on a CUDA device)
CLOSE = {
    **{f"normal-{dt}-{n}": (lambda dt=dt, n=n: mx.nd.random.normal(0, 1, shape=(n,), dtype=dt),
                            1 if dt == "float16" else 4)
       for dt in ("float16", "float32", "float64") for n in ODD},
    **{f"exponential-{dt}": (lambda dt=dt: mx.nd.random.exponential(1.5, shape=(4099,), dtype=dt),
                             1 if dt == "float16" else 2)
       for dt in ("float16", "float32", "float64")},
    "multinomial-logp": (lambda: mx.nd.random.multinomial(
        mx.nd.array(_rows(13), dtype="float64"), shape=(7, 3), get_prob=True)[1], 2),
}
STREAM = {f"{dist}-{dt}": (lambda dist=dist, args=args, dt=dt:
                           getattr(mx.nd.random, dist)(*args, shape=(3001,), dtype=dt))
          for dist, args in (("gamma", (0.7, 2.0)), ("gamma", (3.5, 0.5)),
                             ("poisson", (4.0,)), ("poisson", (40.0,)),
                             ("negative_binomial", (3, 0.4)),
                             ("generalized_negative_binomial", (2.0, 0.3)))
          for dt in ("float16", "float32", "float64")}
STREAM["gamma-float64-small-shape"] = lambda: mx.nd.random.gamma(0.05, 1.0, shape=(999,),
                                                                 dtype="float64")


def _draw(call):
    """The first random call after seeding the current device: its outputs as NumPy."""
    mx.random.seed(SEED, ctx=mx.current_context())
    out = call()
    return out.asnumpy()


def _poisson_overflow():
    return mx.nd.random.poisson(5000.0, shape=(100,), dtype="float16")


@pytest.fixture(scope="module")
def cpu():
    """Every case's CPU samples, and the error of a count beyond float16's exact range."""
    calls = {**EXACT, **{k: c for k, (c, _) in CLOSE.items()}, **STREAM}
    with mx.cpu():
        samples = {name: _draw(call) for name, call in calls.items()}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(R, "_poisson_rate_ok", lambda rate, limit: True)
            with pytest.raises(MXNetError) as e:
                _draw(_poisson_overflow)
        samples["poisson-overflow-message"] = str(e.value)
    return samples


@pytest.fixture
def gpu(device):
    """The GPU context (the ``cpu`` run of the device fixture has nothing to compare)."""
    if device.device_type != "gpu":
        pytest.skip("compares the GPU with the CPU")
    return device


def _same_kind(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bit_identical_to_the_cpu(name, gpu, cpu):
    got, want = _draw(EXACT[name]), cpu[name]
    _same_kind(got, want)
    assert got.tobytes() == want.tobytes(), f"{name}: GPU and CPU samples differ"


def _ulps(a, b):
    """How many representable values apart a and b are, elementwise (same dtype, finite)."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]

    def ordered(x):
        i = x.view(bits).astype(np.int64)
        return np.where(i < 0, np.iinfo(bits).min - i, i)
    return np.abs(ordered(a) - ordered(b))


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_math_library_samplers_within_a_few_ulp(name, gpu, cpu):
    call, most = CLOSE[name]
    got, want = _draw(call), cpu[name]
    _same_kind(got, want)
    if runtime.backend() == "emulator":        # the host's libm on both sides
        assert got.tobytes() == want.tobytes()
    else:
        assert _ulps(got, want).max() <= most


def test_ulps_counts_representable_values():
    one = np.array([1.0], np.float32)
    up = np.nextafter(one, np.float32(2))
    assert _ulps(one, up)[0] == 1 and _ulps(-one, -np.nextafter(up, np.float32(2)))[0] == 2
    assert _ulps(np.array([-0.0]), np.array([np.nextafter(0.0, 1.0)]))[0] == 1


@pytest.mark.parametrize("name", sorted(STREAM))
def test_rejection_samplers_match_the_cpu(name, gpu, cpu):
    got, want = _draw(STREAM[name]), cpu[name]
    _same_kind(got, want)
    if runtime.backend() == "emulator":
        assert got.tobytes() == want.tobytes()
    else:          # an accept/reject test an ulp away from its threshold may flip
        close = np.isclose(got, want, rtol=1e-5 if got.dtype == np.float64 else 2e-3, atol=0)
        assert close.mean() >= 0.999


@pytest.fixture(params=[(1, 1), (5, 7), (64, 32)], ids=lambda gb: f"grid{gb[0]}x{gb[1]}")
def launch_config(request, gpu, monkeypatch):
    """A function that switches the kernels to another launch configuration (grid, block)
    for the rest of the test."""
    grid, block = request.param

    def switch():
        if runtime.backend() == "emulator":
            monkeypatch.setattr(emulator, "GRID", grid)
            monkeypatch.setattr(emulator, "BLOCK", block)
        else:
            import cupy
            monkeypatch.setattr(launch, "BLOCK", block)
            monkeypatch.setitem(launch._GRID_LIMIT, cupy.cuda.runtime.getDevice(), grid)
    return switch


@pytest.mark.parametrize("name", ["uniform-float32-4099", "uniform-float16-7",
                                  "randint-int32--2147483648-1-4099",
                                  "randint-int64--4611686018427387904-4611686018427387905-4099",
                                  "dropout-float64-axes", "dropout-float16",
                                  "multinomial-float64", "shuffle-rows",
                                  "normal-float32-4099", "normal-float64-7", "poisson-float32",
                                  "gamma-float64"])
def test_samples_do_not_depend_on_the_launch_configuration(name, launch_config):
    call = {**EXACT, **{k: c for k, (c, _) in CLOSE.items()}, **STREAM}[name]
    reference = _draw(call)
    launch_config()
    assert _draw(call).tobytes() == reference.tobytes()


def test_each_device_has_its_own_stream(gpu):
    mx.random.seed(5)                                   # every device
    cpu_key, gpu_key = device_key(mx.cpu()), device_key(gpu)
    mx.nd.random.uniform(shape=(3,))
    mx.nd.random.randint(0, 9, shape=(2,))
    assert mx.random.get_state(gpu_key) == (5, 2)
    assert mx.random.get_state(cpu_key) == (5, 0)
    mx.random.seed(6, ctx=gpu)                          # this GPU only
    assert mx.random.get_state(gpu_key) == (6, 0) and mx.random.get_state(cpu_key) == (5, 0)
    first = mx.nd.random.uniform(shape=(10,)).asnumpy()
    second = mx.nd.random.uniform(shape=(10,)).asnumpy()
    assert not np.array_equal(first, second)
    mx.random.seed(6, ctx=gpu)
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(10,)).asnumpy(), first)


def test_dropout_keeps_with_probability_one_minus_p_and_scales(gpu):
    x = np.random.default_rng(1).standard_normal((50, 40)) + 5.0
    y = mx.nd.Dropout(mx.nd.array(x, dtype="float64"), p=0.25, mode="always").asnumpy()
    ratio = y / x
    kept = np.isclose(ratio, 1 / 0.75, rtol=1e-15, atol=0)
    assert (kept | (ratio == 0)).all()
    assert 0.7 < kept.mean() < 0.8
    with autograd.predict_mode():
        np.testing.assert_array_equal(mx.nd.Dropout(mx.nd.array(x), p=0.25).asnumpy(),
                                      x.astype(np.float32))


def test_a_count_beyond_the_exact_limit_raises_the_cpu_error(gpu, cpu, monkeypatch):
    """The CPU and GPU check the same samples (float16 counts above 2048, when the
    parameter check that makes them improbable is switched off)."""
    monkeypatch.setattr(R, "_poisson_rate_ok", lambda rate, limit: True)
    with pytest.raises(MXNetError, match=r"_random_poisson: drew \d+, above 2048") as e:
        _draw(_poisson_overflow)
    if runtime.backend() == "emulator":
        assert str(e.value) == cpu["poisson-overflow-message"]
    mx.random.seed(9, ctx=gpu)
    with pytest.raises(MXNetError, match=r"_random_poisson: drew \d+, above 16777216"):
        mx.nd.random.poisson(2e7, shape=(100,), dtype="float32")


def test_multinomial_bad_row_is_the_first_one(gpu):
    p = np.ones((3, 4, 5))
    p[1, 2, 0] = -1.0
    p[2, 0, 3] = np.nan
    with pytest.raises(MXNetError, match=r"row \(1, 2\) of data \(shape \(3, 4, 5\)\)"):
        mx.nd.random.multinomial(mx.nd.array(p, dtype="float64"))
    with pytest.raises(MXNetError, match=r"row \(0,\)"):
        mx.nd.random.multinomial(mx.nd.zeros((2, 3)))


def test_empty_outputs(gpu):
    assert mx.nd.random.uniform(shape=(0, 3)).shape == (0, 3)
    assert mx.nd.random.poisson(3.0, shape=(0,)).shape == (0,)
    assert mx.nd.random.randint(0, 5, shape=(4, 0), dtype="int64").shape == (4, 0)
    assert mx.nd.random.multinomial(mx.nd.ones((0, 3)), shape=2).shape == (0, 2)
    assert mx.nd.random.shuffle(mx.nd.ones((3, 0))).shape == (3, 0)


def test_kernels_index_with_64_bits():
    """Arrays past 2^32 elements: every random kernel walks a 64-bit grid-stride loop and
    declares no 32-bit index (``int`` only for the unrolled position j in a Philox block and
    the uniform sampler's number of random bits)."""
    for family in ("random", "rrelu_slope"):
        for name, k in kernels.family(family).items():
            assert "MX_GRID_LOOP(" in k.code, name
            ints = re.findall(r"\b(?:int|unsigned)\s+(\w+)", k.code)
            assert set(ints) <= {"j", "bits"}, f"{name}: 32-bit variables {ints}"
