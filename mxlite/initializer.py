"""``mx.init``: weight initializers, MXNet 1.x semantics.

An initializer is called as ``init(desc, arr)``: ``desc`` is the parameter's name (an
:class:`InitDesc`, a ``str`` subclass carrying ``attrs`` and ``global_init``) and ``arr``
the NDArray it fills **in place**. The name picks the method, as in MXNet:

==========================================  ===================================
name ends with                              method (default behaviour)
==========================================  ===================================
``weight``                                  ``_init_weight`` (the initializer's own rule)
``bias``, ``beta``                          ``_init_bias``, ``_init_beta`` (zeros)
``gamma``                                   ``_init_gamma`` (ones)
``moving_mean``, ``moving_inv_var``,        ``_init_zero``
``moving_avg``, ``min``
``moving_var``, ``max``                     ``_init_one``
anything else                               ``_init_default`` (raises MXNetError)
==========================================  ===================================

An ``__init__`` entry in ``desc.attrs`` (an initializer, its name, or its ``dumps()``
JSON) overrides the dispatch: that initializer's ``_init_weight`` fills the array.

Random initializers draw from ``mx.nd.random``, so ``mx.random.seed`` makes them
reproducible. ``dumps()`` gives MXNet's JSON ``["name", {kwargs}]`` and ``create``
rebuilds an initializer from it, from a registered name, or returns an instance as is:

>>> mx.init.Normal(0.5).dumps()
'["normal", {"sigma": 0.5}]'
>>> init = mx.init.create('["constant", {"value": [1, 2, 3]}]')
>>> w = mx.nd.zeros((2, 3))
>>> init(mx.init.InitDesc("fc_weight"), w)
>>> w.asnumpy()
array([[1., 2., 3.],
       [1., 2., 3.]], dtype=float32)
>>> b = mx.nd.ones((3,))
>>> init("fc_bias", b)          # the bias rule of the base class: zeros
>>> b.asnumpy()
array([0., 0., 0.], dtype=float32)
"""
import json
import logging
import math
import re
import warnings

import numpy as np

from .base import MXNetError, dtype_kind
from .ndarray import NDArray

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Zero", "One", "Constant",
           "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias",
           "Mixed", "Load", "FusedRNN"]


class InitDesc(str):
    """The name of the variable to initialize, with its attributes and the global initializer.

    Parameters
    ----------
    name : str
        Name of the variable.
    attrs : dict of str to str, optional
        Attributes of the variable (``Symbol.attr_dict``); an ``__init__`` entry overrides
        the name-based dispatch.
    global_init : Initializer, optional
        The initializer to fall back to (set to the first initializer that sees ``desc``).
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = dict(attrs) if attrs else {}
        ret.global_init = global_init
        return ret


# ---- registry ------------------------------------------------------------------------------
_REGISTRY = {}


def register(klass):
    """Register an ``Initializer`` subclass under its lower-cased class name (a decorator).

    >>> @mx.init.register
    ... class Halves(mx.init.Initializer):
    ...     def _init_weight(self, name, arr):
    ...         arr[:] = 0.5
    >>> w = mx.nd.zeros((2,))
    >>> mx.init.create("halves")("w_weight", w)
    >>> w.asnumpy()
    array([0.5, 0.5], dtype=float32)
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"mx.init.register: expected a subclass of mx.init.Initializer, got {klass!r}")
    _add(klass.__name__.lower(), klass)
    return klass


def alias(*aliases):
    """Decorator registering an ``Initializer`` subclass under extra names (``@alias("zeros")``)."""
    def reg(klass):
        if not (isinstance(klass, type) and issubclass(klass, Initializer)):
            raise TypeError(f"mx.init.alias: expected a subclass of mx.init.Initializer, got {klass!r}")
        for name in aliases:
            _add(name.lower(), klass)
        return klass
    return reg


def _add(name, klass):
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f"mx.init: new initializer {klass.__module__}.{klass.__name__} is replacing "
                      f"{old.__module__}.{old.__name__} registered as {name!r}", stacklevel=3)
    _REGISTRY[name] = klass


