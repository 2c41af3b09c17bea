"""The bytes of optimizer states files (``Trainer.save_states``, ``kv.save_optimizer_states``,
``Updater.get_states``), and reading them back.

MXNet pickles the states (and the optimizer), and unpickling runs whatever code the file
names: a ``.states`` file from elsewhere could do anything. mxlite writes data only: the
``.params`` container of ``mx.nd.save`` holding the state arrays under keys ``"0"``,
``"1"``, ... and, under ``HEADER_KEY``, a JSON header stored as a uint8 array::

    {"format": "mxlite-optimizer-states", "version": 1,
     "states": <value>,              # {index: state}, index an int or a str key
     "optimizer": null | {"class": <registered name>, "attrs": {<attribute>: <value>},
                          "update_counts_of": <the device whose counts are current>}}

A ``<value>`` is ``null``, a bool, number or string, or an object with one tag:
``{"array": i}`` (the array under key ``str(i)``), ``{"tuple": [...]}``, ``{"list": [...]}``,
``{"dict": [[key, value], ...]}`` (keys keep their types) or ``{"lr_scheduler":
"<module>.<class>", "attrs": {...}}``. Loading looks up the optimizer class in the optimizer
registry and the scheduler class among the ``LRScheduler`` subclasses already imported;
nothing else in the file names code.

Pickled files (MXNet's, and mxlite's before this format) load only with
``allow_pickle=True``; MXNet's NDArrays, optimizers and schedulers in them become mxlite's.
"""
import io
import json
import math
import numbers
import pickle

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError
from ..lr_scheduler import LRScheduler
from ..ndarray import NDArray
from ..ndarray import io as ndio
from .optimizer import Optimizer

__all__ = ["dumps", "loads", "HEADER_KEY"]

HEADER_KEY = "__mxlite_optimizer_states__"
FORMAT, VERSION = "mxlite-optimizer-states", 1
_CONTAINER_MAGIC = ndio.LIST_MAGIC.to_bytes(8, "little")
_OPT_IN = ("loading a pickle runs any code it holds: pass allow_pickle=True only for a file "
           "you trust")


