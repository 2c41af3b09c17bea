"""The benchmark models in Gluon, one source for mxlite and MXNet 1.9.1: every function
takes the framework module (``mxlite`` or ``mxnet``) as ``mx``, and uses only the API the
two share."""
import numpy as np

from . import LR, MOMENTUM

__all__ = ["build", "parameter_shapes", "make_step"]


def _classifier_cnn(mx, dims):
    """Stem conv3x3-BN-ReLU at 32 channels, three residual basic blocks (32; 64 with a
    stride-2 projection; 64), global average pooling, a dense classifier."""
    nn, vision = mx.gluon.nn, mx.gluon.model_zoo.vision
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(32, 3, padding=1, use_bias=False, in_channels=3),
                nn.BatchNorm(in_channels=32), nn.Activation("relu"),
                vision.BasicBlockV1(32, 1, False, in_channels=32),
                vision.BasicBlockV1(64, 2, True, in_channels=32),
                vision.BasicBlockV1(64, 1, False, in_channels=64),
                nn.GlobalAvgPool2D(), nn.Dense(dims["classes"], in_units=64))
    return net


def _mlp(mx, dims):
    nn, hidden = mx.gluon.nn, dims["hidden"]
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(hidden, activation="relu", in_units=dims["features"]),
                nn.Dense(hidden, activation="relu", in_units=hidden),
                nn.Dense(dims["classes"], in_units=hidden))
    return net


def _critic(mx, dims):
    """A DCGAN-style critic without normalisation (the gradient penalty is per sample):
    three 4x4 stride-2 convolutions with LeakyReLU(0.2), then one linear score."""
    nn, w = mx.gluon.nn, dims["width"]
    side = dims["image"] // 8
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(w, 4, 2, 1, in_channels=3), nn.LeakyReLU(0.2),
                nn.Conv2D(2 * w, 4, 2, 1, in_channels=w), nn.LeakyReLU(0.2),
                nn.Conv2D(4 * w, 4, 2, 1, in_channels=2 * w), nn.LeakyReLU(0.2),
                nn.Flatten(), nn.Dense(1, in_units=4 * w * side * side))
    return net


