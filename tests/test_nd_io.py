"""mx.nd.save / mx.nd.load: MXNet 1.x's binary NDArray-list format.

The expected bytes are built here from MXNet's documented layout (src/ndarray/ndarray.cc,
NDArray::Save), and compared with files written by MXNet 1.9.1 (tests/fixtures).
"""
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mxlite as mx
from mxlite.base import MXNetError

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
FLAGS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
         "int64": 6, "bool": 7}
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


def record(values, magic=V2, dev=(1, 0), flag=None, stype=0):
    """One NDArray record, written from the documented layout."""
    a = np.asarray(values)
    flag = FLAGS[a.dtype.name] if flag is None else flag
    head = struct.pack("<Iii", magic, stype, a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape)
    return head + struct.pack("<iii", *dev, flag) + a.astype(a.dtype.newbyteorder("<")).tobytes()


def file_bytes(records, keys=()):
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(keys))
    for k in keys:
        kb = k.encode()
        out += struct.pack("<Q", len(kb)) + kb
    return out


def write(tmp_path, data, name="x.params"):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def same(a, b):
    """Bit-exact equality: dtype, shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---- the bytes written -------------------------------------------------------------------------
def test_save_list_bytes(tmp_path):
    x = np.array([[1.5, -2.0, 3.0]], dtype="float32")
    y = np.array([7, -8], dtype="int64")
    p = str(tmp_path / "a.params")
    mx.nd.save(p, [mx.nd.array(x), mx.nd.array(y, dtype="int64")])
    assert open(p, "rb").read() == file_bytes([record(x), record(y)])


def test_save_dict_bytes_keep_key_order(tmp_path):
    b = np.array([True, False])
    a = np.array([1, 2, 255], dtype="uint8")
    p = str(tmp_path / "d.params")
    mx.nd.save(p, {"zeta": mx.nd.array(b, dtype="bool"), "arg:fc1_weight": mx.nd.array(a, dtype="uint8")})
    assert open(p, "rb").read() == file_bytes([record(b), record(a)], ["zeta", "arg:fc1_weight"])
    back = mx.nd.load(p)
    assert list(back) == ["zeta", "arg:fc1_weight"]
    assert same(back["zeta"].asnumpy(), b) and same(back["arg:fc1_weight"].asnumpy(), a)


def test_single_array_saves_as_list(tmp_path):
    p = str(tmp_path / "s.params")
    mx.nd.save(p, mx.nd.array([1, 2]))
    back = mx.nd.load(p)
    assert isinstance(back, list) and len(back) == 1
    assert same(back[0].asnumpy(), np.array([1, 2], dtype="float32"))


@pytest.mark.parametrize("data", [[], {}, ()])
def test_empty_containers_load_as_empty_list(tmp_path, data):
    p = str(tmp_path / "e.params")
    mx.nd.save(p, data)
    assert open(p, "rb").read() == struct.pack("<QQQQ", 0x112, 0, 0, 0)
    assert mx.nd.load(p) == []


def test_zero_d_and_empty_arrays_use_v3_records(tmp_path):
    z = np.array(2.5, dtype="float32")
    e = np.zeros((0, 3), dtype="int32")
    v = np.array([1.0, 2.0])
    p = str(tmp_path / "np.params")
    mx.nd.save(p, [mx.nd.array(z), mx.nd.array(e, dtype="int32"), mx.nd.array(v, dtype="float64")])
    assert open(p, "rb").read() == file_bytes([record(z, V3), record(e, V3), record(v, V3)])
    back = mx.nd.load(p)
    assert same(back[0].asnumpy(), z) and same(back[1].asnumpy(), e) and same(back[2].asnumpy(), v)


def test_load_v2_zero_d_record_with_data(tmp_path):
    # MXNet 1.9.1 writes a 0-d array as a V2 record of ndim 0 followed by its data
    p = write(tmp_path, file_bytes([record(np.array(3.0, dtype="float32"))]))
    (x,) = mx.nd.load(p)
    assert x.shape == () and x.asscalar() == 3.0


def test_load_v1_and_legacy_records(tmp_path):
    a = np.array([[1, 2], [3, 4]], dtype="float64")
    v1 = struct.pack("<Ii2q", V1, 2, 2, 2) + struct.pack("<iii", 1, 0, 1) + a.tobytes()
    legacy = struct.pack("<I2I", 2, 2, 2) + struct.pack("<iii", 1, 0, 1) + a.tobytes()
    back = mx.nd.load(write(tmp_path, file_bytes([v1, legacy], ["p", "q"])))
    assert same(back["p"].asnumpy(), a) and same(back["q"].asnumpy(), a)


def test_gpu_context_record_loads_on_cpu_without_gpu(tmp_path):
    p = write(tmp_path, file_bytes([record(np.ones(2, dtype="float32"), dev=(2, 0))]))
    (x,) = mx.nd.load(p)
    if mx.num_gpus() == 0:
        assert x.context == mx.cpu()
    assert same(x.asnumpy(), np.ones(2, dtype="float32"))


def test_load_frombuffer_and_pathlike(tmp_path):
    data = file_bytes([record(np.arange(3, dtype="int8"))], ["k"])
    assert same(mx.nd.load_frombuffer(data)["k"].asnumpy(), np.arange(3, dtype="int8"))
    write(tmp_path, data)
    assert same(mx.nd.load(tmp_path / "x.params")["k"].asnumpy(), np.arange(3, dtype="int8"))


dtypes = st.sampled_from(sorted(FLAGS))
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@settings(max_examples=60)
@given(st.lists(st.tuples(dtypes, shapes, st.integers(0, 2 ** 32 - 1)), max_size=4), st.booleans())
def test_round_trip_is_bit_exact(tmp_path_factory, items, as_dict):
    arrays = []
    for dt, shape, seed in items:
        r = np.random.default_rng(seed)
        raw = r.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dt).itemsize, dtype=np.uint8)
        a = raw.view(dt).reshape(shape) if dt != "bool" else (raw % 2).astype(bool).reshape(shape)
        arrays.append(a)
    nds = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    p = str(tmp_path_factory.mktemp("rt") / "r.params")
    data = {f"k{i}": x for i, x in enumerate(nds)} if as_dict else nds
    mx.nd.save(p, data)
    back = mx.nd.load(p)
    if as_dict and arrays:
        assert list(back) == [f"k{i}" for i in range(len(arrays))]
        back = list(back.values())
    assert len(back) == len(arrays)
    for a, b in zip(arrays, back):
        assert same(b.asnumpy(), a)


# ---- bad files -----------------------------------------------------------------------------------
def bad(tmp_path, data, *words):
    p = write(tmp_path, data, "bad.params")
    with pytest.raises(MXNetError) as e:
        mx.nd.load(p)
    msg = str(e.value)
    assert "bad.params" in msg
    for w in words:
        assert w in msg, msg
    return msg


GOOD = file_bytes([record(np.arange(6, dtype="float32").reshape(2, 3)),
                   record(np.array([1, 2], dtype="int64"))], ["a", "bb"])


def test_good_file_loads():
    back = mx.nd.load_frombuffer(GOOD)
    assert same(back["a"].asnumpy(), np.arange(6, dtype="float32").reshape(2, 3))


def test_every_truncation_is_an_error(tmp_path):
    for n in range(len(GOOD)):
        bad(tmp_path, GOOD[:n])


def test_wrong_magic(tmp_path):
    bad(tmp_path, struct.pack("<QQQQ", 0x113, 0, 0, 0), "wrong magic")
    bad(tmp_path, b"{\"nodes\": []}" + b" " * 40, "wrong magic")


def test_huge_counts_and_shapes_do_not_allocate(tmp_path):
    bad(tmp_path, struct.pack("<QQQ", 0x112, 0, 2 ** 60), "array count")
    huge_dims = struct.pack("<Iii2q", V2, 0, 2, 2 ** 40, 2 ** 40) + struct.pack("<iii", 1, 0, 0)
    bad(tmp_path, file_bytes([huge_dims]), "truncated")
    overflow = struct.pack("<Iii3q", V2, 0, 3, 2 ** 62, 2 ** 62, 4) + struct.pack("<iii", 1, 0, 1)
    bad(tmp_path, file_bytes([overflow]), "truncated")
    bad(tmp_path, struct.pack("<QQQIii", 0x112, 0, 1, V2, 0, 2 ** 30), "ndim")
    bad(tmp_path, struct.pack("<QQQIii", 0x112, 0, 1, V2, 0, -5), "ndim")
    bad(tmp_path, struct.pack("<QQQI", 0x112, 0, 1, 0x7FFFFFF0) + b"\0" * 20, "legacy ndim")
    long_key = (file_bytes([record(np.ones(1, "float32"))])[:-8] + struct.pack("<QQ", 1, 2 ** 62))
    bad(tmp_path, long_key, "key length")


def test_impossible_zero_size_shapes(tmp_path):
    for dims in [(2 ** 62, 2 ** 62, 0), (0,) * 100]:
        rec = struct.pack(f"<Iii{len(dims)}q", V2, 0, len(dims), *dims) + struct.pack("<iii", 1, 0, 0)
        bad(tmp_path, file_bytes([rec]), "cannot be held")


def test_negative_dimension_is_an_error(tmp_path):
    rec = struct.pack("<Iii2q", V2, 0, 2, 3, -1) + struct.pack("<iii", 1, 0, 0)
    bad(tmp_path, file_bytes([rec]), "unknown shape")
    bad(tmp_path, file_bytes([struct.pack("<Iii", V3, 0, -1)]), "unknown shape")


def test_key_count_must_match(tmp_path):
    data = file_bytes([record(np.ones(1, "float32")), record(np.ones(1, "float32"))], ["only"])
    bad(tmp_path, data, "1 keys for 2 arrays")


def test_invalid_utf8_key(tmp_path):
    data = file_bytes([record(np.ones(1, "float32"))])[:-8] + struct.pack("<QQ", 1, 2) + b"\xff\xfe"
    bad(tmp_path, data, "UTF-8")


@pytest.mark.parametrize("stype", [1, 2])
def test_a_dense_record_marked_sparse_is_refused(tmp_path, stype):
    """The storage type says sparse, the bytes are a dense array's: read as a sparse record
    they run out (or disagree) before anything is allocated."""
    bad(tmp_path, file_bytes([record(np.ones(2, "float32"), stype=stype)]), "not a valid")


def sparse_record(storage, shape, aux, flag=0, aux_flag=6, stype=2, payload=b""):
    head = struct.pack("<Iii", V2, stype, len(storage)) + struct.pack(f"<{len(storage)}q",
                                                                      *storage)
    head += struct.pack("<i", len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
    head += struct.pack("<iii", 1, 0, flag)
    for a in aux:
        head += struct.pack("<ii", aux_flag, len(a)) + struct.pack(f"<{len(a)}q", *a)
    return head + payload


@pytest.mark.parametrize("rec,what", [
    (sparse_record((1 << 40,), (2, 2), [(3,), (1 << 40,)]), "truncated"),
    (sparse_record((1,), (2, 2), [(3,), (1,)], aux_flag=0,
                   payload=b"\0" * 4 + b"\0" * 12 + b"\0" * 4), "indices of dtype float32"),
    (sparse_record((1,), (2, 2), [(3,), (1,)], payload=struct.pack("<f3qq", 1.0, 0, 1, 1, 9)),
     "outside"),
    (sparse_record((1,), (2, 2), [(3,), (1,)], payload=struct.pack("<f3qq", 1.0, 0, 5, 1, 0)),
     "indptr"),
    (sparse_record((-1,), (2, 2), [(3,), (1,)]), "negative"),
])
def test_hostile_sparse_records(tmp_path, rec, what):
    bad(tmp_path, file_bytes([rec]), what)


def test_unknown_storage_type(tmp_path):
    bad(tmp_path, file_bytes([record(np.ones(2, "float32"), stype=9)]), "storage type 9")


@pytest.mark.parametrize("flag,name", [(8, "int16"), (11, "uint64"), (99, "type flag 99")])
def test_unsupported_type_flags(tmp_path, flag, name):
    bad(tmp_path, file_bytes([record(np.ones(2, "int16"), flag=flag)]), name)


def test_none_record_is_an_error(tmp_path):
    bad(tmp_path, file_bytes([struct.pack("<Ii", V1, 0)]), "none")


def test_missing_file_and_bad_argument(tmp_path):
    with pytest.raises(MXNetError, match="nothere.params"):
        mx.nd.load(str(tmp_path / "nothere.params"))
    with pytest.raises(MXNetError, match="fname"):
        mx.nd.load(3)
    with pytest.raises(MXNetError, match="buf"):
        mx.nd.load_frombuffer("text")


@settings(max_examples=150)
@given(st.data())
def test_corrupted_files_load_or_raise_mxneterror(data):
    buf = bytearray(GOOD)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] = data.draw(st.integers(0, 255))
    try:
        out = mx.nd.load_frombuffer(bytes(buf))
    except MXNetError as e:
        assert "not a valid NDArray file" in str(e)
    else:
        assert isinstance(out, (list, dict))


# ---- bad save arguments ------------------------------------------------------------------------------
@pytest.mark.parametrize("data,word", [
    ([mx.nd.ones(1), np.ones(1)], "item 1"),
    ({"a": mx.nd.ones(1), 3: mx.nd.ones(1)}, "keys must be str"),
    ({"a": [1.0]}, "'a'"),
    (np.ones(2), "needs to either be"),
    ("text", "needs to either be"),
])
def test_save_rejects_non_ndarrays(tmp_path, data, word):
    p = tmp_path / "never.params"
    with pytest.raises(MXNetError, match=word):
        mx.nd.save(str(p), data)
    assert not p.exists()


def test_save_to_missing_directory(tmp_path):
    with pytest.raises(MXNetError, match="cannot write.*nodir"):
        mx.nd.save(str(tmp_path / "nodir" / "x.params"), [mx.nd.ones(1)])


def test_load_frombuffer_of_a_strided_view():
    data = np.frombuffer(_dumps_for_test([mx.nd.arange(3)]), dtype=np.uint8)
    doubled = np.repeat(data, 2)                 # every byte twice: a view of every other one
    (back,) = mx.nd.load_frombuffer(memoryview(doubled)[::2])
    assert back.asnumpy().tolist() == [0.0, 1.0, 2.0]


def _dumps_for_test(arrays):
    from mxlite.ndarray.io import _dumps
    return _dumps(arrays)