# ---- writing ---------------------------------------------------------------------------------
def _encode(value, arrays, where):
    """``value`` as the header's JSON form; its NDArrays appended to ``arrays``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, NDArray):
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, (tuple, list)):
        tag = "tuple" if isinstance(value, tuple) else "list"
        return {tag: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict):
        return {"dict": [[_encode(k, arrays, f"{where} key"), _encode(v, arrays, f"{where}[{k!r}]")]
                         for k, v in value.items()]}
    if isinstance(value, LRScheduler):
        cls = type(value)
        return {"lr_scheduler": f"{cls.__module__}.{cls.__qualname__}",
                "attrs": {k: _encode(v, arrays, f"{where}.{k}") for k, v in vars(value).items()}}
    raise MXNetError(f"save states: {where} is a {type(value).__name__}, which an optimizer "
                     "states file cannot hold (numbers, strings, NDArrays, tuples, lists, "
                     "dicts and LRSchedulers only)")


def _encode_optimizer(opt, arrays):
    attrs = {k: v for k, v in vars(opt).items()
             # param_dict: gluon's Parameters, not saved (as MXNet); _index_update_count:
             # one of _all_index_update_counts, named by update_counts_of
             if k not in ("param_dict", "_index_update_count")}
    current = [d for d, counts in opt._all_index_update_counts.items()
               if counts is opt._index_update_count]
    return {"class": type(opt).__name__.lower(),
            "attrs": {k: _encode(v, arrays, f"optimizer.{k}") for k, v in attrs.items()},
            "update_counts_of": _encode(current[0] if current else None, arrays, "device")}


def dumps(states, optimizer=None):
    """The bytes of a states file holding ``states`` ({index: state}) and, when given, the
    ``optimizer``'s settings and update counts. Raises MXNetError naming any value that is
    not data (the format holds no code)."""
    arrays = []
    header = {"format": FORMAT, "version": VERSION,
              "states": _encode(states, arrays, "states"),
              "optimizer": None if optimizer is None else _encode_optimizer(optimizer, arrays)}
    text = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    data = {HEADER_KEY: nd.array(text, dtype="uint8")}
    data.update((str(i), a) for i, a in enumerate(arrays))
    return ndio._dumps(data)


# ---- reading ---------------------------------------------------------------------------------
class _Source:
    """Who reads which file: ``fail`` makes the MXNetError naming both."""

    def __init__(self, who, name):
        self.who, self.name = who, name

    def fail(self, message):
        return MXNetError(f"{self.who}: {self.name} {message}")


def _header(container, src):
    """The JSON header of a loaded container, checked to be a states file's."""
    if not isinstance(container, dict) or HEADER_KEY not in container:
        raise src.fail("holds no optimizer states (an NDArray file without mxlite's states "
                       f"header {HEADER_KEY!r})")
    blob = container[HEADER_KEY]
    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise src.fail(f"holds no optimizer states: its header is a {blob.dtype} array of "
                       f"shape {blob.shape}, not uint8 text")
    try:
        header = json.loads(blob.asnumpy().tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise src.fail(f"has a corrupt states header ({e})") from None
    except RecursionError:
        raise src.fail("has a states header nested too deeply") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise src.fail("holds no optimizer states (its header is not an mxlite states header)")
    if header.get("version") != VERSION:
        raise src.fail(f"is a states file of version {header.get('version')!r}; this mxlite "
                       f"reads version {VERSION}")
    return header


class _Decoder:
    """Turns the header's JSON values back into Python values and NDArrays."""

    def __init__(self, arrays, src):
        self.arrays, self.src = arrays, src

    def value(self, node, where):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if not isinstance(node, dict) or not node:
            raise self.src.fail(f"has a bad value at {where}: {_short(node)}")
        tag = next(iter(node))
        body = node[tag]
        if tag == "array" and len(node) == 1:
            return self.array(body, where)
        if tag in ("tuple", "list") and len(node) == 1 and isinstance(body, list):
            items = [self.value(v, f"{where}[{i}]") for i, v in enumerate(body)]
            return tuple(items) if tag == "tuple" else items
        if tag == "dict" and len(node) == 1 and isinstance(body, list):
            return self.mapping(body, where)
        if tag == "lr_scheduler" and set(node) == {"lr_scheduler", "attrs"}:
            return self.scheduler(body, node["attrs"], where)
        raise self.src.fail(f"has a bad value at {where}: {_short(node)}")

    def array(self, i, where):
        if isinstance(i, bool) or not isinstance(i, int) or str(i) not in self.arrays:
            raise self.src.fail(f"refers to array {_short(i)} at {where}, which it does not "
                                "hold")
        return self.arrays[str(i)]

    def mapping(self, pairs, where):
        out = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.src.fail(f"has a bad dict item at {where}: {_short(pair)}")
            key = self.value(pair[0], f"{where} key")
            try:
                out[key] = self.value(pair[1], f"{where}[{key!r}]")
            except TypeError:                   # an unhashable key (a list)
                raise self.src.fail(f"has an unhashable dict key at {where}") from None
        return out

    def attrs(self, attrs, cls, where):
        """``{name: value}`` for an object of ``cls``: instance data only, so a file cannot
        replace a method or property of the class."""
        if not isinstance(attrs, dict):
            raise self.src.fail(f"has bad attributes at {where}: {_short(attrs)}")
        out = {}
        for name, node in attrs.items():
            held = getattr(cls, name, None)
            if not name.isidentifier() or name.startswith("__") or callable(held) or \
                    isinstance(held, property):
                raise self.src.fail(f"sets {name!r} of {cls.__name__} at {where}, which is not "
                                    "a data attribute")
            out[name] = self.value(node, f"{where}.{name}")
        return out

    def scheduler(self, path, attrs, where):
        cls = _scheduler_class(path)
        if cls is None:
            raise self.src.fail(f"names learning-rate scheduler {_short(path)} at {where}, "
                                "which is not an imported LRScheduler subclass")
        obj = cls.__new__(cls)
        vars(obj).update(self.attrs(attrs, cls, where))
        return obj


def _short(value, limit=120):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _scheduler_class(path):
    """The imported LRScheduler subclass named ``<module>.<qualname>``, else None."""
    todo = [LRScheduler]
    while todo:
        cls = todo.pop()
        if f"{cls.__module__}.{cls.__qualname__}" == path:
            return cls
        todo.extend(cls.__subclasses__())
    return None


def _fill_defaults(opt, cls):
    """Attributes a default ``cls()`` has and ``opt`` lacks (a file from an older version)
    are set from it; a number where the default holds a number is checked."""
    try:
        template = vars(cls())
    except Exception:                           # noqa: BLE001  (a class needing arguments)
        return None
    for name, default in template.items():
        if name not in vars(opt):
            setattr(opt, name, default)
        elif _is_number(default) and not (_is_number(getattr(opt, name)) or
                                          getattr(opt, name) is None):
            return name
    return None


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _optimizer(record, decoder, src):
    if not isinstance(record, dict) or not isinstance(record.get("class"), str):
        raise src.fail(f"has a bad optimizer record: {_short(record)}")
    cls = Optimizer.opt_registry.get(record["class"])
    if cls is None:
        raise src.fail(f"names optimizer {record['class']!r}, which is not registered "
                       f"(registered: {sorted(Optimizer.opt_registry)})")
    opt = cls.__new__(cls)
    opt.__setstate__(decoder.attrs(record.get("attrs"), cls, "optimizer"))
    return _checked_optimizer(opt, cls, decoder.value(record.get("update_counts_of"),
                                                      "update_counts_of"), src)


def _checked_optimizer(opt, cls, device, src):
    """``opt`` with defaults filled and its update counts checked and linked."""
    bad = _fill_defaults(opt, cls)
    if bad is not None:
        raise src.fail(f"gives optimizer attribute {bad!r} the value "
                       f"{_short(getattr(opt, bad))}, not a number")
    counts = getattr(opt, "_all_index_update_counts", None)
    if not isinstance(counts, dict) or not all(isinstance(c, dict) for c in counts.values()) \
            or device not in counts:
        raise src.fail("has bad update counts (_all_index_update_counts: "
                       f"{_short(counts)}, current device {device!r})")
    opt._index_update_count = counts[device]
    return opt


def _check_states(states, src):
    """MXNetError unless ``states`` is {int or str index: NDArrays, None, tuples, lists}."""
    if not isinstance(states, dict):
        raise src.fail(f"holds {type(states).__name__}, not optimizer states (a dict of "
                       "index -> state)")
    for index, state in states.items():
        if isinstance(index, bool) or not isinstance(index, (int, str)):
            raise src.fail(f"has state index {_short(index)}, not an int or str")
        _check_state(state, f"state {index!r}", src)
    return states


def _check_state(state, where, src):
    if state is None or isinstance(state, NDArray) or _is_number(state):
        return
    if isinstance(state, (tuple, list)):
        for i, s in enumerate(state):
            _check_state(s, f"{where}[{i}]", src)
        return
    raise src.fail(f"has a {type(state).__name__} in {where}, not an NDArray")


def _from_container(data, src):
    container = ndio._loads(data, src.name)
    header = _header(container, src)
    arrays = {k: v for k, v in container.items() if k != HEADER_KEY}
    decoder = _Decoder(arrays, src)
    try:
        states = _check_states(decoder.value(header.get("states"), "states"), src)
        record = header.get("optimizer")
        opt = None if record is None else _optimizer(record, decoder, src)
    except RecursionError:
        raise src.fail("has a states header nested too deeply") from None
    return states, opt


def loads(data, who, name="the states", allow_pickle=False):
    """``(states, optimizer or None)`` from a states file's bytes ``data``; errors name
    ``who`` (the public call) and ``name`` (the file).

    A pickle (MXNet's format) is read only with ``allow_pickle=True``, because unpickling
    runs any code the file names; without it a pickle raises MXNetError saying how to opt in.
    """
    src = _Source(who, name)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise MXNetError(f"{who}: expected the bytes of a states file, got "
                         f"{type(data).__name__}")
    data = bytes(data)
    if data[:8] == _CONTAINER_MAGIC:
        return _from_container(data, src)
    if allow_pickle:
        return _from_pickle(data, src)
    if data[:1] == b"\x80":                    # a pickle's PROTO opcode (protocol 2 and later)
        raise src.fail(f"is a pickle (MXNet's states format), not an mxlite states file; "
                       f"{_OPT_IN}")
    raise src.fail("holds no optimizer states (neither mxlite's states format nor, with "
                   "allow_pickle=True, a pickle)")


# ---- pickles (allow_pickle=True) ---------------------------------------------------------------
class _MXNetObject:
    """An object of one of MXNet's classes in a pickle, held as its class name and state
    until ``_convert`` makes the mxlite object."""

    kind = name = None

    def __init__(self, *args):
        self.args, self.state = args, None

    def __setstate__(self, state):
        self.state = state


_MXNET_KINDS = {"mxnet.ndarray.ndarray": "ndarray", "mxnet.optimizer.optimizer": "optimizer",
                "mxnet.optimizer": "optimizer", "mxnet.lr_scheduler": "lr_scheduler"}


class _Unpickler(pickle.Unpickler):
    """Unpickles MXNet's classes as ``_MXNetObject`` s (MXNet need not be installed)."""

    def find_class(self, module, name):
        kind = _MXNET_KINDS.get(module)
        if kind is not None:
            return type(f"MXNet{name}", (_MXNetObject,), {"kind": kind, "name": name})
        if module.split(".")[0] == "mxnet":
            raise MXNetError(f"the pickle holds MXNet's {module}.{name}, which mxlite cannot "
                             "read in optimizer states")
        return super().find_class(module, name)


def _from_pickle(data, src):
    try:
        obj = _Unpickler(io.BytesIO(data)).load()
    except MXNetError as e:
        raise src.fail(f"holds no optimizer states mxlite can read: {e}") from None
    except Exception as e:                      # noqa: BLE001  (a pickle can raise anything)
        raise src.fail(f"holds no optimizer states (the pickle does not load: "
                       f"{type(e).__name__}: {e})") from None
    obj = _Converter(src).convert(obj)
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], Optimizer):
        return _check_states(obj[0], src), obj[1]
    return _check_states(obj, src), None


