"""ONNX export of the indexing, shape, sequence and creation operators of
``translations/indexing.py`` on one-op graphs, run in onnxruntime and compared with
``mx.nd``."""
import numpy as np
import pytest

from test_export_ops import normal
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


case("gather_nd", lambda F, x, i: F.gather_nd(x, i), normal(3, 4),
     np.array([[0, 2, -1], [1, -4, 3]], np.float32))
case("gather_nd_slices", lambda F, x, i: F.gather_nd(x, i), normal(3, 4, 2),
     np.array([[[2, 0], [1, 1]]], np.float32))
case("scatter_nd", lambda F, d, i: F.scatter_nd(d, i, shape=(3, 4)), normal(3),
     np.array([[0, 2, 1], [1, 3, 0]], np.float32))
case("scatter_nd_slices", lambda F, d, i: F.scatter_nd(d, i, shape=(4, 2)), normal(2, 2),
     np.array([[3, 1]], np.float32))
case("flip", lambda F, x: F.flip(x, axis=1), normal(2, 3, 4))
case("flip_axes", lambda F, x: F.flip(x, axis=(0, -1)), normal(3, 2, 4))
case("repeat", lambda F, x: F.repeat(x, repeats=3, axis=1), normal(2, 3))
case("repeat_flat", lambda F, x: F.repeat(x, repeats=2), normal(2, 2, 2))
case("repeat_neg_axis", lambda F, x: F.repeat(x, repeats=2, axis=-1), normal(2, 3))
for k in (0, 2, -1):
    case(f"diag_1d_k{k}", lambda F, x, k=k: F.diag(x, k=k), normal(4))
    case(f"diag_2d_k{k}", lambda F, x, k=k: F.diag(x, k=k), normal(3, 5))
case("diag_3d_axes", lambda F, x: F.diag(x, k=1, axis1=2, axis2=0), normal(4, 2, 3))
case("diag_1d_inf", lambda F, x: F.diag(x), np.array([np.inf, 1.0], np.float32))
case("depth_to_space", lambda F, x: F.depth_to_space(x, block_size=2), normal(2, 8, 2, 3))
case("depth_to_space_3", lambda F, x: F.depth_to_space(x, block_size=3), normal(1, 18, 1, 2))
case("space_to_depth", lambda F, x: F.space_to_depth(x, block_size=2), normal(2, 3, 4, 6))
case("space_to_depth_3", lambda F, x: F.space_to_depth(x, block_size=3), normal(1, 2, 3, 6))
case("slice_like", lambda F, x, y: F.slice_like(x, y), normal(4, 5), normal(2, 3))
case("slice_like_axes", lambda F, x, y: F.slice_like(x, y, axes=(0, -1)), normal(4, 5, 3),
     normal(2, 1, 2, 7))
case("broadcast_axis", lambda F, x: F.broadcast_axis(x, axis=1, size=4), normal(2, 1, 3))
case("broadcast_axis_two", lambda F, x: F.broadcast_axis(x, axis=(0, 2), size=(3, 2)),
     normal(1, 2, 1))
case("shape_array", lambda F, x: F.shape_array(x), normal(2, 3, 4))
case("shape_array_1d", lambda F, x: F.shape_array(x), normal(5))
case("size_array", lambda F, x: F.size_array(x), normal(2, 3, 4))
case("size_array_2d", lambda F, x: F.size_array(x), normal(7, 1))
case("Crop", lambda F, x: F.Crop(x, h_w=(2, 3), offset=(1, 2), num_args=1), normal(2, 3, 5, 6))
case("Crop_center", lambda F, x: F.Crop(x, h_w=(3, 2), center_crop=True, num_args=1),
     normal(1, 2, 6, 5))
case("Crop_like", lambda F, x, y: F.Crop(x, y, num_args=2, offset=(1, 0)), normal(1, 2, 5, 4),
     normal(1, 1, 3, 3))
