"""Gradient specs: the contrib operators of mxlite/ops/contrib_math.py. The four attention
products run on small (seq_len, batch, heads * parts * head_dim) projections with 2 heads,
composed with a square so that every order depends on the input; index_copy on distinct
positions. The straight-through estimators' gradient is the identity by definition, which
finite differences of a step function cannot see: tests/ops/test_contrib_math.py checks it."""

from . import Spec

_STE = ("its gradient is the identity by definition (straight-through), not the derivative "
        "of its step-function output; tests/ops/test_contrib_math.py checks it and that the "
        "second order is zero")


def _idx(nd, values):
    return nd.array(values, dtype="float64")


SPECS = {
    "_contrib_interleaved_matmul_selfatt_qk": Spec(
        [(3, 2, 12)], lambda nd, x: nd.contrib.interleaved_matmul_selfatt_qk(x * x, heads=2)),
    "_contrib_interleaved_matmul_selfatt_valatt": Spec(
        [(3, 2, 12), (4, 3, 3)], lambda nd, x, a: nd.contrib.interleaved_matmul_selfatt_valatt(
            x * x, a * a, heads=2)),
    "_contrib_interleaved_matmul_encdec_qk": Spec(
        [(3, 2, 4), (4, 2, 8)], lambda nd, q, kv: nd.contrib.interleaved_matmul_encdec_qk(
            q * q, kv * kv, heads=2)),
    "_contrib_interleaved_matmul_encdec_valatt": Spec(
        [(4, 2, 8), (4, 3, 4)], lambda nd, kv, a: nd.contrib.interleaved_matmul_encdec_valatt(
            kv * kv, a * a, heads=2)),
    "_contrib_index_copy": Spec(
        [(4, 3), (2, 3)], lambda nd, old, new: nd.contrib.index_copy(
            old * old, _idx(nd, [3, 1]), new * new)),
    "_contrib_arange_like": Spec(
        [(3, 4)], lambda nd, x: nd.contrib.arange_like(x, start=0.5, step=0.25, repeat=2) * x * x),
    "_contrib_div_sqrt_dim": Spec([(3, 5)], lambda nd, x: nd.contrib.div_sqrt_dim(x * x)),
    # scalar=1: the gradient is then the derivative (other scalars: the MXNet fixture)
    "_contrib_gradientmultiplier": Spec(
        [(3, 4)], lambda nd, x: nd.contrib.gradientmultiplier(x * x, scalar=1.0)),
    "_contrib_quadratic": Spec(
        [(3, 4)], lambda nd, x: nd.contrib.quadratic(x * x, a=1.5, b=-0.5, c=2.0)),
    "_contrib_count_sketch": Spec(
        [(3, 4), (1, 4)], lambda nd, x, s: nd.contrib.count_sketch(
            x * x, _idx(nd, [[0, 2, 0, 1]]), s * s, out_dim=3)),
    "_contrib_fft": Spec([(2, 5)], lambda nd, x: nd.contrib.fft(x * x)),
    "_contrib_ifft": Spec([(2, 6)], lambda nd, x: nd.contrib.ifft(x * x)),
    "_contrib_round_ste": Spec([(3, 4)], lambda nd, x: nd.contrib.round_ste(x) * x, order=0,
                               reason=_STE),
    "_contrib_sign_ste": Spec([(3, 4)], lambda nd, x: nd.contrib.sign_ste(x) * x, order=0,
                              reason=_STE),
}

