"""WGAN-GP with mxlite: the gradient penalty needs the gradient of a gradient.

A Wasserstein GAN with gradient penalty (Gulrajani et al., 2017) trains a critic D whose
loss holds ``(||grad_x D(x_hat)||_2 - 1)^2``: the critic's weight update differentiates a
gradient, so every operator in D needs a second-order gradient. MXNet stopped there
("_backward_Convolution is non-differentiable", and all-zero weight gradients for the
penalty of an MLP); mxlite's FGradients are graphs of registered operators, so it works.

    python examples/wgan_gp.py            # MLPs on the 2-D "8 Gaussians" toy data
    python examples/wgan_gp.py --conv     # a convolutional critic on 16x16 bar images

Written with ``mx.nd``, ``mx.autograd`` and ``mx.optimizer`` only. Prints a compact line
every ``--log-every`` generator steps, then the final Wasserstein estimate and penalty as
``label = value`` lines, and saves real vs generated samples and the loss curves to a PNG
(with matplotlib, the ``[demo]`` extra; without it the picture is skipped).
"""
import argparse
import math
import sys
import time

import mxlite as mx
from mxlite import autograd, nd


# ---- data -----------------------------------------------------------------------------------
def eight_gaussians(batch, scale=2.0, std=0.02):
    """``batch`` points from 8 Gaussians on a circle of radius ``scale`` (the paper's toy)."""
    angles = [k * math.pi / 4 for k in range(8)]
    centers = nd.array([[scale * math.cos(a), scale * math.sin(a)] for a in angles])
    which = nd.random.randint(0, 8, shape=(batch,))
    points = nd.take(centers, which) + std * nd.random.normal(shape=(batch, 2))
    return points / 1.414


def bar_images(batch, size=16):
    """``batch`` 1-channel ``size``x``size`` images, each one bright horizontal or vertical
    bar at a random position on a dark background, scaled to [-1, 1]."""
    rows = nd.one_hot(nd.random.randint(0, size, shape=(batch,)), size)      # (B, size)
    lines = nd.broadcast_to(rows.reshape((batch, size, 1)), (batch, size, size))
    vertical = nd.random.randint(0, 2, shape=(batch, 1, 1)).astype("float32")
    images = lines * (1 - vertical) + nd.transpose(lines, axes=(0, 2, 1)) * vertical
    return (2 * images - 1).reshape((batch, 1, size, size))


# ---- networks: parameters are plain NDArrays ------------------------------------------------
class Net:
    """Parameters (name -> NDArray with a gradient buffer) and a forward function that
    reads them by name, so they can be swapped (tests/test_wgan_gp.py does)."""

    def __init__(self, dtype):
        self.params, self.dtype = {}, dtype

    def param(self, name, shape, scale):
        p = (nd.random.normal(0, scale, shape=shape, dtype=self.dtype) if scale
             else nd.zeros(shape, dtype=self.dtype))
        p.attach_grad()
        self.params[name] = p
        return name


class MLP(Net):
    """FullyConnected layers with ``act`` between them (none after the last)."""

    def __init__(self, sizes, act="relu", out_shape=None, dtype="float32"):
        super().__init__(dtype)
        self.layers = []
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            self.layers.append((self.param(f"fc{i}_weight", (n_out, n_in),
                                           math.sqrt(2.0 / n_in)),
                                self.param(f"fc{i}_bias", (n_out,), 0), n_out))
        self.act, self.out_shape = act, out_shape

    def __call__(self, x):
        for i, (w, b, n) in enumerate(self.layers):
            x = nd.FullyConnected(x, self.params[w], self.params[b], num_hidden=n)
            if i < len(self.layers) - 1:
                x = nd.Activation(x, act_type=self.act)
        return x if self.out_shape is None else x.reshape((-1,) + self.out_shape)


class ConvCritic(Net):
    """Two strided 3x3 convolutions with leaky ReLUs, then a linear score."""

    def __init__(self, size=16, channels=(8, 16), dtype="float32"):
        super().__init__(dtype)
        c_in, self.convs = 1, []
        for i, c in enumerate(channels):
            self.convs.append((self.param(f"conv{i}_weight", (c, c_in, 3, 3),
                                          math.sqrt(2.0 / (9 * c_in))),
                               self.param(f"conv{i}_bias", (c,), 0), c))
            c_in, size = c, (size + 1) // 2
        n_in = c_in * size * size
        self.w = self.param("fc_weight", (1, n_in), math.sqrt(1.0 / n_in))
        self.b = self.param("fc_bias", (1,), 0)

    def __call__(self, x):
        p = self.params
        for w, b, c in self.convs:
            x = nd.Convolution(x, p[w], p[b], kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                               num_filter=c)
            x = nd.LeakyReLU(x, act_type="leaky", slope=0.2)
        return nd.FullyConnected(x, p[self.w], p[self.b], num_hidden=1)


# ---- the losses ------------------------------------------------------------------------------
def gradient_penalty(critic, real, fake):
    """``mean((||grad D(x_hat)||_2 - 1)^2)`` at random interpolates ``x_hat`` of the two
    batches; call under ``autograd.record()`` so it can be differentiated again."""
    shape = (real.shape[0],) + (1,) * (real.ndim - 1)
    alpha = nd.random.uniform(shape=shape, dtype=real.dtype)
    x_hat = (alpha * real + (1 - alpha) * fake).detach()
    x_hat.attach_grad()
    with autograd.record():                 # (nested: x_hat is a new variable)
        score = critic(x_hat)
    grad = autograd.grad(score, [x_hat], head_grads=nd.ones_like(score), create_graph=True)[0]
    norms = nd.sqrt(nd.sum(grad.reshape((grad.shape[0], -1)) ** 2, axis=1) + 1e-12)
    return nd.mean((norms - 1) ** 2)


