"""environment, default context, retry and the other run-surroundings helpers."""
import os
import subprocess
import sys
import threading

import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import (assert_exception, default_context, discard_stderr, environment,
                               has_tvm_ops, is_cd_run, is_op_runnable, list_gpus, retry,
                               set_default_context)

_A, _B = "MXLITE_H1_TEST_A", "MXLITE_H1_TEST_B"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(_A, raising=False)
    monkeypatch.setenv(_B, "before")


def test_environment_sets_and_restores():
    with environment({_A: "1", _B: None}):
        assert os.environ[_A] == "1" and _B not in os.environ
    assert _A not in os.environ and os.environ[_B] == "before"
    with environment(_B, "during"):
        assert os.environ[_B] == "during"
    assert os.environ[_B] == "before"


def test_environment_restores_after_an_exception():
    with pytest.raises(ValueError):
        with environment(_A, "x"):
            raise ValueError("boom")
    assert _A not in os.environ


def test_environment_as_a_decorator_is_reusable():
    seen = []

    @environment({_A: "deco"})
    def body():
        seen.append(os.environ.get(_A))

    body()
    body()
    assert seen == ["deco", "deco"] and _A not in os.environ


def test_environment_nested_and_reentered():
    env = environment(_B, "outer")
    with env:
        with environment(_B, "inner"):
            assert os.environ[_B] == "inner"
        assert os.environ[_B] == "outer"
    assert os.environ[_B] == "before"


@pytest.mark.parametrize("args", [(), (_A,), (_A, "1", "2"), ({_A: 1},), (_A, 3)])
def test_environment_rejects_bad_arguments(args):
    with pytest.raises(MXNetError, match="environment"):
        environment(*args)


def test_set_default_context_is_per_thread_and_scoped():
    seen = {}

    def worker():
        set_default_context(mx.cpu(3))
        seen["worker"] = default_context()
        with mx.cpu(5):
            set_default_context(mx.cpu(6))        # replaces the block's context until it ends
            seen["block"] = default_context()
        seen["after"] = default_context()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"worker": mx.cpu(3), "block": mx.cpu(6), "after": mx.cpu(3)}
    assert default_context() == mx.cpu(0)          # the main thread is untouched
    with pytest.raises(MXNetError, match="Context"):
        set_default_context("cpu")


def test_retry_reruns_only_assertion_failures():
    calls = []

    @retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 3

    flaky()
    assert len(calls) == 3

    @retry(2)
    def always():
        calls.append(1)
        raise AssertionError("never")

    with pytest.raises(AssertionError, match="never"):
        always()

    @retry(5)
    def other():
        calls.append(1)
        raise KeyError("not retried")

    before = len(calls)
    with pytest.raises(KeyError):
        other()
    assert len(calls) == before + 1
    with pytest.raises(MXNetError):
        retry(0)


def test_assert_exception():
    assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise"):
        assert_exception(int, ValueError, "3")


def test_discard_stderr_silences_file_descriptor_2():
    code = ("import os, sys\nfrom mxlite.test_utils import discard_stderr\n"
            "with discard_stderr():\n    os.write(2, b'hidden')\n    print('x', file=sys.stderr)\n"
            "os.write(2, b'shown')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert out.stderr == b"shown"
    with discard_stderr():      # usable in-process too (pytest may replace sys.stderr)
        pass


def test_machine_questions(monkeypatch):
    assert has_tvm_ops() is False and is_op_runnable() is True
    assert list(list_gpus()) == list(range(mx.context.num_gpus()))
    monkeypatch.setenv("CD_JOB", "1")
    assert is_cd_run()
    monkeypatch.setenv("CD_JOB", "0")
    assert not is_cd_run()


def test_cuda_compute_capability_refuses_non_gpu_contexts():
    from mxlite.test_utils import get_cuda_compute_capability
    with pytest.raises(MXNetError, match="GPU context"):
        get_cuda_compute_capability(mx.cpu())
    if mx.context.num_gpus() == 0:
        with pytest.raises(MXNetError, match="gpu"):
            get_cuda_compute_capability(mx.gpu(0))