class _Converter:
    """MXNet's objects in an unpickled value made mxlite's."""

    def __init__(self, src):
        self.src = src

    def convert(self, obj):
        if isinstance(obj, _MXNetObject):
            return getattr(self, obj.kind)(obj)
        if isinstance(obj, (tuple, list)):
            items = [self.convert(v) for v in obj]
            return tuple(items) if isinstance(obj, tuple) else items
        if isinstance(obj, dict):
            return {k: self.convert(v) for k, v in obj.items()}
        return obj

    def _state(self, obj):
        if not isinstance(obj.state, dict):
            raise self.src.fail(f"holds an MXNet {obj.name} without its state")
        return obj.state

    def ndarray(self, obj):
        raw = self._state(obj).get("handle")
        if not isinstance(raw, (bytes, bytearray)):
            raise self.src.fail("holds an MXNet NDArray without data (an empty handle)")
        return ndio._load_record(raw, f"{self.src.name} (an MXNet NDArray in the pickle)")

    def optimizer(self, obj):
        cls = Optimizer.opt_registry.get(obj.name.lower())
        if cls is None:
            raise self.src.fail(f"holds MXNet's optimizer {obj.name}, which mxlite does not "
                                "have")
        state = {k: self.convert(v) for k, v in self._state(obj).items()}
        current = state.pop("_index_update_count", None)
        state["allow_np_array"] = bool(state.get("allow_np_array", False))
        opt = cls.__new__(cls)
        opt.__setstate__(state)
        counts = state.get("_all_index_update_counts", {})
        # the pickle shared one dict between the two attributes: find which
        device = next((d for d, c in counts.items() if c == current), 0) \
            if isinstance(counts, dict) else 0
        return _checked_optimizer(opt, cls, device, self.src)

    def lr_scheduler(self, obj):
        from .. import lr_scheduler as mod
        cls = getattr(mod, obj.name, None)
        if not (isinstance(cls, type) and issubclass(cls, LRScheduler)):
            raise self.src.fail(f"holds MXNet's scheduler {obj.name}, which mxlite does not "
                                "have")
        state = dict(self._state(obj))
        sched = cls.__new__(cls)
        vars(sched).update(_mxnet_schedule(obj.name, state, self.src))
        return sched


