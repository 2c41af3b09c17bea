"""ONNX export of the densities with log-gamma terms (``_random_pdf_gamma``, ``poisson``, the
negative binomials, ``dirichlet``) and of the operators of ``translations/misc.py``, on
one-op graphs: exported, checked (full check), run in onnxruntime and compared with
``mx.nd``."""
import math

import numpy as np
import pytest

import mxlite as mx
from onnx_harness import check as _check, export_and_run, run_onnx, session

rng = np.random.default_rng(11)


def check(fn, inputs, rtol, tmp_path, **kwargs):
    """The harness's check with an absolute tolerance of rtol / 1000 (infinities where
    mxlite has them compare equal)."""
    return _check(fn, inputs, rtol, tmp_path, atol_ratio=1e-3, **kwargs)


# ---- densities -------------------------------------------------------------------------------
# samples with points outside the support (negative, +inf) and at its edge (0)
COUNTS = np.array([[-1.0, 0.0, 1.0, 2.0, 7.0, np.inf], [0.0, 0.5, 3.0, 10.0, 40.0, -0.5]])
POSITIVE = np.array([[-1.0, 0.0, 0.3, 1.0, 4.0, np.inf], [0.0, 0.01, 0.7, 2.5, 9.0, -2.0]])
DENSITY_CASES = [
    # name, parameters, sample: 1-d parameters with 2-d samples, 2-d with 3-d
    ("gamma", [[1.0, 0.3], [2.0, 0.5]], POSITIVE),
    ("gamma", [[[4.0], [0.8]], [[1.5], [3.0]]], POSITIVE[:, None, :]),
    ("poisson", [[1e-3, 7.5]], COUNTS),
    ("poisson", [[[2.0, 30.0]]], COUNTS[None]),
    ("negative_binomial", [[2.0, 0.7], [0.5, 1.0]], COUNTS),
    ("negative_binomial", [[[3.0], [1.5]], [[1e-6], [0.25]]], COUNTS[:, None, :]),
    ("generalized_negative_binomial", [[2.0, 3.0], [0.0, 0.4]], COUNTS),
    ("generalized_negative_binomial", [[[0.5], [12.0]], [[2.0], [1e-3]]], COUNTS[:, None, :]),
]


def _tolerance(dtype):
    return {"float16": 2e-3, "float32": 2e-6, "float64": 1e-11}[dtype]


@pytest.mark.parametrize("name,params,sample", DENSITY_CASES,
                         ids=[f"{c[0]}_{i}" for i, c in enumerate(DENSITY_CASES)])
@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_pdf(name, params, sample, is_log, dtype, tmp_path):
    inputs = [np.asarray(sample, dtype)] + [np.asarray(p, dtype) for p in params]
    got = check(lambda F, s, *p: getattr(F._internal, f"_random_pdf_{name}")(
        s, *p, is_log=is_log), inputs, _tolerance(dtype), tmp_path)
    # outside the support: density 0, log-density -inf
    outside = (inputs[0] < 0) | np.isinf(inputs[0])
    outside = np.broadcast_to(outside, got[0].shape)
    assert (got[0][outside] == (-np.inf if is_log else 0)).all()


def test_pdf_poisson_against_the_closed_form(tmp_path):
    """lam^x exp(-lam) / x! at integer counts, independently of mxlite."""
    import math
    lam = np.array([0.5, 12.0])
    x = np.array([[0.0, 1.0, 3.0, 9.0], [0.0, 5.0, 12.0, 30.0]])
    (got,) = check(lambda F, s, p: F._internal._random_pdf_poisson(s, p), [x, lam], 1e-11,
                   tmp_path)
    want = [[lam[i] ** k * math.exp(-lam[i]) / math.factorial(int(k)) for k in row]
            for i, row in enumerate(x)]
    np.testing.assert_allclose(got, want, rtol=1e-11)


