"""``mx.numpy_op_signature._get_builtin_op``: operator names to mx.np/npx functions."""
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.numpy_op_signature import _get_builtin_op


def test_names_map_to_np_functions():
    assert _get_builtin_op("_np_sum") is mx.np.sum
    assert _get_builtin_op("_np_reshape") is mx.np.reshape
    assert _get_builtin_op("_npi_add") is None and _get_builtin_op("sum") is None


def test_an_unknown_np_name_is_an_error():
    with pytest.raises(MXNetError, match="_np_frobnicate"):
        _get_builtin_op("_np_frobnicate")
