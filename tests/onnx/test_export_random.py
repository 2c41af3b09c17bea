"""The random samplers exported: ONNX draws from the runtime's stream, so each test checks
the shape, the dtype and the distribution (moments of many draws within five standard
errors, the support) instead of values. Exported at opset 21: onnxruntime 1.32 has no
kernels for the random operators of opset 22."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_eval, session

N = 40000          # draws per moment check: five standard errors is about 2.5% of sd


def _moments(x, mean, sd):
    x = np.asarray(x, np.float64).ravel()
    assert abs(x.mean() - mean) < 5 * sd / np.sqrt(x.size), (x.mean(), mean)
    assert abs(x.std() - sd) < 0.05 * sd, (x.std(), sd)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_random_uniform(dtype, tmp_path):
    (x,) = export_eval(mx.sym.random.uniform(-2, 3, shape=(200, 200), dtype=dtype), {}, tmp_path)
    assert x.min() >= -2 and x.max() <= 3
    _moments(x, 0.5, 5 / np.sqrt(12))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_normal(dtype, tmp_path):
    (x,) = export_eval(mx.sym.random.normal(1.5, 0.5, shape=(N,), dtype=dtype), {}, tmp_path)
    _moments(x, 1.5, 0.5)


def test_random_exponential(tmp_path):
    (x,) = export_eval(mx.sym.random.exponential(lam=4.0, shape=(100, 400)), {}, tmp_path)
    assert x.min() >= 0 and np.isfinite(x).all()
    _moments(x, 0.25, 0.25)


@pytest.mark.parametrize("name,kw,mean,sd", [
    ("uniform", dict(low=1.0, high=2.0), 1.5, 1 / np.sqrt(12)),
    ("normal", dict(loc=-1.0, scale=2.0), -1.0, 2.0),
    ("exponential", dict(lam=0.5), 2.0, 2.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_like_takes_the_shape_and_dtype_of_data(name, kw, mean, sd, dtype, tmp_path):
    data = np.zeros((N // 100, 100), dtype)
    sym = getattr(mx.sym._internal, f"_random_{name}_like")(mx.sym.var("d"), **kw)
    (x,) = export_eval(sym, {"d": data}, tmp_path)
    _moments(x, mean, sd)


def test_sample_uniform_per_distribution(tmp_path):
    low = np.array([0.0, 10.0], np.float32)
    high = np.array([1.0, 14.0], np.float32)
    (x,) = export_eval(mx.sym.sample_uniform(mx.sym.var("lo"), mx.sym.var("hi"), shape=(N,)),
                {"lo": low, "hi": high}, tmp_path)
    for row, lo, hi in zip(x, low, high):
        assert row.min() >= lo and row.max() <= hi
        _moments(row, (lo + hi) / 2, (hi - lo) / np.sqrt(12))


def test_sample_normal_per_distribution_2d_params_float64_out(tmp_path):
    mu = np.array([[0.0, 5.0], [-3.0, 1.0]], np.float32)
    sigma = np.array([[1.0, 0.1], [2.0, 3.0]], np.float32)
    (x,) = export_eval(mx.sym.sample_normal(mx.sym.var("mu"), mx.sym.var("sigma"), shape=(100, 200),
                                     dtype="float64"), {"mu": mu, "sigma": sigma}, tmp_path)
    for i in range(2):
        for j in range(2):
            _moments(x[i, j], mu[i, j], sigma[i, j])


def test_sample_exponential_without_shape(tmp_path):
    lam = np.array([0.5, 2.0, 8.0], np.float64)
    (x,) = export_eval(mx.sym.sample_exponential(mx.sym.var("lam")), {"lam": lam}, tmp_path)
    assert x.shape == (3,) and (x >= 0).all()
    lam = np.full((N,), 2.0, np.float32)
    (x,) = export_eval(mx.sym.sample_exponential(mx.sym.var("lam")), {"lam": lam}, tmp_path)
    _moments(x, 0.5, 0.5)


def test_sample_multinomial_frequencies_and_log_probabilities(tmp_path):
    p = np.array([[0.1, 0.2, 0.7, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32)   # row 2 unnormalised
    idx, logp = export_eval(mx.sym.sample_multinomial(mx.sym.var("p"), shape=(100, 100),
                                               get_prob=True), {"p": p}, tmp_path)
    assert idx.shape == (2, 100, 100) and idx.dtype == np.int32
    for row, probs in zip(idx, p):
        probs = probs / probs.sum()
        freq = np.bincount(row.ravel(), minlength=4) / row.size
        se = np.sqrt(probs * (1 - probs) / row.size)
        assert np.all(np.abs(freq - probs) <= 5 * se + 1e-12), (freq, probs)
    norm = p / p.sum(axis=1, keepdims=True)
    want = np.log(np.take_along_axis(norm, idx.reshape(2, -1), axis=1)).reshape(idx.shape)
    np.testing.assert_allclose(logp, want, rtol=1e-6)


def test_sample_multinomial_one_draw_int64(tmp_path):
    p = np.array([0.0, 0.0, 1.0], np.float64)
    (idx,) = export_eval(mx.sym.sample_multinomial(mx.sym.var("p"), dtype="int64"), {"p": p}, tmp_path)
    assert idx.shape == () and idx.dtype == np.int64 and int(idx) == 2


@pytest.mark.parametrize("low,high,dtype", [(-3, 4, "int32"), (10, 12, "int64"),
                                            (-(1 << 31), (1 << 31) - 1, "int32")])
def test_random_randint(low, high, dtype, tmp_path):
    (x,) = export_eval(mx.sym.random.randint(low, high, shape=(200, 200), dtype=dtype), {}, tmp_path)
    assert x.min() >= low and x.max() < high
    span = high - low
    _moments(x, low + (span - 1) / 2, np.sqrt((span ** 2 - 1) / 12))
    if span < 10:
        freq = np.bincount((x - low).ravel(), minlength=span) / x.size
        assert np.all(np.abs(freq - 1 / span) < 5 * np.sqrt((1 / span) / x.size))


def test_random_randint_wider_than_2_32_is_refused(tmp_path):
    y = mx.sym.random.randint(-(1 << 40), 1 << 40, shape=(2,), dtype="int64")
    with pytest.raises(mx.MXNetError, match="2\\*\\*32"):
        mx.onnx.export_model(y, {}, onnx_file_path=tmp_path / "m.onnx", opset_version=21)


@pytest.mark.parametrize("shape", [(7,), (3, 4, 2)])
def test_shuffle_permutes_the_rows(shape, tmp_path):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    (y,) = export_eval(mx.sym.random.shuffle(mx.sym.var("x")), {"x": x}, tmp_path)
    rows = sorted(map(tuple, y.reshape(shape[0], -1).tolist()))
    assert rows == sorted(map(tuple, x.reshape(shape[0], -1).tolist()))


def test_shuffle_is_uniform_over_permutations(tmp_path):
    """Each of the 6 orders of 3 rows about 1/6 of 1200 runs (five standard errors)."""
    x = np.arange(3, dtype=np.float32)
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(mx.sym.random.shuffle(mx.sym.var("x")), {}, in_shapes=[(3,)],
                         onnx_file_path=path, opset_version=21)
    run = session(path)
    counts = {}
    for _ in range(1200):
        key = tuple(run({"x": x})[0].tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    se = np.sqrt(1200 * (1 / 6) * (5 / 6))
    assert all(abs(v - 200) < 5 * se for v in counts.values()), counts


PDF_CASES = [
    ("uniform", [np.array([0.0, -1.0], np.float32), np.array([1.0, 2.0], np.float32)],
     np.array([[-0.5, 0.0, 0.3, 1.0, 1.5], [-2, -1, 0, 2, 3]], np.float32)),
    ("normal", [np.array([0.0, 1.5], np.float32), np.array([1.0, 0.5], np.float32)],
     np.array([[-2.0, 0.0, 0.4], [1.0, 1.5, 3.0]], np.float32)),
    ("exponential", [np.array([[0.5, 2.0]], np.float32)],
     np.array([[[-1.0, 0.0, 0.7], [2.0, 0.1, 5.0]]], np.float32)),
]


@pytest.mark.parametrize("name,params,sample", PDF_CASES, ids=[c[0] for c in PDF_CASES])
@pytest.mark.parametrize("is_log", [False, True])
def test_pdf(name, params, sample, is_log, tmp_path):
    from test_export_linalg import check
    check(lambda F, s, *p: getattr(F._internal, f"_random_pdf_{name}")(s, *p, is_log=is_log),
          [sample] + params, 1e-6, tmp_path)


def test_random_uniform_float64_bounds_are_not_rounded_to_float32(tmp_path):
    """ONNX's low/high attributes are float32: the bounds enter as float64 constants."""
    (x,) = export_eval(mx.sym.random.uniform(0.1, 0.1 + 1e-12, shape=(1000,), dtype="float64"), {},
                tmp_path)
    assert x.min() >= 0.1 and x.max() < 0.1 + 1e-12
