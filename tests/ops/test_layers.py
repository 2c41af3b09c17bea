"""The layer operators of mxlite/ops/layers.py against MXNet 1.9.1 (the cases of
tests/fixtures/layers_mxnet.npz, made by make_layers_fixture.py: forward outputs and
gradients for a fixed head gradient) and against NumPy references where MXNet 1.9.1 had no
answer (1-D/3-D im2col, float64, corners of padding), plus their errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "layers_mxnet.npz"))
CASES = sorted({k.split("/")[0] for k in FIXTURE.files})
sys_path = os.path.join(HERE, "..", "fixtures")


def _case(case):
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_layers_fixture", os.path.join(sys_path, "make_layers_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES[case]


# cases whose MXNet gradient is not the derivative of MXNet's own forward, with mxlite's
# (the true derivative) checked instead
NOT_MXNET_GRAD = {
    # MXNet 1.9.1's instance-mode backward sums over axis 1 while its forward normalises the
    # last axis: on 3-D data the two differ
    "sa_instance3": lambda y, g: y * (g - (g * y).sum(axis=-1, keepdims=True)),
}


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    op, specs, kwargs = _case(case)
    ins = [FIXTURE[f"{case}/in{i}"] for i in range(len(specs))]
    arrays = [mx.nd.array(a, dtype="float32") for a in ins]
    diff = [k in ("x", "pos", "unit") for _, k in specs]
    for a, d in zip(arrays, diff):
        if d:
            a.attach_grad()
    with mx.autograd.record():
        res = getattr(mx.nd, op)(*arrays, **kwargs)
    res = res if isinstance(res, (list, tuple)) else [res]
    head = mx.nd.array(FIXTURE[f"{case}/head"])
    mx.autograd.backward([res[0]], [head])
    for j, r in enumerate(res):
        np.testing.assert_allclose(r.asnumpy(), FIXTURE[f"{case}/out{j}"], rtol=2e-5,
                                   atol=2e-6, err_msg=f"{case} output {j}")
    for i, (a, d, (_, k)) in enumerate(zip(arrays, diff, specs)):
        if d and case in NOT_MXNET_GRAD:
            want = NOT_MXNET_GRAD[case](FIXTURE[f"{case}/out0"].astype(np.float64),
                                        FIXTURE[f"{case}/head"].astype(np.float64))
            np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=2e-4, atol=2e-5)
        elif d:
            np.testing.assert_allclose(a.grad.asnumpy(), FIXTURE[f"{case}/grad{i}"],
                                       rtol=2e-4, atol=2e-5, err_msg=f"{case} grad {i}")
        if k.startswith("aux:"):
            np.testing.assert_allclose(a.asnumpy(), FIXTURE[f"{case}/aux{i}"], rtol=1e-6,
                                       err_msg=f"{case} aux {i}")


# ---- NumPy references ---------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("pw", [(0, 0, 0, 0, 2, 1, 0, 3), (0, 0, 0, 0, 1, 2, 1, 1, 2, 0)])
def test_pad_matches_numpy(rng, mode, pw):
    shape = (2, 3, 3, 4) if len(pw) == 8 else (1, 2, 3, 3, 3)
    x = rng.standard_normal(shape)
    got = mx.nd.Pad(mx.nd.array(x, dtype="float64"), mode=mode, pad_width=pw,
                    constant_value=1.5).asnumpy()
    widths = [(pw[2 * i], pw[2 * i + 1]) for i in range(len(shape))]
    kw = {"constant_values": 1.5} if mode == "constant" else {}
    np.testing.assert_array_equal(got, np.pad(x, widths, mode=mode, **kw))


def test_pad_float16_and_alias():
    x = mx.nd.ones((1, 1, 2, 2), dtype="float16")
    y = mx.nd.pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 1, 1), constant_value=2)
    assert y.dtype == np.float16 and y.shape == (1, 1, 4, 4)
    assert y.asnumpy()[0, 0, 0, 0] == 2 and y.asnumpy()[0, 0, 1, 1] == 1


@pytest.mark.parametrize("kw, message", [
    (dict(mode="constant", pad_width=(1, 0, 0, 0, 1, 1, 1, 1)), "first two axes"),
    (dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 1)), "2 \\* 4"),
    (dict(mode="reflect", pad_width=(0, 0, 0, 0, 3, 0, 0, 0)), "smaller than the axis"),
    (dict(mode="constant", pad_width=(0, 0, 0, 0, -1, 0, 0, 0)), "non-negative"),
    (dict(mode="wrap", pad_width=(0, 0, 0, 0, 1, 0, 0, 0)), "mode"),
])
def test_pad_errors(kw, message):
    with pytest.raises(MXNetError, match=message):
        mx.nd.Pad(mx.nd.ones((1, 1, 3, 3)), **kw)
    with pytest.raises(MXNetError, match="4-D or 5-D"):
        mx.nd.Pad(mx.nd.ones((3, 3)), mode="constant", pad_width=(0, 0, 1, 1))
    with pytest.raises(MXNetError, match="float"):
        mx.nd.Pad(mx.nd.ones((1, 1, 3, 3), dtype="int32"), mode="edge",
                  pad_width=(0, 0, 0, 0, 1, 1, 1, 1))


def _im2col_ref(x, kernel, stride, dilate, pad):
    n, c = x.shape[:2]
    nd = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [(x.shape[2 + i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    cols = np.zeros((n, c * int(np.prod(kernel)), int(np.prod(out))))
    for ci in range(c):
        for ki, k in enumerate(np.ndindex(*kernel)):
            for li, o in enumerate(np.ndindex(*out)):
                idx = tuple(o[i] * stride[i] + k[i] * dilate[i] for i in range(nd))
                cols[:, ci * int(np.prod(kernel)) + ki, li] = xp[(slice(None), ci) + idx]
    return cols


@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 7), dict(kernel=(3,), stride=(2,), pad=(1,))),
    ((1, 2, 5, 6), dict(kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 0))),
    ((1, 2, 3, 4, 4), dict(kernel=(2, 2, 2), stride=(1, 2, 1), pad=(0, 1, 1))),
])
def test_im2col_col2im_match_numpy_and_are_adjoint(rng, shape, kw):
    nd = len(kw["kernel"])
    full = {k: kw.get(k, (1,) * nd if k != "pad" else (0,) * nd)
            for k in ("kernel", "stride", "dilate", "pad")}
    x = rng.standard_normal(shape)
    cols = mx.nd.im2col(mx.nd.array(x, dtype="float64"), **kw).asnumpy()
    np.testing.assert_array_equal(cols, _im2col_ref(x, **full))
    c = rng.standard_normal(cols.shape)
    img = mx.nd.col2im(mx.nd.array(c, dtype="float64"), output_size=shape[2:], **kw).asnumpy()
    # <im2col(x), c> == <x, col2im(c)>
    assert np.isclose((cols * c).sum(), (x * img).sum(), rtol=1e-12)


def test_col2im_shape_errors():
    with pytest.raises(MXNetError, match="number of blocks"):
        mx.nd.col2im(mx.nd.ones((1, 4, 5)), output_size=(3, 3), kernel=(2, 2))
    with pytest.raises(MXNetError, match="multiple of prod"):
        mx.nd.col2im(mx.nd.ones((1, 5, 4)), output_size=(3, 3), kernel=(2, 2))
    with pytest.raises(MXNetError, match="larger than the padded"):
        mx.nd.im2col(mx.nd.ones((1, 1, 2, 2)), kernel=(3, 3))


def test_lrn_float64_and_errors(rng):
    x = rng.standard_normal((2, 6, 3, 3))
    y = mx.nd.LRN(mx.nd.array(x, dtype="float64"), nsize=5, alpha=0.2, beta=0.7,
                  knorm=1.3).asnumpy()
    sq = x ** 2
    s = np.stack([sq[:, max(0, c - 2):c + 3].sum(axis=1) for c in range(6)], axis=1)
    np.testing.assert_allclose(y, x / (1.3 + 0.2 / 5 * s) ** 0.7, rtol=1e-13)
    with pytest.raises(MXNetError, match="4-D"):
        mx.nd.LRN(mx.nd.ones((2, 3)), nsize=3)
    with pytest.raises(MXNetError, match="float32 or float64"):
        mx.nd.LRN(mx.nd.ones((1, 2, 2, 2), dtype="int32"), nsize=3)


def test_groupnorm_errors():
    with pytest.raises(MXNetError, match="divide"):
        mx.nd.GroupNorm(mx.nd.ones((2, 3, 2)), mx.nd.ones((2,)), mx.nd.ones((2,)), num_groups=2)
    with pytest.raises(MXNetError, match="one value per group"):
        mx.nd.GroupNorm(mx.nd.ones((2, 4, 2)), mx.nd.ones((4,)), mx.nd.ones((4,)),
                        num_groups=2)


def test_softmax_activation_errors_and_depth_to_space_errors():
    with pytest.raises(MXNetError, match="at least 3"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="channel")
    with pytest.raises(MXNetError, match="multiple of block_size"):
        mx.nd.depth_to_space(mx.nd.ones((1, 3, 2, 2)), block_size=2)
    with pytest.raises(MXNetError, match="multiples of block_size"):
        mx.nd.space_to_depth(mx.nd.ones((1, 3, 3, 2)), block_size=2)
    with pytest.raises(MXNetError, match="4-D"):
        mx.nd.depth_to_space(mx.nd.ones((4, 2, 2)), block_size=2)


def test_depth_to_space_int_round_trip():
    x = mx.nd.arange(48, dtype="int32").reshape((2, 8, 1, 3))
    y = mx.nd.depth_to_space(x, block_size=2)
    assert y.dtype == np.int32 and y.shape == (2, 2, 2, 6)
    np.testing.assert_array_equal(mx.nd.space_to_depth(y, block_size=2).asnumpy(), x.asnumpy())


def test_svm_output_labels_out_of_range_and_nd_positions():
    x = mx.nd.array([[0.5, -0.3, 0.2], [1.5, 0.1, -2.0]], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SVMOutput(x, mx.nd.array([0.7, 5]))
    y.backward(mx.nd.ones_like(y) * 3)          # the head gradient is ignored
    np.testing.assert_allclose(x.grad.asnumpy(), [[-1.0, 1.4, 2.4], [5.0, 2.2, 0.0]])
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    # (n, k, d): a class per position, the same as the 2-D rule on each position
    d = np.random.default_rng(3).standard_normal((2, 3, 4))
    lab = np.array([[0, 2, 1, 1], [2, 0, 0, 1]])
    a = mx.nd.array(d, dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SVMOutput(a, mx.nd.array(lab), use_linear=True)
    out.backward()
    b = mx.nd.array(d.transpose(0, 2, 1).reshape(8, 3), dtype="float64")
    b.attach_grad()
    with mx.autograd.record():
        o2 = mx.nd.SVMOutput(b, mx.nd.array(lab.reshape(8)), use_linear=True)
    o2.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(),
                                  b.grad.asnumpy().reshape(2, 4, 3).transpose(0, 2, 1))
    with pytest.raises(MXNetError, match="label has shape"):
        mx.nd.SVMOutput(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))


def test_kl_sparse_reg_inference_leaves_the_average():
    x = mx.nd.array([[0.2, 0.6], [0.4, 0.2]], dtype="float64")
    avg = mx.nd.array([0.5, 0.25], dtype="float64")
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        y = mx.nd.IdentityAttachKLSparseReg(x, avg, penalty=0.5, sparseness_target=0.2)
    y.backward()
    np.testing.assert_array_equal(avg.asnumpy(), [0.5, 0.25])
    term = 0.5 * (-0.2 / np.array([0.5, 0.25]) + 0.8 / (1 - np.array([0.5, 0.25])))
    np.testing.assert_allclose(x.grad.asnumpy(), 1 + np.tile(term, (2, 1)))
    with pytest.raises(MXNetError, match="2-D"):
        mx.nd.IdentityAttachKLSparseReg(mx.nd.ones((2, 2, 2)), mx.nd.ones((2,)))


def test_symbol_lists_kl_moving_avg_as_auxiliary():
    s = mx.sym.IdentityAttachKLSparseReg(mx.sym.var("x"), name="kl")
    assert s.list_arguments() == ["x"]
    assert s.list_auxiliary_states() == ["kl_moving_avg"]
    assert s.list_outputs() == ["kl_output"]
    _, out, aux = s.infer_shape(x=(4, 3))
    assert out == [(4, 3)] and aux == [(3,)]
    g = mx.sym.GroupNorm(mx.sym.var("x"), num_groups=2, name="gn")
    args, _, _ = g.infer_shape(x=(2, 4, 3))
    assert args == [(2, 4, 3), (2,), (2,)]
