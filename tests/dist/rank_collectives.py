"""Rank script: allreduce and broadcast through ``dist_sync`` against NumPy sums.

Every rank builds every rank's data from a seed, so it can compute the expected sum
itself. Run with ``mpiexec -n N python rank_collectives.py`` (tests/dist/test_collectives.py).
"""
import functools
import os
import tempfile
import zlib

import numpy as np

import mxlite as mx
from mxlite.kvstore import mpi as kv_mpi
from rankrun import run_checks

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool"]
SHAPES = [(1,), (7,), (3, 5, 7), (1001,), (100003,), (0,), (4, 0, 3)]


def data(key, rank, shape, dtype):
    """Rank ``rank``'s value for ``key``: reproducible on every rank."""
    rng = np.random.default_rng(zlib.crc32(f"{key}/{rank}/{shape}/{dtype}".encode()))
    if dtype == "bool":
        return rng.random(shape) < 0.3
    if dtype in ("float16", "float32", "float64"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def total(key, shape, dtype, n, copies=1):
    """The NumPy sum over ranks (and ``copies`` local copies each) of ``data``, in the
    value's dtype (integers wrap; bool: logical or)."""
    parts = [data(f"{key}#{c}", r, shape, dtype) for r in range(n) for c in range(copies)]
    if dtype == "bool":
        return functools.reduce(np.logical_or, parts)
    return functools.reduce(lambda a, b: (a + b).astype(dtype), parts)


def nd(array):
    return mx.nd.array(array, dtype=array.dtype)


def assert_sum(got, want, dtype):
    if dtype == "float16":     # MPI may round a float16 sum of N > 2 ranks differently
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_array_equal(got, want)


def check_identity():
    kv = mx.kv.create("dist_sync")
    assert kv.type == "dist_sync"
    assert kv.num_workers == int(os.environ.get("EXPECT_RANKS", kv.num_workers))  # mpirun.py
    assert 0 <= kv.rank < kv.num_workers
    assert kv.is_capable("optimizer")


def check_init_broadcasts_rank0():
    kv = mx.kv.create("dist_sync")
    keys = [f"init{d}" for d in DTYPES]
    kv.init(keys, [nd(data(k, kv.rank, (5, 3), d)) for k, d in zip(keys, DTYPES)])
    for k, d in zip(keys, DTYPES):
        out = mx.nd.zeros((5, 3), dtype=d)
        kv.pull(k, out=out)
        np.testing.assert_array_equal(out.asnumpy(), data(k, 0, (5, 3), d))


def check_every_dtype_and_size():
    kv = mx.kv.create("dist_sync")
    n = kv.num_workers
    for d in DTYPES:
        for shape in SHAPES:
            key = f"v{d}{shape}"
            kv.init(key, mx.nd.zeros(shape, dtype=d))
            value = nd(data(f"{key}#0", kv.rank, shape, d))
            out = mx.nd.zeros(shape, dtype=d)
            kv.pushpull(key, value, out=out)
            assert_sum(out.asnumpy(), total(key, shape, d, n), d)
            np.testing.assert_array_equal(value.asnumpy(), data(f"{key}#0", kv.rank, shape, d))


def check_push_list_then_pull_list():
    kv = mx.kv.create("dist_sync")
    n, d, shape = kv.num_workers, "float32", (6, 4)
    kv.init(3, mx.nd.zeros(shape))
    kv.push(3, [nd(data(f"3#{c}", kv.rank, shape, d)) for c in range(3)])
    outs = [mx.nd.zeros(shape) for _ in range(2)]
    kv.pull(3, out=outs)
    want = sum(data(f"3#{c}", r, shape, d).astype(np.float64) for r in range(n) for c in range(3))
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-5, atol=1e-5)


def check_pushpull_lists_of_keys_and_values():
    kv = mx.kv.create("dist_sync")
    n, d = kv.num_workers, "float64"
    keys, shape = [101, 102, 103], (9,)
    kv.init(keys, [mx.nd.zeros(shape, dtype=d)] * 3)
    values = [[nd(data(f"{k}#{c}", kv.rank, shape, d)) for c in range(2)] for k in keys]
    outs = [[mx.nd.zeros(shape, dtype=d) for _ in range(2)] for _ in keys]
    kv.pushpull(keys, values, out=outs)
    for k, pair in zip(keys, outs):
        for o in pair:
            np.testing.assert_allclose(o.asnumpy(), total(k, shape, d, n, copies=2),
                                       rtol=1e-12)


