"""Rank script for the launcher tests: prints its rank, arguments and thread setting, and
sums the ranks through the store."""
import os
import sys

import mxlite as mx

kv = mx.kv.create("dist_sync")
kv.init(0, mx.nd.zeros((1,)))
total = mx.nd.array([kv.rank + 1.0])
kv.pushpull(0, total)
print(f"hello rank={kv.rank} workers={kv.num_workers} args={sys.argv[1:]} "
      f"omp={os.environ.get('OMP_NUM_THREADS')} sum={total.asscalar():g}")
if "--sleep" in sys.argv:
    import time
    time.sleep(60)
