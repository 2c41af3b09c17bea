"""Every operator MXNet 1.9.1 registers, and every public name of its operator namespaces,
exists in mxlite or is exempt here with the reason.

MXNet's names come from ``fixtures/mxnet_operator_names.txt`` (made by
``fixtures/make_operator_names.py`` with MXNet 1.9.1): ``registry <name>`` lines are the
names of ``mx.operator.get_all_registered_operators()``, the others ``<namespace> <name>``.
A registered name counts when ``mxlite.ops.registry.get_op`` knows it (a record's name or
alias); a namespace name when ``mx.<namespace>`` has the attribute.
"""
import collections
import pathlib
import re

import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops.registry import get_op

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "mxnet_operator_names.txt"

# (pattern over "<where> <name>", reason): a name matching a pattern is not required
EXEMPT = [
    (r"\S+ _?npx?_.*|\S+ _npi_.*|nd (np|npx|numpy|numpy_extension)|nd\.contrib np",
     "MXNet's NumPy-compatible front end (mx.np / mx.npx) is a later issue"),
    (r"registry (_contrib_)?_?backward_.*|registry _\w+_backward|nd\.contrib backward_\w+",
     "MXNet's hand-written backward kernels: an mxlite gradient is a graph of registered "
     "forward operators, differentiable again"),
    (r".*quantiz.*|\S+ (_contrib_)?(requantize|calibrate_entropy)|nd\.contrib dequantize",
     "int8 quantized inference kernels and their calibration (oneDNN graph passes)"),
    (r"registry _sg_.*", "oneDNN/TensorRT subgraph fusion operators (backend-internal)"),
    (r"\S+ \w+_v1", "deprecated duplicates of BatchNorm, Convolution and Pooling"),
    (r"registry _sparse_.*|nd\.sparse .*|nd sparse|\S+ (_contrib_)?(edge_id|dgl_\w+)"
     r"|\S+ (_contrib_)?SparseEmbedding",
     "the rest of sparse storage's operators: graph ops over csr (edge_id, dgl_*) and "
     "row_sparse weights (SparseEmbedding): a later session of issue 26"),
    (r"registry (_CachedOp|_CachedOpThreadSafe|_CrossDeviceCopy|_NoGradient|_NDArray|_Native"
     r"|_CustomFunction|_set_value)",
     "MXNet engine internals: the CachedOp handle, the executor's cross-device copy, the "
     "no-gradient placeholder, the fill behind NDArray assignment (it has no shape of its "
     "own), and the ctypes callback ops superseded by Custom "
     "(mxlite's CachedOp and autograd.Function record on the tape directly)"),
    (r"registry _contrib_boolean_mask",
     "its output shape depends on the mask's values, which no registered operator's shape "
     "inference sees: mx.nd.contrib.boolean_mask is a front end over take, and "
     "mx.sym.contrib.boolean_mask an MXNetError (mxlite/ndarray/_contrib_math.py)"),
    # helpers that MXNet's generated namespace modules leak; they are not operators
    (r"nd (gen_\w+|op|register|utils|get_indexing_dispatch_code|get_oshape_of_gather_nd_op"
     r"|indexing_key_expand_implicit_axes)"
     r"|nd\.contrib (math|mx|ndarray|current_context|uniform)"
     r"|nd\.random (NDArray|current_context|numeric_types)",
     "not operators: code-generation and indexing helpers, and modules or names MXNet's "
     "namespace modules import"),
]


# Names still to build; a name here that exists fails test_pending_names_are_still_missing,
# so the list only shrinks. (Empty: every MXNet 1.9.1 name is registered or exempt.)
PENDING = set()


def _mxnet_names():
    return [tuple(line.split(" ", 1)) for line in FIXTURE.read_text().splitlines() if line]


def _namespace(dotted):
    module = mx
    for part in dotted.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def _has(where, name):
    if where == "registry":
        try:
            get_op(name)
            return True
        except (MXNetError, KeyError):
            return False
    module = _namespace(where)
    return module is not None and hasattr(module, name)


def _exemption(where, name):
    entry = f"{where} {name}"
    for pattern, reason in EXEMPT:
        if re.fullmatch(pattern, entry):
            return reason
    return None


def test_the_fixture_is_mxnets_full_list():
    counts = collections.Counter(where for where, _ in _mxnet_names())
    assert counts["registry"] == 1167 and counts["nd"] == 333 and counts["nd.contrib"] == 90


def test_every_mxnet_operator_exists_or_is_exempt():
    missing = [f"{where} {name}" for where, name in _mxnet_names()
               if not _has(where, name) and _exemption(where, name) is None
               and f"{where} {name}" not in PENDING]
    assert not missing, f"{len(missing)} MXNet 1.9.1 names missing from mxlite: {missing}"


def test_pending_names_are_still_missing():
    names = {f"{w} {n}" for w, n in _mxnet_names()}
    built = sorted(p for p in PENDING if p in names and _has(*p.split(" ", 1)))
    assert not built, f"built now, take them off PENDING: {built}"
    assert PENDING <= names, f"not MXNet names: {sorted(PENDING - names)}"


@pytest.mark.parametrize("pattern,reason", EXEMPT)
def test_each_exemption_matches_mxnet_names(pattern, reason):
    matched = [(w, n) for w, n in _mxnet_names() if re.fullmatch(pattern, f"{w} {n}")]
    assert matched, f"stale exemption {pattern!r}"

