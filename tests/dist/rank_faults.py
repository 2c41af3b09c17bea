"""Rank script: rank 1 fails in the way named by argv[1] while rank 0 calls the store.

raise          rank 1 raises after creating the store
exit           rank 1 calls sys.exit(3)
return         rank 1's script ends early (exit status 0)
os_exit        rank 1 ends with os._exit(4) (no Python shutdown at all)
early_raise    rank 1 raises before any store exists (run it with python -m mxlite.launch)
early_exit     rank 1 calls sys.exit(2) before any store exists (likewise)
caught         as ``return``, and rank 0 catches the MXNetError and ends normally
late           rank 1 only arrives late: no failure, the job succeeds
"""
import os
import sys
import time

import mxlite as mx

mode = sys.argv[1]
rank = int(os.environ.get("PMI_RANK", "0"))
if rank == 1 and mode == "early_raise":
    raise RuntimeError("rank 1 failed before creating a store")
if rank == 1 and mode == "early_exit":
    sys.exit(2)
kv = mx.kv.create("dist_sync")
kv.init(0, mx.nd.zeros((3,)))
if kv.rank == 1:
    if mode == "raise":
        raise RuntimeError("rank 1 failed on purpose")
    if mode == "exit":
        sys.exit(3)
    if mode in ("return", "caught"):
        sys.exit(0)
    if mode == "os_exit":
        os._exit(4)
    if mode == "late":
        time.sleep(1.0)
g = mx.nd.ones((3,))
if mode == "caught" and kv.rank == 0:
    try:
        kv.pushpull(0, g)
    except mx.MXNetError as e:
        print(f"rank 0 caught: {e}", flush=True)
    sys.exit(0)
kv.pushpull(0, g)
print(f"rank {kv.rank} finished with {g.asnumpy().tolist()}", flush=True)