def check_pushpull_in_place():
    kv = mx.kv.create("dist_sync")
    n, d, shape = kv.num_workers, "int32", (33,)
    kv.init("inplace", mx.nd.zeros(shape, dtype=d))
    value = nd(data("inplace#0", kv.rank, shape, d))
    kv.pushpull("inplace", value)
    np.testing.assert_array_equal(value.asnumpy(), total("inplace", shape, d, n))
    again = mx.nd.zeros(shape, dtype=d)
    kv.pull("inplace", out=again)
    np.testing.assert_array_equal(again.asnumpy(), value.asnumpy())


def check_pull_after_pushpull_output_was_written():
    kv = mx.kv.create("dist_sync")
    kv.init("stale", mx.nd.zeros((4,)))
    g = mx.nd.ones((4,))
    kv.pushpull("stale", g)
    g += 1
    try:
        kv.pull("stale", out=mx.nd.zeros((4,)))
    except mx.MXNetError as e:
        assert "written since" in str(e), str(e)
    else:
        raise AssertionError("pull of an overwritten pushpull output did not raise")
    kv.push("stale", mx.nd.ones((4,)))          # a push stores its own copy again
    out = mx.nd.zeros((4,))
    kv.pull("stale", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(4, kv.num_workers, np.float32))


def check_many_int_keys_one_call():
    kv = mx.kv.create("dist_sync")
    n, d = kv.num_workers, "float32"
    keys = list(range(1000, 1300))
    shapes = [((k * 7) % 50 + 1,) for k in keys]
    kv.init(keys, [mx.nd.zeros(s) for s in shapes])
    values = [nd(data(f"{k}#0", kv.rank, s, d)) for k, s in zip(keys, shapes)]
    kv.pushpull(keys, values)
    for k, s, v in zip(keys, shapes, values):
        np.testing.assert_array_equal(v.asnumpy(), total(k, s, d, n))


def check_many_str_keys_mixed_dtypes_small_buckets():
    kv = mx.kv.create("dist_sync")
    n = kv.num_workers
    old = kv.fusion_bucket
    kv.fusion_bucket = 256                       # many buckets per dtype
    try:
        keys = [f"s{i}" for i in range(60)]
        dtypes = [DTYPES[i % len(DTYPES)] for i in range(60)]
        shapes = [(i % 13 + 1, 2) for i in range(60)]
        kv.init(keys, [mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)])
        values = [nd(data(f"{k}#0", kv.rank, s, d)) for k, s, d in zip(keys, shapes, dtypes)]
        outs = [mx.nd.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]
        kv.pushpull(keys, values, out=outs)
        for k, s, d, o in zip(keys, shapes, dtypes, outs):
            assert_sum(o.asnumpy(), total(k, s, d, n), d)
    finally:
        kv.fusion_bucket = old


def check_fused_and_direct_paths_agree():
    kv = mx.kv.create("dist_sync")
    n, d, shape = kv.num_workers, "float32", (3000,)
    kv.init(["fz", "dz"], [mx.nd.zeros(shape)] * 2)
    old = kv.fusion_threshold
    try:
        value = nd(data("fz#0", kv.rank, shape, d))
        fused, direct = mx.nd.zeros(shape), mx.nd.zeros(shape)
        kv.fusion_threshold = 1 << 20
        kv.pushpull("fz", value, out=fused)
        kv.fusion_threshold = 0
        kv.pushpull("dz", value, out=direct)
    finally:
        kv.fusion_threshold = old
    np.testing.assert_array_equal(fused.asnumpy(), direct.asnumpy())
    np.testing.assert_array_equal(fused.asnumpy(), total("fz", shape, d, n))


def check_swapped_outputs_read_before_written():
    kv = mx.kv.create("dist_sync")
    # key 1's output is key 2's input and the other way round: every input is read first
    n, d, shape = kv.num_workers, "float64", (50000,)
    kv.init(["sw1", "sw2"], [mx.nd.zeros(shape, dtype=d)] * 2)
    a, b = nd(data("sw1#0", kv.rank, shape, d)), nd(data("sw2#0", kv.rank, shape, d))
    kv.pushpull(["sw1", "sw2"], [a, b], out=[b, a])
    np.testing.assert_allclose(b.asnumpy(), total("sw1", shape, d, n), rtol=1e-12)
    np.testing.assert_allclose(a.asnumpy(), total("sw2", shape, d, n), rtol=1e-12)