def _transformer(mx, dims):
    """A pre-LayerNorm encoder block (self-attention through ``batch_dot``, GELU MLP, both
    residual) over a (batch, seq, d) input, mean-pooled into a dense classifier."""
    nn = mx.gluon.nn
    d, heads, ffn = dims["d"], dims["heads"], dims["ffn"]

    class EncoderBlock(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.ln1 = nn.LayerNorm(in_channels=d)
                self.qkv = nn.Dense(3 * d, flatten=False, in_units=d)
                self.proj = nn.Dense(d, flatten=False, in_units=d)
                self.ln2 = nn.LayerNorm(in_channels=d)
                self.ffn1 = nn.Dense(ffn, flatten=False, in_units=d)
                self.gelu = nn.GELU()
                self.ffn2 = nn.Dense(d, flatten=False, in_units=ffn)
                self.head = nn.Dense(dims["classes"], in_units=d)

        def hybrid_forward(self, F, x):
            q, k, v = F.split(self.qkv(self.ln1(x)), num_outputs=3, axis=2)
            # (B, T, d) -> (B*heads, T, d/heads) with shape codes, so the symbol needs no B
            q, k, v = (F.reshape(F.transpose(F.reshape(t, shape=(0, 0, heads, -1)),
                                             axes=(0, 2, 1, 3)), shape=(-3, 0, 0))
                       for t in (q, k, v))
            scores = F.batch_dot(q, k, transpose_b=True) * (1.0 / np.sqrt(d // heads))
            att = F.batch_dot(F.softmax(scores, axis=-1), v)
            att = F.reshape(F.transpose(F.reshape(att, shape=(-4, -1, heads, 0, 0)),
                                        axes=(0, 2, 1, 3)), shape=(0, 0, -1))
            x = x + self.proj(att)
            x = x + self.ffn2(self.gelu(self.ffn1(self.ln2(x))))
            return self.head(F.mean(x, axis=1))

    return EncoderBlock()


def _language_model(mx, dims):
    """Embedding, a fused ``layers``-layer LSTM (TNC), a dense decoder over the vocabulary."""
    nn, rnn = mx.gluon.nn, mx.gluon.rnn

    class LanguageModel(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.embedding = nn.Embedding(dims["vocab"], dims["embed"])
                self.rnn = rnn.LSTM(dims["hidden"], num_layers=dims["layers"], layout="TNC",
                                    input_size=dims["embed"])
                self.decoder = nn.Dense(dims["vocab"], flatten=False, in_units=dims["hidden"])

        def hybrid_forward(self, F, tokens):
            return self.decoder(self.rnn(self.embedding(tokens)))

    return LanguageModel()


def build(mx, case, dims):
    """The uninitialised Gluon network of ``case``."""
    vision = mx.gluon.model_zoo.vision
    if case == "resnet_cnn":
        return _classifier_cnn(mx, dims)
    if case == "mlp":
        return _mlp(mx, dims)
    if case == "transformer":
        return _transformer(mx, dims)
    if case == "lstm_lm":
        return _language_model(mx, dims)
    if case == "wgan_gp":
        return _critic(mx, dims)
    if case == "resnet18":
        return vision.resnet18_v1(classes=dims["classes"])
    if case in ("resnet50_b1", "resnet50_b32"):
        return vision.resnet50_v1(classes=dims["classes"])
    raise ValueError(f"build: unknown case {case!r}")


def _first_input(case, inputs):
    return inputs["tokens" if case == "lstm_lm" else "real" if case == "wgan_gp" else "x"]


def _initialised(mx, case, dims, inputs):
    """The network with every parameter's shape known: one inference forward pass on the
    batch's first sample (a full batch would leave its freed activations in the
    allocator's heap, counted in the process's peak memory before the timed steps)."""
    net = build(mx, case, dims)
    net.initialize()
    net(mx.nd.array(_first_input(case, inputs)[:1])).wait_to_read()
    return net


def parameter_shapes(mx, case, dims, inputs):
    """[(name, shape)] of ``case``'s parameters in Gluon's order."""
    net = _initialised(mx, case, dims, inputs)
    return [(name, tuple(p.shape)) for name, p in net.collect_params().items()]


def _load(mx, net, weights):
    params = list(net.collect_params().values())
    if len(params) != len(weights):
        raise ValueError(f"the net has {len(params)} parameters, the weights {len(weights)}")
    for p, w in zip(params, weights):
        if tuple(p.shape) != w.shape:
            raise ValueError(f"parameter {p.name}: shape {tuple(p.shape)}, weight {w.shape}")
        p.set_data(mx.nd.array(w))


def make_step(mx, case, dims, weights, inputs, hybrid):
    """A function doing one step of ``case`` from ``weights`` on ``inputs``: a training
    step returns the loss (float), an inference step the network's output (NumPy)."""
    net = _initialised(mx, case, dims, inputs)
    _load(mx, net, weights)
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    arrays = {k: mx.nd.array(v) for k, v in inputs.items()}
    if case in ("resnet50_b1", "resnet50_b32"):
        return lambda: net(arrays["x"]).asnumpy()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": LR, "momentum": MOMENTUM})
    if case == "wgan_gp":
        return _wgan_step(mx, net, trainer, arrays, dims["penalty"])
    if case == "lstm_lm":
        return _lm_step(mx, net, trainer, arrays, dims["vocab"])
    return _classifier_step(mx, net, trainer, arrays["x"], arrays["y"])


def _classifier_step(mx, net, trainer, x, y):
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
        return float(loss.mean().asscalar())
    return step


def _lm_step(mx, net, trainer, arrays, vocab):
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    tokens, targets = arrays["tokens"], arrays["targets"].reshape((-1,))

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(tokens).reshape((-1, vocab)), targets)
        loss.backward()
        trainer.step(targets.shape[0])
        return float(loss.mean().asscalar())
    return step


def _wgan_step(mx, net, trainer, arrays, penalty):
    """Critic loss mean D(fake) - mean D(real) + penalty * mean((|grad_x D(x_hat)| - 1)^2)
    at x_hat = eps real + (1 - eps) fake: the penalty's gradient is a second derivative."""
    real, fake, eps = arrays["real"], arrays["fake"], arrays["eps"]
    x_hat = eps * real + (1 - eps) * fake
    x_hat.attach_grad()
    n = real.shape[0]

    def step():
        with mx.autograd.record():
            d_hat = net(x_hat)
            grad = mx.autograd.grad(d_hat, [x_hat], head_grads=mx.nd.ones_like(d_hat),
                                    create_graph=True, retain_graph=True)[0]
            norm = mx.nd.sqrt(mx.nd.sum(mx.nd.square(grad.reshape((n, -1))), axis=1) + 1e-12)
            gp = mx.nd.mean(mx.nd.square(norm - 1))
            loss = mx.nd.mean(net(fake)) - mx.nd.mean(net(real)) + penalty * gp
        loss.backward()
        trainer.step(1)
        return float(loss.asscalar())
    return step
