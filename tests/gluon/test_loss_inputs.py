"""gluon.loss on the inputs users get wrong: every loss names itself, the input and the
shapes (never an internal operator), imperative and hybridized; CosineEmbeddingLoss on 1-D
vectors and labels other than +-1; per-sample weights of the wrong shape."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import loss as gloss

nd = mx.nd

# loss: (constructor kwargs, good inputs, the name of the input made wrong, its wrong shape)
GOOD = {
    "L2Loss": ({}, [(4, 3), (4, 3)]),
    "L1Loss": ({}, [(4, 3), (12,)]),
    "SigmoidBinaryCrossEntropyLoss": ({}, [(4, 3), (4, 3)]),
    "SoftmaxCrossEntropyLoss": ({}, [(4, 3), (4,)]),
    "KLDivLoss": ({}, [(4, 3), (4, 3)]),
    "HuberLoss": ({}, [(4, 3), (4, 3)]),
    "HingeLoss": ({}, [(4, 3), (4, 3)]),
    "SquaredHingeLoss": ({}, [(4, 3), (4, 3)]),
    "LogisticLoss": ({}, [(4, 3), (4, 3)]),
    "PoissonNLLLoss": ({}, [(4, 3), (4, 3)]),
    "TripletLoss": ({}, [(4, 3), (4, 3), (4, 3)]),
    "CosineEmbeddingLoss": ({}, [(4, 3), (4, 3), (4,)]),
}
SECOND = {"PoissonNLLLoss": "target", "TripletLoss": "positive",
          "CosineEmbeddingLoss": "input2"}


def _arrays(shapes):
    # labels of 0 are valid for every loss (class 0, a probability, a count, a sign of 0)
    return [nd.ones(shapes[0])] + [nd.zeros(s) for s in shapes[1:]]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_inputs_give_one_value_per_sample(name, hybridize):
    kwargs, shapes = GOOD[name]
    loss = getattr(gloss, name)(**kwargs)
    loss.hybridize(hybridize)
    out = loss(*_arrays(shapes))
    assert out.shape[0] == (1 if name == "PoissonNLLLoss" else 4)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_a_second_input_of_the_wrong_size_is_named_with_the_shapes(name, hybridize):
    kwargs, shapes = GOOD[name]
    loss = getattr(gloss, name)(**kwargs)
    loss.hybridize(hybridize)
    arrays = _arrays(shapes)
    arrays[1] = nd.zeros((5,))
    second = SECOND.get(name, "label")
    with pytest.raises(MXNetError) as err:
        loss(*arrays)
    message = str(err.value)
    assert message.startswith(name + ": ") and second in message and "(5,)" in message
    assert str(shapes[0]) in message
    for internal in ("pick", "reshape_like", "where", "broadcast_", "elemwise_"):
        assert internal not in message


def test_softmax_ce_label_length_names_the_loss_not_pick():
    loss = gloss.SoftmaxCrossEntropyLoss()
    for hybridize in (False, True):
        loss.hybridize(hybridize)
        with pytest.raises(MXNetError, match=r"^SoftmaxCrossEntropyLoss: label has shape "
                                             r"\(3,\); for pred of shape \(4, 10\) and "
                                             r"axis=-1 .* must be \(4,\) \(or \(4, 1\)\)"):
            loss(nd.zeros((4, 10)), nd.array([1, 2, 3]))
    axis1 = gloss.SoftmaxCrossEntropyLoss(axis=1)
    with pytest.raises(MXNetError, match=r"must be \(2, 5\) \(or \(2, 1, 5\)\)"):
        axis1(nd.zeros((2, 3, 5)), nd.zeros((2, 3)))
    assert axis1(nd.zeros((2, 3, 5)), nd.zeros((2, 1, 5))).shape == (2,)


def test_per_sample_weights_must_not_broadcast_the_loss_larger(rng):
    # (4,) against the loss's (4, 1) would broadcast to (4, 4) and average every weight
    # into every sample (MXNet's silent result); (4, 1) is one weight per sample
    pred = rng.normal(size=(4, 3))
    cls = np.array([0, 2, 1, 2])
    w = np.array([1.0, 2.0, 3.0, 4.0])
    loss = gloss.SoftmaxCrossEntropyLoss()
    p, c = nd.array(pred, dtype="float64"), nd.array(cls, dtype="float64")
    with pytest.raises(MXNetError, match=r"sample_weight has shape \(4,\), which does not "
                                         r"broadcast to the loss's shape \(4, 1\) \(for one "
                                         r"weight per sample give shape \(4, 1\)\)"):
        loss(p, c, nd.array(w, dtype="float64"))
    logp = pred - np.log(np.exp(pred).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss(p, c, nd.array(w[:, None], dtype="float64")).asnumpy(),
                               -w * logp[np.arange(4), cls], rtol=1e-12)
    with pytest.raises(MXNetError, match=r"L2Loss: sample_weight has shape \(3, 1\)"):
        gloss.L2Loss()(p, p, nd.ones((3, 1), dtype="float64"))
    with pytest.raises(MXNetError, match=r"pos_weight has shape \(1, 4\)"):
        gloss.SigmoidBCELoss()(p, p, None, nd.ones((1, 4), dtype="float64"))
    with pytest.raises(MXNetError, match=r"TripletLoss: sample_weight has shape \(4, 3\)"):
        gloss.TripletLoss()(p, p, p, nd.ones((4, 3), dtype="float64"))


def test_inputs_that_are_not_ndarrays_or_too_many_are_named():
    pred = nd.zeros((2, 3))
    with pytest.raises(MXNetError, match="^L1Loss: label must be an NDArray, got ndarray"):
        gloss.L1Loss()(pred, np.zeros((2, 3)))
    with pytest.raises(MXNetError, match=r"^HuberLoss: takes at most 3 inputs \(pred, label, "
                                         r"sample_weight\), got 4"):
        gloss.HuberLoss()(pred, pred, None, pred)
    with pytest.raises(MXNetError, match="^HingeLoss: label is missing"):
        gloss.HingeLoss()(pred)


def test_axes_out_of_range_are_named():
    pred = nd.zeros((2, 3))
    with pytest.raises(MXNetError, match=r"^L2Loss: batch_axis=2 is out of range for pred "
                                         r"of shape \(2, 3\)"):
        gloss.L2Loss(batch_axis=2)(pred, pred)
    with pytest.raises(MXNetError, match=r"^SoftmaxCrossEntropyLoss: axis=-3 is out of range"):
        gloss.SoftmaxCrossEntropyLoss(axis=-3)(pred, nd.zeros((2,)))
    with pytest.raises(MXNetError, match=r"^KLDivLoss: axis=5"):
        gloss.KLDivLoss(from_logits=False, axis=5)(pred, pred)


def _cosine(a, b):
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


@pytest.mark.parametrize("hybridize", [False, True])
def test_cosine_embedding_of_1d_vectors_is_one_pair(hybridize):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 1.0])
    cos = _cosine(a, b)
    loss = gloss.CosineEmbeddingLoss(margin=0.1)
    loss.hybridize(hybridize)
    want = {1.0: 1 - cos, -1.0: max(0.0, cos - 0.1), 0.0: 0.0}       # MXNet: 0 off +-1
    for label, value in want.items():
        out = loss(nd.array(a, dtype="float64"), nd.array(b, dtype="float64"),
                   nd.array([label], dtype="float64"))
        assert out.shape == (1, 1)
        np.testing.assert_allclose(out.asnumpy(), [[value]], rtol=1e-12)


def test_cosine_embedding_pairs_are_rows_of_the_last_axis(rng):
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    label = np.array([1, -1, 1, -1, 0, 1], dtype="float64")
    out = gloss.CosineEmbeddingLoss()(*(nd.array(x, dtype="float64") for x in (a, b, label)))
    cos = np.array([_cosine(x, y) for x, y in zip(a.reshape(6, 4), b.reshape(6, 4))])
    want = np.where(label == 1, 1 - cos, np.where(label == -1, np.maximum(cos, 0), 0))
    np.testing.assert_allclose(out.asnumpy(), want[:, None], rtol=1e-12)
    with pytest.raises(MXNetError, match=r"^CosineEmbeddingLoss: label has shape \(2,\) but "
                                         r"input2 of shape \(3,\) holds 1 pair"):
        gloss.CosineEmbeddingLoss()(nd.ones((3,)), nd.ones((3,)), nd.ones((2,)))


def test_a_users_loss_subclass_is_not_held_to_the_builtin_contracts():
    # a custom loss of class scores against indices: label has fewer elements than pred
    class Picked(gloss.Loss):
        def __init__(self, **kwargs):
            super().__init__(None, 0, **kwargs)

        def hybrid_forward(self, F, scores, index, extra):
            return F.pick(scores, index, axis=-1) + extra

    out = Picked()(nd.array([[1.0, 2.0], [3.0, 4.0]]), nd.array([1, 0]), nd.ones((2,)))
    assert out.asnumpy().tolist() == [3.0, 4.0]
