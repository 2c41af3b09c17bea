"""The image operators on one-op graphs: exported, checked, run in onnxruntime and compared
with ``mx.nd``; the random augmenters by what every draw must satisfy."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import check, session

rng = np.random.default_rng(5)
CASES = []


def pixels(*shape, dtype=np.float32):
    return rng.integers(0, 256, shape).astype(dtype)


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


I = lambda F: F.image  # noqa: E731

case("to_tensor_u8", lambda F, x: I(F).to_tensor(x), pixels(4, 5, 3, dtype=np.uint8))
case("to_tensor_batch", lambda F, x: I(F).to_tensor(x), pixels(2, 3, 4, 1))
case("normalize", lambda F, x: I(F).normalize(x, mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.4)),
     rng.random((3, 4, 5)).astype(np.float32))
case("normalize_one_value_batch", lambda F, x: I(F).normalize(x, mean=(0.5,), std=(2.0,)),
     rng.random((2, 1, 3, 3)).astype(np.float32))
case("normalize_f64_defaults", lambda F, x: I(F).normalize(x), rng.random((3, 2, 2)))
case("normalize_u8_clipped", lambda F, x: I(F).normalize(x, mean=(100, 50, 0), std=(0.5,)),
     pixels(3, 4, 4, dtype=np.uint8))
case("normalize_i32_clipped", lambda F, x: I(F).normalize(x, mean=(0,), std=(1e-9,)),
     (pixels(1, 2, 3) - 128).astype(np.int32))
for name in ("flip_left_right", "flip_top_bottom"):
    case(name, lambda F, x, n=name: getattr(I(F), n)(x), pixels(3, 4, 3))
    case(name + "_batch", lambda F, x, n=name: getattr(I(F), n)(x), pixels(2, 3, 5, 1))
case("crop", lambda F, x: I(F).crop(x, x=1, y=2, width=3, height=2), pixels(5, 6, 3))
case("crop_batch_u8", lambda F, x: I(F).crop(x, x=0, y=0, width=4, height=1),
     pixels(2, 3, 4, 3, dtype=np.uint8))
for interp in (0, 1, 2, 3):
    case(f"resize_up_{interp}", lambda F, x, i=interp: I(F).resize(x, size=(7, 5), interp=i),
         pixels(4, 3, 3), rtol=1e-4)
    case(f"resize_down_{interp}", lambda F, x, i=interp: I(F).resize(x, size=(3, 2), interp=i),
         pixels(2, 7, 6, 1), rtol=1e-4)
case("resize_keep_ratio", lambda F, x: I(F).resize(x, size=(4,), keep_ratio=True),
     pixels(6, 9, 3), rtol=1e-4)
case("resize_u8", lambda F, x: I(F).resize(x, size=(5, 5), interp=2),
     pixels(3, 4, 3, dtype=np.uint8), rtol=1e-4)
case("cvimresize", lambda F, x: F._internal._cvimresize(x, w=5, h=3, interp=1), pixels(4, 6, 3),
     rtol=1e-4)
case("adjust_lighting", lambda F, x: I(F).adjust_lighting(x, alpha=(0.1, -0.2, 0.3)),
     pixels(3, 4, 3))
case("adjust_lighting_u8_batch", lambda F, x: I(F).adjust_lighting(x, alpha=(1.0, 0.5, -2.0)),
     pixels(2, 2, 3, 3, dtype=np.uint8))
case("adjust_lighting_gray", lambda F, x: I(F).adjust_lighting(x, alpha=(1.0, 0.5, -2.0)),
     pixels(2, 2, 1))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_image_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol, tmp_path)


def _runs(sym, x, tmp_path, times):
    """``times`` runs of the exported graph (ONNX draws anew in every run), at opset 21
    (onnxruntime 1.32 has no kernels for the random operators of opset 22)."""
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(sym, {}, in_shapes=[x.shape], in_types=[x.dtype], onnx_file_path=path,
                         opset_version=21)
    run = session(path)
    return [run({"x": x})[0] for _ in range(times)]


@pytest.mark.parametrize("name,axis", [("random_flip_left_right", 1),
                                       ("random_flip_top_bottom", 0)])
def test_random_flip_gives_the_image_or_its_flip_both_seen(name, axis, tmp_path):
    x = pixels(3, 4, 3)
    outs = _runs(getattr(mx.sym.image, name)(mx.sym.var("x")), x, tmp_path, 64)
    flipped = np.flip(x, axis)
    kinds = {0 if np.array_equal(o, x) else 1 if np.array_equal(o, flipped) else 2
             for o in outs}
    assert kinds == {0, 1}          # P(one kind in 64 fair draws) = 2**-63


def test_random_brightness_scales_by_one_factor_in_range(tmp_path):
    x = pixels(4, 4, 3) + 1
    outs = _runs(mx.sym.image.random_brightness(mx.sym.var("x"), min_factor=0.5,
                                                max_factor=1.5), x, tmp_path, 200)
    factors = np.array([o / x for o in outs])
    per_run = factors.reshape(len(outs), -1)
    np.testing.assert_allclose(per_run, per_run[:, :1] * np.ones_like(per_run), rtol=1e-6)
    f = per_run[:, 0]
    assert f.min() >= 0.5 and f.max() <= 1.5
    # uniform on [0.5, 1.5]: mean 1, sd 1/sqrt(12); 200 draws: 5 standard errors
    assert abs(f.mean() - 1.0) < 5 / np.sqrt(12 * 200)


def test_random_lighting_adds_eig_times_normal_alphas(tmp_path):
    from mxlite.ops.image import _EIG
    x = np.full((2, 2, 3), 100.0, np.float32)
    outs = _runs(mx.sym.image.random_lighting(mx.sym.var("x"), alpha_std=0.1), x, tmp_path,
                 300)
    shifts = np.array([o[0, 0] - 100.0 for o in outs])
    for o, s in zip(outs, shifts):
        np.testing.assert_allclose(o - 100.0, np.broadcast_to(s, o.shape), atol=1e-4)
    alphas = np.linalg.solve(_EIG, shifts.T).T          # back to the drawn alphas
    # N(0, 0.1^2) each: mean within 5 standard errors, sd within 20%
    assert np.all(np.abs(alphas.mean(axis=0)) < 5 * 0.1 / np.sqrt(300))
    np.testing.assert_allclose(alphas.std(axis=0), 0.1, rtol=0.2)


@pytest.mark.parametrize("interp", [0, 1, 2, 3])
@pytest.mark.parametrize("shape,hw", [((5, 7, 3), (4, 3)), ((2, 3, 2, 1), (6, 5))])
def test_resize_adjoint(interp, shape, hw, tmp_path):
    g = rng.standard_normal(shape).astype(np.float32)
    check(lambda F, x: F._internal._backward_image_resize(x, height=hw[0], width=hw[1],
                                                          interp=interp), [g], 1e-4, tmp_path)


def _with_grey(x):
    """Pixels with every channel equal (no hue) and ties for the largest channel."""
    x = x.copy()
    x[..., 0, 0, :] = 77
    x[..., 0, 1, 1] = x[..., 0, 1, 0]
    return x


@pytest.mark.parametrize("name,factor", [("random_contrast", 0.6), ("random_saturation", 0.6),
                                         ("random_brightness", 0.6), ("random_hue", 0.3),
                                         ("random_hue", 1.85)])
@pytest.mark.parametrize("x", [pixels(4, 5, 3), _with_grey(pixels(2, 3, 4, 3, dtype=np.uint8)),
                               pixels(3, 3, 1)], ids=["f32", "u8_batch", "gray"])
def test_random_colour_with_one_factor_is_mxlites(name, factor, x, tmp_path):
    """min_factor == max_factor: the draw is that factor, the output mxlite's."""
    check(lambda F, d: getattr(F.image, name)(d, min_factor=factor, max_factor=factor), [x],
          1e-5, tmp_path, opset_version=21)


