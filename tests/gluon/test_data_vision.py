"""gluon.data.vision (datasets read from files in their published formats, written here by
the tests; transforms against NumPy) and gluon.utils.download/check_sha1 over file:// URLs."""
import gzip
import hashlib
import io
import os
import random
import struct
import tarfile

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import utils
from mxlite.gluon.data import DataLoader, vision
from mxlite.gluon.data.vision import transforms as T


def _sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def _offline(monkeypatch, tmp_path):
    """A Gluon repository that has nothing: every download fails at once."""
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "no-repo").as_uri())


# ---- download ---------------------------------------------------------------------------------
def test_download_file_url_and_hash(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"mxlite" * 100)
    digest = hashlib.sha1(src.read_bytes()).hexdigest()
    out = utils.download(src.as_uri(), path=str(tmp_path / "dst"), sha1_hash=digest)
    assert out == str(tmp_path / "dst")
    assert (tmp_path / "dst").read_bytes() == src.read_bytes()
    assert utils.check_sha1(out, digest) and not utils.check_sha1(out, "0" * 40)
    # a folder as path receives the URL's last part
    folder = tmp_path / "folder"
    folder.mkdir()
    assert utils.download(src.as_uri(), path=str(folder)) == str(folder / "src.bin")


def test_download_keeps_a_file_with_the_right_hash(tmp_path):
    dst = tmp_path / "data.bin"
    dst.write_bytes(b"already here")
    gone = (tmp_path / "nowhere" / "data.bin").as_uri()
    assert utils.download(gone, path=str(dst), sha1_hash=_sha1(dst)) == str(dst)
    with pytest.raises(MXNetError, match="could not fetch"):      # wrong hash: fetched again
        utils.download(gone, path=str(dst), sha1_hash="0" * 40, retries=0)
    with pytest.raises(MXNetError, match="could not fetch"):
        utils.download(gone, path=str(dst), overwrite=True, retries=1)


def test_download_wrong_hash_removes_the_file(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"content")
    dst = tmp_path / "dst.bin"
    with pytest.raises(MXNetError, match="does not have the SHA-1"):
        utils.download(src.as_uri(), path=str(dst), sha1_hash="1" * 40)
    assert not dst.exists() and os.listdir(tmp_path) == ["src.bin"]


def test_download_errors(tmp_path):
    with pytest.raises(MXNetError, match="retries"):
        utils.download((tmp_path / "x").as_uri(), path=str(tmp_path / "y"), retries=-1)
    with pytest.raises(MXNetError, match="give path"):
        utils.download("http://example.invalid/dir/")


def test_repo_url(monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "file:///repo")
    assert utils._get_repo_file_url("gluon/dataset/mnist", "a.gz") == \
        "file:///repo/gluon/dataset/mnist/a.gz"


# ---- MNIST --------------------------------------------------------------------------------
def _write_gz(path, payload):
    with gzip.open(path, "wb") as f:
        f.write(payload)


def _write_mnist(root, prefix, images, labels):
    n = len(labels)
    _write_gz(root / f"{prefix}-images-idx3-ubyte.gz",
              struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    _write_gz(root / f"{prefix}-labels-idx1-ubyte.gz",
              struct.pack(">II", 2049, n) + labels.astype(np.uint8).tobytes())


def _trust_files(monkeypatch, cls, root):
    """Point ``cls``'s expected SHA-1s at the synthetic files in ``root``."""
    files = {}
    for split, entries in cls._files.items():
        if split == "archive":
            files[split] = entries
            continue
        files[split] = tuple((name, _sha1(root / name) if (root / name).exists() else sha1)
                             for name, sha1 in entries)
    monkeypatch.setattr(cls, "_files", files)


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, monkeypatch, cls):
    rng = np.random.default_rng(0)
    train = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    test = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    _write_mnist(tmp_path, "train", train, np.array([3, 1, 4, 1, 5]))
    _write_mnist(tmp_path, "t10k", test, np.array([9, 2, 6]))
    _trust_files(monkeypatch, cls, tmp_path)
    _offline(monkeypatch, tmp_path)
    ds = cls(root=str(tmp_path))
    assert len(ds) == 5
    img, label = ds[2]
    assert img.shape == (28, 28, 1) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], train[2])
    assert label == 4 and label.dtype == np.int32
    ds = cls(root=str(tmp_path), train=False, transform=lambda d, l: (d.astype("float32"), l + 1))
    img, label = ds[0]
    assert img.dtype == np.float32 and label == 10
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], test[0])