lengths = np.array([1.0, 3.7, 0.0], np.float32)
for axis in (0, 1):
    shape = (4, 3, 2) if axis == 0 else (3, 4, 2)
    case(f"SequenceMask_axis{axis}", lambda F, x, n, a=axis: F.SequenceMask(
        x, n, use_sequence_length=True, axis=a, value=-2.0), normal(*shape), lengths)
    case(f"SequenceReverse_axis{axis}", lambda F, x, n, a=axis: F.SequenceReverse(
        x, n, use_sequence_length=True, axis=a), normal(*shape), lengths)
    case(f"SequenceLast_axis{axis}", lambda F, x, n, a=axis: F.SequenceLast(
        x, n, use_sequence_length=True, axis=a), normal(*shape),
         np.array([1.0, 4.0, 2.5], np.float32))
    for name in ("SequenceMask", "SequenceReverse", "SequenceLast"):   # no lengths
        case(f"{name}_whole_axis{axis}", lambda F, x, n=name, a=axis: getattr(F, n)(
            x, axis=a), normal(*shape))
case("SequenceMask_2d", lambda F, x, n: F.SequenceMask(x, n, use_sequence_length=True),
     normal(5, 3), np.array([2, 5, 9], np.float32))
case("zeros", lambda F: F.zeros((2, 3)))
case("ones_int32", lambda F: F.ones((3,), dtype="int32"))
case("full", lambda F: F.full((2, 2), 3.5))
case("full_int64", lambda F: F.full((1, 3), -7, dtype="int64"))
case("eye", lambda F: F.eye(3))
case("eye_k", lambda F: F.eye(2, 4, k=1, dtype="float64"))
case("eye_k_outside", lambda F: F.eye(2, 3, k=-5))
case("arange", lambda F: F.arange(0.5, 3.0, 0.25))
case("arange_repeat_int", lambda F: F.arange(5, -3, -2, repeat=2, dtype="int32"))
case("arange_stop_none", lambda F: F.arange(4))
case("amp_cast", lambda F, x: F.amp_cast(x, dtype="float16"), normal(2, 3), rtol=1e-3)
case("amp_cast_passes_int", lambda F, x: F.amp_cast(x, dtype="float16"),
     np.arange(4, dtype=np.int32))
case("amp_multicast", lambda F, x, y: F.amp_multicast(x, y, num_outputs=2),
     normal(2, 2).astype(np.float16), normal(3))
case("amp_multicast_narrow", lambda F, x, y: F.amp_multicast(x, y, num_outputs=2,
                                                             cast_narrow=True),
     normal(2, 2).astype(np.float16), normal(3), rtol=1e-3)
case("MakeLoss", lambda F, x: F.MakeLoss(x), normal(2, 3))
case("MakeLoss_scaled", lambda F, x: F.MakeLoss(x, grad_scale=2.0, normalization="batch"),
     normal(4))
case("IdentityAttachKLSparseReg", lambda F, x, m: F.IdentityAttachKLSparseReg(x, m),
     normal(3, 4), np.full(4, 0.2, np.float32))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_indexing_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    _run_one(fn, inputs, rtol, tmp_path)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
@pytest.mark.parametrize("fn,inputs,rtol", [c for c in CASES if c.values[1]])
def test_indexing_graph_with_other_data_dtypes(fn, inputs, rtol, dtype, tmp_path):
    """The first (data) input in other dtypes, index and length inputs as they are;
    onnxruntime's missing kernels are its limit, a skip, and so is a dtype mxlite refuses."""
    import mxlite as mx
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    data = np.nan_to_num(inputs[0] * 3, posinf=7)
    data = np.round(data) if dtype.startswith("int") else data
    try:
        _run_one(fn, [data.astype(dtype)] + list(inputs[1:]), rtol, tmp_path)
    except OrtMissing as e:
        pytest.skip(f"onnxruntime has no kernel: {str(e)[:120]}")
    except mx.MXNetError as e:
        pytest.skip(f"refused: {str(e)[:160]}")