def create(*args, **kwargs):
    """Make an initializer.

    ``create(init)`` returns an ``Initializer`` instance unchanged; ``create("xavier",
    magnitude=2)`` builds the registered class by name (case-insensitive);
    ``create('["xavier", {"magnitude": 2}]')`` rebuilds from ``dumps()`` JSON (the list
    itself, ``["xavier", {...}]``, is accepted too).
    """
    if args:
        name, args = args[0], args[1:]
    elif "initializer" in kwargs:
        name = kwargs.pop("initializer")
    else:
        raise MXNetError("mx.init.create: no initializer given")
    if isinstance(name, Initializer):
        if args or kwargs:
            raise MXNetError(f"mx.init.create: extra arguments given with the instance {name!r}")
        return name
    if isinstance(name, dict):
        if args or kwargs:
            raise MXNetError("mx.init.create: extra arguments given with a dict description")
        return create(**name)
    if isinstance(name, str) and name.lstrip().startswith(("[", "{")):
        if args or kwargs:
            raise MXNetError("mx.init.create: extra arguments given with a JSON description")
        try:
            name = json.loads(name)
        except (ValueError, RecursionError) as e:   # RecursionError: nesting too deep
            raise MXNetError(f"mx.init.create: invalid JSON {name[:200]!r}: "
                             f"{type(e).__name__}") from None
        return create(name)
    if isinstance(name, (list, tuple)):
        if args or kwargs or len(name) != 2 or not isinstance(name[1], dict):
            raise MXNetError(f"mx.init.create: expected [name, {{kwargs}}], got {name!r}")
        return create(name[0], **name[1])
    if not isinstance(name, str):
        raise MXNetError(f"mx.init.create: expected an Initializer, a name or a JSON string, "
                         f"got {type(name).__name__}")
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise MXNetError(f"mx.init.create: {name!r} is not a registered initializer; known: "
                         f"{sorted(_REGISTRY)} (register new ones with mx.init.register)")
    try:
        return klass(*args, **kwargs)
    except TypeError as e:      # an unknown or missing argument (also from a file's __init__)
        raise MXNetError(f"mx.init.create: {name!r} does not take these arguments: {e}") from None


# ---- helpers -------------------------------------------------------------------------------
def _check_array(who, arr):
    if not isinstance(arr, NDArray):
        raise TypeError(f"{who}: the array to initialize must be an NDArray, got {type(arr).__name__}")


def _write(arr, value):
    """``arr[:] = value`` (also for a 0-d ``arr``, which has no axis to slice)."""
    if arr.ndim == 0:
        arr[()] = value
    else:
        arr[:] = value


def _jsonable(value):
    """``value`` with NDArrays, NumPy arrays/scalars and tuples turned into JSON types."""
    if isinstance(value, NDArray):
        return value.asnumpy().tolist()
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, Initializer):
        return json.loads(value.dumps())
    return value


def _sampler(dist):
    from . import ndarray as nd
    fn = getattr(getattr(nd, "random", None), dist, None)
    if fn is None:
        raise MXNetError(f"mx.init: mx.nd.random.{dist} is not available")
    return fn


def _draw(dist, a, b, shape, dtype, ctx):
    """A fresh NDArray from ``mx.nd.random.<dist>`` (uniform: low, high; normal: loc, scale)."""
    params = {"low": a, "high": b} if dist == "uniform" else {"loc": a, "scale": b}
    return _sampler(dist)(shape=shape, dtype=dtype, ctx=ctx, **params)


def _fill_random(dist, arr, a, b):
    """Fill ``arr`` in place from ``mx.nd.random.<dist>``, so ``mx.random.seed`` controls it."""
    if arr.size == 0:
        return
    dtype = np.dtype(arr.dtype)
    if dtype.kind == "f" and arr.ndim > 0:
        params = {"low": a, "high": b} if dist == "uniform" else {"loc": a, "scale": b}
        _sampler(dist)(shape=arr.shape, dtype=dtype.name, ctx=arr.context, out=arr, **params)
        return
    # 0-d targets are drawn as (1,); integer targets truncate the float32 samples, as arr[:] = x does
    _write(arr, _draw(dist, a, b, arr.shape or (1,), "float32", arr.context).reshape(arr.shape))


