"""``mx.image`` (also ``mx.img``): MXNet 1.9.1's image reading, resizing, cropping and
augmentation functions (``mxlite/image/image.py``) and ``ImageIter``
(``mxlite/image/iterator.py``). Decoding needs the optional Pillow
(``pip install 'mxlite[image]'``), imported on the first decode."""
from . import image, iterator
from .image import *  # noqa: F401,F403
from .image import __all__ as _image_all
from .iterator import ImageIter

__all__ = list(_image_all) + ["ImageIter"]
