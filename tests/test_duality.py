"""Registry-wide duality: every op through ``mx.nd`` and through ``mx.sym`` + an Executor.

For each registered op the same inputs go through the imperative call (under
``autograd.record()``, gradients by ``backward`` with fixed random head gradients) and
through the symbolic call on Variables, bound with ``Symbol.bind`` and run with
``forward(is_train=True)`` / ``backward(out_grads)``: outputs and first-order gradients
must be identical, bit for bit (the executor runs the same kernels and FGradients). The
same rows run again in predict mode (``mx.nd`` outside ``record()``, ``forward(is_train=
False)``).

Differentiable ops reuse the gradient table (tests/gradspecs: shapes, sampling, call);
the others are in ``FORWARD`` below (random ops with a fixed seed, creation ops, index
outputs, optimizer updates -- whose mutated state inputs are compared too). An op in
neither table and not in ``EXEMPT`` fails ``test_every_op_is_covered``.
"""
import types
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY
from mxlite.symbol.symbol import broadcasting
from gradspecs import Spec, all_specs
from gradspecs.norm import _moving


@pytest.fixture(autouse=True)
def same_graph(monkeypatch):
    """The executor runs the graph as built: merging common subexpressions (MXNet's default
    bind pass) sums a shared node's gradient before propagating it, which rounds
    differently from the tape's per-use sums."""
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")

SPECS = all_specs()


def _batchnorm_one_mode(nd, x, gamma, beta):
    """The gradient table's BatchNorm row sets train/predict mode per call inside the
    function, which a graph cannot (its mode is the executor's): the same calls in training
    mode only; inference mode is test_batchnorm_inference_duality."""
    y, m, r = nd.BatchNorm(x * x, gamma, beta, *_moving(nd, 0.0, 1.0), fix_gamma=False,
                           output_mean_var=True, eps=1e-2)
    fixed = nd.BatchNorm(nd.transpose(x, axes=(0, 2, 1)), gamma, beta, *_moving(nd, 0.0, 1.0),
                         axis=-1)
    glob = nd.BatchNorm(x, gamma, beta, *_moving(nd, 0.1, 0.7), use_global_stats=True,
                        fix_gamma=False)
    return [y * x, m * m, r, nd.transpose(fixed, axes=(0, 2, 1)) * x, glob * x]


def _batchnorm_relu_one_mode(nd, x, gamma, beta):
    """BatchNormWithReLU's table row sets the mode inside too: its training calls only."""
    y, m, r = nd.contrib.BatchNormWithReLU(x * x, gamma, beta, *_moving(nd, 0.0, 1.0),
                                           fix_gamma=False, output_mean_var=True, eps=1e-2)
    return [y * x, m * m, r]


def _sync_batchnorm_one_mode(nd, x, gamma, beta):
    """SyncBatchNorm's table row sets the mode inside too: its training call only."""
    y, m, r = nd.contrib.SyncBatchNorm(x * x, gamma, beta, *_moving(nd, 0.0, 1.0),
                                       fix_gamma=False, output_mean_var=True, eps=1e-2)
    return [y * x, m * m, r]


# Rows of the gradient table whose call a graph cannot express, replaced here (same op).
OVERRIDE = {
    "_contrib_SyncBatchNorm": Spec(SPECS["_contrib_SyncBatchNorm"].shapes,
                                   _sync_batchnorm_one_mode,
                                   SPECS["_contrib_SyncBatchNorm"].domains),
    "_contrib_BatchNormWithReLU": Spec(SPECS["_contrib_BatchNormWithReLU"].shapes,
                                       _batchnorm_relu_one_mode,
                                       SPECS["_contrib_BatchNormWithReLU"].domains),
    "BatchNorm": Spec(SPECS["BatchNorm"].shapes, _batchnorm_one_mode,
                      SPECS["BatchNorm"].domains),
    # the table's row seeds inside the call (at graph-building time for a symbol); the
    # test seeds both sides before running instead
    "Dropout": Spec([(3, 4)], lambda nd, x: [nd.Dropout(x, p=0.3) * x,
                                             nd.Dropout(x, p=0.5, axes=(1,)) * x]),
}


class Fwd:
    """A forward-only row: ``sample(rng)`` gives NumPy inputs, ``call(ns, *xs)`` the op."""

    def __init__(self, sample, call):
        self.sample, self.call = sample, call


def _u(*shapes, lo=-1.0, hi=1.0):
    return lambda rng: [rng.uniform(lo, hi, s) for s in shapes]