def check_chunks_below_max_count():
    kv = mx.kv.create("dist_sync")
    n, d, shape = kv.num_workers, "int64", (2503,)
    old_count, old_threshold = kv_mpi.MAX_COUNT, kv.fusion_threshold
    kv_mpi.MAX_COUNT, kv.fusion_threshold = 1000, 0     # 3 pieces per call
    try:
        kv.init("chunked", nd(data("chunked", kv.rank, shape, d)))
        got = mx.nd.zeros(shape, dtype=d)
        kv.pull("chunked", out=got)
        np.testing.assert_array_equal(got.asnumpy(), data("chunked", 0, shape, d))
        value = nd(data("chunked#0", kv.rank, shape, d))
        kv.pushpull("chunked", value)
        np.testing.assert_array_equal(value.asnumpy(), total("chunked", shape, d, n))
    finally:
        kv_mpi.MAX_COUNT, kv.fusion_threshold = old_count, old_threshold


def check_float16_through_float32_where_mpi_cannot_sum_it():
    kv = mx.kv.create("dist_sync")
    n, shape = kv.num_workers, (3001,)
    kv.init(["h_native", "h_wide"], [mx.nd.zeros(shape, dtype="float16")] * 2)
    value = nd(data("h#0", kv.rank, shape, "float16"))
    native, wide = mx.nd.zeros(shape, dtype="float16"), mx.nd.zeros(shape, dtype="float16")
    kv.pushpull("h_native", value, out=native)
    world = kv_mpi.world()
    saved = dict(world.native)
    world.native[np.dtype(np.float16)] = False
    try:
        kv.pushpull("h_wide", value, out=wide)
    finally:
        world.native.update(saved)
    want = total("h", shape, "float16", n)
    assert_sum(wide.asnumpy(), want, "float16")
    if n == 2:      # one addition, rounded once either way
        np.testing.assert_array_equal(wide.asnumpy(), native.asnumpy())


def check_broadcast():
    kv = mx.kv.create("dist_sync")
    outs = [mx.nd.zeros((2, 3)) for _ in range(2)]
    kv.broadcast("bc", mx.nd.ones((2, 3)) * (kv.rank + 7), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 7, np.float32))


def check_gradients_of_a_recorded_graph():
    kv = mx.kv.create("dist_sync")
    w = mx.nd.array([1.0, 2.0, 3.0])
    w.attach_grad()
    with mx.autograd.record():
        loss = (w * w * (kv.rank + 1)).sum()
    loss.backward()
    kv.init("wgrad", mx.nd.zeros((3,)))
    kv.pushpull("wgrad", w.grad)
    n = kv.num_workers
    want = 2 * np.array([1, 2, 3], np.float32) * sum(r + 1 for r in range(n))
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-6)


def check_optimizer_in_the_store():
    kv = mx.kv.create("dist_sync")
    n = kv.num_workers
    kv.init("opt_w", mx.nd.ones((5,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    for step in range(3):
        kv.push("opt_w", mx.nd.ones((5,)) * (kv.rank + 1))
    w = mx.nd.zeros((5,))
    kv.pull("opt_w", out=w)
    g, mom, ref = float(sum(r + 1 for r in range(n))), 0.0, 1.0
    for _ in range(3):
        mom = 0.9 * mom - 0.5 * g
        ref += mom
    np.testing.assert_allclose(w.asnumpy(), np.full(5, ref, np.float32), rtol=1e-6)


def check_optimizer_states_round_trip():
    folder = kv_mpi.world().bcast_object(tempfile.mkdtemp() if kv_mpi.world().rank == 0
                                         else None)
    path = os.path.join(folder, "states")
    a = mx.kv.create("dist_sync")
    a.init(0, mx.nd.ones((4,)))
    a.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    for g in ([1.0, -2.0, 3.0, 0.5], [0.5, 0.5, -1.0, 2.0]):
        a.push(0, mx.nd.array(g))
    a.save_optimizer_states(path, dump_optimizer=True)   # rank 0 writes, all return after
    assert os.path.exists(path)
    w = mx.nd.zeros((4,))
    a.pull(0, out=w)
    b = mx.kv.create("dist_sync")                         # a restart from the checkpoint
    b.init(0, w)
    b.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    b.load_optimizer_states(path)
    g = mx.nd.array([-1.0, 1.0, 0.25, 0.0])
    a.push(0, g)
    b.push(0, g)
    wa, wb = mx.nd.zeros((4,)), mx.nd.zeros((4,))
    a.pull(0, out=wa)
    b.pull(0, out=wb)
    np.testing.assert_array_equal(wa.asnumpy(), wb.asnumpy())
    c = mx.kv.create("dist_sync")                         # without the states: another step
    c.init(0, w)
    c.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    c.push(0, g)
    wc = mx.nd.zeros((4,))
    c.pull(0, out=wc)
    assert not np.array_equal(wc.asnumpy(), wa.asnumpy())


def check_barrier():
    kv = mx.kv.create("dist_sync")
    for _ in range(3):
        kv.barrier()


if __name__ == "__main__":
    run_checks(globals(), kv_mpi.world().rank)
