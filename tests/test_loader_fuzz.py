"""Hostile files: symbol JSON, ``.params`` and optimizer states files either load or raise
MXNetError, quickly and without allocating more than a bound.

``test_mutated_files_load_or_raise_mxneterror`` mutates valid files (the fixtures and files
written here) with a fixed seed, bit flips, truncation, splicing, huge numbers in count
fields and deep nesting, and loads each through every loader in a child process whose
address space is capped (``RLIMIT_AS``) and whose every case has a deadline (``SIGALRM``).
The rest are the cases found by hand, one test each.
"""
import json
import os
import random
import resource
import signal
import struct
import subprocess
import sys

import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import nn
from mxlite.symbol import json_format

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
SEED = 20
CASES_PER_FILE = 40
CASE_SECONDS = 10               # a hang detector, far above any case's time
ADDRESS_SPACE_MARGIN = 1 << 30  # bytes the child may map beyond its size after warming up


# ---- the specific cases --------------------------------------------------------------------------
def _graph(nodes, heads=((1, 0, 0),)):
    return json.dumps({"nodes": nodes, "heads": [list(h) for h in heads]})


def _var(name="x"):
    return {"op": "null", "name": name, "inputs": []}


def test_concat_num_args_huge_is_refused_before_naming_inputs():
    text = _graph([_var(), {"op": "Concat", "name": "c", "attrs": {"num_args": "1000000000"},
                            "inputs": [[0, 0, 0]]}])
    with pytest.raises(MXNetError, match=r"node 1 \('c', op 'Concat'\): num_args=1000000000 "
                                         r"but the node lists 1 input"):
        mx.sym.load_json(text)


def test_split_num_outputs_huge_is_refused():
    text = _graph([_var(), {"op": "split", "name": "s", "attrs": {"num_outputs": str(2 ** 40)},
                            "inputs": [[0, 0, 0]]}])
    with pytest.raises(MXNetError, match=r"split .* has 1099511627776 outputs; a loaded node "
                                         r"may have 1\.\.65536"):
        mx.sym.load_json(text)


def test_split_at_the_output_limit_loads():
    n = json_format.MAX_NODE_OUTPUTS
    text = _graph([_var(), {"op": "split", "name": "s", "attrs": {"num_outputs": str(n)},
                            "inputs": [[0, 0, 0]]}], heads=[(1, n - 1, 0)])
    assert mx.sym.load_json(text).list_outputs() == [f"s_output{n - 1}"]


def test_graph_wide_output_budget():
    per_node = json_format.MAX_NODE_OUTPUTS
    count = json_format.MAX_EXTRA_OUTPUTS // (per_node - 1) + 1
    nodes = [_var()] + [{"op": "split", "name": f"s{i}", "attrs": {"num_outputs": str(per_node)},
                         "inputs": [[0, 0, 0]]} for i in range(count)]
    with pytest.raises(MXNetError, match=f"node {count} .*more than "
                                         f"{json_format.MAX_EXTRA_OUTPUTS} outputs"):
        mx.sym.load_json(_graph(nodes))
    mx.sym.load_json(_graph(nodes[:-1]))        # one node fewer is within the budget


def test_list_outputs_of_a_wide_split_names_each_output_once(monkeypatch):
    sym = mx.sym.split(mx.sym.var("x"), num_outputs=2000, name="s")
    op_class = type(sym._outputs[0][0].op)
    original, calls = op_class.list_outputs, []

    def counting(self, attrs):
        calls.append(self.name)
        return original(self, attrs)

    monkeypatch.setattr(op_class, "list_outputs", counting)
    assert sym.list_outputs() == [f"s_output{i}" for i in range(2000)]
    assert calls == ["split"]


def test_deep_nesting_and_bad_bytes_name_the_file(tmp_path):
    deep = tmp_path / "deep-symbol.json"
    deep.write_text('{"nodes": ' + "[" * 100000 + "]" * 100000 + ', "heads": []}')
    with pytest.raises(MXNetError, match="deep-symbol.json' nests lists or objects too deeply"):
        mx.sym.load(str(deep))
    binary = tmp_path / "binary-symbol.json"
    binary.write_bytes(b'{"nodes": [\xff\xfe], "heads": []}')
    with pytest.raises(MXNetError, match=r"binary-symbol.json' is not UTF-8 text \(byte 11"):
        mx.sym.load(str(binary))
    with pytest.raises(MXNetError, match="not UTF-8"):
        mx.sym.load_json(b"\x80")
    with pytest.raises(MXNetError, match="expected JSON text"):
        mx.sym.load_json(12)