def test_mnist_missing_files_name_them(tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    with pytest.raises(MXNetError, match="train-images-idx3-ubyte.gz.*6c95f4b0"):
        vision.MNIST(root=str(tmp_path))


def test_mnist_downloads_from_the_repository(tmp_path, monkeypatch):
    repo = tmp_path / "repo" / "gluon" / "dataset" / "mnist"
    repo.mkdir(parents=True)
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    _write_mnist(repo, "train", images, np.array([7, 8]))
    _trust_files(monkeypatch, vision.MNIST, repo)
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "repo").as_uri())
    ds = vision.MNIST(root=str(tmp_path / "root"))
    assert sorted(os.listdir(tmp_path / "root")) == ["train-images-idx3-ubyte.gz",
                                                      "train-labels-idx1-ubyte.gz"]
    np.testing.assert_array_equal(ds[1][0].asnumpy()[:, :, 0], images[1])


@pytest.mark.parametrize("images, labels, match", [
    (struct.pack(">IIII", 2051, 2, 28, 28) + bytes(28 * 28), struct.pack(">II", 2049, 2) + b"\0\0",
     "header says"),                                              # one image short
    (struct.pack(">IIII", 2051, 2, 27, 28) + bytes(2 * 27 * 28), struct.pack(">II", 2049, 2) +
     b"\0\0", "sizes"),                                           # not 28 x 28
    (struct.pack(">IIII", 2051, 1, 28, 28) + bytes(28 * 28), struct.pack(">II", 2049, 2) + b"\0\0",
     "1 images.*2 labels"),
    (struct.pack(">IIII", 2049, 1, 28, 28) + bytes(28 * 28), struct.pack(">II", 2049, 1) + b"\0",
     "magic 2051"),
    (struct.pack(">IIII", 2051, 0xFFFFFFFF, 28, 28), struct.pack(">II", 2049, 0xFFFFFFFF),
     "header says"),                                              # a huge count, no data
    (b"", struct.pack(">II", 2049, 0), "less than its 16-byte"),
    (struct.pack(">IIII", 2051, 1, 28, 28) + bytes(28 * 28 + 1), struct.pack(">II", 2049, 1) +
     b"\0", "holds more"),                                      # one byte too many
])
def test_mnist_bad_files(tmp_path, monkeypatch, images, labels, match):
    _write_gz(tmp_path / "train-images-idx3-ubyte.gz", images)
    _write_gz(tmp_path / "train-labels-idx1-ubyte.gz", labels)
    _trust_files(monkeypatch, vision.MNIST, tmp_path)
    with pytest.raises(MXNetError, match=f"MNIST: .*{match}"):
        vision.MNIST(root=str(tmp_path))


def test_mnist_not_gzip(tmp_path, monkeypatch):
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"plain")
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(b"plain")
    _trust_files(monkeypatch, vision.MNIST, tmp_path)
    with pytest.raises(MXNetError, match="cannot read the gzip file"):
        vision.MNIST(root=str(tmp_path))


# ---- CIFAR ----------------------------------------------------------------------------------
def _cifar_bytes(images_chw, *label_columns):
    rows = [np.concatenate([np.array(labels, np.uint8), img.ravel()])
            for img, *labels in zip(images_chw, *label_columns)]
    return np.stack(rows).astype(np.uint8).tobytes()


