"""What export_model refuses, with an MXNetError that names the cause, before writing."""
import os

import pytest

import mxlite as mx


def test_an_operator_without_a_translation_is_named_with_its_node(tmp_path):
    x = mx.sym.var("x")
    y = mx.sym.relu(mx.sym.sgd_mom_update(x, mx.sym.var("g"), mx.sym.var("m"), lr=0.1,
                                          name="upd0"))
    path = tmp_path / "m.onnx"
    with pytest.raises(mx.MXNetError, match=r"no ONNX translation for operator "
                                            r"'sgd_mom_update' \(node 'upd0'\): an optimizer"):
        mx.onnx.export_model(y, {}, in_shapes=[(5, 2), (5, 2), (5, 2)], onnx_file_path=path)
    assert not os.path.exists(path)


def test_close_names_are_suggested():
    from mxlite.onnx.export import _check_translations
    from mxlite.ops.registry import get_op
    from mxlite.symbol.graph import SymNode
    # an operator ONNX cannot express (it stays without a translation)
    node = SymNode(get_op("_cvimread"), "img", get_op("_cvimread").parse_attrs(
        {"filename": "a.png"}))
    with pytest.raises(mx.MXNetError, match="close"):
        _check_translations([node], 28)


def test_an_opset_older_than_a_translation_needs_is_refused(tmp_path):
    y = mx.sym.mean(mx.sym.var("x"), axis=1)
    with pytest.raises(mx.MXNetError, match=r"'mean' .* needs ONNX opset 18, the export "
                                            r"targets 17"):
        mx.onnx.export_model(y, {}, in_shapes=[(2, 3)], opset_version=17,
                             onnx_file_path=tmp_path / "m.onnx")
    with pytest.raises(mx.MXNetError, match="opset_version 12 is outside"):
        mx.onnx.export_model(y, {}, in_shapes=[(2, 3)], opset_version=12,
                             onnx_file_path=tmp_path / "m.onnx")


def test_shapes_that_cannot_be_inferred_name_the_node(tmp_path):
    y = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc9")
    with pytest.raises(mx.MXNetError, match="fc9"):
        mx.onnx.export_model(y, {}, in_shapes=[(2, 3), (3, 4), (3,)],
                             onnx_file_path=tmp_path / "m.onnx")


def test_missing_in_shapes_and_bad_params_are_errors(tmp_path):
    y = mx.sym.relu(mx.sym.var("x"))
    with pytest.raises(mx.MXNetError, match="in_shapes"):
        mx.onnx.export_model(y, {}, onnx_file_path=tmp_path / "m.onnx")
    with pytest.raises(mx.MXNetError, match="params must be"):
        mx.onnx.export_model(y, 3, in_shapes=[(2,)], onnx_file_path=tmp_path / "m.onnx")
    with pytest.raises(mx.MXNetError, match="hybridized"):
        mx.onnx.export_model(mx.gluon.nn.Dense(2), None, in_shapes=[(1, 2)])


def test_attributes_a_translation_cannot_write_are_refused_by_name(tmp_path):
    y = mx.sym.Deconvolution(mx.sym.var("x"), mx.sym.var("w"), kernel=(3, 3), num_filter=2,
                             no_bias=True, target_shape=(8, 8), stride=(2, 2), name="deconv7")
    with pytest.raises(mx.MXNetError, match=r"deconv7.*target_shape"):
        mx.onnx.export_model(y, {}, in_shapes=[(1, 3, 4, 4), (3, 2, 3, 3)],
                             onnx_file_path=tmp_path / "m.onnx")
    z = mx.sym.Dropout(mx.sym.var("x"), p=0.3, mode="always", name="drop3")
    with pytest.raises(mx.MXNetError, match=r"drop3.*mode='always'"):
        mx.onnx.export_model(z, {}, in_shapes=[(2, 3)], onnx_file_path=tmp_path / "m.onnx")


def test_without_the_onnx_package_the_error_says_what_to_install(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_onnx(name, *args, **kwargs):
        if name == "onnx" or name.startswith("onnx."):
            raise ImportError("no onnx")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_onnx)
    with pytest.raises(mx.MXNetError, match=r"pip install 'mxlite\[onnx\]'"):
        mx.onnx.export_model(mx.sym.var("x"), {}, in_shapes=[(1,)])