@pytest.mark.parametrize("graph, fragment", [
    ({"nodes": "abc", "heads": []}, "'nodes' and 'heads' lists"),
    ({"nodes": [_var()], "heads": "abc"}, "'nodes' and 'heads' lists"),
    ({"nodes": [_var(), {"op": "relu", "name": "r", "inputs": "abc"}], "heads": [[1, 0, 0]]},
     "'inputs' must be a list"),
    ({"nodes": [_var(), {"op": "relu", "name": "r", "inputs": [[-1, 0, 0]]}],
      "heads": [[1, 0, 0]]}, "refers to node -1"),
    ({"nodes": [_var(), {"op": "relu", "name": "r", "inputs": [[0, -1, 0]]}],
      "heads": [[1, 0, 0]]}, "refers to output -1"),
    # a node may only use nodes before it: a cycle (or a reference to itself) is dangling
    ({"nodes": [_var(), {"op": "relu", "name": "r", "inputs": [[1, 0, 0]]}],
      "heads": [[1, 0, 0]]}, "refers to node 1, but only nodes 0..0"),
    ({"nodes": [_var()], "heads": [[5, 0, 0]]}, "heads: refers to node 5"),
    ({"nodes": [_var(), {"op": "relu", "name": "r", "attrs": ["a"], "inputs": [[0, 0, 0]]}],
      "heads": [[1, 0, 0]]}, "'attrs' must be an object"),
    ({"nodes": [{"op": "null", "name": 7}], "heads": [[0, 0, 0]]},
     "string 'op' and 'name'"),
    ({"nodes": [_var()], "heads": [[0, "0", 0]]}, r"\[node_id, output_index"),
])
def test_wrong_types_name_the_field(tmp_path, graph, fragment):
    path = tmp_path / "bad-symbol.json"
    path.write_text(json.dumps(graph))
    with pytest.raises(MXNetError, match="bad-symbol.json"):
        mx.sym.load(str(path))
    with pytest.raises(MXNetError, match=fragment):
        mx.sym.load_json(json.dumps(graph))


def test_an_index_parameter_nested_too_deeply():
    text = _graph([_var(), {"op": "_getitem", "name": "g", "attrs": {"key": "[" * 100000},
                            "inputs": [[0, 0, 0]]}])
    with pytest.raises(MXNetError, match=r"node 1 \('g', op '_getitem'\): a parameter nests"):
        mx.sym.load_json(text)


def test_a_huge_value_is_shortened_in_the_message():
    graph = {"nodes": [_var(), {"op": "relu", "name": "r", "inputs": ["x" * 100000]}],
             "heads": [[1, 0, 0]]}
    with pytest.raises(MXNetError) as info:
        mx.sym.load_json(json.dumps(graph))
    assert len(str(info.value)) < 1000


def test_a_params_file_with_a_huge_key_length_names_the_file(tmp_path):
    path = tmp_path / "net-0000.params"
    mx.nd.save(str(path), {"arg:w": mx.nd.ones((2,))})
    data = bytearray(path.read_bytes())
    key_length_at = len(data) - len("arg:w") - 8
    data[key_length_at:key_length_at + 8] = struct.pack("<Q", 2 ** 62)
    path.write_bytes(bytes(data))
    with pytest.raises(MXNetError, match="net-0000.params' is not a valid NDArray file: key "
                                         "length 4611686018427387904 exceeds"):
        mx.model.load_params(str(tmp_path / "net"), 0)


# ---- the fuzz test -------------------------------------------------------------------------------
def _small_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=3))
    net.initialize()
    return net


