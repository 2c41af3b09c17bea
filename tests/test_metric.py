"""mx.metric: every metric's local and global values against MXNet 1.9.1 (tests/fixtures/
make_metric_fixture.py), the registry and ``create``, config round trips, custom metrics,
and the MXNetErrors of bad input. Other oracles are NumPy and closed forms written here."""
import json
import math
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "metric_mxnet.npz")


# ---- against MXNet 1.9.1 ---------------------------------------------------------------------
def _fixture_cases():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_metric_fixture", os.path.join(HERE, "fixtures", "make_metric_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _fixture_cases()


def _replay(case, data):
    """Run one fixture case on mxlite; yield (i, local value, global value) per batch."""
    name, kwargs, _ = MAKER.CASES[case]
    metric = mx.metric.create(name, **kwargs)
    for i in range(MAKER.BATCHES):
        label, pred = data[f"{case}/label{i}"], data[f"{case}/pred{i}"]
        metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
        yield i, metric.get()[1], metric.get_global()[1]
        if i == MAKER.RESET_AFTER:
            metric.reset_local()


@pytest.mark.parametrize("case", sorted(c for c in MAKER.CASES if c != "pearsonr_micro"))
def test_values_match_mxnet(case):
    data = np.load(FIXTURE)
    for i, local, glob in _replay(case, data):
        np.testing.assert_allclose(local, data[f"{case}/local{i}"], rtol=1e-5, atol=1e-7,
                                   err_msg=f"{case} local after batch {i}")
        np.testing.assert_allclose(glob, data[f"{case}/global{i}"], rtol=1e-5, atol=1e-7,
                                   err_msg=f"{case} global after batch {i}")


def test_pearson_micro_local_and_global():
    """Micro Pearson: local = since reset_local, global = since reset (NumPy's corrcoef of
    the concatenation). MXNet's own global was 0 and its local never forgot: so MXNet's local
    value is what mxlite's global is."""
    case = "pearsonr_micro"
    data = np.load(FIXTURE)
    labels = [data[f"{case}/label{i}"].ravel() for i in range(MAKER.BATCHES)]
    preds = [data[f"{case}/pred{i}"].ravel() for i in range(MAKER.BATCHES)]
    start = 0
    for i, local, glob in _replay(case, data):
        np.testing.assert_allclose(glob, data[f"{case}/local{i}"], rtol=1e-6)
        expect_glob = np.corrcoef(np.concatenate(preds[:i + 1]),
                                  np.concatenate(labels[:i + 1]))[0, 1]
        expect_local = np.corrcoef(np.concatenate(preds[start:i + 1]),
                                   np.concatenate(labels[start:i + 1]))[0, 1]
        np.testing.assert_allclose(glob, expect_glob, rtol=1e-9)
        np.testing.assert_allclose(local, expect_local, rtol=1e-9)
        if i == MAKER.RESET_AFTER:
            start = i + 1


# ---- statistics ------------------------------------------------------------------------------
def test_local_and_global_statistics():
    acc = mx.metric.Accuracy()
    acc.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])      # 1 of 2
    acc.reset_local()
    acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[1, 0], [0, 1], [0, 1]])])   # 3 of 3
    assert acc.get() == ("accuracy", 1.0)
    assert acc.get_global() == ("accuracy", 4 / 5)
    assert acc.get_name_value() == [("accuracy", 1.0)]
    assert acc.get_global_name_value() == [("accuracy", 4 / 5)]
    acc.reset()
    assert math.isnan(acc.get()[1]) and math.isnan(acc.get_global()[1])


def test_accuracy_inputs():
    """NumPy arrays, a single array, 2-D labels, class-index predictions and axis=0."""
    pred = np.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6], [0.8, 0.2]], np.float32)
    label = np.array([[0, 1], [1, 0]], np.float32)
    acc = mx.metric.Accuracy()
    acc.update([label], [pred])
    assert acc.get()[1] == np.mean(pred.argmax(1) == label.ravel())
    acc = mx.metric.Accuracy()
    acc.update(label.ravel(), pred)          # single arrays: their rows must agree
    assert acc.get()[1] == np.mean(pred.argmax(1) == label.ravel())
    acc = mx.metric.Accuracy(axis=0)
    acc.update([mx.nd.array(label.ravel())], [mx.nd.array(pred.T)])
    assert acc.get()[1] == np.mean(pred.argmax(1) == label.ravel())
    acc = mx.metric.Accuracy()
    acc.update([mx.nd.array([1, 2, 3])], [mx.nd.array([1, 0, 3])])
    assert acc.get()[1] == 2 / 3


