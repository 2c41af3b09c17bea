"""Rank script: row_sparse values through ``dist_sync``.

Every rank builds every rank's rows from a seed, so it computes the expected sums itself,
densely, with NumPy. Checked: exact sums for overlapping, disjoint and empty row sets;
only stored rows are handed to MPI; ``init`` of a row_sparse value and ``row_sparse_pull``;
the optimizer's lazy update in the store; a Gluon Trainer with a sparse-gradient Embedding
on N ranks against one process on the whole batch; a storage type that differs between
ranks is an MXNetError on every rank (tests/dist/test_sparse.py).
"""
import zlib

import numpy as np

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn
from mxlite.kvstore import mpi as kv_mpi
from rankrun import raises, run_checks

ROWS = 20


def row_set(case, rank, copy):
    """The rows rank ``rank`` stores in its copy ``copy`` of a value, for each case."""
    rng = np.random.default_rng(zlib.crc32(f"{case}/{rank}/{copy}".encode()))
    if case == "overlapping":           # row 3 on every rank and copy, others at random
        return np.union1d([3], rng.choice(ROWS, 6, replace=False))
    if case == "disjoint":              # rank r: rows 4r .. 4r+3, split over its copies
        return np.arange(4 * rank + 2 * copy, 4 * rank + 2 * copy + 2)
    if case == "one_empty":             # only rank 0 stores rows
        return np.array([1, 7, 19]) if rank == 0 else np.zeros(0, np.int64)
    return np.zeros(0, np.int64)        # "all_empty"


def rows_data(case, rank, copy, width, dtype):
    """(ids, rows) of a rank's copy: reproducible on every rank."""
    ids = row_set(case, rank, copy).astype(np.int64)
    rng = np.random.default_rng(zlib.crc32(f"data/{case}/{rank}/{copy}/{dtype}".encode()))
    shape = (ids.size,) + width
    if dtype == "bool":
        return ids, rng.random(shape) < 0.5
    if dtype == "int32":
        return ids, rng.integers(-1000, 1000, shape).astype(dtype)
    return ids, rng.standard_normal(shape).astype(dtype)


def rsp(case, rank, copy, width, dtype):
    ids, rows = rows_data(case, rank, copy, width, dtype)
    return mx.nd.sparse.row_sparse_array((rows, ids), shape=(ROWS,) + width, dtype=dtype)


def dense_sum(case, n, copies, width, dtype):
    """NumPy: each rank's copies summed densely, then the ranks' sums in rank order."""
    total = None
    for r in range(n):
        mine = None
        for c in range(copies):
            ids, rows = rows_data(case, r, c, width, dtype)
            d = np.zeros((ROWS,) + width, dtype)
            d[ids] = rows
            mine = d if mine is None else (mine | d if dtype == "bool" else mine + d)
        total = mine if total is None else (total | mine if dtype == "bool" else total + mine)
    return total


def stored_union(case, n, copies):
    return sorted(set().union(*(row_set(case, r, c).tolist() for r in range(n)
                                for c in range(copies))))


def same_on_every_rank(array):
    blobs = kv_mpi.world().comm.allgather(np.ascontiguousarray(array).tobytes())
    assert all(b == blobs[0] for b in blobs), "ranks hold different values"


CASES = ["overlapping", "disjoint", "one_empty", "all_empty"]


def check_push_sums_rows_exactly():
    kv = mx.kv.create("dist_sync")
    n = kv.num_workers
    for case in CASES:
        for width, dtype in [((3,), "float32"), ((2, 3), "float64"), ((), "int32"),
                             ((4,), "bool")]:
            for copies in (1, 2):
                key = f"{case}{width}{dtype}{copies}"
                kv.init(key, mx.nd.sparse.zeros("row_sparse", (ROWS,) + width, dtype=dtype))
                kv.push(key, [rsp(case, kv.rank, c, width, dtype) for c in range(copies)])
                out = mx.nd.sparse.zeros("row_sparse", (ROWS,) + width, dtype=dtype)
                kv.pull(key, out=out)
                want = dense_sum(case, n, copies, width, dtype)
                assert out.stype == "row_sparse"
                np.testing.assert_array_equal(out.indices.asnumpy(),
                                              stored_union(case, n, copies), err_msg=key)
                np.testing.assert_array_equal(out.asnumpy(), want, err_msg=key)
                dense = mx.nd.zeros((ROWS,) + width, dtype=dtype)
                kv.pull(key, out=dense)
                np.testing.assert_array_equal(dense.asnumpy(), want, err_msg=key)
                same_on_every_rank(out.asnumpy())