@pytest.mark.parametrize("name", ["random_contrast", "random_saturation"])
def test_random_colour_factor_in_range(name, tmp_path):
    """Each run is the blend of mxlite's outputs at factors 0 and 1 with one factor in
    [0.5, 1.5]."""
    x = pixels(3, 4, 3)
    at = {f: getattr(mx.nd.image, name)(mx.nd.array(x), min_factor=f, max_factor=f).asnumpy()
          for f in (0.0, 1.0)}
    for out in _runs(getattr(mx.sym.image, name)(mx.sym.var("x"), min_factor=0.5,
                                                 max_factor=1.5), x, tmp_path, 20):
        # out = a * at[1] + (1 - a) * at[0]: a from the least squares fit
        d = (at[1] - at[0]).ravel()
        a = float(d @ (out - at[0]).ravel() / (d @ d))
        assert 0.5 <= a <= 1.5
        np.testing.assert_allclose(out, a * at[1] + (1 - a) * at[0], rtol=1e-4, atol=1e-3)


BORDER_CASES = [
    pytest.param(dict(top=1, bot=2, left=3, right=0, type=t), id=f"type{t}") for t in range(5)
] + [
    pytest.param(dict(top=5, bot=4, left=6, right=7, type=t), id=f"type{t}_wide")
    for t in (1, 2, 3, 4)
] + [
    pytest.param(dict(top=1, bot=1, left=1, right=1, type=0, values=(1.5, 300.0, -7.0)),
                 id="per_channel_values"),
    pytest.param(dict(top=2, bot=0, left=0, right=1, type=0, value=9.0), id="value"),
]


@pytest.mark.parametrize("kw", BORDER_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_copy_make_border(kw, dtype, tmp_path):
    x = pixels(3, 4, 3, dtype=dtype)
    check(lambda F, d: F._internal._cvcopyMakeBorder(d, **kw), [x], 1e-6, tmp_path)
