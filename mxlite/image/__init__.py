"""``mx.image`` (also ``mx.img``): MXNet 1.9.1's image reading, resizing, cropping and
augmentation functions (``mxlite/image/image.py``), ``ImageIter``
(``mxlite/image/iterator.py``) and object detection's augmenters and ``ImageDetIter``
(``mxlite/image/detection.py``, also ``mx.image.det``). Decoding needs the optional Pillow
(``pip install 'mxlite[image]'``), imported on the first decode."""
from . import detection, image, iterator
from . import detection as det
from .detection import *  # noqa: F401,F403
from .detection import __all__ as _detection_all
from .image import *  # noqa: F401,F403
from .image import __all__ as _image_all
from .iterator import ImageIter

__all__ = list(_image_all) + ["ImageIter"] + list(_detection_all)