def _ints(*shapes, hi=3):
    return lambda rng: [rng.integers(0, hi, s).astype(np.float64) for s in shapes]


def _special(rng):
    x = rng.uniform(-2, 2, (3, 4))
    x[0, 1], x[1, 2], x[2, 0] = np.inf, -np.inf, np.nan
    return [x]


def _probs(rng):
    p = rng.uniform(0.1, 1, (3, 5))
    return [p / p.sum(axis=1, keepdims=True)]


def _state(n_states):
    """weight, grad and ``n_states`` positive optimizer states of shape (3, 4)."""
    return lambda rng: ([rng.uniform(-1, 1, (3, 4)) for _ in range(2)]
                        + [rng.uniform(0.1, 1, (3, 4)) for _ in range(n_states)])


def _half(ns, *xs):
    """float16 weights and gradients of the multi-precision updates."""
    return [ns.cast(x, dtype="float16") for x in xs]


def _single(ns, x):
    """a float32 state or master weight of the multi-precision updates"""
    return ns.cast(x, dtype="float32")


def _multi(name, n_states, mp=False, **params):
    """A multi-tensor SGD update of two weights of shapes (3, 4) and (5,)."""
    preloaded = name.startswith("preloaded_")
    per = 2 + n_states

    def sample(rng):
        arrays = [rng.uniform(-1, 1, s) for s in [(3, 4)] * per + [(5,)] * per]
        return arrays + ([np.array([0.1, 0.2]), np.array([0.01, 0.0])] if preloaded else [])

    def call(ns, *xs):
        groups = []
        for i in range(2):
            w, g, *states = xs[i * per:(i + 1) * per]
            groups += (_half(ns, w, g) + [_single(ns, s) for s in states] if mp
                       else [w, g, *states])
        rates = ({} if preloaded else dict(lrs=(0.1, 0.2), wds=(0.01, 0.0)))
        return getattr(ns, name)(*groups, *xs[2 * per:], num_weights=2, **rates, **params)
    return Fwd(sample, call)


def _multi_step(name, per, mp, count, rates, tail=0, **params):
    """A multi-tensor step of optimizer_multi on two weights of shapes (3, 4) and (5,)
    (``per`` arrays each: weight, grad, positive states), then ``tail`` rescale arrays."""
    def sample(rng):
        arrays = []
        for shape in ((3, 4), (5,)):
            arrays += [rng.uniform(-1, 1, shape) for _ in range(2)]
            arrays += [rng.uniform(0.1, 1, shape) for _ in range(per - 2)]
        return arrays + [np.array([0.5])] * tail

    def call(ns, *xs):
        groups = []
        for i in range(2):
            w, g, *states = xs[i * per:(i + 1) * per]
            groups += (_half(ns, w, g) + [_single(ns, s) for s in states] if mp
                       else [w, g, *states])
        tail_arrays = [_single(ns, x) for x in xs[2 * per:]] if mp else list(xs[2 * per:])
        return getattr(ns._internal, name)(*groups, *tail_arrays, **{count: 2}, **rates,
                                           **params)
    return Fwd(sample, call)


_ADAMW_RATES = dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), etas=(1.0, 0.5))
_LAMB_RATES = dict(learning_rates=(0.1, 0.2), wds=(0.01, 0.0), step_count=(1, 4))


def _scalar_cmp(name):
    return Fwd(_ints((3, 4)), lambda ns, x: getattr(ns._internal, name)(x, scalar=1.0))


def _unary(name):
    return Fwd(_u((3, 4), lo=-3, hi=3), lambda ns, x: getattr(ns, name)(x))


def _binary(name, rshape=(1, 4)):
    """A row for ``ns.<name>(a, b)`` on small ints; ``name`` may be dotted."""
    def call(ns, a, b):
        for part in name.split("."):
            ns = getattr(ns, part)
        return ns(a, b)
    return Fwd(_ints((3, 4), rshape), call)


def _rand(name, **kw):
    public = name[len("_random_"):]
    return Fwd(lambda rng: [], lambda ns: getattr(ns.random, public)(shape=(3, 4), **kw))


def _rand_like(name, **kw):
    public = name[len("_random_"):]
    return Fwd(_u((3, 4)), lambda ns, x: getattr(ns.random, public)(x, **kw))