MORE = [
    ("arange_like", lambda F, x: F.contrib.arange_like(x, start=1.0, step=0.5), [normal(2, 3)]),
    ("arange_like_axis_repeat", lambda F, x: F.contrib.arange_like(x, axis=1, repeat=2,
                                                                   start=-1.0),
     [normal(2, 5)]),
    ("index_array", lambda F, x: F.contrib.index_array(x), [normal(2, 3)]),
    ("index_array_axes", lambda F, x: F.contrib.index_array(x, axes=(2, 0)), [normal(2, 3, 4)]),
    ("take_along_axis", lambda F, x, i: F._internal._take_along_axis(x, i, axis=1),
     [normal(3, 4), np.array([[0, 3], [1.9, 2], [3, 0]], np.float32)]),
    ("take_along_axis_none", lambda F, x, i: F._internal._take_along_axis(x, i, axis=None),
     [normal(2, 3), np.array([5, 0, 2], np.float32)]),
    ("batch_take", lambda F, x, i: F.batch_take(x, i),
     [normal(4, 3), np.array([0, 2, 5, -1], np.int32)]),
    ("batch_take_3d", lambda F, x, i: F.batch_take(x, i),
     [normal(2, 3, 4), np.array([[1, 3, 0], [2, 2, 1]], np.int32)]),
    ("linspace", lambda F: F.linspace(0.0, 1.0, 7)),
    ("linspace_no_endpoint_int", lambda F: F.linspace(-3.0, 4.0, 5, endpoint=False,
                                                      dtype="int32")),
    ("split_v2_sections", lambda F, x: F.split_v2(x, 3, axis=1), [normal(2, 6)]),
    ("split_v2_indices_squeeze", lambda F, x: F.split_v2(x, (1, 2), axis=0, squeeze_axis=True),
     [normal(3, 2)]),
    ("split_v2_indices", lambda F, x: F.split_v2(x, (1, 4), axis=-1), [normal(2, 6)]),
    ("ravel_multi_index", lambda F, x: F.ravel_multi_index(x, shape=(3, 4)),
     [np.array([[0, 2, 1.5], [3, 0, 2]], np.float32)]),
    ("ravel_multi_index_3", lambda F, x: F.ravel_multi_index(x, shape=(2, 3, 4)),
     [np.array([[1, 0], [2, 1], [3, 0]], np.float32)]),
    ("unravel_index", lambda F, x: F.unravel_index(x, shape=(3, 4)),
     [np.array([0, 5, 11, 7.9], np.float32)]),
    ("unravel_index_2d", lambda F, x: F.unravel_index(x, shape=(2, 3, 4)),
     [np.array([[0, 23], [13, 4]], np.float32)]),
    ("fill_element_0index", lambda F, a, b, c: F.fill_element_0index(a, b, c),
     [normal(3, 4), normal(3), np.array([0, 3, 1.7], np.float32)]),
    ("fill_element_0index_2", lambda F, a, b, c: F.fill_element_0index(a, b, c),
     [normal(2, 2), normal(2), np.array([1, 1], np.float32)]),
    ("onehot_encode", lambda F, i, o: F._internal._onehot_encode(i, o),
     [np.array([-0.5, 1.7, 3, -1], np.float32), np.zeros((4, 3), np.float32)]),
    ("onehot_encode_int", lambda F, i, o: F._internal._onehot_encode(i, o),
     [np.array([2, 0], np.float32), np.zeros((2, 5), np.int32)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i[0] if i else [], id=n)
                                       for n, f, *i in MORE])
def test_more_indexing_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-5, tmp_path)


IDENTITIES = [
    ("gradientmultiplier", lambda F, x: F.contrib.gradientmultiplier(x, scalar=-1.0),
     [normal(2, 3)]),
    ("gradientmultiplier_3d", lambda F, x: F.contrib.gradientmultiplier(x, scalar=2.5),
     [normal(2, 2, 2)]),
    ("copyto", lambda F, x: F._internal._copyto(x), [normal(3)]),
    ("copyto_2d", lambda F, x: F._internal._copyto(x), [normal(3, 1)]),
    ("identity_with_attr_like_rhs", lambda F, x, y: F._internal._identity_with_attr_like_rhs(
        x, y), [normal(2, 3), normal(2, 3)]),
    ("cast_storage", lambda F, x: F.cast_storage(x, stype="default"), [normal(4, 2)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in IDENTITIES])
def test_identity_like_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-5, tmp_path)


