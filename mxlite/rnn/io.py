"""Text data for the legacy ``mx.rnn`` examples (MXNet 1.x ``mx.rnn.io``):
``encode_sentences`` (words to integer ids) and ``BucketSentenceIter`` (batches of
sentences padded to the nearest of a few lengths, for bucketing modules)."""
import bisect
import random

import numpy as np

from .. import ndarray
from ..base import MXNetError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Each sentence (a list of words) as a list of ids; returns (encoded, vocab).

    Without ``vocab`` a new one is built: ``invalid_key`` maps to ``invalid_label`` and new
    words get ids counting from ``start_label`` (skipping ``invalid_label``). With a
    ``vocab``, words missing from it map to ``unknown_token``, added once with the next
    free id (MXNet 1.x gave it a new id at every unknown word, so earlier sentences kept
    stale ids); without ``unknown_token`` a missing word is an MXNetError."""
    new_vocab = vocab is None
    vocab = {invalid_key: invalid_label} if new_vocab else vocab
    next_id = [start_label]

    def fresh_id():
        if next_id[0] == invalid_label:
            next_id[0] += 1
        next_id[0] += 1
        return next_id[0] - 1

    encoded = []
    for sentence in sentences:
        ids = []
        for word in sentence:
            if word not in vocab:
                if not new_vocab and not unknown_token:
                    raise MXNetError(f"encode_sentences: unknown token {word!r} (give "
                                     "unknown_token to map unknown words)")
                if not new_vocab:
                    word = unknown_token
                if word not in vocab:
                    vocab[word] = fresh_id()
            ids.append(vocab[word])
        encoded.append(ids)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of ``batch_size`` encoded sentences of one bucket length each, padded with
    ``invalid_label``; the label is the data shifted one step left (next-word prediction).
    ``buckets`` defaults to every length that at least ``batch_size`` sentences have;
    sentences longer than the largest bucket are dropped (with a warning). ``layout`` 'NT'
    (batch major) or 'TN'. Each batch's ``bucket_key`` is its length."""

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__(batch_size)
        if layout not in ("NT", "TN"):
            raise MXNetError(f"BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' "
                             f"(time major), got {layout!r}")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [n for n, c in enumerate(counts) if c >= batch_size]
        if not buckets:
            raise MXNetError(f"BucketSentenceIter: no sentence length occurs batch_size="
                             f"{batch_size} times; give buckets")
        buckets = sorted(buckets)
        rows = [[] for _ in buckets]
        dropped = 0
        for sentence in sentences:
            b = bisect.bisect_left(buckets, len(sentence))
            if b == len(buckets):
                dropped += 1
                continue
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[b].append(row)
        if dropped:
            import warnings
            warnings.warn(f"BucketSentenceIter: discarded {dropped} sentences longer than the "
                          "largest bucket.", stacklevel=2)
        kept = [i for i, r in enumerate(rows) if r]
        self.buckets = [buckets[i] for i in kept]
        self.data = [np.asarray(rows[i], dtype=dtype) for i in kept]
        self.batch_size = batch_size
        self.data_name, self.label_name = data_name, label_name
        self.dtype, self.invalid_label, self.layout = dtype, invalid_label, layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(self.buckets)
        shape = self._shape(self.default_bucket_key)
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [(i, j) for i, b in enumerate(self.data)
                    for j in range(0, len(b) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def _shape(self, length):
        return (self.batch_size, length) if self.major_axis == 0 else (length,
                                                                        self.batch_size)

    def reset(self):
        """Shuffle the batches and the sentences within each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(rows, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch (StopIteration at the end)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(self.data_name, data.shape, layout=self.layout)],
                         provide_label=[DataDesc(self.label_name, label.shape,
                                                 layout=self.layout)])