def test_cifar10_reads_binary_batches(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    batches = [rng.integers(0, 256, (2, 3, 32, 32), dtype=np.uint8) for _ in range(6)]
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for k, (name, chw) in enumerate(zip(names, batches)):
        (tmp_path / name).write_bytes(_cifar_bytes(chw, [k, 9 - k]))
    _trust_files(monkeypatch, vision.CIFAR10, tmp_path)
    _offline(monkeypatch, tmp_path)
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    img, label = ds[3]                        # batch 2, second record
    assert img.shape == (32, 32, 3) and img.dtype == np.uint8 and label == 8
    np.testing.assert_array_equal(img.asnumpy(), batches[1][1].transpose(1, 2, 0))
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    assert len(test) == 2 and test[0][1] == 5


def test_cifar10_takes_the_batches_from_the_archive(tmp_path, monkeypatch):
    repo = tmp_path / "repo" / "gluon" / "dataset" / "cifar10"
    repo.mkdir(parents=True)
    chw = np.arange(3 * 32 * 32, dtype=np.uint32).reshape(1, 3, 32, 32).astype(np.uint8)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    archive = repo / "cifar-10-binary.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for k, name in enumerate(names):
            payload = _cifar_bytes(chw, [k])
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
        evil = tarfile.TarInfo("../escaped.bin")           # never written outside root
        evil.size = 1
        tar.addfile(evil, io.BytesIO(b"x"))
        link = tarfile.TarInfo("cifar-10-batches-bin/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    monkeypatch.setattr(vision.CIFAR10, "_files", {
        "archive": ("cifar-10-binary.tar.gz", _sha1(archive)),
        "train": tuple((n, hashlib.sha1(_cifar_bytes(chw, [k])).hexdigest())
                       for k, n in enumerate(names[:5])),
        "test": ((names[5], hashlib.sha1(_cifar_bytes(chw, [5])).hexdigest()),)})
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "repo").as_uri())
    root = tmp_path / "root"
    ds = vision.CIFAR10(root=str(root))
    assert [int(ds[i][1]) for i in range(5)] == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(ds[0][0].asnumpy(), chw[0].transpose(1, 2, 0))
    assert sorted(os.listdir(root)) == sorted(names + ["cifar-10-binary.tar.gz"])
    assert not (tmp_path / "escaped.bin").exists()


def test_cifar_missing_and_bad_files(tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    with pytest.raises(MXNetError, match="CIFAR10: .*cifar-10-binary.tar.gz"):
        vision.CIFAR10(root=str(tmp_path))
    (tmp_path / "train.bin").write_bytes(bytes(3074 + 5))
    (tmp_path / "test.bin").write_bytes(bytes(3074))
    _trust_files(monkeypatch, vision.CIFAR100, tmp_path)
    with pytest.raises(MXNetError, match="CIFAR100: .*3079 bytes, not a whole .*3074-byte"):
        vision.CIFAR100(root=str(tmp_path))


def test_cifar100_coarse_and_fine_labels(tmp_path, monkeypatch):
    chw = np.random.default_rng(2).integers(0, 256, (3, 3, 32, 32), dtype=np.uint8)
    (tmp_path / "train.bin").write_bytes(_cifar_bytes(chw, [1, 2, 3], [41, 42, 43]))
    (tmp_path / "test.bin").write_bytes(_cifar_bytes(chw[:1], [7], [77]))
    _trust_files(monkeypatch, vision.CIFAR100, tmp_path)
    _offline(monkeypatch, tmp_path)
    coarse = vision.CIFAR100(root=str(tmp_path))
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True)
    assert [coarse[i][1] for i in range(3)] == [1, 2, 3]
    assert [fine[i][1] for i in range(3)] == [41, 42, 43]
    np.testing.assert_array_equal(fine[2][0].asnumpy(), chw[2].transpose(1, 2, 0))
    assert vision.CIFAR100(root=str(tmp_path), fine_label=True, train=False)[0][1] == 77


# ---- image files ----------------------------------------------------------------------------
def _png(pixels):
    Image = pytest.importorskip("PIL.Image")
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def test_image_folder_dataset(tmp_path):
    rng = np.random.default_rng(3)
    imgs = {("cat", "a.png"): rng.integers(0, 256, (4, 5, 3), dtype=np.uint8),
            ("cat", "b.PNG"): rng.integers(0, 256, (2, 3, 3), dtype=np.uint8),
            ("ant", "c.png"): rng.integers(0, 256, (3, 3, 3), dtype=np.uint8)}
    for (folder, name), pixels in imgs.items():
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_bytes(_png(pixels))
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    (tmp_path / "readme").write_text("not a folder")
    with pytest.warns(UserWarning, match="Ignoring"):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["ant", "cat"] and len(ds) == 3
    assert [label for _, label in ds.items] == [0, 1, 1]
    img, label = ds[1]
    assert label == 1 and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), imgs[("cat", "a.png")])
    with pytest.warns(UserWarning):
        gray = vision.ImageFolderDataset(str(tmp_path), flag=0,
                                         transform=lambda d, l: (d.shape, l))
    assert gray[0] == ((3, 3, 1), 0)


