"""The model benchmarks compare like with like: every case builds and steps in mxlite, both
mxlite variants and torch compute the same losses from the same weights and batch (step 1
checks the forward pass, step 2 the gradients and the SGD update before it), and the table
and chart code summarise what it is given. No timing is asserted.

The torch comparisons skip where torch is not importable; run them with torch's
interpreter: ``PYTHONPATH=. /tmp/torchvenv/bin/python -m pytest tests/benchmarks``.
"""
import os
import sys

import numpy as np
import pytest

import mxlite as mx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
from models import CASES, data, gluon_nets, runner, table  # noqa: E402


def _setup(case):
    """(names, weights, batch) of the case's small size."""
    dims = CASES[case].small
    inputs = data.batch(case, dims)
    shapes = gluon_nets.parameter_shapes(mx, case, dims, inputs)
    return [n for n, _ in shapes], data.initial_weights(shapes), inputs


def _two_steps(step):
    return [np.asarray(step(), dtype=np.float64) for _ in range(2)]


def _assert_same(got, want, case):
    """Losses within float32 rounding of a few hundred operations; outputs relative to
    their largest magnitude (ResNet-50's logits are large and of both signs)."""
    for g, w in zip(got, want):
        if CASES[case].train:
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
        else:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-4 * np.max(np.abs(w)))


@pytest.fixture(scope="module")
def mxlite_results():
    """{case: (names, weights, inputs, {"imperative": steps, "hybrid": steps})}."""
    out = {}
    for case in CASES:
        names, weights, inputs = _setup(case)
        dims = CASES[case].small
        runs = {variant: _two_steps(gluon_nets.make_step(mx, case, dims, weights, inputs,
                                                         hybrid=variant == "hybrid"))
                for variant in ("imperative", "hybrid")}
        out[case] = (names, weights, inputs, runs)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_case_steps_in_mxlite(mxlite_results, case):
    """Both variants run; a training step lowers nothing to NaN and changes the loss (the
    update happened); hybridized and imperative agree."""
    runs = mxlite_results[case][3]
    for steps in runs.values():
        assert all(np.all(np.isfinite(s)) for s in steps)
        if CASES[case].train:
            assert steps[0] != steps[1]
        else:
            np.testing.assert_array_equal(steps[0], steps[1])
    _assert_same(runs["hybrid"], runs["imperative"], case)


@pytest.mark.parametrize("case", list(CASES))
def test_case_matches_torch(mxlite_results, case):
    pytest.importorskip("torch")
    from models import torch_nets
    names, weights, inputs, runs = mxlite_results[case]
    torch_steps = _two_steps(torch_nets.make_step(case, CASES[case].small, names, weights,
                                                  inputs))
    _assert_same(runs["hybrid"], torch_steps, case)


def test_classifier_loss_is_numpy_cross_entropy():
    """Step 1's loss of the MLP is the mean softmax cross-entropy of the network computed
    in NumPy from the same weights: the benchmark trains the model it says it does."""
    names, weights, inputs = _setup("mlp")
    loss = gluon_nets.make_step(mx, "mlp", CASES["mlp"].small, weights, inputs, False)()
    h = inputs["x"].astype(np.float64)
    for i in range(0, 6, 2):
        h = h @ weights[i].T.astype(np.float64) + weights[i + 1]
        h = np.maximum(h, 0) if i < 4 else h
    logp = h - h.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    want = -logp[np.arange(len(h)), inputs["y"]].mean()
    np.testing.assert_allclose(loss, want, rtol=1e-5)


def _fake_results():
    """Two systems' times in 3 rounds: mxlite exactly twice torch's in every round."""
    torch_t = [[0.010, 0.012], [0.011, 0.013], [0.020, 0.022]]
    return {"torch": {"times": torch_t, "first": 2.0, "base_kb": 1000, "peak_kb": 3048},
            "mxlite-hybrid": {"times": [[2 * t for t in r] for r in torch_t], "first": 2.0002,
                              "base_kb": 1000, "peak_kb": 2024},
            "mxnet": {"error": "not installed"}}


def test_summarise_medians_ratios_memory():
    s = runner.summarise(_fake_results())
    times = [0.010, 0.012, 0.011, 0.013, 0.020, 0.022]
    assert s["systems"]["torch"]["median"] == pytest.approx(np.median(times))
    assert s["systems"]["torch"]["q1"] == pytest.approx(np.percentile(times, 25))
    assert s["systems"]["torch"]["peak_mb"] == pytest.approx(2.0)
    assert s["systems"]["mxlite-hybrid"]["peak_mb"] == pytest.approx(1.0)
    assert s["ratios"]["hybrid/torch"] == pytest.approx({"median": 2, "q1": 2, "q3": 2})
    assert set(s["ratios"]) == {"hybrid/torch"}          # the other pairs have no times
    assert s["systems"]["mxnet"] == {"error": "not installed"}
    assert s["disagreement"] == pytest.approx(1e-4)


def test_table_text_markdown_and_plot(tmp_path):
    summaries = {"mlp": runner.summarise(_fake_results())}
    text = table.format_table(summaries)
    assert "2.00 (2.00-2.00)" in text and "n/a: mlp, mxnet: not installed" in text
    md = table.markdown(summaries, header="snapshot")
    assert md.startswith("snapshot") and "| mlp |" in md and CASES["mlp"].title in md
    pytest.importorskip("matplotlib")
    paths = table.write_outputs(summaries, str(tmp_path / "out"), "snapshot", with_plot=True)
    with open(paths[2], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_so(tmp_path, monkeypatch):
    """--plot where matplotlib is missing: the table and numbers are still written, then a
    clear error names the package."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    summaries = {"mlp": runner.summarise(_fake_results())}
    with pytest.raises(table.MissingMatplotlib, match="pip install matplotlib"):
        table.write_outputs(summaries, str(tmp_path / "out"), with_plot=True)
    assert (tmp_path / "out.md").exists() and (tmp_path / "out.json").exists()


def test_runner_times_workers_and_reports_a_failed_system(tmp_path):
    """End to end through the worker processes (MLP, --quick): the mxlite worker answers
    every round with positive step times and its memory; a system whose interpreter fails
    is reported with why instead of stopping the case."""
    interpreters = {"torch": "/bin/false", "mxlite-imperative": sys.executable}
    env = runner._environment(1)
    paths = runner.export(["mlp"], str(tmp_path), env)
    results = runner.run_case("mlp", paths["mlp"], interpreters, quick=True, log=lambda m: None)
    mx_result = results["mxlite-imperative"]
    assert len(mx_result["times"]) == CASES["mlp"].quick_rounds
    assert all(len(r) == 1 and r[0] > 0 for r in mx_result["times"])
    assert mx_result["peak_kb"] >= mx_result["base_kb"] > 0
    assert "error" in results["torch"] and results["mxnet"] == {"error": "not installed"}
