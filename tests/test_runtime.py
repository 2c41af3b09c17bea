"""``mx.runtime``: MXNet 1.9.1's feature names, reporting what this build and machine have."""
import pytest

import mxlite as mx
from mxlite import device, runtime
from mxlite.base import MXNetError

# MXNet 1.9.1's list (mx.runtime.Features() of its pip wheel), in its order
MXNET_FEATURES = [
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
    "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
    "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
    "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
    "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]


def test_feature_names_are_mxnets():
    assert list(mx.runtime.Features()) == MXNET_FEATURES
    assert [f.name for f in runtime.feature_list()] == MXNET_FEATURES


def test_features_is_a_singleton_dict_of_features():
    features = runtime.Features()
    assert runtime.Features() is features
    assert all(isinstance(f, runtime.Feature) and f.name == name
               for name, f in features.items())
    assert repr(features["INT64_TENSOR_SIZE"]) == "✔ INT64_TENSOR_SIZE"
    assert repr(features["CUDNN"]) == "✖ CUDNN"


def test_is_enabled_any_case_and_unknown_names():
    features = runtime.Features()
    for name, feature in features.items():
        assert features.is_enabled(name.lower()) is feature.enabled
    with pytest.raises(RuntimeError, match="unknown feature 'warp_drive'"):
        features.is_enabled("warp_drive")
    with pytest.raises(MXNetError, match="feature_name must be a str"):
        features.is_enabled(3)


def test_fixed_answers():
    on = {f.name: f.enabled for f in runtime.feature_list()}
    assert on["INT64_TENSOR_SIZE"] and on["LAPACK"] and on["PROFILER"]
    for absent in ("CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "MKLDNN", "OPENCV", "CAFFE",
                   "TVM_OP", "JEMALLOC", "CXX14", "DEBUG", "SIGNAL_HANDLER"):
        assert not on[absent], absent


def test_cuda_asks_the_device_registry(monkeypatch):
    class FakeGpus:         # a GPU backend with two devices
        def device_count(self):
            return 2
    monkeypatch.setattr(device, "_GPU_BACKEND", [FakeGpus()])
    assert {f.name: f.enabled for f in runtime.feature_list()}["CUDA"]
    monkeypatch.setattr(device, "_GPU_BACKEND", [])
    assert not {f.name: f.enabled for f in runtime.feature_list()}["CUDA"]


def test_cpu_features_follow_proc_cpuinfo(monkeypatch):
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: frozenset({"sse", "sse2", "pni", "avx"}))
    on = {f.name: f.enabled for f in runtime.feature_list()}
    assert on["CPU_SSE"] and on["CPU_SSE2"] and on["CPU_SSE3"] and on["CPU_AVX"] and on["SSE"]
    assert not on["CPU_AVX2"] and not on["F16C"] and not on["CPU_SSE4_1"]


def test_libraries_from_the_loaded_files(monkeypatch):
    monkeypatch.setattr(runtime, "_loaded_libraries", lambda: frozenset(
        {"/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/site/numpy.libs/libscipy_openblas64_.so"}))
    on = {f.name: f.enabled for f in runtime.feature_list()}
    assert on["OPENMP"] and on["BLAS_OPEN"]
    assert not on["BLAS_MKL"] and not on["BLAS_ATLAS"] and not on["BLAS_APPLE"]
    monkeypatch.setattr(runtime, "_loaded_libraries", lambda: frozenset())
    on = {f.name: f.enabled for f in runtime.feature_list()}
    assert not on["OPENMP"] and not on["BLAS_OPEN"]


def test_dist_kvstore_means_mpi4py_importable(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    for present in (True, False):
        monkeypatch.setattr(importlib.util, "find_spec",
                            lambda n, *a, p=present: (object() if p else None)
                            if n == "mpi4py" else real(n, *a))
        assert {f.name: f.enabled for f in runtime.feature_list()}["DIST_KVSTORE"] is present
