"""The benchmark models in torch eager, each module registered in the order of its Gluon
twin's parameters (``gluon_nets``) so one weight list loads into both; no torchvision
(the ResNets are written out)."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from . import LR, MOMENTUM

__all__ = ["build", "make_step"]


def _conv3x3(cin, cout, stride):
    return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)


class BasicBlockV1(nn.Module):
    """Gluon's BasicBlockV1: conv3x3-BN-ReLU-conv3x3-BN plus the shortcut (a 1x1
    convolution and BN where the shape changes), then ReLU."""

    def __init__(self, cin, channels, stride, downsample):
        super().__init__()
        self.body = nn.Sequential(_conv3x3(cin, channels, stride), nn.BatchNorm2d(channels),
                                  nn.ReLU(), _conv3x3(channels, channels, 1),
                                  nn.BatchNorm2d(channels))
        self.downsample = (nn.Sequential(nn.Conv2d(cin, channels, 1, stride, bias=False),
                                         nn.BatchNorm2d(channels)) if downsample else None)

    def forward(self, x):
        shortcut = self.downsample(x) if self.downsample is not None else x
        return F.relu(self.body(x) + shortcut)


class BottleneckV1(nn.Module):
    """Gluon's BottleneckV1: the stride on the first 1x1 convolution, which (like the last)
    has a bias, as MXNet's has (torchvision strides the 3x3 one and has no biases)."""

    def __init__(self, cin, channels, stride, downsample):
        super().__init__()
        mid = channels // 4
        self.body = nn.Sequential(nn.Conv2d(cin, mid, 1, stride), nn.BatchNorm2d(mid), nn.ReLU(),
                                  _conv3x3(mid, mid, 1), nn.BatchNorm2d(mid), nn.ReLU(),
                                  nn.Conv2d(mid, channels, 1), nn.BatchNorm2d(channels))
        self.downsample = (nn.Sequential(nn.Conv2d(cin, channels, 1, stride, bias=False),
                                         nn.BatchNorm2d(channels)) if downsample else None)

    def forward(self, x):
        shortcut = self.downsample(x) if self.downsample is not None else x
        return F.relu(self.body(x) + shortcut)


