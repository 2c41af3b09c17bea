"""``mx.npx.image``: the image operators with np arrays in and out, beside ``mx.image``'s
functions and augmenters.

Each registered ``_image_*`` operator (``to_tensor``, ``normalize``, ``resize``, ``crop``,
the flips, the random colour jitters, ``adjust_lighting``) is an entry point as
``mx.npx``'s other operators (``mxlite.numpy_extension._entry``); the names of ``mx.image``
(``imread``, ``imdecode``, ``ImageIter``, the augmenters, ...) are the same objects as
there. Where both have a name, the operator wins, as in MXNet's ``npx.image``.

>>> from mxlite import np as mnp, npx
>>> img = mnp.ones((4, 6, 3), dtype='uint8')
>>> npx.image.to_tensor(img).shape
(3, 4, 6)
"""
from .. import image as _legacy
from ..ops.registry import REGISTRY as _REGISTRY, namespace_of as _namespace_of
from ._entry import entry_point as _entry_point


def _operators():
    """{public name: np entry point} of every registered ``_image_*`` operator."""
    found = {}
    for name in sorted(_REGISTRY):
        space, public = _namespace_of(name)
        if space == "image" and _REGISTRY[name].name == name:
            found[public] = _entry_point(public, name, f"``{public}`` of ``mx.nd.image``, "
                                         "on np arrays.", __name__)
    return found


_OPERATORS = _operators()
globals().update({name: getattr(_legacy, name) for name in _legacy.__all__})
globals().update(_OPERATORS)

__all__ = sorted(set(_legacy.__all__) | set(_OPERATORS))
