"""GPU compute of ``_foreach``, ``_while_loop`` and ``_cond``: their graphs run through ``mx.nd`` on the
call's device, so the CPU compute functions serve every device."""
from . import device_generic

device_generic("_foreach", "_cond", "_while_loop")
