"""Large-tensor rows: element-wise unary ops."""
import mxlite as mx

from . import elementwise

F32_REASON = ("float output: 2**32 float32 elements are 16 GiB, over the 16 GiB peak; "
              "float16 at 2**32 runs the software half conversions (~30 s per op)")

ROWS = {
    "abs": elementwise(mx.nd.abs, values=(-3, 5, -7, -128)),
    "sin": elementwise(mx.nd.sin, dtype="float32", size="2**31", reason=F32_REASON,
                       inplace=True),
}
