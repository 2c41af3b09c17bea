"""Testing helpers: MXNet 1.9.1's ``mx.test_utils`` and mxlite's own gradient checker.

Every public name of MXNet's module is here with its signature and meaning (written for
mxlite; differences are in each docstring). The pieces:

- ``_compare``: tolerances per dtype and the array comparisons (``assert_almost_equal``, ...)
- ``_context``: default context/dtype, ``environment``, ``retry``, machine questions
- ``_random_data``: random arrays, NDArrays, shapes and matrices
- ``_symbolic``: checks of symbols through executors (``check_symbolic_forward``, ...)
- ``_generators``: statistical checks of random generators (``verify_generator``, ...)
- ``_data``: downloads and the datasets MXNet's tests fetched
- ``_gradcheck``: ``check_grads``, mxlite's higher-order checker of functions

MXNet's module has no ``__all__``, so ``from mxnet.test_utils import *`` also binds the modules
it imported (``np``, ``mx``, ``os``, ``time``, ...), and test files rely on that; this package
binds the same names. ``__all__`` (computed at the end) lists every public name, so that
the star import also resolves the lazily imported ones (``ss``, ``requests``).
"""
import importlib as _importlib
import importlib.util as _importlib_util

# Modules and names MXNet's test_utils bound at top level (the star import exports them).
import bz2
import errno
import gzip
import json
import logging
import numbers
import os
import platform
import struct
import sys
import time
import traceback
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import mxlite as mx
from ..base import MXNetError as _MXNetError
from ..context import Context, current_context
from ..ndarray import array
from ..runtime import Features
from ..symbol import Symbol
from ..util import getenv, setenv, use_np

from ._compare import (almost_equal, assert_allclose, assert_almost_equal,
                       assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
                       checkShapes, collapse_sum_like, compare_ndarray_tuple, default_atols,
                       default_numeric_eps, default_rtols, effective_dtype, get_atol, get_etol,
                       get_rtol, get_tolerance, get_tols, locationError, np_reduce, same,
                       same_array, _find_max_violation)
from ._context import (assert_exception, default_context, default_dtype, discard_stderr,
                       environment, get_cuda_compute_capability, has_tvm_ops, is_aarch64_run,
                       is_cd_run, is_op_runnable, list_gpus, retry, set_default_context)
from ._data import (DummyIter, download, download_model, get_bz2_data, get_cifar10,
                    get_im2rec_path, get_mnist, get_mnist_iterator, get_mnist_pkl,
                    get_mnist_ubyte, get_zip_data)
from ._generators import (chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check,
                          verify_generator)
from ._gradcheck import GradientCheckError, check_function_gradient, check_grads
from ._optim import check_gluon_hybridize_consistency, compare_optimizer
from ._random_data import (assign_each, assign_each2, create_2d_tensor, create_sparse_array,
                           create_sparse_array_zd, create_vector, get_identity_mat,
                           get_identity_mat_batch, new_matrix_with_real_eigvals_2d,
                           new_matrix_with_real_eigvals_nd, new_orthonormal_matrix_2d,
                           new_sym_matrix_with_real_eigvals_2d,
                           new_sym_matrix_with_real_eigvals_nd, rand_coord_2d, rand_ndarray,
                           rand_shape_2d, rand_shape_3d, rand_shape_nd, rand_sparse_ndarray,
                           random_arrays, random_sample, random_uniform_arrays,
                           shuffle_csr_column_indices)
from ._symbolic import (check_consistency, check_numeric_gradient, check_speed,
                        check_symbolic_backward, check_symbolic_forward, numeric_grad,
                        same_symbol_structure, simple_forward)


from ..symbol.numpy import _Symbol as np_symbol  # noqa: E402  (MXNet's name for it)


def _adopt_public_names():
    """Give the helpers defined in the private submodules this package as their
    ``__module__``: their public home, which reprs, pickles and the API docs show."""
    for value in list(globals().values()):
        if getattr(value, "__module__", "").startswith(__name__ + "._"):
            value.__module__ = __name__


_adopt_public_names()

# Third-party modules MXNet imported when installed; imported here on first use, as they are
# slow to import and only a few helpers need them (scipy.stats: None when scipy is missing).
_LAZY_MODULES = {"ss": "scipy.stats", "requests": "requests"}


def __getattr__(name):
    if name in _LAZY_MODULES:
        try:
            module = _importlib.import_module(_LAZY_MODULES[name])
        except ImportError:
            if name != "ss":
                raise AttributeError(f"mxlite.test_utils.{name}: "
                                     f"{_LAZY_MODULES[name]} is not installed") from None
            module = None
        globals()[name] = module
        return module
    raise AttributeError(f"module 'mxlite.test_utils' has no attribute {name!r}")


def _installed(module):
    try:
        return _importlib_util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


__all__ = sorted([n for n in globals() if not n.startswith("_")] +
                 [n for n, m in _LAZY_MODULES.items() if n == "ss" or _installed(m)])