SCATTERS = [
    ("index_copy", lambda F, o, i, n: F.contrib.index_copy(o, i, n),
     [normal(4, 3), np.array([2, 0], np.float32), normal(2, 3)]),
    ("index_copy_3d", lambda F, o, i, n: F.contrib.index_copy(o, i, n),
     [normal(3, 2, 2), np.array([1], np.float32), normal(1, 2, 2)]),
    ("scatter_set_nd", lambda F, l, r, i: F._internal._scatter_set_nd(l, r, i, shape=(2, 3)),
     [normal(2, 3), normal(2), np.array([[1, 0], [2, 0]], np.float32)]),
    ("scatter_set_nd_rows", lambda F, l, r, i: F._internal._scatter_set_nd(
        l, r, i, shape=(3, 2)), [normal(3, 2), normal(1, 2), np.array([[2]], np.float32)]),
    ("count_sketch", lambda F, x, h, s: F.contrib.count_sketch(x, h, s, out_dim=3),
     [normal(2, 4), np.array([[0, 2, 0, 1]], np.float32),
      np.array([[1, -1, 1, -1]], np.float32)]),
    ("count_sketch_wide", lambda F, x, h, s: F.contrib.count_sketch(x, h, s, out_dim=5),
     [normal(3, 3), np.array([[4, 4, 0]], np.float32), np.array([[0.5, -1, 2]], np.float32)]),
    ("fft", lambda F, x: F.contrib.fft(x), [normal(2, 4)]),
    ("fft_odd", lambda F, x: F.contrib.fft(x), [normal(3, 5)]),
    ("ifft", lambda F, x: F.contrib.ifft(x), [normal(2, 8)]),
    ("ifft_odd", lambda F, x: F.contrib.ifft(x), [normal(1, 6)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in SCATTERS])
def test_scatter_and_dft_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-4, tmp_path)


def test_fft_matrix_is_numpys_fft():
    """The reference side: the DFT matrix reproduces numpy.fft.fft, interleaved."""
    from mxlite.onnx.translations.indexing import _dft_matrix
    x = normal(3, 5).astype(np.float64)
    f = np.fft.fft(x)
    want = np.stack([f.real, f.imag], axis=-1).reshape(3, 10)
    np.testing.assert_allclose(x @ _dft_matrix(5, False), want, atol=1e-12)
    np.testing.assert_allclose(want @ _dft_matrix(5, True), 5 * x, atol=1e-12)


ASSIGNS = [
    ("slice_assign", lambda F, l, r: F._internal._slice_assign(l, r, begin=(1, 1), end=(2, 3)),
     [normal(2, 3), normal(1, 2)]),
    ("slice_assign_steps_neg", lambda F, l, r: F._internal._slice_assign(
        l, r, begin=(None, -1), end=(None, None), step=(2, -2)), [normal(3, 4), normal(2, 2)]),
    ("slice_assign_partial_axes", lambda F, l, r: F._internal._slice_assign(
        l, r, begin=(1,), end=(3,)), [normal(4, 2, 2), normal(2, 2, 2)]),
    ("slice_assign_scalar", lambda F, x: F._internal._slice_assign_scalar(
        x, scalar=5.0, begin=(None, -1), end=(None, None)), [normal(2, 3)]),
    ("slice_assign_scalar_step", lambda F, x: F._internal._slice_assign_scalar(
        x, scalar=-1.5, begin=(0, 3), end=(3, 0), step=(2, -1)), [normal(3, 4)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in ASSIGNS])
def test_slice_assign_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-5, tmp_path)