def _choice(who, param, value, options):
    if value not in options:
        raise MXNetError(f"{who}: {param} must be one of {list(options)}, got {value!r}")
    return value


# Name suffix -> method, checked in order (MXNet's FSetInputVariableAttrs defaults).
_DISPATCH = (
    ("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"),
    ("beta", "_init_beta"), ("moving_mean", "_init_zero"), ("moving_var", "_init_one"),
    ("moving_inv_var", "_init_zero"), ("moving_avg", "_init_zero"),
    ("min", "_init_zero"), ("max", "_init_one"),
)


# ---- the base class ------------------------------------------------------------------------
class Initializer:
    """Base class of initializers: subclasses implement ``_init_weight(name, arr)``.

    ``kwargs`` are the constructor arguments, kept for ``dumps()``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log each initialized array with ``print_func(arr)`` (default: its RMS value)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                data = x.asnumpy().astype(np.float64)
                return str(np.linalg.norm(data) / math.sqrt(max(data.size, 1)))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as MXNet's JSON ``["name", {kwargs}]`` (``create`` reverses it)."""
        return json.dumps([self.__class__.__name__.lower(), _jsonable(self._kwargs)])

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{self.__class__.__name__}({args})"

    def __eq__(self, other):
        """Initializers are equal when they are of one class with equal arguments (as
        MXNet's), so two blocks made alike declare equal parameters."""
        if not isinstance(other, Initializer) or type(self) is not type(other):
            return NotImplemented if not isinstance(other, Initializer) else False
        try:
            return _jsonable(self._kwargs) == _jsonable(other._kwargs)
        except (TypeError, ValueError):         # arguments with no value form: identity
            return self is other

    def __hash__(self):
        return hash(type(self).__name__)

    def __call__(self, desc, arr):
        """Initialize NDArray ``arr`` in place; ``desc`` (InitDesc or str) names it."""
        if not isinstance(desc, str):
            raise TypeError(f"{type(self).__name__}: desc must be an InitDesc or a str, "
                            f"got {type(desc).__name__}")
        _check_array(type(self).__name__, arr)
        if not isinstance(desc, InitDesc):
            desc = InitDesc(desc)
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _DISPATCH:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _init_zero(self, _, arr):
        _write(arr, 0)

    def _init_one(self, _, arr):
        _write(arr, 1)

    def _init_bias(self, _, arr):
        _write(arr, 0)

    def _init_gamma(self, _, arr):
        _write(arr, 1)

    def _init_beta(self, _, arr):
        _write(arr, 0)

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} must implement _init_weight")

    def _init_default(self, name, _):
        raise MXNetError(
            f"{type(self).__name__}: unknown initialization pattern for {str(name)!r}; by name "
            f"only {[s for s, _m in _DISPATCH]} are known. Give the variable an explicit "
            "initializer (mx.sym.Variable(init=mx.init.*), or an '__init__' attribute)")


# ---- the initializers ----------------------------------------------------------------------
@register
@alias("zeros")
class Zero(Initializer):
    """Initializes weights to zero."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _write(arr, 0)


@register
@alias("ones")
class One(Initializer):
    """Initializes weights to one."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _write(arr, 1)


def _constant_value(value):
    """The value as a Python scalar or a NumPy array copy (numbers only)."""
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float)):
        return value
    try:
        data = np.array(value)
    except (TypeError, ValueError) as e:
        raise MXNetError(f"Constant: value must be a number, an NDArray, a NumPy array or a "
                         f"nested list of numbers, got {type(value).__name__}: {e}") from None
    if dtype_kind(data.dtype) not in "biuf":
        raise MXNetError(f"Constant: value must hold real numbers (a ragged list?), got "
                         f"{type(value).__name__} of dtype {data.dtype}")
    return data