def test_pdf_generalized_negative_binomial_keeps_log1p_precision(tmp_path):
    """At x = 0 the log-density is -k log(1 + mu alpha), k = 1 / alpha: for mu = 1e-3,
    alpha = 1e-6, -1e6 log1p(1e-9), where log(1 + 1e-9)'s rounding (1e-16) times k would
    be a 1e-7 relative error."""
    import math
    mu, alpha = np.array([1e-3, 2.0]), np.array([1e-6, 1.0])
    x = np.array([[0.0], [0.0]])
    (got,) = check(lambda F, s, m, a: F._internal._random_pdf_generalized_negative_binomial(
        s, m, a, is_log=True), [x, mu, alpha], 1e-11, tmp_path)
    np.testing.assert_allclose(got[:, 0], [-1e6 * math.log1p(1e-9), -math.log(3.0)],
                               rtol=1e-11)


GRADIENT_CASES = [
    ("gamma", (2, 4), [(0.5, 2.0), (0.5, 2.0)], False),
    ("poisson", (2, 4), [(0.5, 6.0)], True),
    ("negative_binomial", (2, 3, 4), [(0.5, 3.0), (0.2, 0.8)], True),
    ("generalized_negative_binomial", (2, 4), [(0.5, 3.0), (0.2, 0.8)], True),
]


@pytest.mark.parametrize("name,shape,domains,counts", GRADIENT_CASES,
                         ids=[c[0] for c in GRADIENT_CASES])
def test_pdf_gradient_graph(name, shape, domains, counts, tmp_path):
    """The parameters' gradient of the density (mx.sym.grad: _polygamma and element-wise
    operators around the density) exports and matches mx.autograd."""
    r = np.random.default_rng(len(name))
    x = r.uniform(0.1, 5.0, shape)
    x = np.floor(x) if counts else x
    values = {"x": x, **{f"p{i}": r.uniform(*d, shape[:1]) for i, d in enumerate(domains)}}
    _gradient_matches(lambda F, v: getattr(F, f"random_pdf_{name}")(
        *v.values()), values, list(values)[1:], tmp_path)


def test_pdf_dirichlet_gradient_graph(tmp_path):
    r = np.random.default_rng(4)
    values = {"x": r.dirichlet([1.0, 2.0, 3.0], size=(2, 5)), "alpha": r.uniform(0.5, 3, (2, 3))}
    _gradient_matches(lambda F, v: F.random_pdf_dirichlet(v["x"], v["alpha"], is_log=True),
                      values, ["x", "alpha"], tmp_path)