def check_pushpull_into_row_sparse_dense_and_in_place():
    kv = mx.kv.create("dist_sync")
    n, width = kv.num_workers, (3,)
    kv.init(["pa", "pb", "pc"], [mx.nd.zeros((ROWS, 3))] * 3)
    want = dense_sum("overlapping", n, 1, width, "float32")
    out = mx.nd.sparse.zeros("row_sparse", (ROWS, 3))
    kv.pushpull("pa", rsp("overlapping", kv.rank, 0, width, "float32"), out=out)
    np.testing.assert_array_equal(out.asnumpy(), want)
    dense = mx.nd.zeros((ROWS, 3))
    kv.pushpull("pb", rsp("overlapping", kv.rank, 0, width, "float32"), out=dense)
    np.testing.assert_array_equal(dense.asnumpy(), want)
    value = rsp("overlapping", kv.rank, 0, width, "float32")
    kv.pushpull("pc", value)
    assert value.stype == "row_sparse"
    np.testing.assert_array_equal(value.asnumpy(), want)
    again = mx.nd.zeros((ROWS, 3))
    kv.pull("pc", out=again)
    np.testing.assert_array_equal(again.asnumpy(), want)


def check_sparse_and_dense_keys_in_one_call():
    kv = mx.kv.create("dist_sync")
    n, width = kv.num_workers, (3,)
    keys = ["m_rsp", "m_dense", "m_mixed", "m_to_rsp"]
    kv.init(keys[:3], [mx.nd.zeros((ROWS, 3))] * 3)
    kv.init(keys[3], mx.nd.sparse.zeros("row_sparse", (ROWS, 3)))
    r0 = rsp("disjoint", kv.rank, 0, width, "float32")
    d = mx.nd.ones((ROWS, 3)) * (kv.rank + 1)
    # a row_sparse value plus a dense one on each rank: summed dense (as the local store)
    kv.push(keys, [r0, d, [rsp("overlapping", kv.rank, 0, width, "float32"), d], d])
    ones = np.ones((ROWS, 3), np.float32) * sum(r + 1 for r in range(n))
    wants = [dense_sum("disjoint", n, 1, width, "float32"), ones,
             dense_sum("overlapping", n, 1, width, "float32") + ones, ones]
    for k, want in zip(keys, wants):
        got = mx.nd.zeros((ROWS, 3))
        kv.pull(k, out=got)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, err_msg=k)


def check_only_stored_rows_travel():
    kv = mx.kv.create("dist_sync")
    world = kv_mpi.world()
    n, shape = kv.num_workers, (1000, 8)
    stored = [5 + 3 * r for r in range(n)]          # rank r stores 5 + 3r rows
    ids = np.arange(stored[kv.rank]) * 7 + kv.rank
    value = mx.nd.sparse.row_sparse_array((np.ones((ids.size, 8), np.float32), ids),
                                          shape=shape)
    kv.init("big", mx.nd.zeros(shape))
    given, reduced = [], []
    gather, allreduce = world.allgatherv, world.allreduce
    world.allgatherv = lambda send, counts: (given.append((send.size, send.dtype,
                                                           [int(c) for c in counts])),
                                             gather(send, counts))[1]
    world.allreduce = lambda send, recv: (reduced.append(recv.size), allreduce(send, recv))[1]
    try:
        out = mx.nd.zeros(shape)
        kv.pushpull("big", value, out=out)
    finally:
        world.allgatherv, world.allreduce = gather, allreduce
    assert reduced == [], f"a dense allreduce of {reduced} elements ran"
    assert given == [(stored[kv.rank], np.dtype(np.int64), stored),
                     (stored[kv.rank] * 8, np.dtype(np.float32), [s * 8 for s in stored])], given
    want = np.zeros(shape, np.float32)
    for r in range(n):
        np.add.at(want, np.arange(stored[r]) * 7 + r, 1.0)
    np.testing.assert_array_equal(out.asnumpy(), want)