FORWARD = {
    **{n: _scalar_cmp(n) for n in (
        "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
        "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
        "_logical_xor_scalar")},
    **{n: _binary(n) for n in (
        "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
        "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
        "broadcast_logical_or", "broadcast_logical_xor")},
    **{f"_{n}": _binary(f"_internal._{n}", rshape=(3, 4)) for n in (
        "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
        "logical_and", "logical_or", "logical_xor")},
    **{n: _unary(n) for n in ("ceil", "fix", "floor", "rint", "round", "trunc", "sign",
                              "logical_not", "ones_like", "zeros_like")},
    **{f"_contrib_{n}": Fwd(_special, lambda ns, x, n=n: getattr(ns.contrib, n)(x))
       for n in ("isfinite", "isinf", "isnan", "isneginf", "isposinf", "all_finite")},
    "_has_inf": Fwd(_special, lambda ns, x: ns._internal._has_inf(x)),
    "_has_nan": Fwd(_special, lambda ns, x: ns._internal._has_nan(x)),
    "_contrib_hardmax": Fwd(_u((3, 4)), lambda ns, x: ns.contrib.hardmax(x, axis=1)),
    "_npx_constraint_check": Fwd(_u((3, 4), lo=0.5), lambda ns, x: (
        ns._internal._npx_constraint_check(ns.cast(x, dtype="bool"), msg="nonzero"))),
    "argmax": Fwd(_u((3, 4)), lambda ns, x: ns.argmax(x, axis=1)),
    "argmin": Fwd(_u((3, 4)), lambda ns, x: ns.argmin(x, axis=0, keepdims=True)),
    "argmax_channel": Fwd(_u((3, 4)), lambda ns, x: ns.argmax_channel(x)),
    "argsort": Fwd(_u((3, 4)), lambda ns, x: ns.argsort(x, axis=1, is_ascend=False)),
    "one_hot": Fwd(_ints((2, 3), hi=4), lambda ns, i: ns.one_hot(i, depth=4, on_value=2.0)),
    "arange": Fwd(lambda rng: [], lambda ns: ns.arange(start=1, stop=7, step=2, repeat=2)),
    "full": Fwd(lambda rng: [], lambda ns: ns.full(shape=(2, 3), val=1.5)),
    "ones": Fwd(lambda rng: [], lambda ns: ns.ones(shape=(2, 3), dtype="float64")),
    "zeros": Fwd(lambda rng: [], lambda ns: ns.zeros(shape=(2, 3), dtype="int32")),
    "_random_uniform": _rand("_random_uniform", low=-2, high=3),
    "_random_normal": _rand("_random_normal", loc=1, scale=2),
    "_random_exponential": _rand("_random_exponential", lam=2),
    "_random_gamma": _rand("_random_gamma", alpha=2, beta=0.5),
    "_random_poisson": _rand("_random_poisson", lam=3),
    "_random_negative_binomial": _rand("_random_negative_binomial", k=3, p=0.4),
    "_random_generalized_negative_binomial": _rand("_random_generalized_negative_binomial",
                                                   mu=2, alpha=0.5),
    "_random_randint": _rand("_random_randint", low=-3, high=9),
    "_random_uniform_like": _rand_like("_random_uniform_like", low=0, high=2),
    "_random_normal_like": _rand_like("_random_normal_like"),
    "_random_exponential_like": _rand_like("_random_exponential_like"),
    "_random_gamma_like": _rand_like("_random_gamma_like"),
    "_random_poisson_like": _rand_like("_random_poisson_like"),
    "_random_negative_binomial_like": _rand_like("_random_negative_binomial_like"),
    "_random_generalized_negative_binomial_like": _rand_like(
        "_random_generalized_negative_binomial_like"),
    # per-element samplers: distribution parameters as arrays (positive where they must be)
    **{f"_sample_{d}": Fwd(_u(*[(2, 3)] * n, lo=0.2, hi=0.9), lambda ns, *ps, d=d: getattr(
        ns._internal, f"_sample_{d}")(*ps, shape=(4,)))
       for d, n in (("normal", 2), ("gamma", 2), ("exponential", 1),
                    ("poisson", 1), ("negative_binomial", 2),
                    ("generalized_negative_binomial", 2))},
    "_sample_uniform": Fwd(lambda rng: [rng.uniform(0, 0.4, (2, 3)),
                                        rng.uniform(0.5, 1, (2, 3))],
                           lambda ns, lo, hi: ns._internal._sample_uniform(lo, hi, shape=(4,))),
    "_sample_unique_zipfian": Fwd(lambda rng: [], lambda ns: ns._internal._sample_unique_zipfian(
        range_max=50, shape=(2, 5))),
    "_roi_pooling_argmax": Fwd(
        lambda rng: [rng.uniform(-1, 1, (1, 2, 6, 6)),
                     np.array([[0, 0, 0, 4, 4], [0, 1, 2, 5, 5]], dtype=np.float64)],
        lambda ns, x, r: ns._internal._roi_pooling_argmax(x, r, pooled_size=(2, 2),
                                                          spatial_scale=1.0)),
    "_sample_multinomial": Fwd(_probs, lambda ns, p: ns.random.multinomial(
        p, shape=(2,), get_prob=True)),
    "_shuffle": Fwd(_u((5, 3)), lambda ns, x: ns._internal._shuffle(x)),
    "_rrelu_slope": Fwd(_u((3, 4)), lambda ns, x, : ns._internal._rrelu_slope(x, x * 2)),
    "sgd_update": Fwd(_state(0), lambda ns, w, g: ns.sgd_update(w, g, lr=0.1, wd=0.01)),
    "signsgd_update": Fwd(_state(0), lambda ns, w, g: ns.signsgd_update(w, g, lr=0.1)),
    "sgd_mom_update": Fwd(_state(1), lambda ns, w, g, m: ns.sgd_mom_update(
        w, g, m, lr=0.1, momentum=0.9)),
    "nag_mom_update": Fwd(_state(1), lambda ns, w, g, m: ns.nag_mom_update(
        w, g, m, lr=0.1, momentum=0.9)),
    "signum_update": Fwd(_state(1), lambda ns, w, g, m: ns.signum_update(
        w, g, m, lr=0.1, momentum=0.9)),
    "rmsprop_update": Fwd(_state(1), lambda ns, w, g, n: ns.rmsprop_update(w, g, n, lr=0.1)),
    "rmspropalex_update": Fwd(_state(3), lambda ns, w, g, n, g2, d: ns.rmspropalex_update(
        w, g, n, g2, d, lr=0.1)),
    "adam_update": Fwd(_state(2), lambda ns, w, g, m, v: ns.adam_update(w, g, m, v, lr=0.1)),
    "_adamw_update": Fwd(lambda rng: _state(2)(rng) + [np.array([1.0])],
                         lambda ns, w, g, m, v, r: ns._internal._adamw_update(
                             w, g, m, v, r, lr=0.1, eta=1.0, wd=0.1)),
    "ftrl_update": Fwd(_state(2), lambda ns, w, g, z, n: ns.ftrl_update(w, g, z, n, lr=0.1)),
    "_sparse_adagrad_update": Fwd(_state(1), lambda ns, w, g, h: ns.sparse.adagrad_update(
        w, g, h, lr=0.1)),
    "ftml_update": Fwd(_state(3), lambda ns, w, g, d, v, z: ns.ftml_update(
        w, g, d, v, z, lr=0.1, t=2, wd=0.01)),
    "mp_sgd_update": Fwd(_state(1), lambda ns, w, g, w32: ns.mp_sgd_update(
        *_half(ns, w, g), _single(ns, w32), lr=0.1, wd=0.01)),
    "mp_sgd_mom_update": Fwd(_state(2), lambda ns, w, g, m, w32: ns.mp_sgd_mom_update(
        *_half(ns, w, g), _single(ns, m), _single(ns, w32), lr=0.1, momentum=0.9)),
    "mp_nag_mom_update": Fwd(_state(2), lambda ns, w, g, m, w32: ns.mp_nag_mom_update(
        *_half(ns, w, g), _single(ns, m), _single(ns, w32), lr=0.1, momentum=0.9)),
    "lamb_update_phase1": Fwd(_state(2), lambda ns, w, g, m, v: ns.lamb_update_phase1(
        w, g, m, v, t=2, wd=0.01)),
    "mp_lamb_update_phase1": Fwd(_state(3), lambda ns, w, g, m, v, w32: ns.mp_lamb_update_phase1(
        *_half(ns, w, g), *[_single(ns, x) for x in (m, v, w32)], t=2, wd=0.01)),
    "multi_sgd_update": _multi("multi_sgd_update", 0),
    "multi_sgd_mom_update": _multi("multi_sgd_mom_update", 1, momentum=0.9),
    "multi_mp_sgd_update": _multi("multi_mp_sgd_update", 1, mp=True),
    "multi_mp_sgd_mom_update": _multi("multi_mp_sgd_mom_update", 2, mp=True, momentum=0.9),
    "preloaded_multi_sgd_update": _multi("preloaded_multi_sgd_update", 0),
    "preloaded_multi_sgd_mom_update": _multi("preloaded_multi_sgd_mom_update", 1,
                                             momentum=0.9),
    "preloaded_multi_mp_sgd_update": _multi("preloaded_multi_mp_sgd_update", 1, mp=True),
    "preloaded_multi_mp_sgd_mom_update": _multi("preloaded_multi_mp_sgd_mom_update", 2,
                                                mp=True, momentum=0.9),
    "lamb_update_phase2": Fwd(lambda rng: _state(0)(rng) + [np.array([2.0]), np.array([0.5])],
                              lambda ns, w, g, r1, r2: ns.lamb_update_phase2(
                                  w, g, r1, r2, lr=0.1)),
    "mp_lamb_update_phase2": Fwd(lambda rng: _state(0)(rng) + [np.array([2.0]), np.array([0.5]),
                                                               rng.uniform(-1, 1, (3, 4))],
                                 lambda ns, w, g, r1, r2, w32: ns.mp_lamb_update_phase2(
                                     _half(ns, w)[0], _single(ns, g), r1, r2, _single(ns, w32),
                                     lr=0.1)),
    # optimizer_multi
    "_mp_adamw_update": Fwd(lambda rng: _state(3)(rng) + [np.array([0.5])],
                            lambda ns, w, g, m, v, w32, r: ns._internal._mp_adamw_update(
                                *_half(ns, w, g), *[_single(ns, x) for x in (m, v, w32, r)],
                                lr=0.1, eta=1.0, wd=0.1)),
    "_multi_adamw_update": _multi_step("_multi_adamw_update", 4, False, "num_weights",
                                       _ADAMW_RATES, tail=1),
    "_multi_mp_adamw_update": _multi_step("_multi_mp_adamw_update", 5, True, "num_weights",
                                          _ADAMW_RATES, tail=1),
    "_multi_lamb_update": _multi_step("_multi_lamb_update", 4, False, "num_tensors",
                                      _LAMB_RATES, lower_bound=0.1),
    "_multi_mp_lamb_update": _multi_step("_multi_mp_lamb_update", 5, True, "num_tensors",
                                         _LAMB_RATES, upper_bound=2.0),
    "multi_sum_sq": Fwd(_u((3, 4), (5,)), lambda ns, a, b: ns.multi_sum_sq(a, b, num_arrays=2)),
    "multi_lars": Fwd(lambda rng: [rng.uniform(0.1, 1, (4,)) for _ in range(4)],
                      lambda ns, *xs: ns.multi_lars(*[_single(ns, x) for x in xs], eta=0.5,
                                                    eps=1e-3)),
    "_contrib_group_adagrad_update": Fwd(
        lambda rng: _state(0)(rng) + [rng.uniform(0.1, 1, (3, 1))],
        lambda ns, w, g, h: ns.contrib.group_adagrad_update(w, g, h, lr=0.1)),
    # array_ops: the integer-output and non-differentiable ones
    "_scatter_set_nd": Fwd(_u((3, 4), (2,)), lambda ns, x, v: ns._internal._scatter_set_nd(
        x, v, ns.array([[0, -1], [3, 1]], dtype="int64"), shape=(3, 4))),
    "batch_take": Fwd(_u((3, 4)), lambda ns, x: ns.batch_take(
        x, ns.array([0, 3, 9], dtype="int32"))),
    "shape_array": Fwd(_u((3, 4)), lambda ns, x: ns.shape_array(x)),
    "size_array": Fwd(_u((3, 4)), lambda ns, x: ns.size_array(x)),
    "_eye": Fwd(lambda rng: [], lambda ns: ns.eye(3, 4, k=-1, dtype="int32")),
    "_linspace": Fwd(lambda rng: [], lambda ns: ns.linspace(-1.5, 2.0, 6, endpoint=False)),
    "_histogram": Fwd(_u((5, 4), (4,)), lambda ns, x, e: [
        *ns._internal._histogram(x, bin_cnt=3, range=(-0.5, 0.5)),
        *ns._internal._histogram(x, ns.sort(e))]),
    "_ravel_multi_index": Fwd(_ints((2, 5), hi=3), lambda ns, i: ns.ravel_multi_index(
        i, shape=(3, 4))),
    "_unravel_index": Fwd(_ints((2, 3), hi=24), lambda ns, i: ns.unravel_index(
        i, shape=(2, 3, 4))),
    "_onehot_encode": Fwd(_ints((3,), hi=6), lambda ns, i: ns._internal._onehot_encode(
        i, ns.zeros((3, 5)))),
    # detection: the non-differentiable box operators
    "_contrib_box_iou": Fwd(_u((2, 4), (3, 4), lo=0, hi=1), lambda ns, a, b: [
        ns.contrib.box_iou(a, b), ns.contrib.box_iou(a, b, format="center")]),
    "_contrib_box_encode": Fwd(
        lambda rng: [np.array([[1.0, 0, 1]]), np.array([[1.0, -1, 0]]),
                     rng.uniform(0, 0.4, (1, 3, 4)) + [0, 0, 0.5, 0.5],
                     rng.uniform(0, 0.4, (1, 2, 4)) + [0, 0, 0.5, 0.5],
                     rng.uniform(-0.1, 0.1, (4,)), rng.uniform(0.1, 0.3, (4,))],
        lambda ns, *xs: ns.contrib.box_encode(*xs)),
    "_contrib_bipartite_matching": Fwd(_u((2, 4, 3)), lambda ns, x: ns.contrib.bipartite_matching(
        x, threshold=-0.5, topk=2)),
    "_contrib_MultiBoxPrior": Fwd(_u((1, 2, 3, 4)), lambda ns, x: ns.contrib.MultiBoxPrior(
        x, sizes=(0.5, 0.2), ratios=(1, 2), clip=True)),
    "_contrib_MultiBoxDetection": Fwd(
        lambda rng: [rng.uniform(0, 1, (2, 3, 5)), rng.uniform(-0.5, 0.5, (2, 20)),
                     rng.uniform(0, 0.4, (1, 5, 4)) + [0, 0, 0.5, 0.5]],
        lambda ns, c, l, a: ns.contrib.MultiBoxDetection(c, l, a, threshold=0.3)),
    # image: the random augmenters (one seeded draw per call on both sides)
    "_image_random_flip_left_right": Fwd(_u((3, 4, 3), (2, 2, 3, 1)), lambda ns, x, b: [
        ns.image.random_flip_left_right(x), ns.image.random_flip_left_right(b)]),
    "_image_random_flip_top_bottom": Fwd(_u((3, 4, 3), (2, 2, 3, 1)), lambda ns, x, b: [
        ns.image.random_flip_top_bottom(x), ns.image.random_flip_top_bottom(b)]),
    "_image_random_brightness": Fwd(_u((3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_brightness(x, min_factor=0.5, max_factor=1.5))),
    "_image_random_contrast": Fwd(_u((3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_contrast(x, min_factor=0.5, max_factor=1.5))),
    "_image_random_saturation": Fwd(_u((3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_saturation(x, min_factor=0.5, max_factor=1.5))),
    "_image_random_hue": Fwd(_u((3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_hue(x, min_factor=0.1, max_factor=0.4))),
    "_image_random_color_jitter": Fwd(_u((2, 3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_color_jitter(x, brightness=0.2, contrast=0.3, saturation=0.4,
                                     hue=0.1))),
    "_cvcopyMakeBorder": Fwd(_u((3, 4, 2)), lambda ns, x: [
        ns._internal._cvcopyMakeBorder(x, 1, 2, 0, 3, type=t, values=(0.5, -1))
        for t in range(5)]),
    "_image_random_lighting": Fwd(_u((3, 4, 3), lo=0, hi=255), lambda ns, x: (
        ns.image.random_lighting(x, alpha_std=0.1))),
    "_contrib_allclose": Fwd(_u((3, 4), (3, 4)), lambda ns, a, b: [
        ns.contrib.allclose(a, a * 1.0000001), ns.contrib.allclose(a, b, rtol=0.5, atol=2.0),
        ns.contrib.allclose(a, b)]),
    "_contrib_index_array": Fwd(_u((2, 3, 2)), lambda ns, x: [
        ns.contrib.index_array(x), ns.contrib.index_array(x, axes=(-1, 0))]),
    # proposal: anchor targets and region proposals (non-differentiable)
    "_contrib_MultiBoxTarget": Fwd(
        lambda rng: [rng.uniform(0, 0.4, (1, 6, 4)) + [0, 0, 0.5, 0.5],
                     np.array([[[1, 0.1, 0.1, 0.6, 0.6], [0, 0.3, 0.2, 0.8, 0.9]],
                               [[2, 0.2, 0.3, 0.7, 0.8], [-1, -1, -1, -1, -1]]]),
                     rng.normal(0, 1, (2, 3, 6))],
        lambda ns, a, lab, c: [*ns.contrib.MultiBoxTarget(a, lab, c),
                               *ns.contrib.MultiBoxTarget(a, lab, c, overlap_threshold=0.3,
                                                          negative_mining_ratio=1)]),
    **{f"_contrib_{name}": Fwd(lambda rng, b=b: [rng.uniform(0, 1, (b, 6, 3, 4)),
                                               rng.normal(0, 0.2, (b, 12, 3, 4)),
                                               np.array([[40, 60, 1.0], [48, 50, 0.5]][:b])],
                               lambda ns, c, d, i, name=name: getattr(ns.contrib, name)(
                                   c, d, i, scales=(2, 4, 8), ratios=(1,),
                                   rpn_post_nms_top_n=10, rpn_min_size=2, output_score=True))
       for name, b in (("Proposal", 1), ("MultiProposal", 2))},
}

# Ops that cannot run through a bound symbol, with the reason.
EXEMPT = {
    "reset_arrays": "no outputs (it zeroes its inputs in place): a symbol of it has no heads "
                    "to bind; tests/ops/test_array_ops.py checks mx.nd's call",
    "_backward_Custom": "a Custom node's backward in a graph, made by its gradient: the "
                        "Custom row's executor backward runs it",
    "_cvimdecode": "its output shape depends on the bytes of its input, which no symbol can "
                   "infer (imperative only, as MXNet's)",
    "_sparse_retain": "its data is a row_sparse array, which a bound symbol does not hold "
                      "yet; tests/sparse/test_sparse_rules.py checks mx.nd's call",
    "_contrib_getnnz": "it takes a csr matrix only (MXNet's rule), which a bound symbol runs "
                       "as a dense copy; tests/sparse/test_sparse_rules.py checks mx.nd's call",
    **{name: "decodes with the optional Pillow from a file or bytes parameter; "
             "tests/ops/test_image_io.py compares mx.nd with a bound mx.sym"
       for name in ("_cvimread", "_imdecode")},
}


class _Namespace:
    """A namespace of ``mx.sym`` whose functions return a list of Symbols for an op with
    several outputs, as ``mx.nd`` returns a list of arrays."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if isinstance(attr, types.ModuleType):
            return _Namespace(attr)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def call(*args, **kwargs):
            out = attr(*args, **kwargs)
            return list(out) if isinstance(out, mx.sym.Symbol) and len(out) > 1 else out
        return call


class SymNS(_Namespace):
    """``mx.sym`` as a spec's ``call`` sees it: a constant made with ``array(...)`` becomes a
    Variable bound to that value (gradient 'null'); multi-output ops give lists."""

    def __init__(self):
        super().__init__(mx.sym)
        self.consts = {}

    def array(self, value, dtype=None, ctx=None):
        name = f"_const{len(self.consts)}"
        self.consts[name] = mx.nd.array(value, dtype=dtype or "float32")
        return mx.sym.Variable(name)


def _symbolic(call, n_inputs):
    """(the Symbol of ``call`` on Variables in0.., the constants it made)."""
    ns = SymNS()
    # Symbol a * b is MXNet's element-wise _mul; the specs are written for NDArray's
    # broadcasting arithmetic, which mx.sym's broadcasting() mode gives
    with broadcasting():
        sym = call(ns, *[mx.sym.Variable(f"in{i}") for i in range(n_inputs)])
    sym = mx.sym.Group(sym) if isinstance(sym, (list, tuple)) else sym
    return sym, ns.consts


def _canonical_ops():
    return sorted({op.name for op in REGISTRY.values()})


def test_every_op_is_covered():
    missing = [n for n in _canonical_ops() if n not in SPECS and n not in FORWARD
               and n not in EXEMPT]
    assert not missing, f"ops missing from the duality test (add a FORWARD row or an EXEMPT " \
                        f"reason): {missing}"
    both = sorted(set(FORWARD) & set(SPECS))
    assert not both, f"ops in both the gradient table and FORWARD: {both}"
    stale = sorted(n for n in list(FORWARD) + list(EXEMPT) if n not in REGISTRY)
    assert not stale, f"rows for unregistered ops: {stale}"


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _seed(name):
    return zlib.crc32(name.encode())


def _bind(sym, named, consts, grads):
    args = {n: (named[n] if n in named else consts[n]) for n in sym.list_arguments()}
    aux = {n: consts[n] for n in sym.list_auxiliary_states()}
    return sym.bind(mx.cpu(), args=args, args_grad={n: g for n, g in grads.items()
                                                     if n in args},
                    grad_req="write", aux_states=aux)


def _assert_same(a, b, what):
    a, b = a.asnumpy(), b.asnumpy()
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b, err_msg=what)


def _spec_values(spec, rng):
    if spec.sample is not None:
        return spec.sample(rng)
    return [rng.uniform(*spec.domain(i), size=s) for i, s in enumerate(spec.shapes)]


@pytest.mark.parametrize("name", sorted(n for n in SPECS if n not in EXEMPT))
def test_differentiable_op_duality(name):
    spec = OVERRIDE.get(name, SPECS[name])
    rng = np.random.default_rng(_seed(name))
    values = _spec_values(spec, rng)
    xs = [mx.nd.array(v, dtype="float64") for v in values]
    for x in xs:
        x.attach_grad()
    mx.random.seed(_seed(name))
    with mx.autograd.record():
        outs = _as_list(spec.call(mx.nd, *xs))
    head_grads = [mx.nd.array(rng.uniform(-1, 1, o.shape), dtype=o.dtype) for o in outs]
    mx.autograd.backward(outs, head_grads)

    sym, consts = _symbolic(spec.call, len(xs))
    named = {f"in{i}": mx.nd.array(v, dtype="float64") for i, v in enumerate(values)}
    grads = {n: mx.nd.zeros(a.shape, dtype=a.dtype) for n, a in named.items()}
    exe = _bind(sym, named, consts, grads)
    mx.random.seed(_seed(name))
    sym_outs = exe.forward(is_train=True)
    assert len(sym_outs) == len(outs)
    for i, (a, b) in enumerate(zip(outs, sym_outs)):
        _assert_same(a, b, f"{name}: output {i}")
    exe.backward(head_grads)
    for i, x in enumerate(xs):
        if exe.grad_dict.get(f"in{i}") is not None:
            _assert_same(x.grad, exe.grad_dict[f"in{i}"], f"{name}: gradient of input {i}")
        else:       # an input the symbol does not read gets no gradient on either side
            assert not x.grad.asnumpy().any(), f"{name}: input {i}"


@pytest.mark.parametrize("name", sorted(n for n in SPECS if n not in EXEMPT))
def test_differentiable_op_inference_duality(name):
    """The same rows in predict mode: ``mx.nd`` outside ``record()`` and
    ``forward(is_train=False)`` of an executor without gradient arrays."""
    spec = OVERRIDE.get(name, SPECS[name])
    values = _spec_values(spec, np.random.default_rng(_seed(name)))
    mx.random.seed(_seed(name))
    outs = _as_list(spec.call(mx.nd, *[mx.nd.array(v, dtype="float64") for v in values]))
    sym, consts = _symbolic(spec.call, len(values))
    named = {f"in{i}": mx.nd.array(v, dtype="float64") for i, v in enumerate(values)}
    exe = _bind(sym, named, consts, {})
    mx.random.seed(_seed(name))
    sym_outs = exe.forward(is_train=False)
    assert len(sym_outs) == len(outs)
    for i, (a, b) in enumerate(zip(outs, sym_outs)):
        _assert_same(a, b, f"{name}: output {i} (predict mode)")


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_op_duality(name):
    row = FORWARD[name]
    values = row.sample(np.random.default_rng(_seed(name)))
    xs = [mx.nd.array(v, dtype="float64") for v in values]
    mx.random.seed(_seed(name))
    outs = _as_list(row.call(mx.nd, *xs))

    sym, consts = _symbolic(row.call, len(xs))
    named = {f"in{i}": mx.nd.array(v, dtype="float64") for i, v in enumerate(values)}
    exe = _bind(sym, named, consts, {})
    mx.random.seed(_seed(name))
    sym_outs = exe.forward(is_train=False)
    assert len(sym_outs) == len(outs)
    for i, (a, b) in enumerate(zip(outs, sym_outs)):
        _assert_same(a, b, f"{name}: output {i}")
    for i, x in enumerate(xs):      # inputs the op updates in place (optimizer states)
        _assert_same(x, named[f"in{i}"], f"{name}: input {i} after the call")


def test_batchnorm_inference_duality():
    """BatchNorm in predict mode (moving statistics) and the executor's is_train=False."""
    rng = np.random.default_rng(3)
    values = [rng.uniform(-1, 1, (4, 3, 2)), rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)]

    def call(nd, x, gamma, beta):
        return nd.BatchNorm(x * x, gamma, beta, *_moving(nd, 0.2, 1.5), fix_gamma=False)
    expected = call(mx.nd, *[mx.nd.array(v, dtype="float64") for v in values])
    sym, consts = _symbolic(call, 3)
    named = {f"in{i}": mx.nd.array(v, dtype="float64") for i, v in enumerate(values)}
    exe = _bind(sym, named, consts, {})
    _assert_same(expected, exe.forward(is_train=False)[0], "BatchNorm inference")
    for name, a in exe.aux_dict.items():       # predict mode leaves the statistics alone
        _assert_same(a, consts[name], name)
