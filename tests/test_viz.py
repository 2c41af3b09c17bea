"""mx.viz: print_summary's table and plot_network's graphviz Digraph."""
import re
import sys
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def small_net():
    """data (8, 3, 10, 10) -> conv 4x3x3 -> BatchNorm -> relu -> FC 5 -> softmax."""
    data = mx.sym.Variable("data")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), name="conv")
    bn = mx.sym.BatchNorm(conv, name="bn")
    act = mx.sym.Activation(bn, act_type="relu", name="act")
    fc = mx.sym.FullyConnected(act, num_hidden=5, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="out")


# closed forms of small_net's parameter counts
CONV = 4 * 3 * 3 * 3 + 4
BN = 4 * 4                     # gamma, beta, moving mean and variance: 4 channels each
FC = (4 * 8 * 8) * 5 + 5


def summary_rows(capsys, symbol, shape=None):
    mx.viz.print_summary(symbol, shape)
    text = capsys.readouterr().out
    rows = {}
    for line in text.splitlines():
        match = re.match(r"(\S+)\((\w+)\)\s+(.*)$", line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3))
    total = int(re.search(r"Total params: (\d+)", text).group(1))
    return rows, total


def test_print_summary_rows_shapes_and_counts(capsys):
    rows, total = summary_rows(capsys, small_net(), {"data": (8, 3, 10, 10)})
    assert list(rows) == ["data", "conv", "bn", "act", "fc", "out_label", "out"]
    assert rows["conv"][0] == "Convolution"
    fields = {name: re.split(r"\s{2,}", rest) for name, (_, rest) in rows.items()}
    assert fields["conv"] == ["(8, 4, 8, 8)", str(CONV), "data"]
    assert fields["bn"] == ["(8, 4, 8, 8)", str(BN), "conv"]
    assert fields["fc"] == ["(8, 5)", str(FC), "act"]
    assert total == CONV + BN + FC


def test_print_summary_without_shapes(capsys):
    rows, total = summary_rows(capsys, small_net())
    assert "fc" in rows and total == 0


def test_shared_parameter_counted_once(capsys):
    data, weight = mx.sym.Variable("data"), mx.sym.Variable("shared_w")
    a = mx.sym.FullyConnected(data, weight=weight, num_hidden=6, no_bias=True, name="a")
    b = mx.sym.FullyConnected(data, weight=weight, num_hidden=6, no_bias=True, name="b")
    rows, total = summary_rows(capsys, a + b, {"data": (2, 6)})
    assert total == 36
    assert "shared_w" not in rows       # a parameter by its use, whatever its name


def test_a_variable_read_as_data_is_a_layer(capsys):
    """MXNet hid variables by name (``*_weight``); mxlite by use: this one is data."""
    x = mx.sym.Variable("x_weight")
    rows, _ = summary_rows(capsys, mx.sym.relu(x, name="r"), {"x_weight": (3,)})
    assert rows["x_weight"][0] == "Variable"


def test_print_summary_multi_output(capsys):
    x = mx.sym.Variable("x")
    parts = mx.sym.SliceChannel(x, num_outputs=3, axis=1, name="sl")
    rows, _ = summary_rows(capsys, parts, {"x": (2, 6)})
    assert rows["sl"][1].startswith("3 x (2, 2)")


@pytest.mark.parametrize("kwargs, words", [
    ({"symbol": "net"}, ["print_summary", "Symbol", "str"]),
    ({"shape": [(1, 2)]}, ["shape", "dict", "list"]),
    ({"shape": {"data": (2, 3, 1, 1)}}, ["print_summary", "shape"]),
    ({"line_length": 5}, ["line_length", "5"]),
    ({"line_length": 10 ** 12}, ["line_length", str(10 ** 12)]),
    ({"positions": (.5, .6, .7, 5000)}, ["positions", "5000"]),
    ({"positions": "abcd"}, ["positions", "abcd"]),
    ({"positions": (.5, .2, .7, 1.)}, ["positions"]),
])
def test_print_summary_bad_input(kwargs, words):
    args = {"symbol": small_net(), **kwargs}
    with pytest.raises(MXNetError) as info:
        mx.viz.print_summary(**args)
    for word in words:
        assert word in str(info.value)


def edges(source):
    return set(re.findall(r"(n\d+) -> (n\d+)", source))


def node_ids(source):
    return {m.group(1): m.group(2)
            for m in re.finditer(r"^\s*(n\d+) \[label=\"?([^\s\"]+)", source, re.M)}


def test_plot_network_names_every_node_and_edge():
    pytest.importorskip("graphviz")
    net = small_net()
    dot = mx.viz.plot_network(net, title="small", shape={"data": (8, 3, 10, 10)},
                              dtype={"data": np.float32})
    names = node_ids(dot.source)
    by_name = {name: nid for nid, name in names.items()}
    assert set(by_name) == {"data", "conv", "bn", "act", "fc", "out_label", "out"}
    expected = {("data", "conv"), ("conv", "bn"), ("bn", "act"), ("act", "fc"),
                ("fc", "out"), ("out_label", "out")}
    assert edges(dot.source) == {(by_name[a], by_name[b]) for a, b in expected}
    assert "8x4x8x8" in dot.source and "float32" in dot.source
    assert dot.name == "small" and dot.format == "pdf"


def test_plot_network_shows_weights_when_asked():
    pytest.importorskip("graphviz")
    dot = mx.viz.plot_network(small_net(), hide_weights=False, node_attrs={"fixedsize": "false"})
    names = set(node_ids(dot.source).values())
    assert {"conv_weight", "conv_bias", "bn_gamma", "bn_moving_var", "fc_weight"} <= names
    assert "fixedsize=false" in dot.source


def test_plot_network_repeated_names_stay_apart():
    pytest.importorskip("graphviz")
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc")
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dot = mx.viz.plot_network(net)
    assert len(caught) == 1 and "fc" in str(caught[0].message)
    fcs = [nid for nid, name in node_ids(dot.source).items() if name == "fc"]
    assert len(fcs) == 2 and tuple(fcs) in edges(dot.source)


def test_plot_network_without_graphviz(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)      # import graphviz fails
    with pytest.raises(MXNetError, match=r"mxlite\[viz\]"):
        mx.viz.plot_network(small_net())


def test_operands_and_labels_are_data_inputs(capsys):
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    out = mx.sym.SoftmaxOutput(a + b, name="sm")
    rows, total = summary_rows(capsys, out, {"a": (2, 3), "b": (2, 3)})
    assert {"a", "b", "sm_label"} <= set(rows) and total == 0
