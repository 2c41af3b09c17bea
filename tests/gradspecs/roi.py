"""Gradient specs: ROIAlign, PSROIPooling, RROIAlign and their adjoints, the deformable
convolutions and their grid (mxlite/ops/roi.py).

Each op is linear in its first input (its weights depend on the rois only, which get no
gradient), so the calls square or multiply the input to give every order a term. The rois
are constants of the call; ROIAlign's are placed so no bilinear sample sits on a pixel
border (none of its weights has a kink there: the rois are not differentiated anyway)."""
import numpy as np

from . import Spec

ROIS = np.array([[0, 0.3, 0.6, 3.4, 2.7], [1, -1.2, 1.1, 2.2, 3.9], [0, 2.1, 0.4, 6.3, 2.2]])
_ALIGN = dict(pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
_ALIGN_PS = dict(pooled_size=(2, 1), spatial_scale=0.9, position_sensitive=True, aligned=True)
_PS = dict(spatial_scale=1.0, output_dim=1, pooled_size=2, group_size=2)
R_ROIS = np.array([[0, 2.1, 1.9, 3.0, 2.0, 25.0], [1, 2.6, 1.4, 2.5, 3.5, -60.0]])
_RROI = dict(pooled_size=(2, 2), spatial_scale=1.0, sampling_ratio=2)


def _offsets(rng, n, dg, kernel, out, hw):
    """Offsets whose samples lie 0.2 pixels or more from every integer, in the image or its
    one-pixel zero border (the deformable sampler has kinks on pixel borders)."""
    kh, kw = kernel
    off = np.zeros((n, dg, kh * kw, 2) + out)
    for k in range(kh * kw):
        i, j = divmod(k, kw)
        for a, (base, size) in enumerate(((i + np.arange(out[0])[:, None] * 1.0, hw[0]),
                                          (j + np.arange(out[1])[None, :] * 1.0, hw[1]))):
            cell = rng.integers(-1, size, off[:, :, k, a].shape)
            off[:, :, k, a] = cell + rng.uniform(0.2, 0.8, cell.shape) - base
    return off.reshape(n, dg * 2 * kh * kw, *out)


def _dconv_sample(modulated):
    def sample(rng):
        ins = [rng.uniform(-1, 1, (1, 2, 3, 4)), _offsets(rng, 1, 2, (2, 2), (2, 3), (3, 4))]
        if modulated:
            ins.append(rng.uniform(0.2, 1.0, (1, 8, 2, 3)))
        return ins + [rng.uniform(-1, 1, (2, 1, 2, 2)), rng.uniform(-1, 1, (2,))]
    return sample


_DCONV = dict(kernel=(2, 2), num_filter=2, num_group=2, num_deformable_group=2)


def _rois(nd):
    return nd.array(ROIS, dtype="float64")


SPECS = {
    "_contrib_ROIAlign": Spec([(2, 2, 4, 5)], lambda nd, x: [
        nd.contrib.ROIAlign(x * x, _rois(nd), **_ALIGN) * x.sum(),
        nd.contrib.ROIAlign(x, _rois(nd), **_ALIGN_PS) * (x * x).sum()]),
    "_roi_align_adjoint": Spec([(3, 2, 2, 2)], lambda nd, g: nd._internal._roi_align_adjoint(
        g * g, _rois(nd), data_shape=(2, 2, 4, 5), **_ALIGN) * g.sum()),
    "_contrib_PSROIPooling": Spec([(2, 4, 4, 5)], lambda nd, x: nd.contrib.PSROIPooling(
        x * x, _rois(nd), **_PS) * x.sum()),
    "_psroi_pooling_adjoint": Spec([(3, 1, 2, 2)], lambda nd, g: nd._internal.
                                   _psroi_pooling_adjoint(g * g, _rois(nd),
                                                          data_shape=(2, 4, 4, 5), **_PS)
                                   * g.sum()),
    "_contrib_DeformableConvolution": Spec(
        [(1, 2, 3, 4), (1, 16, 2, 3), (2, 1, 2, 2), (2,)],
        lambda nd, x, o, w, b: nd.contrib.DeformableConvolution(x * x, o, w * w, b, **_DCONV)
        * (x.sum() + w.sum()), sample=_dconv_sample(False)),
    "_contrib_ModulatedDeformableConvolution": Spec(
        [(1, 2, 3, 4), (1, 16, 2, 3), (1, 8, 2, 3), (2, 1, 2, 2), (2,)],
        lambda nd, x, o, m, w, b: nd.contrib.ModulatedDeformableConvolution(
            x * x, o, m * m, w, b, **_DCONV) * (x.sum() + m.sum()),
        sample=_dconv_sample(True)),
    "_deform_grid": Spec([(1, 16, 2, 3)], lambda nd, o: nd._internal._deform_grid(
        o * o, kernel=(2, 2), num_deformable_group=2, data_shape=(1, 2, 3, 4)) * o.sum()),
    "_contrib_RROIAlign": Spec([(2, 2, 4, 5)], lambda nd, x: nd.contrib.RROIAlign(
        x * x, nd.array(R_ROIS, dtype="float64"), **_RROI) * x.sum()),
    "_rroi_align_adjoint": Spec([(2, 2, 2, 2)], lambda nd, g: nd._internal._rroi_align_adjoint(
        g * g, nd.array(R_ROIS, dtype="float64"), data_shape=(2, 2, 4, 5), **_RROI)
        * g.sum()),
}
