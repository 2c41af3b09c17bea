"""Gradient specs: the layers of mxlite/ops/spatial.py (Crop, _slice_assign,
_slice_assign_scalar, the bilinear samplers and their adjoint, GridGenerator and its affine
adjoint, SpatialTransformer).

The samplers are piecewise polynomial in the grid, with kinks where a source coordinate
crosses a pixel border: their grids are drawn with every source coordinate at least 0.2
pixels from an integer (inside the image and in the zero border around it)."""
import numpy as np

from . import Spec

_MARGIN = 0.2


def _points(rng, size, shape):
    """Grid coordinates in [-1, 1] units over an axis of ``size`` pixels whose source
    positions lie in (k + 0.2, k + 0.8) for k from -1 to size - 1 (a cell or the border)."""
    cells = rng.integers(-1, size, shape)
    return (cells + rng.uniform(_MARGIN, 1 - _MARGIN, shape)) / ((size - 1) / 2.0) - 1


def _grid(rng, n, hw, out):
    """A (n, 2, *out) grid over an image of (H, W) = hw, away from the pixel borders."""
    return np.stack([_points(rng, hw[1], (n,) + out), _points(rng, hw[0], (n,) + out)], 1)


def _sampler_sample(data_shape, out):
    def sample(rng):
        return [rng.uniform(-1, 1, data_shape),
                _grid(rng, data_shape[0], data_shape[2:], out)]
    return sample


def _adjoint_sample(rng):
    return [rng.uniform(-1, 1, (1, 2, 2, 3)), _grid(rng, 1, (3, 4), (2, 3))]


def _affine_grid(theta, hw):
    h, w = hw
    xs, ys = np.meshgrid(np.linspace(-1, 1, w), np.linspace(-1, 1, h))
    base = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return theta.reshape(-1, 2, 3) @ base


def _st_sample(rng):
    """Data and affine matrices near a zoom whose grid keeps every source coordinate 0.2
    pixels or more from an integer (drawn again until it does)."""
    data = rng.uniform(-1, 1, (1, 2, 4, 5))
    while True:
        loc = np.array([[0.7, 0.1, 0.05, -0.1, 0.6, 0.1]]) + rng.uniform(-0.1, 0.1, (1, 6))
        g = _affine_grid(loc, (2, 3))
        src = np.stack([(g[:, 0] + 1) * 2.0, (g[:, 1] + 1) * 1.5])
        frac = src - np.floor(src)
        if np.all((frac > _MARGIN) & (frac < 1 - _MARGIN)):
            return [data, loc]


def _roi_sample(rng):
    """Positive data with values at least 0.05 apart (each bin's maximum, of x and of x * x,
    stays where it is under the finite differences' steps)."""
    return [(rng.permutation(2 * 5 * 6) * 0.05 + 0.1).reshape(1, 2, 5, 6)]


def _roi_pooling(nd, x):
    """Rois with full, clipped and empty bins (the rois are not differentiated)."""
    rois = nd.array([[0, 0.6, 1.2, 4.4, 3.6], [0, -2, -1, 1, 2], [0, 3, 3, 1, 1]],
                    dtype="float64")
    return [nd.ROIPooling(x * x, rois, pooled_size=(2, 3), spatial_scale=1.0) * x.sum(),
            nd.ROIPooling(x, rois, pooled_size=(3, 2), spatial_scale=0.5) * x.sum()]


def _sampler(nd, d, g):
    """Products with sums of the inputs, so every order has terms (the grid itself is not
    transformed: its points stay away from the pixel borders)."""
    return [nd.BilinearSampler(d, g) * d.sum(), nd.BilinearSampler(d * d, g) * g.sum()]

_REGION = dict(begin=(None, 3), end=(1, 0), step=(None, -2))     # x[:1, 3:0:-2]


def _crop(nd, x, like):
    """Both forms (h_w with an offset, crop_like centred), times the data so the higher
    orders are not zero; crop_like only gives a shape."""
    a = nd.Crop(x * x, h_w=(2, 3), offset=(1, 0)) * nd.Crop(x, h_w=(2, 3), offset=(1, 0))
    b = nd.Crop(x * x, like, center_crop=True) * nd.Crop(x, like, num_args=2, center_crop=True)
    return [a, b]


