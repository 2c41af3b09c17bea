"""Gradient specs: the copy between devices (``_copyto``). On one device it is a copy; the
cross-device gradient runs in tests/gpu/test_device.py."""
import mxlite as mx

from . import Spec

SPECS = {
    "_copyto": Spec([(3, 4)], lambda nd, x: nd._internal._copyto(x, ctx=mx.current_context())
                    * nd.sin(x)),
}