def _resnet_v1(block, layers, channels, classes):
    """ResNet v1 with the ImageNet stem (7x7/2 conv, BN, ReLU, 3x3/2 max pooling)."""
    features = [nn.Conv2d(3, channels[0], 7, 2, 3, bias=False), nn.BatchNorm2d(channels[0]),
                nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    for i, count in enumerate(layers):
        cin, cout = channels[i], channels[i + 1]
        features.append(block(cin, cout, 1 if i == 0 else 2, cout != cin))
        features.extend(block(cout, cout, 1, False) for _ in range(count - 1))
    features += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(nn.Sequential(*features), nn.Linear(channels[-1], classes))


def _classifier_cnn(dims):
    return nn.Sequential(_conv3x3(3, 32, 1), nn.BatchNorm2d(32), nn.ReLU(),
                         BasicBlockV1(32, 32, 1, False), BasicBlockV1(32, 64, 2, True),
                         BasicBlockV1(64, 64, 1, False), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(64, dims["classes"]))


def _mlp(dims):
    hidden = dims["hidden"]
    return nn.Sequential(nn.Linear(dims["features"], hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, dims["classes"]))


def _critic(dims):
    w, side = dims["width"], dims["image"] // 8
    return nn.Sequential(nn.Conv2d(3, w, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(w, 2 * w, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Conv2d(2 * w, 4 * w, 4, 2, 1), nn.LeakyReLU(0.2),
                         nn.Flatten(), nn.Linear(4 * w * side * side, 1))


class EncoderBlock(nn.Module):
    """The Gluon block's twin: pre-LayerNorm attention through ``bmm`` and a GELU MLP."""

    def __init__(self, d, heads, ffn, classes):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ffn1 = nn.Linear(d, ffn)
        self.ffn2 = nn.Linear(ffn, d)
        self.head = nn.Linear(d, classes)

    def _split_heads(self, u):
        """(B, T, d) -> (B*heads, T, d/heads), as the Gluon block's reshape/transpose."""
        b, t, d = u.shape
        h = self.heads
        return u.reshape(b, t, h, d // h).transpose(1, 2).reshape(b * h, t, d // h)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = (self._split_heads(u) for u in self.qkv(self.ln1(x)).chunk(3, dim=-1))
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(d // h))
        att = torch.bmm(torch.softmax(scores, dim=-1), v)
        att = att.reshape(b, h, t, d // h).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(att)
        x = x + self.ffn2(F.gelu(self.ffn1(self.ln2(x))))
        return self.head(x.mean(dim=1))


class LanguageModel(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.embedding = nn.Embedding(dims["vocab"], dims["embed"])
        self.rnn = nn.LSTM(dims["embed"], dims["hidden"], dims["layers"])
        self.decoder = nn.Linear(dims["hidden"], dims["vocab"])

    def forward(self, tokens):
        return self.decoder(self.rnn(self.embedding(tokens))[0])


def build(case, dims):
    """The torch module of ``case``."""
    if case == "resnet_cnn":
        return _classifier_cnn(dims)
    if case == "mlp":
        return _mlp(dims)
    if case == "transformer":
        return EncoderBlock(dims["d"], dims["heads"], dims["ffn"], dims["classes"])
    if case == "lstm_lm":
        return LanguageModel(dims)
    if case == "wgan_gp":
        return _critic(dims)
    if case == "resnet18":
        return _resnet_v1(BasicBlockV1, [2, 2, 2, 2], [64, 64, 128, 256, 512], dims["classes"])
    if case in ("resnet50_b1", "resnet50_b32"):
        return _resnet_v1(BottleneckV1, [3, 4, 6, 3], [64, 256, 512, 1024, 2048],
                          dims["classes"])
    raise ValueError(f"build: unknown case {case!r}")


def _gluon_ordered_tensors(model):
    """The model's tensors in Gluon's parameter order: module by module as registered, a
    module's own parameters, then for BatchNorm its running mean and variance (Gluon's
    gamma, beta, running_mean, running_var)."""
    out = []
    for module in model.modules():
        out.extend(module.parameters(recurse=False))
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            out += [module.running_mean, module.running_var]
    return out


def load(model, names, weights):
    """Copy the Gluon-ordered ``weights`` into ``model``, checking every shape."""
    tensors = _gluon_ordered_tensors(model)
    if len(tensors) != len(weights):
        raise ValueError(f"the model has {len(tensors)} tensors, the weights {len(weights)}")
    with torch.no_grad():
        for t, name, w in zip(tensors, names, weights):
            if tuple(t.shape) != w.shape:
                raise ValueError(f"{name}: torch shape {tuple(t.shape)}, weight {w.shape}")
            t.copy_(torch.from_numpy(w))


def make_step(case, dims, names, weights, inputs):
    """A function doing one step of ``case`` (see ``gluon_nets.make_step``)."""
    model = build(case, dims)
    load(model, names, weights)
    tensors = {k: torch.from_numpy(v) for k, v in inputs.items()}
    if case in ("resnet50_b1", "resnet50_b32"):
        model.eval()

        def infer():
            with torch.inference_mode():
                return model(tensors["x"]).numpy()
        return infer
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    if case == "wgan_gp":
        return _wgan_step(model, opt, tensors, dims["penalty"])
    if case == "lstm_lm":
        x, y, vocab = tensors["tokens"], tensors["targets"].reshape(-1), dims["vocab"]
        return _step(model, opt, lambda: F.cross_entropy(model(x).reshape(-1, vocab), y))
    x, y = tensors["x"], tensors["y"]
    return _step(model, opt, lambda: F.cross_entropy(model(x), y))


def _step(model, opt, loss_fn):
    def step():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        return float(loss.item())
    return step


def _wgan_step(model, opt, tensors, penalty):
    real, fake, eps = tensors["real"], tensors["fake"], tensors["eps"]
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_()
    n = real.shape[0]

    def loss_fn():
        (grad,) = torch.autograd.grad(model(x_hat).sum(), x_hat, create_graph=True)
        norm = torch.sqrt(grad.reshape(n, -1).square().sum(dim=1) + 1e-12)
        gp = (norm - 1).square().mean()
        return model(fake).mean() - model(real).mean() + penalty * gp
    return _step(model, opt, loss_fn)