def test_topk_one_dimensional_predictions_are_classes():
    """1-D predictions are class indices (MXNet compared argpartition positions)."""
    top = mx.metric.create("top_k_acc", top_k=2)
    top.update([mx.nd.array([1, 2, 3, 0])], [mx.nd.array([1, 2, 0, 0])])
    assert top.get() == ("top_k_accuracy_2", 0.75)
    assert top.get_global() == ("top_k_accuracy_2", 0.75)


def test_topk_more_than_classes_counts_everything():
    top = mx.metric.TopKAccuracy(top_k=9)
    top.update([mx.nd.array([0, 1, 2])], [mx.nd.array(np.eye(3))])
    assert top.get()[1] == 1.0


def test_perplexity_closed_form():
    pred = np.array([[0.8, 0.2], [0.2, 0.8], [0.5, 0.5], [0.0, 1.0]], np.float32)
    label = np.array([0, 1, -1, 1], np.float32)
    ppl = mx.metric.Perplexity(ignore_label=-1)
    ppl.update([mx.nd.array(label)], [mx.nd.array(pred)])
    expect = math.exp(-(math.log(0.8) * 2 + math.log(1.0)) / 3)
    assert ppl.get()[0] == "perplexity"
    np.testing.assert_allclose(ppl.get()[1], expect, rtol=1e-6)
    # classes on axis 1 of (batch, classes, time)
    seq = np.stack([pred[:2], pred[[0, 3]]], axis=2)            # (2, 2, 2)
    ppl = mx.metric.Perplexity(ignore_label=None, axis=1)
    ppl.update([mx.nd.array([[0, 0], [1, 1]])], [mx.nd.array(seq)])
    expect = math.exp(-(math.log(0.8) * 2 + math.log(0.8) + math.log(1.0)) / 4)
    np.testing.assert_allclose(ppl.get()[1], expect, rtol=1e-6)


def test_pcc_is_mcc_for_two_classes_and_gorodkin_for_three():
    cm = np.array([[23, 13, 3], [7, 19, 11], [2, 5, 17]])
    preds, labels = [], []
    for p in range(3):
        for t in range(3):
            preds += [p] * cm[p, t]
            labels += [t] * cm[p, t]
    pcc = mx.metric.PCC()
    pcc.update([mx.nd.array(labels)], [mx.nd.array(np.eye(3)[preds])])
    n, x, y = cm.sum(), cm.sum(1), cm.sum(0)
    expect = (np.trace(cm) * n - x @ y) / math.sqrt((n * n - x @ x) * (n * n - y @ y))
    np.testing.assert_allclose(pcc.get()[1], expect, rtol=1e-12)

    tp, fp, fn, tn = 5, 3, 2, 7
    label = [1] * tp + [0] * fp + [1] * fn + [0] * tn
    pred = [1] * tp + [1] * fp + [0] * fn + [0] * tn
    mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    for name in ("pcc", "mcc"):
        metric = mx.metric.create(name)
        metric.update([mx.nd.array(label)], [mx.nd.array(np.eye(2)[pred])])
        np.testing.assert_allclose(metric.get()[1], mcc, rtol=1e-12)


def test_regression_single_arrays_and_loss():
    label, pred = mx.nd.array([[1, 2, 3, 4]]) + 0.5, mx.nd.array([[1, 2, 3, 4]])
    for name, expect in (("mae", 0.5), ("mse", 0.25), ("rmse", 0.5)):
        metric = mx.metric.create(name)
        metric.update(label, pred)
        assert metric.get() == (name, expect)
    loss = mx.metric.Loss()
    loss.update(None, mx.nd.array([[1, 2], [3, 6]]))
    assert loss.get() == ("loss", 3.0)


# ---- registry, create, configs ---------------------------------------------------------------
NAMES = {
    "acc": mx.metric.Accuracy, "accuracy": mx.metric.Accuracy,
    "top_k_accuracy": mx.metric.TopKAccuracy, "top_k_acc": mx.metric.TopKAccuracy,
    "TopKAccuracy": mx.metric.TopKAccuracy, "f1": mx.metric.F1, "mcc": mx.metric.MCC,
    "perplexity": mx.metric.Perplexity, "mae": mx.metric.MAE, "mse": mx.metric.MSE,
    "rmse": mx.metric.RMSE, "ce": mx.metric.CrossEntropy,
    "crossentropy": mx.metric.CrossEntropy, "nll_loss": mx.metric.NegativeLogLikelihood,
    "NegativeLogLikelihood": mx.metric.NegativeLogLikelihood,
    "pearsonr": mx.metric.PearsonCorrelation, "pcc": mx.metric.PCC, "loss": mx.metric.Loss,
    "torch": mx.metric.Torch, "caffe": mx.metric.Caffe,
    "composite": mx.metric.CompositeEvalMetric,
}
ARGS = {mx.metric.TopKAccuracy: {"top_k": 3}, mx.metric.Perplexity: {"ignore_label": -1}}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_create_by_name(name):
    klass = NAMES[name]
    assert type(mx.metric.create(name, **ARGS.get(klass, {}))) is klass


