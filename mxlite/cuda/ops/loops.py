"""GPU compute of ``_foreach``: its body runs through ``mx.nd`` on the call's device, so the
CPU compute function serves every device."""
from . import device_generic

device_generic("_foreach")