def test_image_folder_dataset_errors(tmp_path):
    with pytest.raises(MXNetError, match="is not a folder"):
        vision.ImageFolderDataset(str(tmp_path / "missing"))
    with pytest.raises(MXNetError, match="flag must be 0"):
        vision.ImageFolderDataset(str(tmp_path), flag=2)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(MXNetError, match="cannot decode"):
        vision.ImageFolderDataset(str(tmp_path))[0]


def test_image_record_dataset(tmp_path):
    rng = np.random.default_rng(4)
    pixels = [rng.integers(0, 256, (3 + i, 4, 3), dtype=np.uint8) for i in range(3)]
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, img in enumerate(pixels):
        writer.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i) + 0.5, i, 0),
                                             _png(img)))
    writer.close()
    ds = vision.ImageRecordDataset(rec)
    assert len(ds) == 3
    img, label = ds[2]
    np.testing.assert_array_equal(img.asnumpy(), pixels[2])
    assert label == 2.5
    gray = vision.ImageRecordDataset(rec, flag=0, transform=lambda d, l: d)
    assert gray[0].shape == (3, 4, 1)


# ---- transforms -----------------------------------------------------------------------------
def _image(shape=(6, 8, 3), seed=5):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_to_tensor_normalize_cast():
    x = _image()
    out = T.ToTensor()(mx.nd.array(x, dtype="uint8"))
    np.testing.assert_allclose(out.asnumpy(), x.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)
    norm = T.Normalize(mean, std)(out).asnumpy()
    expect = (x.transpose(2, 0, 1) / 255.0 - np.reshape(mean, (3, 1, 1))) / \
        np.reshape(std, (3, 1, 1))
    np.testing.assert_allclose(norm, expect, rtol=1e-5, atol=1e-6)
    scalar = T.Normalize(0.5, 2.0)(out).asnumpy()              # one value for every channel
    np.testing.assert_allclose(scalar, (x.transpose(2, 0, 1) / 255.0 - 0.5) / 2.0, rtol=1e-5)
    assert T.Cast("float16")(out).dtype == np.float16


def test_resize_crops():
    x = _image()
    nd_x = mx.nd.array(x, dtype="uint8")
    near = T.Resize((16, 12), interpolation=0)(nd_x).asnumpy()      # (width, height)
    np.testing.assert_array_equal(near, x.repeat(2, axis=0).repeat(2, axis=1))
    assert T.Resize(3, keep_ratio=True)(nd_x).shape == (3, 4, 3)
    np.testing.assert_array_equal(T.CenterCrop((4, 2))(nd_x).asnumpy(), x[2:4, 2:6])
    np.testing.assert_array_equal(T.CropResize(1, 2, 3, 4)(nd_x).asnumpy(), x[2:6, 1:4])
    up = T.CropResize(1, 2, 3, 4, size=(6, 8), interpolation=0)(nd_x).asnumpy()
    np.testing.assert_array_equal(up, x[2:6, 1:4].repeat(2, axis=0).repeat(2, axis=1))
    batch = mx.nd.array(np.stack([x, x[::-1]]), dtype="uint8")
    np.testing.assert_array_equal(T.CenterCrop(2)(batch).asnumpy(),
                                  np.stack([x, x[::-1]])[:, 2:4, 3:5])


def test_center_crop_of_a_small_image_scales_up():
    x = np.full((4, 6, 3), 7, np.uint8)
    x[:, 1] = 200                                       # outside the centred 4 x 4 box
    out = T.CenterCrop((8, 8), interpolation=0)(mx.nd.array(x, dtype="uint8")).asnumpy()
    np.testing.assert_array_equal(out, x[:, 1:5].repeat(2, axis=0).repeat(2, axis=1))


