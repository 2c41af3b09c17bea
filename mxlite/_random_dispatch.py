"""``mx.nd.random.uniform`` and the other samplers of ``mx.nd.random`` / ``mx.sym.random``
with array (or Symbol) distribution parameters, as MXNet's Python front ends: scalars call
``_random_<dist>`` (one distribution, ``shape`` samples), arrays ``_sample_<dist>`` (one
distribution per element, ``shape`` samples of each: output shape ``param.shape + shape``).

mxlite keeps its operators' parameter names (``exponential`` takes the rate ``lam``, as
``_random_exponential`` and ``_sample_exponential``; MXNet's Python function took ``scale``).
Mixing numbers and arrays among the parameters is an MXNetError, as MXNet's assertion.
"""
import inspect
import math
import sys

from .base import MXNetError

# public name -> (the _random_ op's parameter names, the _sample_ op's input names)
DISPATCH = {
    "uniform": (("low", "high"), ("low", "high")),
    "normal": (("loc", "scale"), ("mu", "sigma")),
    "gamma": (("alpha", "beta"), ("alpha", "beta")),
    "exponential": (("lam",), ("lam",)),
    "poisson": (("lam",), ("lam",)),
    "negative_binomial": (("k", "p"), ("k", "p")),
    "generalized_negative_binomial": (("mu", "alpha"), ("mu", "alpha")),
}


def _front(name, scalar_fn, array_fn, array_type):
    names, inputs = DISPATCH[name]

    def function(*args, **kwargs):
        # MXNet's order: the distribution's parameters, then shape, dtype, ctx, out
        extra = ("shape", "dtype", "ctx", "out")
        if len(args) > len(names) + len(extra):
            raise MXNetError(f"random.{name}: takes at most {len(names) + len(extra)} "
                             f"positional arguments {names + extra}, got {len(args)}")
        for key, value in zip(extra, args[len(names):]):
            if key in kwargs:
                raise MXNetError(f"random.{name}: got multiple values for {key!r}")
            kwargs[key] = value
        args = args[:len(names)]
        given = dict(zip(names, args))
        for n in names:
            if n in kwargs:
                if n in given:
                    raise MXNetError(f"random.{name}: got multiple values for {n!r}")
                given[n] = kwargs.pop(n)
        arrays = [n for n, v in given.items() if isinstance(v, array_type)]
        if not arrays:
            return scalar_fn(**given, **kwargs)
        numbers_ = [n for n, v in given.items() if not isinstance(v, array_type)]
        if numbers_ or len(given) < len(names):
            others = numbers_ or [n for n in names if n not in given]
            raise MXNetError(f"random.{name}: {', '.join(arrays)} given as "
                             f"{array_type.__name__} but {', '.join(others)} as a number (or "
                             "left to its default): distribution parameters must all be "
                             f"{array_type.__name__}s or all numbers")
        kwargs.pop("ctx", None)          # the samples live on the parameters' device
        shape = kwargs.pop("shape", None)
        return array_fn(*(given[n] for n in names),
                        shape=() if shape is None else shape, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``{name}`` samples: number parameters {names} draw ``shape`` "
                        f"samples of one distribution (``_random_{name}``); arrays (of one "
                        f"shape) draw ``shape`` samples of each element's distribution "
                        f"(``_sample_{name}``, inputs {inputs}).\n\n" + (scalar_fn.__doc__ or ""))
    function.op = scalar_fn.op
    function.__signature__ = inspect.signature(scalar_fn)      # the scalar form's, as MXNet
    return function


def install(random_module, internal_module, array_type):
    """Replace the generated samplers of ``random_module`` (``nd.random`` or ``sym.random``)
    by front ends dispatching on the parameters' type."""
    for name in DISPATCH:
        scalar_fn = getattr(internal_module, f"_random_{name}")
        array_fn = getattr(internal_module, f"_sample_{name}")
        setattr(random_module, name, _front(name, scalar_fn, array_fn, array_type))
    # MXNet's random.multinomial is _sample_multinomial under its own name
    random_module.multinomial = getattr(internal_module, "_sample_multinomial")
    package = sys.modules[random_module.__name__.rsplit(".", 1)[0]]
    package.contrib.rand_zipfian = _rand_zipfian(package, array_type)


def _rand_zipfian(F, array_type):
    """MXNet's ``contrib.rand_zipfian`` over the registered ops of ``F`` (mx.nd or mx.sym)."""
    def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
        """Sample ``num_sampled`` classes (with replacement, int64) from the approximately
        log-uniform distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1) on
        [0, range_max), with the expected counts (float64, ``num_sampled * P``) of
        ``true_classes`` and of the samples: ``(samples, expected_count_true,
        expected_count_sampled)``. ``ctx`` places the arrays (mx.nd only).

        >>> s, et, es = mx.nd.contrib.rand_zipfian(mx.nd.array([3]), 4, 5)
        >>> s.shape, s.dtype.__name__, et.dtype.__name__
        ((4,), 'int64', 'float64')
        """
        if isinstance(num_sampled, bool) or not isinstance(num_sampled, int) or \
                num_sampled < 0:
            raise MXNetError(f"contrib.rand_zipfian: num_sampled must be a non-negative int, "
                             f"got {num_sampled!r}")
        if isinstance(range_max, bool) or not isinstance(range_max, int) or range_max <= 0:
            raise MXNetError(f"contrib.rand_zipfian: range_max must be a positive int, got "
                             f"{range_max!r}")
        log_range = math.log(range_max + 1)
        where = {}
        if ctx is not None and hasattr(true_classes, "as_in_context"):
            where, true_classes = {"ctx": ctx}, true_classes.as_in_context(ctx)
        rand = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", **where)
        # exp(rand) - 1 lies in [0, range_max]; the modulo folds the rounding case range_max
        sampled = F.cast(F.exp(rand) - 1, dtype="int64") % range_max
        expected = lambda c: F.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled  # noqa: E731
        return (sampled, expected(F.cast(true_classes, dtype="float64")),
                expected(F.cast(sampled, dtype="float64")))
    return rand_zipfian