def check_pieces_below_max_count():
    kv = mx.kv.create("dist_sync")
    n, width = kv.num_workers, (3,)
    kv.init("pieces", mx.nd.zeros((ROWS, 3), dtype="float64"))
    old = kv_mpi.MAX_COUNT
    kv_mpi.MAX_COUNT = 5                    # several rounds of a few elements each
    try:
        out = mx.nd.zeros((ROWS, 3), dtype="float64")
        kv.pushpull("pieces", [rsp("overlapping", kv.rank, c, width, "float64")
                               for c in range(2)], out=out)
    finally:
        kv_mpi.MAX_COUNT = old
    np.testing.assert_array_equal(out.asnumpy(), dense_sum("overlapping", n, 2, width,
                                                           "float64"))


def check_init_broadcasts_rank0_then_row_sparse_pull():
    kv = mx.kv.create("dist_sync")
    width = (3,)
    kv.init("table", rsp("overlapping", kv.rank, 0, width, "float32"))
    ids, rows = rows_data("overlapping", 0, 0, width, "float32")
    rank0 = np.zeros((ROWS, 3), np.float32)
    rank0[ids] = rows
    out = mx.nd.sparse.zeros("row_sparse", (ROWS, 3))
    kv.row_sparse_pull("table", out=out, row_ids=mx.nd.array([19, 3, 3, 0, 11]))
    picked = sorted({19, 3, 0, 11} & set(ids.tolist()))
    np.testing.assert_array_equal(out.indices.asnumpy(), picked)
    want = np.zeros((ROWS, 3), np.float32)
    want[picked] = rank0[picked]
    np.testing.assert_array_equal(out.asnumpy(), want)
    whole = mx.nd.zeros((ROWS, 3))
    kv.pull("table", out=whole)
    np.testing.assert_array_equal(whole.asnumpy(), rank0)
    # an empty row_sparse value on rank 0 initializes an empty key everywhere
    first = mx.nd.sparse.zeros("row_sparse", (ROWS, 3)) if kv.rank == 0 else \
        rsp("disjoint", kv.rank, 0, width, "float32")
    kv.init("empty_table", first)
    kv.row_sparse_pull("empty_table", out=out, row_ids=mx.nd.arange(ROWS))
    assert out.indices.asnumpy().size == 0
    # csr: rank 0's matrix too
    kv.init("csr_table", mx.nd.array(np.eye(ROWS, 3) * (kv.rank + 2)).tostype("csr"))
    kv.pull("csr_table", out=whole)
    np.testing.assert_array_equal(whole.asnumpy(), np.eye(ROWS, 3) * 2)
    # a dense table, row_sparse pushes replace it with their sum; pull its rows
    kv.init("dense_table", mx.nd.ones((ROWS, 3)) * (kv.rank + 5))
    kv.push("dense_table", rsp("one_empty", kv.rank, 0, width, "float32"))
    kv.row_sparse_pull("dense_table", out=out, row_ids=mx.nd.array([7, 8]))
    want = np.zeros((ROWS, 3), np.float32)
    want[[7, 8]] = dense_sum("one_empty", kv.num_workers, 1, width, "float32")[[7, 8]]
    np.testing.assert_array_equal(out.asnumpy(), want)


def check_optimizer_updates_lazily_on_every_rank():
    kv = mx.kv.create("dist_sync")
    n, width = kv.num_workers, (3,)
    table = np.random.default_rng(3).standard_normal((ROWS, 3)).astype(np.float32)
    kv.init("lazy_sgd", mx.nd.array(table) * (kv.rank + 1))     # rank 0's table is kept
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, wd=0.1))
    kv.push("lazy_sgd", rsp("overlapping", kv.rank, 0, width, "float32"))
    got = mx.nd.zeros((ROWS, 3))
    kv.pull("lazy_sgd", out=got)
    g = dense_sum("overlapping", n, 1, width, "float32")
    rows = stored_union("overlapping", n, 1)
    want = table.copy()
    want[rows] = table[rows] - 0.5 * (g[rows] + 0.1 * table[rows])
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-7)
    untouched = np.setdiff1d(np.arange(ROWS), rows)
    np.testing.assert_array_equal(got.asnumpy()[untouched], table[untouched])
    same_on_every_rank(got.asnumpy())