@pytest.mark.parametrize("name, kwargs", [
    ("acc", {"axis": 0}), ("top_k_accuracy", {"top_k": 4, "name": "t"}),
    ("f1", {"average": "micro"}), ("mcc", {"average": "micro"}),
    ("perplexity", {"ignore_label": 0, "axis": 1}), ("pearsonr", {"average": "micro"}),
    ("pcc", {}), ("ce", {"eps": 1e-5}), ("nll_loss", {}), ("loss", {}), ("mae", {}),
    ("rmse", {"output_names": ["out"], "label_names": ["lab"]}),
])
def test_config_round_trip(name, kwargs):
    """create(json of get_config()) rebuilds the same metric, settings included (MXNet lost
    average and axis, and renamed TopKAccuracy)."""
    metric = mx.metric.create(name, **kwargs)
    again = mx.metric.create(json.dumps(metric.get_config()))
    assert type(again) is type(metric)
    assert again.get_config() == metric.get_config()
    assert again.name == metric.name
    for attr in ("average", "axis", "top_k", "eps", "ignore_label"):
        assert getattr(again, attr, None) == getattr(metric, attr, None)


def test_composite():
    comp = mx.metric.create(["acc", mx.metric.MSE(), lambda label, pred: 1.0])
    assert [type(m) for m in comp.metrics] == [mx.metric.Accuracy, mx.metric.MSE,
                                               mx.metric.CustomMetric]
    comp.update([mx.nd.array([0, 1])], [mx.nd.array([0, 0])])
    assert comp.get() == (["accuracy", "mse", "custom(<lambda>)"], [0.5, 0.5, 1.0])
    assert comp.get_metric(1) is comp.metrics[1]
    with pytest.raises(MXNetError, match="out of range"):
        comp.get_metric(5)
    config = mx.metric.create(["acc", "f1"]).get_config()
    again = mx.metric.create(json.dumps(config))
    assert again.get_config() == config


def test_update_dict_picks_names():
    comp = mx.metric.CompositeEvalMetric(["acc"], label_names=["b"], output_names=["y"])
    comp.update_dict({"a": mx.nd.array([9, 9]), "b": mx.nd.array([0, 1])},
                     {"x": mx.nd.array([9, 9]), "y": mx.nd.array([0, 1])})
    assert comp.get() == (["accuracy"], [1.0])
    acc = mx.metric.Accuracy(label_names=["missing"])
    with pytest.raises(MXNetError, match="missing"):
        acc.update_dict({"a": mx.nd.array([0])}, {"x": mx.nd.array([0])})


def test_register_and_alias():
    @mx.metric.register
    @mx.metric.alias("always_one_alias")
    class AlwaysOne(mx.metric.EvalMetric):
        def __init__(self, name="one"):
            super().__init__(name)

        def update(self, labels, preds):
            self.sum_metric += 1
            self.num_inst += 1

    assert type(mx.metric.create("alwaysone")) is AlwaysOne
    assert type(mx.metric.create("ALWAYS_ONE_ALIAS")) is AlwaysOne
    with pytest.warns(UserWarning, match="replaces"):
        mx.metric.alias("always_one_alias")(mx.metric.MAE)
    with pytest.raises(MXNetError, match="EvalMetric"):
        mx.metric.register(int)


def test_custom_metrics():
    def summed(label, pred):
        return float(np.abs(label - pred).sum()), label.size

    custom = mx.metric.create(summed)
    custom.update([mx.nd.array([1, 2]), mx.nd.array([0])], [mx.nd.array([2, 2]), mx.nd.array([3])])
    assert custom.get() == ("summed", 4 / 3)
    with pytest.raises(NotImplementedError):
        custom.get_config()

    @mx.metric.np
    def first(label, pred):
        return float(pred.ravel()[0])
    first.update([mx.nd.array([0])], [mx.nd.array([7]), mx.nd.array([5])][:1])
    assert first.get() == ("first", 7.0)
    extra = mx.metric.np(lambda label, pred: 1.0, name="e", allow_extra_outputs=True)
    extra.update([mx.nd.array([0])], [mx.nd.array([0]), mx.nd.array([1, 2])])   # a state
    assert extra.get() == ("e", 1.0)


def test_check_label_shapes():
    a, b = mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))
    assert mx.metric.check_label_shapes(a, b, wrap=True) == ([a], [b])
    with pytest.raises(MXNetError, match=r"\(2, 3\).*\(3, 2\)"):
        mx.metric.check_label_shapes(a, mx.nd.zeros((3, 2)), shape=True)
    with pytest.raises(MXNetError, match="1 .* 2"):
        mx.metric.check_label_shapes([a], [a, b])


