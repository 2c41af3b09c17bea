"""Gradient specs: the differentiable operators of mxlite/ops/image.py (to_tensor,
normalize, the flips, crop, resize and its adjoint, adjust_lighting). Each is linear in its
data, so every row multiplies by a second use of the input: the higher orders are not zero.
The random operators are NON_DIFFERENTIABLE (their draws are not kept)."""
from . import Spec


def _to_tensor(nd, x):
    """to_tensor's output is float32 whatever the input: the row works at float32 precision."""
    return nd.image.to_tensor(x) * nd.image.to_tensor(x * x)


SPECS = {
    "_image_to_tensor": Spec([(2, 3, 3)], _to_tensor, rtol=1e-2, atol=1e-4),
    "_image_normalize": Spec([(3, 2, 2), (2, 1, 2, 3)], lambda nd, x, b: [
        nd.image.normalize(x * x, mean=(0.1, 0.2, 0.3), std=(0.5, 2.0, 0.25)) * x,
        nd.image.normalize(b, mean=(0.4,), std=(0.3,)) * b]),
    "_image_flip_left_right": Spec([(2, 3, 3), (2, 2, 3, 1)], lambda nd, x, b: [
        nd.image.flip_left_right(x * x) * x, nd.image.flip_left_right(b) * b]),
    "_image_flip_top_bottom": Spec([(3, 2, 3), (2, 3, 2, 1)], lambda nd, x, b: [
        nd.image.flip_top_bottom(x * x) * x, nd.image.flip_top_bottom(b) * b]),
    "_image_crop": Spec([(4, 5, 3), (2, 3, 4, 1)], lambda nd, x, b: [
        nd.image.crop(x * x, x=1, y=1, width=3, height=2) * nd.image.crop(
            x, x=1, y=1, width=3, height=2),
        nd.image.crop(b, x=0, y=1, width=4, height=2) ** 2]),
    "_image_resize": Spec([(3, 4, 2), (2, 5, 4, 1)], lambda nd, x, b: [
        nd.image.resize(x * x, size=(6, 5)) * nd.image.resize(x, size=(6, 5)),
        nd.image.resize(x, size=(3, 2), interp=2) * nd.image.resize(x * x, size=(3, 2),
                                                                  interp=2),
        nd.image.resize(b, size=(3,), interp=3) ** 2,
        nd.image.resize(b, size=(5, 7), interp=0) ** 2]),
    "_backward_image_resize": Spec([(5, 6, 2)], lambda nd, g: [
        nd._internal._backward_image_resize(g * g, height=3, width=4) * nd._internal.
        _backward_image_resize(g, height=3, width=4),
        nd._internal._backward_image_resize(g, height=7, width=3, interp=2) ** 2]),
    "_cvimresize": Spec([(3, 4, 2)], lambda nd, x: [
        nd._internal._cvimresize(x * x, w=5, h=6) * nd._internal._cvimresize(x, w=5, h=6),
        nd._internal._cvimresize(x, w=3, h=2, interp=2) ** 2]),
    "_image_adjust_lighting": Spec([(2, 3, 3), (1, 2, 2, 3)], lambda nd, x, b: [
        nd.image.adjust_lighting(x * x, alpha=(0.01, -0.02, 0.03)) * x,
        nd.image.adjust_lighting(b, alpha=(0.1, 0.0, -0.1)) ** 2]),
}