def check_adam_in_the_store_matches_the_local_store():
    kv = mx.kv.create("dist_sync")
    n, width = kv.num_workers, (3,)
    table = np.random.default_rng(4).standard_normal((ROWS, 3)).astype(np.float32)
    local = mx.kv.create("local")
    for store in (kv, local):
        store.init("adam", mx.nd.array(table))
        store.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
    for step, case in enumerate(["overlapping", "disjoint", "one_empty", "all_empty"]):
        kv.push("adam", rsp(case, kv.rank, step % 2, width, "float32"))
        local.push("adam", [rsp(case, r, step % 2, width, "float32") for r in range(n)])
    got, want = mx.nd.zeros((ROWS, 3)), mx.nd.zeros((ROWS, 3))
    kv.pull("adam", out=got)
    local.pull("adam", out=want)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)
    if n == 2:      # one addition per row either way: the same bits
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
    same_on_every_rank(got.asnumpy())


BATCH, STEPS, VOCAB = 8, 4, 30


def train_embedding(kvstore, rank, parts, optimizer, update_on_kvstore=None):
    """A sparse-gradient Embedding and a Dense layer, trained on this rank's part of each
    batch (rank-dependent initial weights: the Trainer gives every rank rank 0's)."""
    mx.random.seed(rank)
    net = nn.Sequential()
    net.add(nn.Embedding(VOCAB, 4, sparse_grad=True), nn.Dense(2, in_units=4, flatten=False))
    net.initialize(mx.init.Uniform(0.5))
    assert net[0].weight.grad().stype == "row_sparse"
    params = {"learning_rate": 0.1, "momentum": 0.9} if optimizer == "sgd" else \
        {"learning_rate": 0.05}
    trainer = gluon.Trainer(net.collect_params(), optimizer, params, kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore)
    rng = np.random.default_rng(11)
    size = BATCH // parts
    for _ in range(STEPS):
        x = rng.integers(0, VOCAB // 2, (BATCH, 3))     # half the table is never used
        y = rng.standard_normal((BATCH, 3, 2))
        xs = mx.nd.array(x[rank * size:(rank + 1) * size])
        ys = mx.nd.array(y[rank * size:(rank + 1) * size])
        with autograd.record():
            loss = ((net(xs) - ys) ** 2).sum()
        loss.backward()
        trainer.step(BATCH)
    return [p.data().asnumpy() for p in net.collect_params().values()]


def check_trainer_with_sparse_embedding_matches_one_process():
    world = kv_mpi.world()
    for optimizer, on_kvstore in [("sgd", None), ("adam", None), ("sgd", False)]:
        dist = train_embedding("dist_sync", world.rank, world.size, optimizer, on_kvstore)
        for a in dist:
            same_on_every_rank(a)
        whole = train_embedding("device", 0, 1, optimizer)
        for a, b in zip(dist, whole):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=optimizer)
        mx.random.seed(0)
        start = nn.Embedding(VOCAB, 4)
        start.initialize(mx.init.Uniform(0.5))
        moved = np.abs(dist[0] - start.weight.data().asnumpy()).sum(axis=1)
        assert moved[:VOCAB // 2].min() > 0 and moved[VOCAB // 2:].max() == 0, moved


def check_storage_types_that_differ_between_ranks_raise_everywhere():
    kv = mx.kv.create("dist_sync")
    width = (3,)
    kv.init("st", mx.nd.zeros((ROWS, 3)))
    mine = rsp("overlapping", kv.rank, 0, width, "float32")
    value = mine if kv.rank == 0 else mine.tostype("default")
    raises(lambda: kv.push("st", value), "kv.push", "other keys, shapes")
    raises(lambda: kv.pushpull("st", value, out=mx.nd.zeros((ROWS, 3))), "kv.pushpull",
           "other keys, shapes")
    first = mx.nd.sparse.zeros("row_sparse", (ROWS, 3)) if kv.rank == 0 else \
        mx.nd.zeros((ROWS, 3))
    raises(lambda: kv.init("st2", first), "kv.init", "other keys, shapes")
    # rows that are not in increasing order are refused before anything moves
    bad = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [4, 2]),
                                        shape=(ROWS, 3)) if kv.rank == 1 else mine
    message = raises(lambda: kv.push("st", bad), "kv.push")
    assert ("invalid sparse format" in message) if kv.rank == 1 else \
        ("rank(s) [1] rejected" in message), message
    out = mx.nd.zeros((ROWS, 3))                        # the store still works
    kv.pushpull("st", mine, out=out)
    np.testing.assert_array_equal(out.asnumpy(),
                                  dense_sum("overlapping", kv.num_workers, 1, width, "float32"))


if __name__ == "__main__":
    run_checks(globals(), kv_mpi.world().rank)
