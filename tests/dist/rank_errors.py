"""Rank script: bad arguments raise a clear MXNetError on every rank, and the store keeps
working afterwards (each check ends with a good collective call)."""
import numpy as np

import mxlite as mx
from mxlite.kvstore import mpi as kv_mpi
from rankrun import raises, run_checks


def store():
    kv = mx.kv.create("dist_sync")
    kv.init("w", mx.nd.zeros((2, 3)))
    return kv


def still_works(kv):
    g = mx.nd.ones((2, 3))
    kv.pushpull("w", g)
    np.testing.assert_array_equal(g.asnumpy(), np.full((2, 3), kv.num_workers, np.float32))


def check_push_shape_mismatch():
    kv = store()
    raises(lambda: kv.push("w", mx.nd.ones((3, 2))), "kv.push", "'w'", "(3, 2)", "(2, 3)")
    still_works(kv)


def check_push_shape_mismatch_on_one_rank():
    kv = store()
    shape = (4,) if kv.rank == 1 else (2, 3)
    message = raises(lambda: kv.push("w", mx.nd.ones(shape)), "kv.push")
    if kv.rank == 1:
        assert "(4,)" in message and "(2, 3)" in message, message
    else:
        assert "rank(s) [1] rejected" in message, message
    still_works(kv)


def check_push_dtype_mismatch():
    kv = store()
    raises(lambda: kv.pushpull("w", mx.nd.ones((2, 3), dtype="float64")), "kv.pushpull",
           "float64", "float32")
    still_works(kv)


def check_pull_unknown_key():
    kv = store()
    raises(lambda: kv.pull("nope", out=mx.nd.zeros((2, 3))), "kv.pull", "'nope'",
           "not been initialized")
    raises(lambda: kv.pull(7, out=mx.nd.zeros((2, 3))), "kv.pull", "mixed key types")
    still_works(kv)


def check_push_unknown_key():
    kv = store()
    raises(lambda: kv.pushpull("nope", mx.nd.zeros((2, 3))), "kv.pushpull", "'nope'",
           "not been initialized")
    still_works(kv)


def check_pull_into_wrong_dtype_or_shape():
    kv = store()
    raises(lambda: kv.pull("w", out=mx.nd.zeros((2, 3), dtype="int32")), "kv.pull", "int32")
    raises(lambda: kv.pull("w", out=[mx.nd.zeros((2, 3)), mx.nd.zeros((6,))]), "out[1]",
           "(6,)")
    raises(lambda: kv.pull("w"), "out is required")
    still_works(kv)


def check_duplicate_init():
    kv = store()
    raises(lambda: kv.init("w", mx.nd.zeros((2, 3))), "kv.init", "duplicate init", "'w'")
    still_works(kv)


def check_bad_keys_and_values():
    kv = store()
    raises(lambda: kv.push(1.5, mx.nd.ones((2, 3))), "key must be an int or a str", "1.5")
    raises(lambda: kv.push(["w", 3], [mx.nd.ones((2, 3))] * 2), "all int or all str")
    raises(lambda: kv.push(["w", "w"], [mx.nd.ones((2, 3))]), "2 keys need a list of 2")
    raises(lambda: kv.push("w", np.ones((2, 3))), "NDArray")
    still_works(kv)


def check_ranks_disagree_on_keys():
    kv = mx.kv.create("dist_sync")
    kv.init(["a", "b"], [mx.nd.zeros((2,)), mx.nd.zeros((2,))])
    key = "a" if kv.rank == 0 else "b"
    raises(lambda: kv.push(key, mx.nd.ones((2,))), "other keys, shapes",
           f"rank(s) {list(range(1, kv.num_workers))}")
    kv.barrier()


def check_one_rank_without_optimizer():
    kv = store()
    if kv.rank == 0:
        raises(lambda: kv.set_optimizer(mx.optimizer.SGD()), "kv.set_optimizer",
               "other keys, shapes, dtypes or settings")
    else:
        raises(lambda: kv.push("w", mx.nd.ones((2, 3))), "kv.push",
               "other keys, shapes, dtypes or settings")
    still_works(kv)


def check_unsupported_features():
    kv = store()
    raises(lambda: kv.set_gradient_compression({"type": "2bit", "threshold": 0.5}),
           "gradient compression is not supported")
    raises(lambda: mx.kv.create("dist_async"), "not supported", "parameter servers")
    raises(lambda: kv.save_optimizer_states("/nonexistent/states"), "no optimizer is set")
    raises(lambda: kv.set_optimizer("sgd"), "mx.optimizer.Optimizer")
    still_works(kv)


if __name__ == "__main__":
    run_checks(globals(), kv_mpi.world().rank)