def test_random_resized_crop():
    x = _image((6, 6, 3))
    nd_x = mx.nd.array(x, dtype="uint8")
    whole = T.RandomResizedCrop(6, scale=(1.0, 1.0), ratio=(1.0, 1.0))
    np.testing.assert_array_equal(whole(nd_x).asnumpy(), x)
    # no box of ratio 9 fits a square image: the centre crop, as MXNet's fallback
    fallback = T.RandomResizedCrop((2, 2), scale=(0.5, 1.0), ratio=(9.0, 9.0))
    np.testing.assert_array_equal(fallback(nd_x).asnumpy(), x[2:4, 2:4])
    random.seed(0)
    crop = T.RandomResizedCrop((3, 5))
    assert {crop(nd_x).shape for _ in range(5)} == {(5, 3, 3)}
    with pytest.raises(MXNetError, match="RandomResizedCrop: scale"):
        T.RandomResizedCrop(4, scale=(0.9, 0.1))
    with pytest.raises(MXNetError, match="CenterCrop: size must be positive"):
        T.CenterCrop((0, 3))


def test_random_flips_give_both_outcomes():
    x = _image()
    nd_x = mx.nd.array(x, dtype="uint8")
    for block, flipped in ((T.RandomFlipLeftRight(), x[:, ::-1]),
                           (T.RandomFlipTopBottom(), x[::-1])):
        seen = set()
        for _ in range(40):
            out = block(nd_x).asnumpy()
            assert np.array_equal(out, x) or np.array_equal(out, flipped)
            seen.add(np.array_equal(out, x))
        assert seen == {True, False}          # fails with probability 2**-39


@pytest.mark.parametrize("block", [T.RandomBrightness(0), T.RandomContrast(0),
                                   T.RandomSaturation(0), T.RandomHue(0),
                                   T.RandomColorJitter(), T.RandomLighting(0)])
def test_random_colour_of_strength_zero_is_identity(block):
    x = _image().astype(np.float32)
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), x, rtol=1e-5, atol=1e-3)


def test_random_brightness_range():
    x = _image().astype(np.float32) + 1
    for _ in range(10):
        factor = T.RandomBrightness(0.3)(mx.nd.array(x)).asnumpy() / x
        assert np.ptp(factor) < 1e-5 and 0.7 - 1e-6 <= factor.mean() <= 1.3 + 1e-6
    with pytest.raises(MXNetError, match="RandomBrightness: the factor must be"):
        T.RandomBrightness(-1)