@register
class Constant(Initializer):
    """Initializes weights to ``value``: a scalar, or an NDArray / NumPy array / nested list
    broadcast to the weight's shape and cast to its dtype (a copy is kept, so later changes
    to the source do not change the initializer).

    ``dumps()`` writes array values as nested lists, so ``create(init.dumps())`` fills
    the same values.

    >>> init = mx.init.Constant(mx.nd.array([[1], [2]]))
    >>> init.dumps()
    '["constant", {"value": [[1.0], [2.0]]}]'
    >>> w = mx.nd.zeros((2, 3), dtype="int32")
    >>> init("w_weight", w)
    >>> w.asnumpy()
    array([[1, 1, 1],
           [2, 2, 2]], dtype=int32)
    """

    def __init__(self, value):
        self.value = _constant_value(value)
        # the keywords hold what dumps() writes (nested lists for arrays), as MXNet's do after
        # its dumps(), so json.dumps([name, init._kwargs]) is init.dumps()
        super().__init__(value=_jsonable(self.value))

    def _init_weight(self, name, arr):
        value = self.value
        if isinstance(value, np.ndarray):
            try:
                fits = np.broadcast_shapes(value.shape, arr.shape) == tuple(arr.shape)
            except ValueError:
                fits = False
            if not fits:
                raise MXNetError(f"Constant: the value of shape {value.shape} cannot be broadcast "
                                 f"to {str(name)!r} of shape {tuple(arr.shape)}")
            value = value.astype(arr.dtype)
        _write(arr, value)


@register
class Uniform(Initializer):
    """Initializes weights with samples from U[-scale, scale] (``mx.nd.random.uniform``)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill_random("uniform", arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Initializes weights with samples from N(0, sigma^2) (``mx.nd.random.normal``)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill_random("normal", arr, 0.0, self.sigma)


@register
class Orthogonal(Initializer):
    """Initializes weights as a scaled orthogonal matrix (Saxe et al., arXiv:1312.6120).

    The weight is viewed as a ``(shape[0], prod(shape[1:]))`` matrix ``W``, the
    singular vectors of a random matrix (``rand_type`` ``"uniform"`` on [-1, 1] or
    ``"normal"``, drawn from ``mx.nd.random``) give it orthonormal rows when
    ``shape[0] <= prod(shape[1:])`` (``W W^T = scale^2 I``), else orthonormal columns
    (``W^T W = scale^2 I``).
    """

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = _choice("Orthogonal", "rand_type", rand_type, ("uniform", "normal"))

    def _init_weight(self, name, arr):
        if arr.ndim < 1:
            raise MXNetError(f"Orthogonal: cannot initialize the 0-d array {str(name)!r}; it needs "
                             "at least 1 dimension")
        if arr.size == 0:
            return
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _draw("uniform", -1.0, 1.0, (nout, nin), "float64", arr.context).asnumpy()
        else:
            tmp = _draw("normal", 0.0, 1.0, (nout, nin), "float64", arr.context).asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        _write(arr, (self.scale * res).reshape(arr.shape).astype(arr.dtype))


@register
class Xavier(Initializer):
    """"Xavier" initialization (Glorot & Bengio): keeps the scale of activations and
    gradients roughly the same across layers.

    With ``fan_in = shape[1] * hw`` and ``fan_out = shape[0] * hw``, ``hw = prod(shape[2:])``,
    ``factor`` is ``(fan_in + fan_out) / 2`` (``factor_type="avg"``), ``fan_in`` ("in")
    or ``fan_out`` ("out"), and ``c = sqrt(magnitude / factor)``. ``rnd_type="uniform"``
    samples U[-c, c]; ``"gaussian"`` samples N(0, c^2). Weights need at least 2 dimensions.
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = _choice(type(self).__name__, "rnd_type", rnd_type, ("uniform", "gaussian"))
        self.factor_type = _choice(type(self).__name__, "factor_type", factor_type,
                                   ("avg", "in", "out"))
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        if len(shape) < 2:
            raise MXNetError(f"{type(self).__name__}: cannot initialize {str(name)!r} of shape "
                             f"{shape}; it needs at least 2 dimensions (fan_in = shape[1], "
                             "fan_out = shape[0])")
        if arr.size == 0:
            return
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _fill_random("uniform", arr, -scale, scale)
        else:
            _fill_random("normal", arr, 0.0, scale)


