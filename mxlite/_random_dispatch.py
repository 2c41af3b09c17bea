"""``mx.nd.random.uniform`` and the other samplers of ``mx.nd.random`` / ``mx.sym.random``
with array (or Symbol) distribution parameters, as MXNet's Python front ends: scalars call
``_random_<dist>`` (one distribution, ``shape`` samples), arrays ``_sample_<dist>`` (one
distribution per element, ``shape`` samples of each: output shape ``param.shape + shape``).

mxlite keeps its operators' parameter names (``exponential`` takes the rate ``lam``, as
``_random_exponential`` and ``_sample_exponential``; MXNet's Python function took ``scale``).
Mixing numbers and arrays among the parameters is an MXNetError, as MXNet's assertion.
"""
import inspect

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
        if len(args) > len(names):
            raise MXNetError(f"random.{name}: takes at most {len(names)} positional "
                             f"parameters {names}, got {len(args)}")
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
            raise MXNetError(f"random.{name}: distribution parameters must all be arrays or "
                             f"all numbers; {arrays} are {array_type.__name__}s, "
                             f"{numbers_ or [n for n in names if n not in given]} are not")
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
