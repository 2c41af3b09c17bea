"""ONNX: how long exporting takes, and mxlite's forward time beside onnxruntime's on the
same exported models (the same run, interleaved).

    python benchmarks/bench_onnx.py [--quick] [--threads N]

Models: ResNet-50 v1 at batch 1 (3x224x224), the Gluon CNN of examples/mnist_like.py at
batch 64, and a transformer encoder block (batch 16, sequence 64, width 256). mxlite runs
the hybridized block (``static_alloc``); onnxruntime runs the file ``mx.onnx.export_model``
wrote, on its CPU provider with ``--threads`` intra-op threads (default: the machine's
cores, as mxlite's OpenMP uses; told not to spin between runs, which would take the cores
from the interleaved mxlite calls). Printed per model: the export time, the import time
(``mx.contrib.onnx.import_model``), the median forward ms of each with quartiles, and the
median of the per-round ratios mxlite / onnxruntime.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxlite as mx  # noqa: E402
from timing import interleaved, quartiles  # noqa: E402


def _resnet50():
    from mxlite.gluon.model_zoo import vision
    return vision.resnet50_v1(), (1, 3, 224, 224)


def _cnn():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "examples"))
    import mnist_like
    return mnist_like.build_net(), (64, 1, 16, 16)


def _transformer():
    from bench_executor import EncoderBlock
    return EncoderBlock(256, 4), (16, 64, 256)


MODELS = {"resnet50_b1": _resnet50, "mnist_like_cnn_b64": _cnn,
          "transformer_block": _transformer}


def run(quick, threads):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    # onnxruntime's threads would spin after each run and take the cores mxlite's OpenMP
    # threads need in the next (interleaved) call
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    rounds = 5 if quick else 20
    print(f"mxlite {mx.__version__} vs onnxruntime {ort.__version__}, {threads} thread(s), "
          f"{rounds} rounds; ms per forward, median (quartiles)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in MODELS.items():
            net, shape = build()
            net.initialize(mx.init.Xavier())
            net.hybridize(static_alloc=True, static_shape=True)
            x = mx.nd.random.normal(shape=shape)
            net(x).wait_to_read()
            path = os.path.join(tmp, f"{name}.onnx")
            start = time.perf_counter()
            mx.onnx.export_model(net, None, in_shapes=[shape], onnx_file_path=path)
            export_s = time.perf_counter() - start
            start = time.perf_counter()
            mx.contrib.onnx.import_model(path)
            import_s = time.perf_counter() - start
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            feed = {"data": x.asnumpy()}
            got = session.run(None, feed)[0]
            np.testing.assert_allclose(got, net(x).asnumpy(), rtol=1e-4, atol=1e-4)
            times = interleaved({"mxlite": lambda: net(x).wait_to_read(),
                                 "onnxruntime": lambda: session.run(None, feed)}, rounds)
            ratios = [a / b for a, b in zip(times["mxlite"], times["onnxruntime"])]
            cells = []
            for k in ("mxlite", "onnxruntime"):
                q = quartiles(times[k])
                cells.append(f"{k} {q['median'] * 1e3:.2f} ({q['q1'] * 1e3:.2f}-"
                             f"{q['q3'] * 1e3:.2f})")
            r = quartiles(ratios)
            print(f"{name}: export {export_s:.2f} s, import {import_s:.2f} s; "
                  f"{'; '.join(cells)}; mxlite/onnxruntime {r['median']:.2f} "
                  f"({r['q1']:.2f}-{r['q3']:.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    run(args.quick, args.threads)


if __name__ == "__main__":
    main()
