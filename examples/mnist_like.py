"""A small CNN on synthetic digits with Gluon: train (hybridized), export, re-import.

The digits are seven-segment style 0-9 drawn on a 16x16 canvas at random offsets, with
random stroke brightness and noise, so the task needs translation-tolerant features. The
network is ``Conv2D -> MaxPool2D -> Conv2D -> MaxPool2D -> Flatten -> Dense -> Dense``,
hybridized (the whole stack runs as one cached graph through the symbol executor), trained
with ``gluon.Trainer`` (Adam) on mini-batches from ``gluon.data.DataLoader`` with
``SoftmaxCrossEntropyLoss``, with a progress bar per epoch. Then ``net.export`` writes
``mnist_like-symbol.json`` / ``mnist_like-0000.params`` and ``gluon.SymbolBlock.imports``
loads them back; the re-imported model must give the same predictions.

    python examples/mnist_like.py                 # 6 epochs on 4000 images (about 10 s)
    python examples/mnist_like.py --epochs 8

Prints ``label = value`` lines at the end (tests/test_examples.py reads them).
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn

# which of the 7 segments (top, top-left, top-right, middle, bottom-left, bottom-right,
# bottom) each digit lights
SEGMENTS = {0: "1110111", 1: "0010010", 2: "1011101", 3: "1011011", 4: "0111010",
            5: "1101011", 6: "1101111", 7: "1010010", 8: "1111111", 9: "1111011"}


def draw_digit(digit, rng, size=16):
    """One ``size`` x ``size`` image of ``digit`` (an 8x5 seven-segment glyph at a random
    offset, random brightness, Gaussian noise)."""
    glyph = np.zeros((9, 5), np.float32)
    on = [c == "1" for c in SEGMENTS[digit]]
    rows = {0: 0, 3: 4, 6: 8}
    for seg, row in rows.items():                       # horizontal segments
        if on[seg]:
            glyph[row, 1:4] = 1
    for seg, (r0, col) in {1: (0, 0), 2: (0, 4), 4: (4, 0), 5: (4, 4)}.items():
        if on[seg]:
            glyph[r0:r0 + 5, col] = 1                   # vertical segments
    image = np.zeros((size, size), np.float32)
    top, left = rng.integers(0, size - 9 + 1), rng.integers(0, size - 5 + 1)
    image[top:top + 9, left:left + 5] = glyph * rng.uniform(0.6, 1.0)
    image += rng.normal(0, 0.15, image.shape)
    return image


def make_dataset(n, seed):
    """(images (n, 1, 16, 16) float32, labels (n,) float32)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = np.stack([draw_digit(int(d), rng) for d in labels])[:, None]
    return images.astype(np.float32), labels.astype(np.float32)


def build_net():
    """The CNN (deferred shapes: in_channels / in_units are inferred at the first batch)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1, activation="relu"), nn.MaxPool2D(),
                nn.Conv2D(16, 3, padding=1, activation="relu"), nn.MaxPool2D(),
                nn.Flatten(), nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


def progress(epoch, done, total, loss, start, out, width=30):
    """A one-line progress bar, redrawn in place with a carriage return."""
    filled = int(width * done / total)
    bar = "#" * filled + "." * (width - filled)
    out.write(f"\repoch {epoch} [{bar}] {done}/{total}  loss {loss:.4f}  "
              f"{time.time() - start:4.1f} s")
    if done == total:
        out.write("\n")
    out.flush()


def accuracy(net, images, labels, batch=500):
    """The fraction of correct predictions."""
    correct = 0
    for i in range(0, len(images), batch):
        pred = net(mx.nd.array(images[i:i + batch])).argmax(axis=1).asnumpy()
        correct += int((pred == labels[i:i + batch]).sum())
    return correct / len(images)


def train(epochs=3, batch_size=64, n_train=3000, lr=3e-3, seed=0, out=sys.stdout):
    """Train the hybridized CNN; returns (net, test images, test labels, final loss)."""
    mx.random.seed(seed)
    x_train, y_train = make_dataset(n_train, seed)
    x_test, y_test = make_dataset(1000, seed + 1)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train, y_train),
                                   batch_size=batch_size, shuffle=True, last_batch="discard")
    net = build_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
    loss_value = float("nan")
    for epoch in range(1, epochs + 1):
        start, total, running = time.time(), len(loader), []
        for i, (x, y) in enumerate(loader, 1):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            running.append(loss.mean().asscalar())
            loss_value = float(np.mean(running[-20:]))
            if out is not None and (i % 5 == 0 or i == total):
                progress(epoch, i, total, loss_value, start, out)
    return net, x_test, y_test, loss_value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--export-dir", default=None,
                        help="where to write the exported model (default: a temporary folder)")
    args = parser.parse_args(argv)
    net, x_test, y_test, loss = train(args.epochs, args.batch_size, args.train_size, args.lr,
                                      args.seed)
    acc = accuracy(net, x_test, y_test)
    folder = args.export_dir or tempfile.mkdtemp(prefix="mnist_like_")
    prefix = os.path.join(folder, "mnist_like")
    sym_file, params_file = net.export(prefix)
    print(f"exported {sym_file} and {params_file}")
    imported = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    same = bool(np.array_equal(
        imported(mx.nd.array(x_test)).argmax(axis=1).asnumpy(),
        net(mx.nd.array(x_test)).argmax(axis=1).asnumpy()))
    print(f"final training loss = {loss:.4f}")
    print(f"test accuracy = {acc:.4f}")
    print(f"re-imported accuracy = {accuracy(imported, x_test, y_test):.4f}")
    print(f"re-imported predictions match = {same}")


if __name__ == "__main__":
    main()
