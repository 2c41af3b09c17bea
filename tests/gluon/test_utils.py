"""gluon.utils: split_and_load and clip_global_norm against NumPy."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import utils


def test_split_and_load_even_and_uneven(rng):
    x = rng.normal(size=(7, 3))
    ctxs = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    parts = utils.split_and_load(x, ctxs, even_split=False)
    assert [p.shape[0] for p in parts] == [3, 2, 2]
    assert [p.context for p in parts] == ctxs
    np.testing.assert_allclose(np.concatenate([p.asnumpy() for p in parts]), x.astype("float32"))
    with pytest.raises(MXNetError, match="evenly"):
        utils.split_and_load(x, ctxs)
    cols = utils.split_data(mx.nd.array(x), 3, batch_axis=1)
    np.testing.assert_allclose(cols[1].asnumpy(), x[:, 1:2].astype("float32"))


def test_clip_global_norm_scales_all_arrays_together(rng):
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(5,))
    total = np.sqrt((a ** 2).sum() + (b ** 2).sum())
    arrays = [mx.nd.array(a), mx.nd.array(b)]
    norm = utils.clip_global_norm(arrays, 0.5)
    assert norm == pytest.approx(total, rel=1e-5)
    np.testing.assert_allclose(arrays[0].asnumpy(), a * 0.5 / total, rtol=1e-5)
    np.testing.assert_allclose(arrays[1].asnumpy(), b * 0.5 / total, rtol=1e-5)
    small = [mx.nd.array([0.1, 0.2])]
    utils.clip_global_norm(small, 10.0)           # already within the bound: unchanged
    np.testing.assert_allclose(small[0].asnumpy(), [0.1, 0.2], rtol=1e-6)


def test_clip_global_norm_warns_on_nan():
    with pytest.warns(UserWarning, match="nan or inf"):
        utils.clip_global_norm([mx.nd.array([np.nan, 1.0])], 1.0)
    lazy = utils.clip_global_norm([mx.nd.array([3.0, 4.0])], 1.0, check_isfinite=False)
    assert isinstance(lazy, mx.nd.NDArray) and lazy.asscalar() == pytest.approx(5.0)