SPECS = {
    "Crop": Spec([(1, 2, 4, 5), (1, 1, 2, 2)], _crop),
    "_slice_assign": Spec([(2, 4, 2), (1, 2, 2)], lambda nd, x, r: nd._internal._slice_assign(
        x * x, r * nd.slice(x, begin=(None, 1), end=(1, 3)) * r, **_REGION) * x),
    "_slice_assign_scalar": Spec([(2, 4)], lambda nd, x: nd._internal._crop_assign_scalar(
        x * x, scalar=0.5, **_REGION) * x),
    "BilinearSampler": Spec([(1, 2, 3, 4), (1, 2, 2, 3)], _sampler,
                            sample=_sampler_sample((1, 2, 3, 4), (2, 3))),
    "_bilinear_sampler_d": Spec([(1, 2, 3, 4), (1, 2, 2, 3)], lambda nd, d, g: [
        nd._internal._bilinear_sampler_d(d * d, g, dx=1, dy=0) * g.sum(),
        nd._internal._bilinear_sampler_d(d, g, dx=0, dy=1) * d.sum(),
        nd._internal._bilinear_sampler_d(d, g, dx=1, dy=1) * g.sum()],
        sample=_sampler_sample((1, 2, 3, 4), (2, 3))),
    "_bilinear_sampler_adjoint": Spec([(1, 2, 2, 3), (1, 2, 2, 3)], lambda nd, h, g: [
        nd._internal._bilinear_sampler_adjoint(h * h, g, height=3, width=4) * h.sum(),
        nd._internal._bilinear_sampler_adjoint(h, g, dx=1, height=3, width=4) * g.sum()],
        sample=_adjoint_sample),
    "GridGenerator": Spec([(2, 6), (1, 2, 2, 3)], lambda nd, t, f: [
        nd.GridGenerator(t * t, transform_type="affine", target_shape=(2, 3)) * t.sum(),
        nd.GridGenerator(f * f, transform_type="warp") * f]),
    "_grid_generator_affine_adjoint": Spec([(1, 2, 2, 3)], lambda nd, g: nd._internal.
                                           _grid_generator_affine_adjoint(
                                               g * g, target_shape=(2, 3)) * g.sum()),
    "SpatialTransformer": Spec([(1, 2, 4, 5), (1, 6)], lambda nd, d, t: nd.SpatialTransformer(
        d, t * 1.0, target_shape=(2, 3), transform_type="affine", sampler_type="bilinear")
        * (d.sum() + t.sum()), sample=_st_sample),
    "_contrib_AdaptiveAvgPooling2D": Spec([(1, 2, 5, 3)], lambda nd, x: [
        nd.contrib.AdaptiveAvgPooling2D(x * x, output_size=(2, 4)) * x.sum(),
        nd.contrib.AdaptiveAvgPooling2D(x, output_size=3) * x.sum()]),
    "_adaptive_avg_pooling2d_adjoint": Spec([(1, 2, 2, 4)], lambda nd, g: nd._internal.
                                            _adaptive_avg_pooling2d_adjoint(
                                                g * g, height=5, width=3) * g.sum()),
    "_contrib_BilinearResize2D": Spec([(1, 2, 3, 4), (1, 1, 2, 2)], lambda nd, x, like: [
        nd.contrib.BilinearResize2D(x * x, height=5, width=3) * x.sum(),
        nd.contrib.BilinearResize2D(x, scale_height=0.7, scale_width=1.6, align_corners=False)
        * x.sum(),
        nd.contrib.BilinearResize2D(x * x, like, mode="like") * like.sum(),
        nd.contrib.BilinearResize2D(x, mode="to_odd_up", align_corners=False) * x.sum()]),
    "_bilinear_resize2d_adjoint": Spec([(1, 2, 4, 3)], lambda nd, g: [
        nd._internal._bilinear_resize2d_adjoint(g * g, height=3, width=5) * g.sum(),
        nd._internal._bilinear_resize2d_adjoint(g, height=2, width=2, align_corners=False)
        * g.sum()]),
    "ROIPooling": Spec([(1, 2, 5, 6)], _roi_pooling, sample=_roi_sample),
}
