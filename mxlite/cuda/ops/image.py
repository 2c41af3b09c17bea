"""GPU compute of the operators in mxlite/ops/image.py (_image_to_tensor, _image_normalize,
the flips, _image_crop, _image_resize and _backward_image_resize, the random colour
operators, _image_adjust_lighting, _image_random_lighting, _cvimresize, _cvcopyMakeBorder)
and mxlite/ops/image_io.py (_cvimread, _imdecode, _cvimdecode, which decode on the host and
copy the pixels to the device): their CPU compute functions use
the device namespace (``rctx.xp``: ``cast_into``, ``copyto``, ``from_host``) and the array
methods NumPy and CuPy share (views, ``@``, arithmetic in place, ``clip``, ``round``), and
the random ones draw their factors on the host from the device's Philox stream, so they run
unchanged on the GPU."""
from . import device_generic

device_generic("_image_to_tensor", "_image_normalize", "_image_flip_left_right",
               "_image_flip_top_bottom", "_image_random_flip_left_right",
               "_image_random_flip_top_bottom", "_image_crop", "_image_resize",
               "_backward_image_resize", "_image_random_brightness", "_image_random_contrast",
               "_image_random_saturation", "_image_random_hue", "_image_random_color_jitter",
               "_image_adjust_lighting", "_image_random_lighting", "_cvimresize",
               "_cvcopyMakeBorder", "_cvimread", "_imdecode", "_cvimdecode")
