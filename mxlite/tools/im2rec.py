"""``python -m mxlite.tools.im2rec``: MXNet 1.9.1's ``tools/im2rec.py`` for mxlite.

Two steps, as MXNet's:

* ``--list``: write ``PREFIX.lst`` (``index<TAB>label<TAB>relative path`` lines) for the
  images under ROOT. With ``--recursive`` each sub-folder is a class, labelled by its rank
  in sorted order; otherwise every image gets label 0. ``--train-ratio`` / ``--test-ratio``
  split the list into ``PREFIX_train.lst``, ``PREFIX_val.lst``, ``PREFIX_test.lst``.
* without ``--list``: pack every ``PREFIX*.lst`` into ``.rec`` + ``.idx`` files that
  ``mx.recordio`` and ``mx.io.ImageRecordIter`` (and MXNet) read. Images are re-encoded
  (``--encoding``, ``--quality``, optionally ``--resize`` and ``--center-crop``) unless
  ``--pass-through`` copies the files' bytes.

Decoding and encoding need Pillow (``pip install 'mxlite[image]'``). Packing runs in one
process (MXNet's ``--num-thread`` is accepted and ignored).
"""
import argparse
import os
import random
import sys

import numpy as np

from .. import recordio
from ..base import MXNetError
from ..io.image_record import resize_short

DEFAULT_EXTS = [".jpeg", ".jpg", ".png"]


def list_images(root, recursive, exts):
    """``[(index, relative path, label)]`` of the images under ``root``, sorted by path."""
    exts = {e.lower() for e in exts}
    if not recursive:
        names = sorted(n for n in os.listdir(root)
                       if os.path.isfile(os.path.join(root, n))
                       and os.path.splitext(n)[1].lower() in exts)
        return [(i, name, 0.0) for i, name in enumerate(names)]
    items, classes = [], {}
    for folder, dirs, files in sorted(os.walk(root, followlinks=True)):
        dirs.sort()
        for name in sorted(files):
            if os.path.splitext(name)[1].lower() not in exts:
                continue
            rel = os.path.relpath(os.path.join(folder, name), root)
            cls = os.path.dirname(rel)
            classes.setdefault(cls, len(classes))
            items.append((rel, classes[cls]))
    return [(i, rel, float(label)) for i, (rel, label) in enumerate(items)]


def write_list(path, items):
    """Writes ``items`` as an ``.lst`` file."""
    with open(path, "w") as out:
        for index, rel, label in items:
            out.write(f"{index}\t{label:f}\t{rel}\n")


def make_lists(prefix, root, recursive, exts, shuffle, train_ratio, test_ratio):
    """The ``.lst`` file(s) of ``root``; returns their paths."""
    items = list_images(root, recursive, exts)
    if shuffle:
        random.seed(100)
        random.shuffle(items)
    if train_ratio == 1.0 and test_ratio == 0.0:
        write_list(prefix + ".lst", items)
        return [prefix + ".lst"]
    n_test = int(len(items) * test_ratio)
    n_train = int(len(items) * train_ratio)
    parts = {"_test": items[:n_test], "_train": items[n_test:n_test + n_train],
             "_val": items[n_test + n_train:]}
    written = []
    for suffix, part in parts.items():
        if part or suffix == "_train":
            write_list(prefix + suffix + ".lst", part)
            written.append(prefix + suffix + ".lst")
    return written


def read_list(path):
    """``[(index, relative path, labels)]`` of an ``.lst`` file."""
    items = []
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            try:
                items.append((int(fields[0]), fields[-1], [float(v) for v in fields[1:-1]]))
            except (ValueError, IndexError):
                raise MXNetError(f"im2rec: line {number} of {path!r} is not "
                                 f"'index<TAB>label...<TAB>path': {line.strip()[:80]!r}") \
                    from None
            if len(fields) < 3:
                raise MXNetError(f"im2rec: line {number} of {path!r} has no label")
    return items