def _mxnet_schedule(name, state, src):
    """The attributes of mxlite's scheduler ``name`` from MXNet's pickled one. MXNet's
    Factor and MultiFactor schedulers lower ``base_lr`` as they go (``count``,
    ``cur_step_ind`` say how far) and Poly/Cosine overwrite it (keeping ``base_lr_orig``);
    mxlite's compute the rate from the first ``base_lr``, so that one is restored."""
    state.pop("warmup_final_lr", None)          # a property of mxlite's (base_lr)
    base, factor = state.get("base_lr"), state.get("factor")
    if name == "FactorScheduler" and _is_number(factor) and factor > 0:
        steps = state.pop("count", 0) // max(state.get("step", 1), 1)
        state["base_lr"] = base / factor ** steps
    elif name == "MultiFactorScheduler" and _is_number(factor) and factor > 0:
        state["base_lr"] = base / factor ** state.pop("cur_step_ind", 0)
        state.pop("count", None)
    elif "base_lr_orig" in state:
        state["base_lr"] = state.pop("base_lr_orig")
    if not (_is_number(state.get("base_lr")) and math.isfinite(state["base_lr"])):
        raise src.fail(f"holds MXNet's {name} with a bad base_lr {state.get('base_lr')!r}")
    return state


def read_file(fname, who):
    """The bytes of the states file ``fname``, or MXNetError naming ``who`` and the file."""
    try:
        with open(fname, "rb") as f:
            return f.read()
    except (OSError, TypeError, ValueError) as e:
        raise MXNetError(f"{who}: cannot read {fname!r}: {e}") from None
