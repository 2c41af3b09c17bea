"""Sparse storage: ``dot(csr, dense)`` beside SciPy (and torch.sparse, an optional benchmark
dependency) for densities 1e-4 to 1e-1, and a training step of a sparse embedding (row_sparse
gradient, lazy update) against the same step with a dense gradient.

    pytest benchmarks/bench_sparse.py            # pytest-benchmark tables
    python benchmarks/bench_sparse.py [repeats]  # interleaved times and ratios

- ``csr @ dense``: a (10000, 10000) float32 csr matrix times a (10000, 64) dense one, the
  products checked against each other before timing. The systems run in turn each round, so
  a burst of load hits them alike; the table gives the median of the per-round ratios
  mxlite / SciPy (and mxlite / torch) with quartiles.
- Embedding step: a (1_000_000, 64) float32 table, a batch of 10_000 row ids (1 % of the
  rows), forward, backward and an SGD update with weight decay (``Embedding(sparse_grad=
  True)`` and the lazy update, against ``sparse_grad=False``, whose update reads and writes
  every row). Goal: the sparse step at least 10x faster. The same step with a row_sparse
  weight (``gluon.contrib.nn.SparseEmbedding``: the batch's rows pulled from the Trainer's
  kvstore, the gradient pushed there) is timed too.
"""
import sys

import numpy as np
import pytest
import scipy.sparse as spsp

import mxlite as mx
from timing import interleaved, quartiles

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None

DENSITIES = (1e-4, 1e-3, 1e-2, 1e-1)
M = K = 10_000
N = 64
ROWS, DIM, BATCH = 1_000_000, 64, 10_000


def dot_cases(density, seed=0):
    """{system: fn} of csr @ dense at ``density``, each checked against SciPy's product."""
    rng = np.random.default_rng(seed)
    s = spsp.random(M, K, density=density, format="csr", dtype=np.float32,
                    random_state=np.random.RandomState(seed))
    rhs = rng.standard_normal((K, N)).astype(np.float32)
    a, b = mx.nd.sparse.csr_matrix(s), mx.nd.array(rhs)
    want = s @ rhs
    got = mx.nd.dot(a, b).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    cases = {"mxlite": lambda: mx.nd.dot(a, b).wait_to_read(), "scipy": lambda: s @ rhs}
    if torch is not None:
        ts = torch.sparse_csr_tensor(torch.from_numpy(s.indptr.astype(np.int64)),
                                     torch.from_numpy(s.indices.astype(np.int64)),
                                     torch.from_numpy(s.data), size=(M, K))
        tb = torch.from_numpy(rhs)
        np.testing.assert_allclose((ts @ tb).numpy(), want, rtol=1e-4, atol=1e-4)
        cases["torch"] = lambda: ts @ tb
    return cases


def embedding_steps(seed=0):
    """{'sparse': fn, 'dense': fn, 'rsp_weight': fn}: one training step each, from the same
    table and batch (kernels are synchronous: a step has finished when it returns)."""
    rng = np.random.default_rng(seed)
    ids = mx.nd.array(rng.integers(0, ROWS, BATCH))
    table = rng.standard_normal((ROWS, DIM)).astype(np.float32) * 0.01
    steps = {}
    for name, sparse in (("sparse", True), ("dense", False), ("rsp_weight", True)):
        net = mx.gluon.contrib.nn.SparseEmbedding(ROWS, DIM) if name == "rsp_weight" else \
            mx.gluon.nn.Embedding(ROWS, DIM, sparse_grad=sparse)
        net.initialize()
        net.weight.set_data(mx.nd.array(table))
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                                   {"learning_rate": 0.1, "wd": 1e-4})

        def step(net=net, trainer=trainer):
            with mx.autograd.record():
                loss = (net(ids) ** 2).sum()
            loss.backward()
            trainer.step(BATCH)
        steps[name] = step
    return steps


def _ratios(rounds, num, den):
    return quartiles([a / b for a, b in zip(rounds[num], rounds[den])])


def report(repeat=7):
    print(f"csr ({M}x{K}) @ dense ({K}x{N}), float32")
    print("density   mxlite ms   scipy ms   torch ms   mxlite/scipy (q1-q3)   mxlite/torch")
    for density in DENSITIES:
        rounds = interleaved(dot_cases(density), repeat)
        med = {k: quartiles(v)["median"] * 1e3 for k, v in rounds.items()}
        r = _ratios(rounds, "mxlite", "scipy")
        t = _ratios(rounds, "mxlite", "torch")["median"] if "torch" in rounds else float("nan")
        print(f"{density:<9g} {med['mxlite']:9.2f} {med['scipy']:10.2f} "
              f"{med.get('torch', float('nan')):10.2f}   {r['median']:.2f} "
              f"({r['q1']:.2f}-{r['q3']:.2f})        {t:.2f}")
    rounds = interleaved(embedding_steps(), max(3, repeat // 2))
    med = {k: quartiles(v)["median"] * 1e3 for k, v in rounds.items()}
    r = _ratios(rounds, "dense", "sparse")
    w = _ratios(rounds, "dense", "rsp_weight")
    print(f"embedding step ({ROWS} x {DIM}, {BATCH} ids): sparse {med['sparse']:.1f} ms, "
          f"dense {med['dense']:.1f} ms, dense/sparse {r['median']:.1f}x "
          f"({r['q1']:.1f}-{r['q3']:.1f}); row_sparse weight {med['rsp_weight']:.1f} ms, "
          f"dense/it {w['median']:.1f}x ({w['q1']:.1f}-{w['q3']:.1f})")


@pytest.mark.parametrize("density", DENSITIES)
@pytest.mark.parametrize("system", ["mxlite", "scipy", "torch"])
def test_csr_dot(benchmark, density, system):
    cases = dot_cases(density)
    if system not in cases:
        pytest.skip("torch is not installed")
    benchmark(cases[system])


@pytest.mark.parametrize("kind", ["sparse", "dense", "rsp_weight"])
def test_embedding_step(benchmark, kind):
    benchmark(embedding_steps()[kind])


if __name__ == "__main__":
    report(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
