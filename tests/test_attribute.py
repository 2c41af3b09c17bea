"""Symbol attributes (``mx.attribute.AttrScope``, ``attr=``, hidden keys): attribute keywords
of operator calls (``lr_mult=``, ``__layout__=``) are node attributes, as in MXNet 1.9.1."""
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _conv(**kwargs):
    data = mx.sym.var("data")
    return mx.sym.Convolution(data=data, name="conv", kernel=(1, 1), num_filter=1, **kwargs)


def test_hidden_key_keyword_is_a_node_attribute_listed_both_ways():
    op = _conv(lr_mult=1)
    assert op.attr("__lr_mult__") == "1" and op.attr("lr_mult") == "1"
    attrs = op.attr_dict()
    assert attrs["conv"]["__lr_mult__"] == "1" and attrs["conv"]["lr_mult"] == "1"
    # like attr={'__lr_mult__': ...}, it reaches the variables the call creates
    assert attrs["conv_weight"]["__lr_mult__"] == "1"
    assert attrs["conv_bias"]["__lr_mult__"] == "1"


def test_dunder_keyword_is_a_node_attribute():
    op = _conv(__layout__="NCHW", __mood__="calm")
    assert op.attr("__layout__") == "NCHW" and op.attr("__mood__") == "calm"
    assert op.list_attr()["__layout__"] == "NCHW"


def test_attr_dict_wins_over_a_keyword_of_the_same_name():
    op = _conv(wd_mult=2, attr={"wd_mult": "3", "__mood__": "so so"})
    assert op.attr("__wd_mult__") == "3" and op.attr("__mood__") == "so so"


def test_keyword_attributes_survive_json():
    op = _conv(lr_mult=0.5, __layout__="NCHW")
    back = mx.sym.load_json(op.tojson())
    assert back.attr("__lr_mult__") == "0.5" and back.attr("__layout__") == "NCHW"


def test_variable_attribute_through_the_operator_is_refused():
    with pytest.raises(MXNetError, match=r"Convolution: weight_lr_mult=2: .*Variable"):
        _conv(weight_lr_mult=2)


def test_ndarray_calls_take_no_attribute_keywords():
    # an executed call has no node to carry attributes: an op with parameters refuses one
    # (MXNet's parser did too); an op without parameters ignores it with a warning (MXNet
    # had no parser for them and ignored it silently)
    x = mx.nd.array([-1.0, 2.0])
    with pytest.raises(MXNetError, match="Activation: unknown parameter 'lr_mult'"):
        mx.nd.Activation(x, act_type="relu", lr_mult=2)
    with pytest.warns(UserWarning, match="relu takes no parameters: keyword 'lr_mult' is "
                                         "ignored"):
        y = mx.nd.relu(x, lr_mult=2)
    assert y.asnumpy().tolist() == [0.0, 2.0]


def test_attr_scope_applies_to_operator_and_variable():
    with mx.attribute.AttrScope(group="4", __data__="great"):
        v = mx.sym.var("v")
        act = mx.sym.Activation(v, act_type="relu")
    assert v.attr("group") == "4" and act.attr("__data__") == "great"
    assert mx.sym.var("w").attr("group") is None