def critic_step(critic, generator, update, real, noise, lam):
    """One critic update: ``D(fake) - D(real) + lam * penalty``; returns (W estimate, GP)."""
    fake = generator(noise).detach()
    with autograd.record():
        wasserstein = nd.mean(critic(real)) - nd.mean(critic(fake))
        penalty = gradient_penalty(critic, real, fake)
        loss = -wasserstein + lam * penalty
    loss.backward()
    for i, p in enumerate(critic.params.values()):
        update(i, p.grad, p)
    return wasserstein.asscalar(), penalty.asscalar()


def generator_step(critic, generator, update, noise):
    """One generator update: minimise ``-D(G(z))``; only the generator's gradients are made."""
    params = list(generator.params.values())
    with autograd.record():
        loss = -nd.mean(critic(generator(noise)))
    grads = autograd.grad(loss, params)
    for i, (p, g) in enumerate(zip(params, grads)):
        update(i, g, p)
    return loss.asscalar()


# ---- training --------------------------------------------------------------------------------
def build(conv, hidden):
    """(sample real data, noise size, generator, critic) for the toy or the image task."""
    if conv:
        return (bar_images, 16, MLP([16, hidden, 256], act="relu", out_shape=(1, 16, 16)),
                ConvCritic())
    return (eight_gaussians, 2, MLP([2, hidden, hidden, 2], act="relu"),
            MLP([2, hidden, hidden, 1], act="relu"))


def adam_updater(lr):
    """An updater with the paper's Adam settings (beta1 0.5, beta2 0.9)."""
    return mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=lr, beta1=0.5, beta2=0.9))


def train(steps, conv=False, critic_iters=5, batch=256, hidden=128, lam=1.0, lr=1e-3,
          log_every=100, seed=0, out=sys.stdout):
    """Train; returns a dict with the loss history, the networks and final batches."""
    mx.random.seed(seed)
    sample, n_noise, generator, critic = build(conv, hidden)
    update_d, update_g = adam_updater(lr), adam_updater(lr)
    history = {"step": [], "wasserstein": [], "penalty": [], "generator": []}
    start = time.time()
    for step in range(1, steps + 1):
        for _ in range(critic_iters):
            w, gp = critic_step(critic, generator, update_d, sample(batch),
                                nd.random.normal(shape=(batch, n_noise)), lam)
        g = generator_step(critic, generator, update_g, nd.random.normal(shape=(batch, n_noise)))
        for key, value in zip(("step", "wasserstein", "penalty", "generator"),
                              (step, w, gp, g)):
            history[key].append(value)
        if out is not None and (step % log_every == 0 or step == steps):
            print(f"step {step:5d}/{steps}  W {w:8.4f}  GP {gp:8.5f}  G {g:8.4f}  "
                  f"({time.time() - start:5.1f} s)", file=out, flush=True)
    history["nets"] = (generator, critic)
    history["real"] = sample(512)
    history["fake"] = generator(nd.random.normal(shape=(512, n_noise)))
    return history


def save_picture(history, path, conv):
    """Real vs generated samples and the loss curves, as a PNG; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    real, fake = history["real"].asnumpy(), history["fake"].asnumpy()
    if conv:
        tiles = [im[0] for im in fake[:8]] + [im[0] for im in real[:8]]
        import numpy as np
        grid = np.vstack([np.hstack(tiles[:8]), np.hstack(tiles[8:])])
        left.imshow(grid, cmap="gray", vmin=-1, vmax=1)
        left.set_title("generated (top) vs real (bottom)")
        left.axis("off")
    else:
        left.scatter(real[:, 0], real[:, 1], s=4, label="real", alpha=0.6)
        left.scatter(fake[:, 0], fake[:, 1], s=4, label="generated", alpha=0.6)
        left.set_title("8 Gaussians: real vs generated")
        left.legend(loc="upper right")
        left.set_aspect("equal")
    for key in ("wasserstein", "penalty", "generator"):
        right.plot(history["step"], history[key], label=key, linewidth=1)
    right.set_xlabel("generator step")
    right.set_title("losses")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conv", action="store_true",
                        help="a convolutional critic on synthetic 16x16 images")
    parser.add_argument("--steps", type=int, default=None,
                        help="generator steps (default 2500, or 300 with --conv)")
    parser.add_argument("--critic-iters", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lam", type=float, default=None,
                        help="penalty weight (default 1 for the toy, 10 with --conv)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--log-every", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--png", default="wgan_gp.png", help="where to save the picture")
    args = parser.parse_args(argv)
    steps = args.steps or (300 if args.conv else 2500)
    lam = args.lam if args.lam is not None else (10.0 if args.conv else 1.0)
    print(f"WGAN-GP, {'conv critic on 16x16 images' if args.conv else '8 Gaussians'}: "
          f"{steps} generator steps x {args.critic_iters} critic steps, batch {args.batch}")
    history = train(steps, conv=args.conv, critic_iters=args.critic_iters, batch=args.batch,
                    hidden=args.hidden, lam=lam, lr=args.lr,
                    log_every=args.log_every or max(1, steps // 10), seed=args.seed)
    print(f"wasserstein estimate = {history['wasserstein'][-1]:.5f}")
    print(f"gradient penalty = {history['penalty'][-1]:.6f}")
    if save_picture(history, args.png, args.conv):
        print(f"saved {args.png}")
    else:
        print("matplotlib is not installed (pip install 'mxlite[demo]'): no picture saved")


if __name__ == "__main__":
    main()
