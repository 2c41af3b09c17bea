"""``dir(mx)``, ``dir(mx.nd)``, ``dir(mx.sym)`` and their operator namespaces show MXNet 1.9.1's
public names plus mxlite's documented extras, never implementation names (the registry, the
invoke strategies, imported helper modules).

MXNet's names come from ``fixtures/mxnet_namespaces.json`` (made by
``fixtures/make_namespace_fixture.py`` with MXNet 1.9.1)."""
import importlib
import json
import pathlib

import pytest

import mxlite  # noqa: F401

MXNET = json.loads((pathlib.Path(__file__).parent / "fixtures" / "mxnet_namespaces.json")
                   .read_text())

# mxlite's public extras, each documented (docs/api, docs/differences.rst, the docstrings)
EXTRAS = {
    "mxnet": {
        "cuda": "the GPU backend package (registers itself with mxlite.device)",
        "device": "the device registry and array namespaces",
        "ops": "the operator records",
        "num_gpus": "mx.context.num_gpus at the top level",
    },
    "mxnet.ndarray": {
        "sum_to": "the registered un-broadcasting op (the gradient of broadcast_to)",
        "hypot": "array-or-scalar hypot, like nd.maximum",
        "io": "the binary NDArray format module (nd.save/nd.load)",
        "dlpack": "the DLPack module (nd.from_dlpack, to_dlpack_for_*)",
    },
    "mxnet.symbol": {
        **{name: "array-or-scalar functions, as in mx.nd (docs/api/symbol.rst)" for name in (
            "add", "subtract", "multiply", "divide", "modulo", "equal", "not_equal",
            "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
            "logical_or", "logical_xor")},
        "grad": "gradient Symbols (differentiable again)",
        "sum_to": "the registered un-broadcasting op",
        "AttrScope": "also mx.attribute.AttrScope", "NameManager": "also mx.name.NameManager",
        "Prefix": "also mx.name.Prefix",
        "graph": "submodule: graph nodes", "infer": "submodule: shape and type inference",
        "json_format": "submodule: MXNet's JSON", "naming": "submodule: automatic names",
    },
    "mxnet.ndarray.contrib": {name: "mxlite's contrib ops" for name in (
        "all_finite", "hardmax", "isneginf", "isposinf")},
    "mxnet.symbol.contrib": {name: "mxlite's contrib ops" for name in (
        "all_finite", "hardmax", "isneginf", "isposinf", "isfinite", "isinf", "isnan")},
    "mxnet.numpy": {
        **{name: "NumPy's function of that name (MXNet 1.9.1's mx.np lacked it; "
                 "docs/guide/numpy.rst)" for name in (
            "asarray", "cumprod", "floor_divide", "fmax", "fmin", "fmod", "gcd", "kron",
            "logical_and", "logical_or", "logical_xor", "median", "nansum", "tri",
            "tril_indices", "triu", "triu_indices")},
        **{name: "NumPy's type, constant or dtype helper, the same object as NumPy's" for name in (
            "dtype", "euler_gamma", "floating", "generic", "iinfo", "integer",
            "number")},
        "is_np_default_dtype": "whether npx.set_np(dtype=True) made float64 the default",
    },
    "mxnet.numpy.random": {"laplace": "NumPy's Laplace sampler",
                           "seed": "NumPy's seed (mx.random.seed)"},
    "mxnet.numpy_extension": {
        "is_np_default_dtype": "whether npx.set_np(dtype=True) made float64 the default",
        **{name: "mx.util's NumPy-semantics switch, beside set_np" for name in (
            "np_array", "np_shape", "set_np_shape", "use_np", "use_np_array",
            "use_np_shape")},
    },
    **{ns: {f"pdf_{d}": "random_pdf_* beside the samplers (the _random_ prefix's namespace; "
                        "MXNet 1.9.1 had them at the top level only)"
            for d in ("uniform", "normal", "gamma", "exponential", "poisson",
                      "negative_binomial", "generalized_negative_binomial", "dirichlet")}
       for ns in ("mxnet.ndarray.random", "mxnet.symbol.random")},
}

# submodules that show in dir(mxlite) only once imported (a script's entry point, tools)
ON_IMPORT = {"mxnet": {"launch": "python -m mxlite.launch (an MPI launcher)",
                       "tools": "python -m mxlite.tools.mxnet_suite, loaded on first use"}}

# names that would mean machinery leaked into a namespace (the defects this test was added for)
IMPLEMENTATION = {"REGISTRY", "invoke", "make_function", "populate", "namespace_of",
                  "BINARY_FUNCTIONS", "sys", "np", "numpy", "functools", "types"}


def public_names(mxnet_name):
    module = importlib.import_module(mxnet_name.replace("mxnet", "mxlite", 1))
    return {n for n in dir(module) if not n.startswith("_")}


@pytest.mark.parametrize("name", sorted(MXNET))
def test_public_names_are_mxnets_or_documented_extras(name):
    extra = public_names(name) - set(MXNET[name])
    undocumented = sorted(extra - set(EXTRAS.get(name, {})) - set(ON_IMPORT.get(name, {})))
    assert not undocumented, f"{name}: names MXNet 1.9.1 does not have: {undocumented}"


@pytest.mark.parametrize("name", sorted(MXNET))
def test_no_implementation_names(name):
    # (MXNet's own names stay: mx.np and mx.numpy are its NumPy interface)
    assert not public_names(name) & (IMPLEMENTATION - set(MXNET[name]))


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_documented_extras_still_exist(name):
    # a stale entry would let a later leak through under the same name
    assert set(EXTRAS[name]) <= public_names(name)
    for sub in ON_IMPORT.get(name, {}):
        importlib.import_module(f"mxlite.{sub}")