def _write_corpus(folder):
    """Valid files to mutate: ``(kind, name, bytes)``; kind "params", "json", "states" or
    "recordio"."""
    corpus = []
    for name in sorted(os.listdir(FIXTURES)):
        path = os.path.join(FIXTURES, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if name.endswith(".params"):
            corpus.append(("params", name, data))
        elif name.endswith("-symbol.json"):
            corpus.append(("json", name, data))
    records = os.path.join(FIXTURES, "recordio")       # RecordIO files MXNet 1.9.1 wrote
    for name in sorted(os.listdir(records)):
        if name.endswith(".rec"):
            with open(os.path.join(records, name), "rb") as f:
                corpus.append(("recordio", name, f.read()))
    net = _small_net()
    net.save_parameters(os.path.join(folder, "net.params"))
    with open(os.path.join(folder, "net.params"), "rb") as f:
        corpus.append(("params", "net.params", f.read()))
    arrays = {"f16": mx.nd.ones((2, 2), dtype="float16"), "i64": mx.nd.arange(3, dtype="int64"),
              "zero_d": mx.nd.array(1.5).reshape(()), "empty": mx.nd.zeros((0, 3))}
    path = os.path.join(folder, "mixed.params")
    mx.nd.save(path, arrays)
    with open(path, "rb") as f:
        corpus.append(("params", "mixed.params", f.read()))
    x = mx.sym.var("data")
    parts = mx.sym.split(mx.sym.FullyConnected(x, num_hidden=6, name="fc"), num_outputs=3)
    sym = mx.sym.Group([mx.sym.Concat(parts[0], parts[2], num_args=2), parts[1]])
    corpus.append(("json", "group-symbol.json", sym.tojson().encode()))
    key = json.dumps([1, {"slice": [0, None, 2]}, {"array": [1, 0], "dtype": "int64",
                                                   "shape": [2]}])
    corpus.append(("json", "getitem-symbol.json", _graph(
        [_var(), {"op": "_getitem", "name": "g", "attrs": {"key": key}, "inputs": [[0, 0, 0]]}]
    ).encode()))
    for name, opt in (("adam", mx.optimizer.Adam()), ("rmsprop", mx.optimizer.RMSProp(
            centered=True, lr_scheduler=mx.lr_scheduler.FactorScheduler(2)))):
        upd = mx.optimizer.get_updater(opt)
        upd([0, 1], [mx.nd.ones((2, 3)), mx.nd.ones((4,))], [mx.nd.ones((2, 3)), mx.nd.ones((4,))])
        corpus.append(("states", f"{name}.states", upd.get_states(dump_optimizer=True)))
    return corpus


_HUGE = [2 ** 63 - 1, 2 ** 62, 2 ** 40, 2 ** 32 - 1, 2 ** 31, 10 ** 9, 65537, -1, -(2 ** 31)]


def _mutate_bytes(rng, data, others):
    data = bytearray(data)
    how = rng.choice(["flip", "truncate", "splice", "huge", "huge"])
    if how == "flip" or not data:
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del data[rng.randrange(len(data)):]
    elif how == "splice":
        other = rng.choice(others)
        data = data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]
    else:                                       # a huge number where a count or shape may be
        value = rng.choice(_HUGE)
        fmt = rng.choice(["<q", "<i"]) if value < 0 else rng.choice(["<Q", "<I"])
        if value >= 2 ** (8 * struct.calcsize(fmt) - (fmt.islower())):
            value = 2 ** (8 * struct.calcsize(fmt) - 1) - 1
        at = rng.randrange(max(1, len(data) - struct.calcsize(fmt)))
        data[at:at + struct.calcsize(fmt)] = struct.pack(fmt, value)
    return bytes(data)


def _json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_paths(v, path + (i,))


def _mutate_value(rng, value):
    """The JSON text of ``value`` with one of its parts replaced by something hostile."""
    paths = list(_json_paths(value))
    path = rng.choice(paths[1:])
    replacement = rng.choice([
        str(rng.choice(_HUGE)), rng.choice(_HUGE), "1e9", 1e300, -1, "abc", [], {}, None,
        True, [[0, 0, 0]] * 3, "(" + ",".join(["1000000"] * 8) + ")", "DEEP",
        {"array": 99}, {"tuple": "abc"}, {"lr_scheduler": "os.system", "attrs": {}},
        {"dict": [[[1], 2]]}, "update", "__class__", "mxlite.lr_scheduler.LRScheduler"])
    if isinstance(path[-1], str) and rng.random() < 0.3:
        replacement, path = path[-1], path[:-1] + (rng.choice(["update", "__dict__", "x"]),)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and path[-1] not in parent:
        parent[path[-1]] = replacement          # a new key
    else:
        parent[path[-1]] = replacement
    return json.dumps(value).replace('"DEEP"', "[" * 50000 + "]" * 50000)


def _mutate_json(rng, data, others):
    if rng.random() < 0.3:
        return _mutate_bytes(rng, data, others)
    return _mutate_value(rng, json.loads(data)).encode()


def _mutate_states(rng, data, others):
    """Bytes mutations, or (mostly) a hostile header or arrays in a valid container."""
    if rng.random() < 0.3:
        return _mutate_bytes(rng, data, others)
    container = mx.nd.load_frombuffer(data)
    key = "__mxlite_optimizer_states__"
    if rng.random() < 0.8:
        header = json.loads(container[key].asnumpy().tobytes())
        text = _mutate_value(rng, header).encode()
        container[key] = mx.nd.array(list(text), dtype="uint8")
    else:
        victim = rng.choice(sorted(container))
        container[victim] = rng.choice([mx.nd.ones((2,)), mx.nd.zeros((0,)),
                                        mx.nd.ones((3, 1), dtype="int8")])
        if victim != key and rng.random() < 0.5:
            del container[victim]
    return _nd_bytes(container)


