"""The one-process stores ('local', 'device') against NumPy, MXNet 1.x's semantics and
errors; ``create``; the error a dist store gives without mpi4py; a dist store without
mpiexec (one rank)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.kvstore import mpi as kv_mpi
from mpirun import HERE, environment


@pytest.fixture(params=["local", "device"])
def kv(request):
    return mx.kv.create(request.param)


def test_create_types():
    for name in ("local", "device", "LOCAL"):
        kv = mx.kv.create(name)
        assert kv.type == name.lower() and kv.rank == 0 and kv.num_workers == 1
    assert mx.kv.create().type == "local"
    assert mx.kvstore.create is mx.kv.create


@pytest.mark.parametrize("name, fragment", [
    ("dist_async", "parameter servers"), ("nccl", "dist_device_sync"),
    ("horovod", "mpiexec"), ("spam", "unknown type 'spam'")])
def test_create_rejects(name, fragment):
    with pytest.raises(mx.MXNetError, match=fragment):
        mx.kv.create(name)
    with pytest.raises(mx.MXNetError, match="must be a string"):
        mx.kv.create(3)


def test_registered_store_is_created_by_name():
    @mx.kv.KVStoreBase.register
    class TinyStore(mx.kv.KVStoreBase):
        pass

    assert type(mx.kv.create("tinystore")) is TinyStore


def test_push_sums_a_list_and_pull_broadcasts(kv, rng):
    parts = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    kv.init(3, mx.nd.zeros((3, 4)))
    kv.push(3, [mx.nd.array(p) for p in parts])
    outs = [mx.nd.zeros((3, 4)) for _ in range(2)]
    kv.pull(3, out=outs)
    want = (parts[0] + parts[1]) + parts[2]
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), want)


def test_lists_of_keys_and_repeated_keys(kv):
    kv.init(["a", "b"], [mx.nd.zeros((2,)), mx.nd.ones((2,))])
    kv.push(["a", "b", "a"], [mx.nd.ones((2,)), mx.nd.ones((2,)) * 5, mx.nd.ones((2,)) * 2])
    a, b = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    kv.pull(["a", "b"], out=[a, b])
    assert a.asnumpy().tolist() == [3.0, 3.0] and b.asnumpy().tolist() == [5.0, 5.0]


def test_init_stores_a_copy(kv):
    value = mx.nd.ones((2,))
    kv.init(0, value)
    value[:] = 7
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    assert out.asnumpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "uint8", "int32", "int64",
                                   "bool"])
def test_every_dtype_sums_like_numpy(dtype, rng):
    kv = mx.kv.create("local")
    if dtype == "bool":
        parts = [rng.random(9) < 0.4 for _ in range(3)]
        want = parts[0] | parts[1] | parts[2]
    elif dtype.startswith("float"):
        parts = [rng.standard_normal(9).astype(dtype) for _ in range(3)]
        want = (parts[0] + parts[1]) + parts[2]
    else:
        info = np.iinfo(dtype)
        parts = [rng.integers(info.min, info.max, 9, dtype=dtype) for _ in range(3)]
        want = ((parts[0] + parts[1]).astype(dtype) + parts[2]).astype(dtype)
    kv.init(0, mx.nd.zeros((9,), dtype=dtype))
    out = mx.nd.zeros((9,), dtype=dtype)
    kv.pushpull(0, [mx.nd.array(p, dtype=dtype) for p in parts], out=out)
    np.testing.assert_array_equal(out.asnumpy(), want)


def test_set_optimizer_updates_on_push_mxnet_example():
    # MXNet 1.x's set_optimizer docstring: SGD() on zeros with a gradient of ones
    kv = mx.kv.create()
    weight = mx.nd.zeros((2, 2))
    kv.init(3, weight)
    kv.set_optimizer(mx.optimizer.SGD())
    kv.push(3, mx.nd.ones((2, 2)))
    kv.pull(3, out=weight)
    np.testing.assert_allclose(weight.asnumpy(), np.full((2, 2), -0.01), rtol=1e-6)


def test_set_updater_mxnet_example():
    kv = mx.kv.create()
    kv.init("3", mx.nd.ones((2, 3)) * 4)
    seen = []

    def update(key, value, stored):
        seen.append(key)
        stored += value * 2

    kv._set_updater(update)
    kv.push("3", mx.nd.ones((2, 3)))
    out = mx.nd.zeros((2, 3))
    kv.pull("3", out=out)
    assert seen == ["3"] and out.asnumpy().tolist() == [[6.0] * 3] * 2


def test_pushpull_in_place_and_into_out(kv):
    kv.init(1, mx.nd.zeros((3,)))
    g = mx.nd.array([1.0, 2.0, 3.0])
    kv.pushpull(1, g)
    assert g.asnumpy().tolist() == [1.0, 2.0, 3.0]
    out = mx.nd.zeros((3,))
    kv.pushpull(1, [g, g], out=out)
    assert out.asnumpy().tolist() == [2.0, 4.0, 6.0]
    again = mx.nd.zeros((3,))
    kv.pull(1, out=again)
    assert again.asnumpy().tolist() == [2.0, 4.0, 6.0]
    out += 1                                   # the pushpull output holds the value: stale
    with pytest.raises(mx.MXNetError, match="written since"):
        kv.pull(1, out=again)


def test_pushpull_with_optimizer_pulls_the_weight():
    kv = mx.kv.create()
    kv.init("w", mx.nd.ones((2,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    g = mx.nd.ones((2,))
    kv.pushpull("w", g)
    assert g.asnumpy().tolist() == [0.5, 0.5]


def test_broadcast(kv):
    outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]
    kv.broadcast("b", mx.nd.ones((2,)) * 3, out=outs)
    assert [o.asnumpy().tolist() for o in outs] == [[3.0, 3.0]] * 2
    with pytest.raises(mx.MXNetError, match="duplicate init"):
        kv.broadcast("b", mx.nd.ones((2,)), out=outs)


def test_pull_under_record_is_not_recorded():
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones((2,)) * 2)
    x = mx.nd.ones((2,))
    x.attach_grad()
    out = mx.nd.zeros((2,))
    with mx.autograd.record():
        kv.pull(0, out=out)
        y = (x * out).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]


def test_optimizer_states_round_trip(tmp_path):
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones((3,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.push(0, mx.nd.ones((3,)))
    path = str(tmp_path / "states")
    kv.save_optimizer_states(path)
    other = mx.kv.create()
    other.init(0, mx.nd.ones((3,)))
    other.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    other.load_optimizer_states(path)
    momentum = other._updater.states[0]
    np.testing.assert_allclose(momentum.asnumpy(), np.full(3, -0.1), rtol=1e-6)
    (tmp_path / "junk").write_bytes(b"not a pickle")
    with pytest.raises(mx.MXNetError, match="no optimizer states"):
        other.load_optimizer_states(str(tmp_path / "junk"))


@pytest.mark.parametrize("call, fragment", [
    (lambda kv: kv.push("w", mx.nd.ones((3,))), r"shape \(3,\)"),
    (lambda kv: kv.push("w", mx.nd.ones((2,), dtype="int32")), "dtype int32"),
    (lambda kv: kv.pull("x", out=mx.nd.ones((2,))), "'x' has not been initialized"),
    (lambda kv: kv.pull(0, out=mx.nd.ones((2,))), "mixed key types"),
    (lambda kv: kv.push(True, mx.nd.ones((2,))), "key must be an int or a str"),
    (lambda kv: kv.push("w", []), "non-empty list"),
    (lambda kv: kv.init("v", [mx.nd.ones((2,))]), "must be one NDArray"),
    (lambda kv: kv.init(["v", "v"], [mx.nd.ones((2,))] * 2), "given twice"),
    (lambda kv: kv.set_gradient_compression({"type": "2bit"}), "not supported"),
    (lambda kv: kv.row_sparse_pull("w", out=mx.nd.ones((2,))), "row_sparse"),
    (lambda kv: kv.save_optimizer_states("x"), "no optimizer is set"),
    (lambda kv: kv.is_capable("sparse"), "unknown capability"),
    (lambda kv: kv._set_updater(3), "callable"),
])
def test_bad_input(kv, call, fragment):
    kv.init("w", mx.nd.zeros((2,)))
    with pytest.raises(mx.MXNetError, match=fragment):
        call(kv)


def test_dist_without_mpi4py_says_what_to_install(monkeypatch):
    monkeypatch.setattr(kv_mpi, "_world", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    with pytest.raises(mx.MXNetError, match=r"pip install mxlite\[dist\]"):
        mx.kv.create("dist_sync")


def test_dist_in_one_process_without_mpiexec():
    pytest.importorskip("mpi4py")
    proc = subprocess.run([sys.executable, os.path.join(HERE, "rank_hello.py")],
                          capture_output=True, text=True, timeout=120, env=environment())
    assert proc.returncode == 0, proc.stderr
    assert "hello rank=0 workers=1 args=[] omp=1 sum=1" in proc.stdout


@pytest.mark.parametrize("name", ["local_update_cpu", "local_allreduce_cpu",
                                  "local_allreduce_device"])
def test_mxnets_older_store_names_are_the_local_stores(name):
    kv = mx.kv.create(name)
    assert kv.type == name and isinstance(kv, mx.kv.KVStoreLocal)
    kv.init(0, mx.nd.zeros((2,)))
    kv.push(0, [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2])
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    assert out.asnumpy().tolist() == [3.0, 3.0]
