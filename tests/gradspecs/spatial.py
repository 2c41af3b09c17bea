"""Gradient specs: the layers of mxlite/ops/spatial.py (Crop, _slice_assign,
_slice_assign_scalar)."""
from . import Spec

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
}