def _nd_bytes(data):
    from mxlite.ndarray import io
    return io._dumps(data)


def _cases(corpus):
    rng = random.Random(SEED)
    by_kind = {}
    for kind, _, data in corpus:
        by_kind.setdefault(kind, []).append(data)
    for kind, name, data in corpus:
        mutate = {"json": _mutate_json, "states": _mutate_states}.get(kind, _mutate_bytes)
        for i in range(CASES_PER_FILE):
            yield kind, f"{name}#{i}", mutate(rng, data, by_kind[kind])


def _loaders(kind, folder):
    """``[(name, load(path, data))]``: every public loader of files of ``kind``."""
    if kind == "json":
        def checkpoint(path, data):
            prefix = os.path.join(folder, "ckpt")
            os.replace(path, prefix + "-symbol.json")
            mx.nd.save(prefix + "-0000.params", {"arg:w": mx.nd.ones((1,))})
            mx.model.load_checkpoint(prefix, 0)

        def symbol(path, data):
            sym = mx.sym.load(path)
            sym.list_outputs()
            sym.list_arguments()
        return [("sym.load", symbol), ("sym.load_json", lambda p, d: mx.sym.load_json(d)),
                ("model.load_checkpoint", checkpoint)]
    if kind == "recordio":
        def records(path, data):
            reader = mx.recordio.MXRecordIO(path, "r")
            try:
                while True:
                    item = reader.read()
                    if item is None:
                        break
                    if len(item) >= 24:                     # an IRHeader's size
                        mx.recordio.unpack(item)
            finally:
                reader.close()
        return [("MXRecordIO.read", records)]
    if kind == "params":
        net = _small_net()

        def checkpoint(path, data):
            prefix = os.path.join(folder, "ckpt")
            mx.sym.var("w").save(prefix + "-symbol.json")
            os.replace(path, prefix + "-0000.params")
            mx.model.load_checkpoint(prefix, 0)
        return [("nd.load", lambda p, d: mx.nd.load(p)),
                ("nd.load_frombuffer", lambda p, d: mx.nd.load_frombuffer(d)),
                ("Block.load_parameters", lambda p, d: net.load_parameters(p)),
                ("model.load_checkpoint", checkpoint)]
    w = mx.gluon.Parameter("w", shape=(2, 3))
    w.initialize()
    trainer = mx.gluon.Trainer([w], "sgd", kvstore=None)
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.ones((2, 3)))
    kv.set_optimizer(mx.optimizer.SGD())
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    return [("Updater.set_states", lambda p, d: updater.set_states(d)),
            ("kv.load_optimizer_states", lambda p, d: kv.load_optimizer_states(p)),
            ("Trainer.load_states", lambda p, d: trainer.load_states(p))]


class _Deadline(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Deadline()


def _address_space():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _child(folder):
    """Load every case through every loader; print one JSON line per failure."""
    corpus = _write_corpus(folder)
    loaders = {kind: _loaders(kind, folder)
               for kind in ("json", "params", "states", "recordio")}
    for kind, name, data in corpus:             # warm up every code path before the cap
        for _, load in loaders[kind]:
            path = os.path.join(folder, "case")
            with open(path, "wb") as f:
                f.write(data)
            try:
                load(path, data)
            except MXNetError:
                pass
    cap = _address_space() + ADDRESS_SPACE_MARGIN
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    signal.signal(signal.SIGALRM, _on_alarm)
    count = 0
    for kind, name, data in _cases(corpus):
        for loader, load in loaders[kind]:
            path = os.path.join(folder, "case")
            with open(path, "wb") as f:
                f.write(data)
            signal.alarm(CASE_SECONDS)
            try:
                load(path, data)
            except MXNetError:
                pass
            except _Deadline:
                print(json.dumps([name, loader, "no result within the deadline"]))
            except BaseException as e:          # noqa: BLE001  (what the test reports)
                print(json.dumps([name, loader, f"{type(e).__name__}: {str(e)[:300]}"]))
            finally:
                signal.alarm(0)
            count += 1
    print(json.dumps(["done", count]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_mutated_files_load_or_raise_mxneterror(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mx.__file__)),
               OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    assert proc.returncode == 0 and lines and lines[-1][0] == "done", proc.stderr[-3000:]
    failures = lines[:-1]
    assert not failures, "\n".join(map(str, failures[:20]))
    assert lines[-1][1] > 1000                  # the cases did run


if __name__ == "__main__":
    _child(sys.argv[1])
