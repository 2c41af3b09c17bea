"""GridGenerator, BilinearSampler and SpatialTransformer on one-op graphs: exported,
checked, run in onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

from test_export_linalg import check

rng = np.random.default_rng(13)
CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


def normal(*shape, s=1.0):
    return (rng.standard_normal(shape) * s).astype(np.float32)


def grid(n, h, w):
    """Points in [-1.3, 1.3]: some outside the image (their corners read zero)."""
    return rng.uniform(-1.3, 1.3, (n, 2, h, w)).astype(np.float32)


case("grid_affine", lambda F, t: F.GridGenerator(t, transform_type="affine",
                                                 target_shape=(4, 5)), normal(2, 6))
case("grid_affine_square", lambda F, t: F.GridGenerator(t, transform_type="affine",
                                                        target_shape=(3, 3)), normal(1, 6))
case("grid_warp", lambda F, f: F.GridGenerator(f, transform_type="warp"), normal(2, 2, 3, 4))
case("grid_warp_tall", lambda F, f: F.GridGenerator(f, transform_type="warp"),
     normal(1, 2, 6, 2, s=3.0))
case("bilinear_sampler", lambda F, x, g: F.BilinearSampler(x, g), normal(2, 3, 5, 6),
     grid(2, 4, 3))
case("bilinear_sampler_upsample", lambda F, x, g: F.BilinearSampler(x, g), normal(1, 1, 3, 3),
     grid(1, 7, 8))
case("spatial_transformer", lambda F, x, t: F.SpatialTransformer(
    x, t, target_shape=(4, 4), transform_type="affine", sampler_type="bilinear"),
    normal(2, 2, 6, 5), normal(2, 6, s=0.7))
case("spatial_transformer_identity", lambda F, x, t: F.SpatialTransformer(
    x, t, target_shape=(6, 5), transform_type="affine", sampler_type="bilinear"),
    normal(1, 3, 6, 5), np.array([[1, 0, 0, 0, 1, 0]], np.float32))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
@pytest.mark.parametrize("opset", [None, 19])
def test_spatial_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, opset, tmp_path):
    check(fn, inputs, rtol, tmp_path, opset_version=opset)
