"""GridGenerator, BilinearSampler and SpatialTransformer on one-op graphs: exported,
checked, run in onnxruntime and compared with ``mx.nd``."""
import numpy as np
import pytest

from onnx_harness import check

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


def _dconv_case(label, modulated, n, c, h, w, f, k, dg=1, group=1, **kw):
    stride = kw.get("stride", (1, 1))
    pad = kw.get("pad", (0, 0))
    dil = kw.get("dilate", (1, 1))
    ho = (h + 2 * pad[0] - dil[0] * (k - 1) - 1) // stride[0] + 1
    wo = (w + 2 * pad[1] - dil[1] * (k - 1) - 1) // stride[1] + 1
    inputs = [normal(n, c, h, w), normal(n, dg * 2 * k * k, ho, wo, s=1.5)]
    if modulated:
        inputs.append(rng.random((n, dg * k * k, ho, wo)).astype(np.float32))
    inputs += [normal(f, c // group, k, k), normal(f)]

    def fn(F, *xs):
        op = (F.contrib.ModulatedDeformableConvolution if modulated
              else F.contrib.DeformableConvolution)
        return op(*xs, kernel=(k, k), num_filter=f, num_group=group,
                  num_deformable_group=dg, **kw)
    case(label, fn, *inputs, rtol=1e-4)


_dconv_case("deformable_conv", False, 2, 3, 6, 7, 4, 3)
_dconv_case("deformable_conv_strided_padded_groups", False, 1, 4, 7, 7, 4, 3, dg=2, group=2,
            stride=(2, 1), pad=(1, 2), dilate=(1, 2))
_dconv_case("modulated_deformable_conv", True, 2, 2, 5, 6, 3, 3, pad=(1, 1))
_dconv_case("modulated_deformable_conv_dg", True, 1, 4, 6, 6, 2, 2, dg=2, stride=(2, 2))


case("correlation_default", lambda F, a, b: F.Correlation(a, b), normal(2, 3, 5, 6),
     normal(2, 3, 5, 6))
case("correlation_multiply", lambda F, a, b: F.Correlation(
    a, b, kernel_size=3, max_displacement=2, stride1=2, stride2=1, pad_size=2),
    normal(1, 4, 7, 8), normal(1, 4, 7, 8), rtol=1e-4)
case("correlation_absdiff_stride2", lambda F, a, b: F.Correlation(
    a, b, kernel_size=1, max_displacement=4, stride1=1, stride2=2, pad_size=4,
    is_multiply=False), normal(2, 2, 6, 5), normal(2, 2, 6, 5), rtol=1e-4)
case("correlation_no_displacement", lambda F, a, b: F.Correlation(a, b, max_displacement=0),
     normal(1, 2, 3, 3), normal(1, 2, 3, 3))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
@pytest.mark.parametrize("opset", [None, 19])
def test_spatial_op_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, opset, tmp_path):
    check(fn, inputs, rtol, tmp_path, opset_version=opset)
