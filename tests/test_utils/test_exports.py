"""``from mxlite.test_utils import *`` binds every public name MXNet 1.9.1's module binds."""
import inspect

import mxlite as mx
import mxlite.test_utils as tu

# dir(mxnet.test_utils) of MXNet 1.9.1 without the underscore names (113 names), taken with
# MXNet 1.9.1 installed: python -c "import mxnet.test_utils as t; print(dir(t))"
MXNET_PUBLIC = """Context DummyIter Features OrderedDict Symbol almost_equal array assert_allclose
assert_almost_equal assert_almost_equal_ignore_nan assert_almost_equal_with_err assert_exception
assign_each assign_each2 bz2 checkShapes check_consistency check_gluon_hybridize_consistency
check_numeric_gradient check_speed check_symbolic_backward check_symbolic_forward
chi_square_check collapse_sum_like compare_ndarray_tuple compare_optimizer contextmanager
create_2d_tensor create_sparse_array create_sparse_array_zd create_vector current_context
default_atols default_context default_dtype default_numeric_eps default_rtols discard_stderr
download download_model effective_dtype environment errno gen_buckets_probs_with_ppf get_atol
get_bz2_data get_cifar10 get_cuda_compute_capability get_etol get_identity_mat
get_identity_mat_batch get_im2rec_path get_mnist get_mnist_iterator get_mnist_pkl
get_mnist_ubyte get_rtol get_tolerance get_tols get_zip_data getenv gzip has_tvm_ops
is_aarch64_run is_cd_run is_op_runnable json list_gpus locationError logging mean_check mx
new_matrix_with_real_eigvals_2d new_matrix_with_real_eigvals_nd new_orthonormal_matrix_2d
new_sym_matrix_with_real_eigvals_2d new_sym_matrix_with_real_eigvals_nd np np_reduce np_symbol
npt numbers numeric_grad os platform rand_coord_2d rand_ndarray rand_shape_2d rand_shape_3d
rand_shape_nd rand_sparse_ndarray random_arrays random_sample random_uniform_arrays requests
retry rnd same same_array same_symbol_structure set_default_context setenv
shuffle_csr_column_indices simple_forward ss struct sys time traceback use_np var_check
verify_generator zipfile""".split()


def test_star_import_binds_mxnets_names():
    ns = {}
    exec("from mxlite.test_utils import *", ns)   # pylint: disable=exec-used
    missing = sorted(set(MXNET_PUBLIC) - set(ns) - ({"requests"} if not _has_requests() else set()))
    assert missing == []
    assert ns["mx"] is mx and ns["np"].__name__ == "numpy" and ns["os"].__name__ == "os"
    assert "MXNetError" not in ns and not any(n.startswith("_") for n in ns if n != "__builtins__")


def _has_requests():
    import importlib.util
    return importlib.util.find_spec("requests") is not None


def test_signatures_match_mxnets():
    sig = inspect.signature
    assert list(sig(tu.assert_almost_equal).parameters) == [
        "a", "b", "rtol", "atol", "names", "equal_nan", "use_broadcast", "mismatches"]
    assert list(sig(tu.rand_ndarray).parameters) == [
        "shape", "stype", "density", "dtype", "modifier_func", "shuffle_csr_indices",
        "distribution", "ctx"]
    assert list(sig(tu.check_numeric_gradient).parameters) == [
        "sym", "location", "aux_states", "numeric_eps", "rtol", "atol", "grad_nodes",
        "use_forward_train", "ctx", "grad_stype_dict", "dtype"]
    assert list(sig(tu.check_symbolic_backward).parameters) == [
        "sym", "location", "out_grads", "expected", "rtol", "atol", "aux_states", "grad_req",
        "ctx", "grad_stypes", "equal_nan", "dtype"]


def test_mxlite_own_checker_keeps_its_name():
    assert tu.check_grads.__module__ == "mxlite.test_utils"       # its public home
    assert "f" in inspect.signature(tu.check_function_gradient).parameters
