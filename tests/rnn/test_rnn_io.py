"""mx.rnn.io: encode_sentences and BucketSentenceIter."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def test_encode_sentences_new_vocab():
    enc, vocab = mx.rnn.encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=1,
                                         start_label=0)
    # ids count from start_label and skip invalid_label
    assert vocab == {"\n": 1, "a": 0, "b": 2, "c": 3}
    assert enc == [[0, 2], [2, 3, 0]]


def test_encode_sentences_unknown_words_share_one_id():
    """Every unknown word maps to unknown_token's one id (MXNet 1.x re-numbered it at each
    unknown word)."""
    enc, vocab = mx.rnn.encode_sentences([["a", "x"], ["y", "a"]], vocab={"a": 1},
                                         start_label=0, unknown_token="UNK")
    assert vocab == {"a": 1, "UNK": 0}
    assert enc == [[1, 0], [0, 1]]
    with pytest.raises(MXNetError, match="unknown token 'x'"):
        mx.rnn.encode_sentences([["x"]], vocab={"a": 1})


def test_bucket_sentence_iter():
    sentences = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 10], [1, 2, 3, 4, 5, 6]]
    with pytest.warns(UserWarning, match="discarded 1"):
        it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, invalid_label=0)
    assert it.buckets == [2, 3] and it.default_bucket_key == 3
    assert it.provide_data[0].shape == (2, 3)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [2, 3]
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (2, b.bucket_key)
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        assert not label[:, -1].any()
    tn = mx.rnn.BucketSentenceIter(sentences[:4], batch_size=2, layout="TN")
    assert {b.data[0].shape for b in tn} == {(2, 2), (3, 2)}
    with pytest.raises(MXNetError, match="layout"):
        mx.rnn.BucketSentenceIter(sentences, batch_size=2, layout="NC")