def encode(path, args):
    """The bytes to store for the image file ``path``."""
    with open(path, "rb") as f:
        raw = f.read()
    if args.pass_through:
        return raw
    from ..ops import image_io
    op = "im2rec"
    if args.color == -1 and recordio._is_gray(op, raw):
        img = image_io.decode(op, raw, flag=0)[:, :, 0]
    else:
        img = image_io.decode(op, raw, flag=0 if args.color == 0 else 1, to_rgb=False)
    if args.center_crop:
        rows, cols = img.shape[:2]
        side = min(rows, cols)
        top, left = (rows - side) // 2, (cols - side) // 2
        img = img[top:top + side, left:left + side]
    if args.resize:
        img = resize_short(img, args.resize)
    return recordio.encode_image(np.ascontiguousarray(img), args.quality, args.encoding)


def pack_list(lst, root, args):
    """Packs the images of the ``.lst`` file ``lst`` into ``.rec`` and ``.idx`` beside it."""
    base = os.path.splitext(lst)[0]
    writer = recordio.MXIndexedRecordIO(base + ".idx", base + ".rec", "w")
    try:
        for count, (index, rel, labels) in enumerate(read_list(lst)):
            label = labels if args.pack_label else labels[0]
            body = encode(os.path.join(root, rel), args)
            writer.write_idx(index, recordio.pack(recordio.IRHeader(0, label, index, 0), body))
            if count % 1000 == 0:
                print(f"{lst}: {count} images", file=sys.stderr)
    finally:
        writer.close()
    return base + ".rec"


def parse_args(argv=None):
    """The command line (MXNet's options)."""
    parser = argparse.ArgumentParser(
        prog="python -m mxlite.tools.im2rec",
        description="Make an image list from a folder, or pack a list into RecordIO files.")
    parser.add_argument("prefix", help="the .lst/.rec prefix (or a folder of .lst files)")
    parser.add_argument("root", help="the folder of the images")
    listing = parser.add_argument_group("--list")
    listing.add_argument("--list", action="store_true", help="make the .lst file(s)")
    listing.add_argument("--exts", nargs="+", default=DEFAULT_EXTS)
    listing.add_argument("--chunks", type=int, default=1, help="accepted; must be 1")
    listing.add_argument("--train-ratio", type=float, default=1.0)
    listing.add_argument("--test-ratio", type=float, default=0.0)
    listing.add_argument("--recursive", action="store_true",
                         help="each sub-folder is a class")
    listing.add_argument("--no-shuffle", dest="shuffle", action="store_false")
    packing = parser.add_argument_group("packing")
    packing.add_argument("--pass-through", action="store_true",
                         help="store the files' bytes unchanged")
    packing.add_argument("--resize", type=int, default=0, help="the shorter edge, in pixels")
    packing.add_argument("--center-crop", action="store_true")
    packing.add_argument("--quality", type=int, default=95,
                         help="JPEG quality 1-100 or PNG compression 0-9")
    packing.add_argument("--num-thread", type=int, default=1, help="accepted; one process")
    packing.add_argument("--color", type=int, default=1, choices=[-1, 0, 1])
    packing.add_argument("--encoding", default=".jpg", choices=[".jpg", ".png"])
    packing.add_argument("--pack-label", action="store_true",
                         help="store every label of a line, not just the first")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.list:
        if args.chunks != 1:
            raise SystemExit("im2rec: --chunks other than 1 is not supported")
        for path in make_lists(args.prefix, args.root, args.recursive, args.exts, args.shuffle,
                               args.train_ratio, args.test_ratio):
            print(path)
        return 0
    folder, name = os.path.split(args.prefix)
    folder = args.prefix if os.path.isdir(args.prefix) else (folder or ".")
    name = "" if os.path.isdir(args.prefix) else name
    lists = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.startswith(name) and f.endswith(".lst"))
    if not lists:
        raise SystemExit(f"im2rec: no .lst file matches {args.prefix!r}")
    for lst in lists:
        print(pack_list(lst, args.root, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
