"""Weights kept in oneDNN's layout (``mxlite.ops.onednn.keep_weights``): ResNet-50 v1
inference, hybridized, with the convolutions' weights reordered on every call (the default)
against reordered once per parameter version and kept, in interleaved rounds on one
process; the kept copies' bytes beside the parameters'. torch's time for the same network
is in the model report (``python benchmarks/report.py --models resnet50_b1``).

    python benchmarks/bench_onednn_weights.py [batch ...]     # default: 1 8
    pytest benchmarks/bench_onednn_weights.py                  # pytest-benchmark table

Both configurations' outputs are compared before timing.
"""
import sys
import time

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.model_zoo import vision
from mxlite.ops import onednn
from timing import quartiles

BUDGET = 1 << 30


def _network(batch):
    net = vision.resnet50_v1(classes=1000)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(np.random.default_rng(0).uniform(size=(batch, 3, 224, 224)),
                    dtype="float32")
    return net, x


def _call(net, x, kept):
    """One inference call; with ``kept`` after an untimed call that fills the copies."""
    onednn.keep_weights(BUDGET if kept else 0)
    if kept:
        net(x).wait_to_read()
    return net(x).asnumpy()


def compare(batch, rounds=10):
    """{'per call': {...} (ms), 'kept / per call': quartiles, 'kept MB', 'parameters MB'}."""
    net, x = _network(batch)
    a, b = _call(net, x, False), _call(net, x, True)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    kept_bytes = onednn._load().weight_cache_info()[1]
    times = {False: [], True: []}
    for r in range(rounds):
        for kept in ((False, True) if r % 2 else (True, False)):
            onednn.keep_weights(BUDGET if kept else 0)
            net(x).wait_to_read()                     # refills the copies when kept
            best = []
            for _ in range(3):
                start = time.perf_counter()
                net(x).asnumpy()
                best.append(time.perf_counter() - start)
            times[kept].append(min(best))
    onednn.keep_weights(0)
    ratios = [k / p for k, p in zip(times[True], times[False])]
    params = sum(p.data().size * 4 for p in net.collect_params().values())
    return {"per call ms": 1e3 * float(np.median(times[False])),
            "kept ms": 1e3 * float(np.median(times[True])),
            "kept / per call": quartiles(ratios),
            "kept MB": kept_bytes / 2**20, "parameters MB": params / 2**20}


@pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")
@pytest.mark.parametrize("kept", [False, True], ids=["per-call", "kept"])
def test_resnet50_inference(benchmark, kept):
    net, x = _network(1)
    _call(net, x, kept)
    try:
        benchmark(lambda: net(x).asnumpy())
    finally:
        onednn.keep_weights(0)


def main(batches):
    print(f"{onednn.status()}; ResNet-50 v1 inference, hybridized; median of {10} rounds")
    for batch in batches:
        r = compare(batch)
        q = r["kept / per call"]
        print(f"batch {batch:3d}: per call {r['per call ms']:.1f} ms, kept {r['kept ms']:.1f} "
              f"ms, kept / per call {q['median']:.3f} ({q['q1']:.3f}-{q['q3']:.3f}); kept "
              f"copies {r['kept MB']:.0f} MB for {r['parameters MB']:.0f} MB of parameters")


if __name__ == "__main__":
    main([int(b) for b in sys.argv[1:]] or [1, 8])