# ---- bad input -------------------------------------------------------------------------------
def _update(name, label, pred, **kwargs):
    mx.metric.create(name, **kwargs).update([mx.nd.array(label)], [mx.nd.array(pred)])


@pytest.mark.parametrize("name, kwargs, label, pred, match", [
    ("ce", {}, [0, 3], [[0.5, 0.5], [0.5, 0.5]], "label 3.0 is not a class index"),
    ("nll_loss", {}, [-1, 0], [[0.5, 0.5], [0.5, 0.5]], "label -1.0"),
    ("ce", {}, [0, 1, 1], [[0.5, 0.5], [0.5, 0.5]], "3 labels"),
    ("perplexity", {"ignore_label": -1}, [0, 5], [[0.5, 0.5], [0.5, 0.5]], "label 5.0"),
    ("perplexity", {"ignore_label": None}, [0], [[0.5, 0.5], [0.5, 0.5]], "1 labels"),
    ("perplexity", {"ignore_label": None, "axis": 3}, [0, 0], [[0.5, 0.5]] * 2, "axis 3"),
    ("f1", {}, [0, 1, 2], [[0.5, 0.5]] * 3, "only binary"),
    ("mcc", {}, [0, 1], [0.5, 0.5], "batch, classes"),
    ("acc", {}, [0, 1, 1], [[0.5, 0.5]] * 2, "3 labels but 2"),
    ("acc", {"axis": 2}, [0, 1], [[0.5, 0.5]] * 2, "axis 2"),
    ("top_k_acc", {"top_k": 2}, [0, 1], np.zeros((2, 2, 2)), "1-D or 2-D"),
    ("mse", {}, np.zeros((2, 3)), np.zeros((2, 2)), "do not broadcast"),
    ("pcc", {}, [0, 10 ** 6], [0, 1], "outside"),
    ("pcc", {}, [0, -1], [0, 1], "class index -1"),
])
def test_bad_input_raises(name, kwargs, label, pred, match):
    with pytest.raises(MXNetError, match=match):
        _update(name, label, pred, **kwargs)


@pytest.mark.parametrize("call, match", [
    (lambda: mx.metric.create("nonesuch"), "not a registered metric"),
    (lambda: mx.metric.create("{bad json"), "invalid JSON"),
    (lambda: mx.metric.create(3), "expected a metric name"),
    (lambda: mx.metric.create("acc", bogus=1), "bad arguments for Accuracy"),
    (lambda: mx.metric.create(mx.metric.MAE(), 1), "extra arguments"),
    (lambda: mx.metric.TopKAccuracy(top_k=1), "at least 2"),
    (lambda: mx.metric.F1(average="weighted"), "'macro' or 'micro'"),
    (lambda: mx.metric.PearsonCorrelation(average="x"), "'macro' or 'micro'"),
    (lambda: mx.metric.Accuracy().update([[0]], [[0]]), "NDArray or a NumPy array"),
    (lambda: mx.metric.Accuracy().update(3, 4), "array or a list"),
    (lambda: mx.metric.CustomMetric(lambda l, p: (1, 2, 3)).update(
        [mx.nd.array([0])], [mx.nd.array([0])]), "tuple of 3"),
])
def test_bad_arguments_raise(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


def test_mxnet_error_is_value_error():
    """MXNet raised ValueError for mismatched shapes; MXNetError is one, so old code works."""
    with pytest.raises(ValueError):
        mx.metric.Accuracy().update([mx.nd.array([0])], [])


@pytest.mark.parametrize("name, kwargs", [
    ("f1", {"average": "micro"}), ("mcc", {"average": "micro"}),
    ("pearsonr", {"average": "micro"}), ("pcc", {}), ("acc", {}), ("ce", {}),
])
def test_pooled_metrics_do_not_depend_on_batching(name, kwargs):
    """Micro averages, PCC and per-sample means: the same data in one batch or in several
    gives the same value (to rounding)."""
    rng = np.random.RandomState(7)
    label = rng.randint(0, 2, size=40).astype(np.float32)
    pred = rng.dirichlet([1, 1], size=40).astype(np.float32)
    if name == "pearsonr":
        label = rng.normal(size=40).astype(np.float32)
        pred = (label + rng.normal(size=40)).astype(np.float32)
    whole = mx.metric.create(name, **kwargs)
    whole.update([label], [pred])
    split = mx.metric.create(name, **kwargs)
    for lo, hi in ((0, 3), (3, 17), (17, 40)):
        split.update([label[lo:hi]], [pred[lo:hi]])
    rtol = 1e-6 if name == "ce" else 1e-10     # ce sums each batch in float32
    np.testing.assert_allclose(split.get()[1], whole.get()[1], rtol=rtol)
    np.testing.assert_allclose(split.get_global()[1], whole.get()[1], rtol=rtol)
