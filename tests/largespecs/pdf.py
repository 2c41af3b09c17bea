"""Large-tensor rows: the densities of mxlite/ops/pdf.py, float16 samples past 2**32 (the
log-gamma ones float32 past 2**31, see _LGAMMA_WHY).

A density is element-wise in its sample: the float16 sample (``fill`` with the trial's
markers) is written in place (``out=`` the sample: one 8 GiB array), shaped (4, N / 4) so
that four distributions with distinct parameters cover it and one boundary between them
falls on 2**31: a wrapped 32-bit index, or a parameter taken for the wrong distribution,
shows at the head, around 2**31 and 2**32, the tail or a marker. Each checked element
equals the op on that element alone with its distribution's parameters (the same float64
arithmetic per element, so the results agree bit for bit). Dirichlet reads (4, N / 16, 4)
sample vectors past 2**32 elements and writes 2**30 densities; its check reads the densities
whose vectors sit at the head, around 2**31 and 2**32 and at the tail.

Measured on CPU (2 shared cores, one row at a time under the lock): peak host memory 8.1 GB
for each element-wise row, 10.1 GB for dirichlet; 28 s (normal, exponential) to 136 s
(generalized_negative_binomial: five lgamma/log passes per tile).
"""
import numpy as np

import mxlite as mx

from . import Row

P = 4                              # distributions


def _f16(values):
    return mx.nd.array(np.asarray(values, np.float16), dtype="float16")


def _density(name, fill, params, is_log=False, size="2**32", reason=None):
    """The row of an element-wise density: float16 past 2**32, or, with ``reason``, float32
    past 2**31 (the same 8 GiB array, half the elements)."""
    fn = getattr(mx.nd, f"random_pdf_{name}")
    dtype = "float16" if size == "2**32" else "float32"

    def arr(values):
        return mx.nd.array(np.asarray(values, dtype), dtype=dtype)

    def run(t):
        n = t.N if size == "2**32" else t.N31
        x = t.big(dtype, n, fill=fill)
        pos = t.positions(n)
        before = t.values(x, pos)
        S = n // P
        view = x.reshape((P, S))
        y = fn(view, *(arr(p) for p in params), is_log=is_log, out=view)
        t.check(y is view, f"{name}: out= returns the output array")
        t.shape(y, (P, S), name)
        which = np.array(pos) // S            # the distribution of each checked element
        want = fn(arr(before), *(arr(np.asarray(p)[which]) for p in params), is_log=is_log)
        t.equal(t.values(y, pos), want, f"{name} at the far end")
    return Row(run, dtype, size, reason)


# The densities built on several float64 log-gamma passes per element are the slowest rows
# of the table at 2**32 (gamma 115 s, negative binomial 99 s, generalized 136 s, Poisson
# 64 s, measured): they run past 2**31 float32 elements, which the same tiles and 64-bit
# slicing serve, in half the time.
_LGAMMA_WHY = ("time, not memory: several float64 log-gamma passes per element took 1-2.5 "
               "min at 2**32 float16 elements on two cores; past 2**31 float32 elements is "
               "the same 8 GiB array through the same tiles, in half the time")


def _dirichlet_row(t):
    K = 4
    n = t.N                                   # (P, S, K): S = N / (P K) vectors each
    S = n // (P * K)
    x = t.big("float16", n, fill=0.25)
    alpha = np.array([[1.0, 2.0, 0.5, 3.0], [2.0, 2.0, 2.0, 2.0], [0.75, 1.5, 4.0, 1.0],
                      [5.0, 1.0, 1.0, 0.5]], np.float16)
    y = mx.nd.random_pdf_dirichlet(x.reshape((P, S, K)), _f16(alpha), is_log=True)
    t.shape(y, (P, S), "dirichlet")
    rows = sorted({q for p in t.positions(n) for q in [p // K] if q < P * S})
    comps = [q * K + j for q in rows for j in range(K)]
    vectors = t.values(x, comps).reshape(len(rows), K)
    want = mx.nd.random_pdf_dirichlet(_f16(vectors), _f16(alpha[np.array(rows) // S]),
                                      is_log=True)
    t.equal(t.values(y, rows), want, "dirichlet at the vectors past 2**31 and 2**32")


ROWS = {
    "_random_pdf_uniform": _density("uniform", 0.5, ([0.0, 0.25, -1.0, 0.0],
                                                     [4.0, 8.0, 6.0, 10.0])),
    "_random_pdf_normal": _density("normal", 0.5, ([0.0, 1.0, 2.0, 4.0], [1.0, 2.0, 3.0, 4.0]),
                                   is_log=True),
    "_random_pdf_gamma": _density("gamma", 0.5, ([2.0, 3.0, 0.5, 5.0], [1.0, 0.5, 2.0, 1.0]),
                                  size="2**31", reason=_LGAMMA_WHY),
    "_random_pdf_exponential": _density("exponential", 0.5, ([1.0, 0.5, 2.0, 0.25],),
                                        is_log=True),
    "_random_pdf_poisson": _density("poisson", 1.0, ([1.0, 2.0, 4.0, 8.0],), size="2**31",
                                    reason=_LGAMMA_WHY),
    "_random_pdf_negative_binomial": _density("negative_binomial", 1.0,
                                              ([1.0, 2.0, 3.0, 4.0], [0.5, 0.25, 0.75, 0.5]),
                                              is_log=True, size="2**31", reason=_LGAMMA_WHY),
    "_random_pdf_generalized_negative_binomial": _density(
        "generalized_negative_binomial", 1.0, ([1.0, 2.0, 4.0, 8.0], [0.0, 0.5, 1.0, 0.25]),
        size="2**31", reason=_LGAMMA_WHY),
    "_random_pdf_dirichlet": Row(_dirichlet_row, "float16"),
}