def _gradient_matches(fn, values, wrt, tmp_path):
    """d sum(fn) / d wrt by mx.sym.grad, exported and run, against mx.autograd."""
    v = {n: mx.sym.var(n, shape=a.shape, dtype=a.dtype) for n, a in values.items()}
    graph = mx.sym.Group(mx.sym.grad(mx.sym.sum(fn(mx.sym, v)), [v[n] for n in wrt]))
    got = export_and_run(graph, {}, {n: values[n] for n in graph.list_arguments()}, tmp_path)
    arrays = {n: mx.nd.array(a, dtype=a.dtype) for n, a in values.items()}
    for n in wrt:
        arrays[n].attach_grad()
    with mx.autograd.record():
        total = mx.nd.sum(fn(mx.nd, arrays))
    total.backward()
    for g, n in zip(got, wrt):
        np.testing.assert_allclose(g, arrays[n].grad.asnumpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("alpha_shape,sample_shape", [((3,), (3,)), ((3,), (5, 3)),
                                                      ((2, 4), (2, 3, 4)),
                                                      ((2, 2), (2, 2, 3, 2))])
@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdf_dirichlet(alpha_shape, sample_shape, is_log, dtype, tmp_path):
    alpha = rng.uniform(0.3, 4.0, size=alpha_shape)
    k = alpha_shape[-1]
    sample = rng.dirichlet(np.ones(k), size=sample_shape[:-1]).reshape(sample_shape)
    if len(sample_shape) > 1:
        sample.reshape(-1, k)[0, 0] = -0.1          # outside: density 0
        sample.reshape(-1, k)[-1, -1] = 0.0         # a zero component
    check(lambda F, s, a: F._internal._random_pdf_dirichlet(s, a, is_log=is_log),
          [sample.astype(dtype), alpha.astype(dtype)], _tolerance(dtype), tmp_path)


# ---- contrib.hawkesll and its scan -------------------------------------------------------------
def _hawkes_inputs(n, t, k, dtype, seed):
    r = np.random.default_rng(seed)
    lengths = r.integers(0, t + 1, n).astype(np.float64)
    lengths[0] = t                                    # one row counts every point
    if n > 2:
        lengths[1] = 0.5 if t else 0                  # a fractional length: its point counts
    marks = r.integers(0, k, (n, t)).astype(np.int32)
    marks[:, t // 2:] = np.where(np.arange(t)[t // 2:] >= lengths[:, None], -7,
                                 marks[:, t // 2:])  # padding outside [0, K) is never read
    lags = r.uniform(0.05, 1.0, (n, t))
    lags[np.arange(t)[None, :] >= np.ceil(lengths)[:, None]] = np.nan   # nor padding lags
    values = [r.uniform(0.2, 1.5, (n, k)), r.uniform(0.1, 0.8, k), r.uniform(0.5, 2.0, k),
              r.uniform(0.0, 2.0, (n, k)), lags]
    max_time = np.nansum(lags, axis=1) + r.uniform(0.0, 1.0, n)
    floats = [v.astype(dtype) for v in values]
    return floats + [marks, lengths.astype(dtype), max_time.astype(dtype)]


@pytest.mark.parametrize("n,t,k", [(4, 6, 3), (3, 9, 1), (5, 1, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_hawkesll(n, t, k, dtype, tmp_path):
    inputs = _hawkes_inputs(n, t, k, dtype, seed=n * 10 + t)
    check(lambda F, *x: F.contrib.hawkesll(*x), inputs,
          {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}[dtype], tmp_path,
          atol={"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}[dtype])


def test_hawkesll_against_the_closed_form(tmp_path):
    """One mark, points at t = 1 and 3, window 4: log lda + log(lda + a b e^-2b) - lda 4 - a
    (2 - e^-3b - e^-b) (the compensator), the state e^-3b + e^-b (independent of mxlite)."""
    lda, a, b = 0.5, 0.3, 0.8
    inputs = [np.array([[lda]]), np.array([a]), np.array([b]), np.zeros((1, 1)),
              np.array([[1.0, 2.0]]), np.zeros((1, 2), np.int32), np.array([2.0]),
              np.array([4.0])]
    ll, state = check(lambda F, *x: F.contrib.hawkesll(*x), inputs, 1e-12, tmp_path)
    e = np.exp
    want = (np.log(lda) + np.log(lda + a * b * e(-2 * b)) - 4 * lda
            - a * (2 - e(-3 * b) - e(-b)))
    np.testing.assert_allclose(ll, [want], rtol=1e-12)
    np.testing.assert_allclose(state, [[e(-3 * b) + e(-b)]], rtol=1e-12)


@pytest.mark.parametrize("n,t,k", [(4, 6, 3), (2, 5, 1)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hawkesll_scan(n, t, k, reverse, dtype, tmp_path):
    inputs = _hawkes_inputs(n, t, k, dtype, seed=t)
    r = np.random.default_rng(n)
    a, b = (r.uniform(-1.0, 1.0, (n, t)).astype(dtype) for _ in range(2))
    check(lambda F, *x: F._internal._hawkesll_scan(*x, reverse=reverse),
          [a, b, inputs[3], inputs[5], inputs[6]], 1e-6 if dtype == "float32" else 1e-12,
          tmp_path)


def test_hawkesll_scan_by_hand(tmp_path):
    """One sample, marks 0 1 0, a = 0.5, b = 1, init (2, 3): pre = z[c] before each visit."""
    one = np.ones((1, 3))
    pre, final = check(lambda F, *x: F._internal._hawkesll_scan(*x),
                       [one * 0.5, one, np.array([[2.0, 3.0]]), np.array([[0, 1, 0]]),
                        np.array([3.0])], 1e-12, tmp_path)
    np.testing.assert_array_equal(pre, [[2.0, 3.0, 2.0]])
    np.testing.assert_array_equal(final, [[2.0, 2.5]])


def test_hawkesll_gradient_graph(tmp_path):
    """The gradient of hawkesll (a graph of _hawkesll_scan and element-wise operators)
    exports and matches mx.autograd."""
    n, t, k = 3, 5, 2
    inputs = _hawkes_inputs(n, t, k, "float64", seed=5)
    names = ["lda", "alpha", "beta", "state", "lags", "marks", "length", "max_time"]
    wrt = ["lda", "alpha", "beta", "state", "lags", "max_time"]
    v = {nm: mx.sym.var(nm, shape=x.shape, dtype=x.dtype) for nm, x in zip(names, inputs)}
    ll, out = mx.sym.contrib.hawkesll(*[v[nm] for nm in names])
    loss = mx.sym.sum(ll) + mx.sym.sum(out * out)
    graph = mx.sym.Group(mx.sym.grad(loss, [v[nm] for nm in wrt]))
    given = dict(zip(names, inputs))
    feeds = {nm: given[nm] for nm in graph.list_arguments()}     # export's input order
    got = export_and_run(graph, {}, feeds, tmp_path)
    arrays = {nm: mx.nd.array(x, dtype=x.dtype) for nm, x in zip(names, inputs)}
    for nm in wrt:
        arrays[nm].attach_grad()
    with mx.autograd.record():
        a, s = mx.nd.contrib.hawkesll(*[arrays[nm] for nm in names])
        total = mx.nd.sum(a) + mx.nd.sum(s * s)
    total.backward()
    for g, nm in zip(got, wrt):
        np.testing.assert_allclose(g, arrays[nm].grad.asnumpy(), rtol=1e-10, atol=1e-12)


# ---- _sync_sum, _imdecode -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_sync_sum_in_one_process(shape, dtype, tmp_path):
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    got = check(lambda F, a: F._internal._sync_sum(a), [x], 0.0, tmp_path, atol=0.0)
    np.testing.assert_array_equal(got[0], x)


def test_sync_sum_is_refused_in_a_multi_process_job(tmp_path):
    from mxlite.ops import sync_norm
    sync_norm.set_rank_reducer(lambda values: values.__imul__(2.0))      # two equal ranks
    try:
        with pytest.raises(mx.MXNetError, match="ranks"):
            mx.onnx.export_model(mx.sym._internal._sync_sum(mx.sym.var("x")), {},
                                 in_shapes=[(2,)], onnx_file_path=str(tmp_path / "m.onnx"))
    finally:
        sync_norm.set_rank_reducer(None)


def _encoded(fmt, shape, seed):
    import io
    pil = pytest.importorskip("PIL.Image")
    pixels = np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)
    buf = io.BytesIO()
    pil.fromarray(pixels).save(buf, format=fmt)
    return buf.getvalue(), pixels


@pytest.mark.parametrize("fmt,shape", [("PNG", (6, 7, 3)), ("BMP", (5, 4, 3)),
                                       ("PNG", (6, 5))])
@pytest.mark.parametrize("attrs", [{}, dict(x0=1, y0=2, x1=4, y1=5),
                                   dict(x0=0, y0=1, x1=3, y1=4, c=1)])
def test_imdecode_is_a_constant(fmt, shape, attrs, tmp_path):
    data, pixels = _encoded(fmt, shape, seed=len(shape))
    got = check(lambda F: F._internal._imdecode(str_img=data, **attrs), [], 0.0, tmp_path,
                atol=0.0)
    if attrs.get("c", 3) == 3 and len(shape) == 3:    # lossless: the pixels, BGR, cropped
        y0, y1 = attrs.get("y0", 0), attrs.get("y1", shape[0])
        x0, x1 = attrs.get("x0", 0), attrs.get("x1", shape[1])
        want = pixels[y0:y1, x0:x1, ::-1].transpose(2, 0, 1).astype(np.float32)
        np.testing.assert_array_equal(got[0], want)


def test_cvimdecode_has_a_reason():
    from mxlite.onnx.table import NOT_EXPRESSIBLE
    assert "Pillow" in NOT_EXPRESSIBLE["_cvimdecode"]


# ---- _image_random_color_jitter -----------------------------------------------------------------
def _jitter_session(strengths, x, tmp_path):
    path = str(tmp_path / "jitter.onnx")
    sym = mx.sym.image.random_color_jitter(mx.sym.var("x"), *strengths)
    mx.onnx.export_model(sym, {}, in_shapes=[x.shape], in_types=[x.dtype],
                         onnx_file_path=path, opset_version=21)
    (first,) = run_onnx(path, {"x": x})              # full check, shape and dtype
    want = mx.nd.image.random_color_jitter(mx.nd.array(x, dtype=x.dtype), *strengths)
    assert first.shape == want.shape and first.dtype == want.dtype
    run = session(path)
    return lambda: run({"x": x})[0]


def _image(shape, dtype):
    return rng.uniform(0, 255, shape).astype(dtype)


@pytest.mark.parametrize("shape", [(4, 5, 3), (2, 3, 4, 3), (4, 4, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_color_jitter_with_tiny_strengths_is_mxlite_s_composition(shape, dtype, tmp_path):
    """Strengths of 1e-9: every factor is 1 (hue 0) to 1e-9, so mxlite's and the graph's
    outputs agree to rounding whatever the order: the steps' arithmetic (the HLS hue
    rotation included) is mxlite's."""
    x = _image(shape, dtype)
    run = _jitter_session((1e-9, 1e-9, 1e-9, 1e-9), x, tmp_path)
    want = mx.nd.image.random_color_jitter(mx.nd.array(x, dtype=dtype), 1e-9, 1e-9, 1e-9,
                                           1e-9).asnumpy()
    np.testing.assert_allclose(run(), want, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_color_jitter_brightness_factor_is_uniform(dtype, tmp_path):
    """Brightness alone: out = f x with one f per run, uniform on [1 - s, 1 + s]."""
    x = _image((3, 4, 3), dtype) + 1
    run = _jitter_session((0.5, 0, 0, 0), x, tmp_path)
    f = []
    for _ in range(2000):
        ratio = run() / x
        assert np.ptp(ratio) < 1e-5 * ratio.max()
        f.append(ratio.mean())
    f = np.asarray(f)
    assert f.min() >= 0.5 and f.max() <= 1.5
    assert abs(f.mean() - 1.0) < 5 * 0.5 / math.sqrt(3 * f.size)
    assert abs(f.var() - 0.25 / 3) < 5 * (0.25 / 3) * math.sqrt(0.8 / f.size)


def _ks(a, b):
    """The two-sample Kolmogorov-Smirnov statistic."""
    grid = np.sort(np.concatenate([a, b]))
    ca = np.searchsorted(np.sort(a), grid, side="right") / a.size
    cb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return np.abs(ca - cb).max()


@pytest.mark.parametrize("strengths,dtype", [((0.4, 0.3, 0.6, 0.2), "float32"),
                                             ((0, 0, 0.8, 0.45), "float32"),
                                             ((0.3, 0.5, 0.2, 0.1), "uint8")])
def test_color_jitter_distribution_is_mxlite_s(strengths, dtype, tmp_path):
    """Statistics of 2000 runs of the graph and of 2000 mxlite calls drawn from one
    distribution (two-sample Kolmogorov-Smirnov below its 0.1% critical value, 1.95
    sqrt(2 / 2000)): the factors' ranges and the random order (saturation and hue do not
    commute)."""
    x = _image((3, 4, 3), dtype)
    # a pure red pixel: saturation then hue keeps its smallest channel at (1 - s) luma(x),
    # hue then saturation moves it with the rotated pixel's luma
    x[0, 0] = (200, 0, 0)
    run = _jitter_session(strengths, x, tmp_path)
    nd_x = mx.nd.array(x, dtype=dtype)
    ours = np.stack([run().astype(np.float64) for _ in range(2000)])
    theirs = np.stack([mx.nd.image.random_color_jitter(nd_x, *strengths).asnumpy()
                       .astype(np.float64) for _ in range(2000)])
    critical = 1.95 * math.sqrt(2 / 2000)
    for stat in (lambda y: y[:, 0, 0, :].min(axis=1), lambda y: y[:, 0, 0, :].max(axis=1),
                 lambda y: y[:, 1, 1, 0], lambda y: y[:, :, :, 1].mean(axis=(1, 2)),
                 lambda y: (y[:, :, :, 2] - y[:, :, :, 0]).mean(axis=(1, 2)),
                 lambda y: y[:, 2, 3, :].std(axis=1)):
        assert _ks(stat(ours), stat(theirs)) < critical