def test_compose_groups_hybrid_runs_and_keeps_the_list():
    steps = [T.Resize(4), T.CenterCrop(3), T.Cast(), T.ToTensor(), T.Normalize(0.5, 0.5)]
    composed = T.Compose(steps)
    assert len(steps) == 5
    kinds = [type(b).__name__ for b in composed._children.values()]
    assert kinds == ["Resize", "CenterCrop", "HybridSequential"]
    x = _image()
    out = composed(mx.nd.array(x, dtype="uint8")).asnumpy()
    small = T.Resize(4)(mx.nd.array(x, dtype="uint8")).asnumpy()
    h, w = small.shape[:2]
    box = small[(h - 3) // 2:(h - 3) // 2 + 3, (w - 3) // 2:(w - 3) // 2 + 3]
    np.testing.assert_allclose(out, (box.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5, rtol=1e-5,
                               atol=1e-6)


def test_hybridized_random_transforms_draw_each_call():
    composed = T.Compose([T.RandomFlipLeftRight(), T.RandomBrightness(0.5)])
    assert [type(b).__name__ for b in composed._children.values()] == ["HybridSequential"]
    x = mx.nd.array(_image().astype(np.float32))
    sums = {float(composed(x).asnumpy().sum()) for _ in range(8)}
    assert len(sums) > 1                        # a cached graph would repeat its draw


def test_random_apply():
    x = mx.nd.array(_image(), dtype="uint8")
    never = T.RandomApply(T.Cast("float64"), p=0.0)
    always = T.RandomApply(T.Cast("float64"), p=1.0)
    assert never(x).dtype == np.uint8 and always(x).dtype == np.float64


def test_rotate_quarter_turns_are_rot90():
    x = np.random.default_rng(7).random((2, 5, 5)).astype(np.float32)
    for k in range(4):
        out = T.Rotate(90.0 * k)(mx.nd.array(x)).asnumpy()
        np.testing.assert_allclose(out, np.rot90(x, k, axes=(1, 2)), atol=1e-5)
    batch = np.stack([x, x])
    out = T.rotate(mx.nd.array(batch), [90.0, 180.0]).asnumpy()    # an angle per image
    np.testing.assert_allclose(out[0], np.rot90(x, 1, axes=(1, 2)), atol=1e-5)
    np.testing.assert_allclose(out[1], np.rot90(x, 2, axes=(1, 2)), atol=1e-5)


def test_rotate_zoom():
    ones = mx.nd.ones((1, 9, 9))
    plain = T.Rotate(45.0)(ones).asnumpy()[0]
    assert plain[0, 0] == 0 and plain[4, 4] == 1             # the corners show padding
    zoom_in = T.Rotate(45.0, zoom_in=True)(ones).asnumpy()[0]
    np.testing.assert_allclose(zoom_in, 1, atol=1e-5)          # no padding anywhere
    zoom_out = T.Rotate(45.0, zoom_out=True)(ones).asnumpy()[0]
    # the whole image inside: its rotated corners sit on the output's edge midpoints
    assert zoom_out[0, 0] == 0 and zoom_out[4, 4] == 1 and zoom_out[0, 4] > 0.5
    with pytest.raises(MXNetError, match="zoom_in and zoom_out"):
        T.Rotate(10.0, zoom_in=True, zoom_out=True)(ones)


def test_rotation_checks():
    with pytest.raises(MXNetError, match="angle_limits"):
        T.RandomRotation((10, -10))
    with pytest.raises(MXNetError, match="rotate_with_proba"):
        T.RandomRotation((-10, 10), rotate_with_proba=2)
    for block in (T.Rotate(30), T.RandomRotation((-10, 10))):
        with pytest.raises(TypeError, match="expects float32"):      # MXNet's TypeError
            block(mx.nd.zeros((3, 4, 4), dtype="uint8"))
        with pytest.raises(MXNetError, match=r"\(C, H, W\)"):
            block(mx.nd.zeros((4, 4)))
    x = mx.nd.array(np.random.default_rng(8).random((3, 4, 6)).astype(np.float32))
    assert T.RandomRotation((-100, 100), rotate_with_proba=0.0)(x) is x
    np.random.seed(0)
    turned = T.RandomRotation((89.999, 90.001))(x).asnumpy()
    assert turned.shape == (3, 4, 6)


# ---- DataLoader over a vision dataset with workers --------------------------------------------
def test_dataloader_workers_over_transformed_dataset(tmp_path, monkeypatch):
    images = np.random.default_rng(6).integers(0, 256, (10, 28, 28), dtype=np.uint8)
    _write_mnist(tmp_path, "train", images, np.arange(10))
    _trust_files(monkeypatch, vision.MNIST, tmp_path)
    ds = vision.MNIST(root=str(tmp_path)).transform_first(T.ToTensor())
    serial = list(DataLoader(ds, batch_size=4))
    pooled = list(DataLoader(ds, batch_size=4, num_workers=2))
    assert len(pooled) == 3
    for (a, la), (b, lb) in zip(serial, pooled):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
        np.testing.assert_array_equal(la.asnumpy(), lb.asnumpy())
    np.testing.assert_allclose(pooled[2][0].asnumpy()[:, 0], images[8:] / 255.0, rtol=1e-6)


class _Watched(mx.gluon.data.Dataset):
    """Samples 0..n-1 whose reads are recorded; ``read`` is set by the first one."""

    def __init__(self, n):
        import threading
        self.n, self.reads, self.read = n, [], threading.Event()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.reads.append(i)
        self.read.set()
        return np.full((2,), i, np.float32)


def test_dataloader_auto_reload_prefetches_each_epoch():
    data = _Watched(6)
    loader = DataLoader(data, batch_size=2, num_workers=2, auto_reload=True)
    assert data.read.wait(60)                   # workers started at construction
    for _ in range(2):
        data.read.clear()
        batches = [b.asnumpy()[:, 0].tolist() for b in loader]
        assert batches == [[0, 1], [2, 3], [4, 5]]
        assert data.read.wait(60)               # and again for the next epoch


def test_dataloader_without_auto_reload_is_lazy_and_restarts():
    data = _Watched(6)
    loader = DataLoader(data, batch_size=2, num_workers=2)
    assert data.reads == []
    epoch = iter(loader)
    assert next(epoch).asnumpy()[:, 0].tolist() == [0, 1]
    del epoch                                   # an epoch left unfinished
    assert [b.asnumpy()[:, 0].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    loader.refresh()
    loader.clean()
    assert len(list(loader)) == 3