@register
class MSRAPrelu(Xavier):
    """He et al. (arXiv:1502.01852) initialization for (P)ReLU networks: Xavier with
    gaussian samples and ``magnitude = 2 / (1 + slope^2)``."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}
        self.slope = slope


@register
class Bilinear(Initializer):
    """Bilinear-interpolation weights for upsampling (``Deconvolution``) layers; 4-d weights."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, name, arr):
        shape = tuple(arr.shape)
        if len(shape) != 4:
            raise MXNetError(f"Bilinear: {str(name)!r} has shape {shape}; it needs 4 dimensions "
                             "(out, in, height, width)")
        if arr.size == 0:
            return
        f = math.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        # MXNet computed y as (i / width) % height, a float division under Python 3;
        # the row index is (i // width) % height, which is what is meant.
        x = 1 - np.abs(np.arange(shape[3]) / f - c)
        y = 1 - np.abs(np.arange(shape[2]) / f - c)
        _write(arr, np.broadcast_to(np.outer(y, x), shape).astype(arr.dtype))


@register
class LSTMBias(Initializer):
    """LSTM biases: zeros except the forget gate (the second of four blocks), ``forget_bias``."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        if arr.ndim < 1:
            raise MXNetError(f"LSTMBias: cannot initialize the 0-d array {str(name)!r}")
        _write(arr, 0)
        num_hidden = arr.shape[0] // 4
        arr[num_hidden:2 * num_hidden] = self.forget_bias


def _plain(desc):
    """``desc`` without its ``__init__`` attribute, so a delegate does not dispatch back to us."""
    return InitDesc(desc, global_init=getattr(desc, "global_init", None))


@register
class Mixed(Initializer):
    """Initialize each parameter with the first initializer whose regular expression
    matches the start of its name (``re.match``).

    Parameters
    ----------
    patterns : list of str
        Regular expressions over parameter names; end with ``".*"`` for a default.
    initializers : list of Initializer
        One per pattern (instances, registered names or ``dumps()`` JSON strings).

    >>> init = mx.init.Mixed(["bias", ".*"], [mx.init.Zero(), mx.init.One()])
    >>> w = mx.nd.zeros((2,))
    >>> init("fc_weight", w)
    >>> w.asnumpy()
    array([1., 1.], dtype=float32)
    """

    def __init__(self, patterns, initializers):
        patterns, initializers = list(patterns), list(initializers)
        if len(patterns) != len(initializers):
            raise MXNetError(f"Mixed: {len(patterns)} patterns but {len(initializers)} initializers")
        inits = [create(i) if isinstance(i, (str, list, tuple, dict)) else i for i in initializers]
        for i in inits:
            if not callable(i):
                raise MXNetError(f"Mixed: initializers must be callable, got {type(i).__name__}")
        super().__init__(patterns=patterns, initializers=inits)
        self.map = [(re.compile(p), i) for p, i in zip(patterns, inits)]

    def dumps(self):
        for i in self._kwargs["initializers"]:
            if not isinstance(i, Initializer):
                raise MXNetError(f"Mixed.dumps: {i!r} is not an mx.init.Initializer and cannot be "
                                 "serialised")
        return super().dumps()

    def __call__(self, desc, arr):
        for prog, init in self.map:
            if prog.match(desc):
                init(desc, arr)
                return
        raise MXNetError(f"Mixed: parameter name {str(desc)!r} matched none of the patterns "
                         f"{[p.pattern for p, _ in self.map]}; add a '.*' pattern with a default "
                         "initializer at the end")

    def _init_weight(self, desc, arr):
        self(_plain(desc), arr)


@register
class FusedRNN(Initializer):
    """The flat ``parameters`` of a fused ``RNN`` operator (``mx.rnn.FusedRNNCell``) set
    piece by piece: every per-layer, per-direction, per-gate weight and bias by ``init``
    (an initializer, its name or ``dumps()`` JSON; None: the global initializer), except
    the LSTM forget-gate i2h biases, set to ``forget_bias``. The other arguments must be
    the cell's."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        init = create(init) if isinstance(init, (str, list, tuple, dict)) else init
        if init is not None and not callable(init):
            raise MXNetError(f"FusedRNN: init must be an initializer or None, got "
                             f"{type(init).__name__}")
        super().__init__(init=init.dumps() if isinstance(init, Initializer) else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._cell_args = dict(num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                               bidirectional=bidirectional, forget_bias=forget_bias)

    def _init_weight(self, desc, arr):
        from .rnn.rnn_cell import FusedRNNCell
        cell = FusedRNNCell(prefix="", **self._cell_args)
        pieces = cell.unpack_weights({"parameters": arr})
        for name, piece in pieces.items():
            if self._cell_args["mode"] == "lstm" and name.endswith("i2h_f_bias"):
                _write(piece, self._cell_args["forget_bias"])
                continue
            piece_desc = InitDesc(name, global_init=getattr(desc, "global_init", None))
            init = self._init if self._init is not None else piece_desc.global_init
            if init is None or init is self:
                raise MXNetError(f"FusedRNN: no initializer for {name!r}: give init, or use "
                                 "FusedRNN inside a global initializer (mx.init.Mixed)")
            init(piece_desc, piece)
        _write(arr, cell.pack_weights(pieces)["parameters"].reshape(arr.shape))


@register
class Load(Initializer):
    """Initialize parameters with values loaded from a file (``mx.nd.load``) or a dict.

    A leading ``arg:`` or ``aux:`` is dropped from the loaded names. A parameter not found
    is initialized by ``default_init`` (an MXNetError if there is none); a loaded array of
    another shape is an MXNetError naming both shapes.
    """

    def __init__(self, param, default_init=None, verbose=False):
        source = param
        if isinstance(param, str):
            from . import ndarray as nd
            if not hasattr(nd, "load"):
                raise MXNetError("Load: mx.nd.load is not available; pass a dict of arrays")
            param = nd.load(param)
        if not isinstance(param, dict):
            raise MXNetError(f"Load: param must be a file name or a dict of name -> array, got "
                             f"{type(param).__name__}")
        self.param = {}
        for name, value in param.items():
            if not isinstance(value, (NDArray, np.ndarray)):
                value = _constant_value(value)
                value = np.asarray(value)
            key = name[4:] if name.startswith(("arg:", "aux:")) else name
            self.param[key] = value
        if isinstance(default_init, (str, list, tuple, dict)):
            default_init = create(default_init)
        self.default_init = default_init
        self.verbose = verbose
        super().__init__(param=source if isinstance(source, str) else self.param,
                         default_init=default_init, verbose=verbose)

    def dumps(self):
        if self.default_init is not None and not isinstance(self.default_init, Initializer):
            raise MXNetError(f"Load.dumps: default_init {self.default_init!r} is not an "
                             "mx.init.Initializer and cannot be serialised")
        return super().dumps()

    def __call__(self, name, arr):
        _check_array("Load", arr)
        if name in self.param:
            value = self.param[name]
            if tuple(value.shape) != tuple(arr.shape):
                raise MXNetError(f"Load: parameter {str(name)!r} cannot be initialized from the "
                                 f"loaded array: shape mismatch, target {tuple(arr.shape)} vs "
                                 f"loaded {tuple(value.shape)}")
            _write(arr, value)
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise MXNetError(f"Load: cannot initialize {str(name)!r}: not found in the loaded "
                             "parameters and no default initializer is given")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)

    def _init_weight(self, desc, arr):
        self(_plain(desc), arr)
