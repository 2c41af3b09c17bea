"""WGAN-GP written with Gluon: the critic and generator of examples/wgan_gp.py as
``nn.HybridSequential`` blocks, trained with ``gluon.Trainer``.

The critic's loss holds the gradient penalty ``(||grad_x D(x_hat)||_2 - 1)^2``, so the
critic's update differentiates a gradient taken *through the Gluon layers* (Dense, or
Conv2D + LeakyReLU): ``autograd.grad(critic(x_hat), x_hat, create_graph=True)`` then
``backward()``. MXNet 1.x stopped there (``_backward_Convolution is non-differentiable``);
in mxlite every layer is registered operators whose gradients differentiate again, also
when the blocks are hybridized (the cached graph's gradient is replayed on the tape for a
second order).

    python examples/wgan_gp_gluon.py               # MLPs on the 2-D "8 Gaussians" data
    python examples/wgan_gp_gluon.py --conv        # a convolutional critic on 16x16 bars
    python examples/wgan_gp_gluon.py --no-hybridize

The data (``eight_gaussians``, ``bar_images``) come from examples/wgan_gp.py. Prints a
line every ``--log-every`` generator steps, then ``label = value`` lines.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mxlite as mx  # noqa: E402
from mxlite import autograd, gluon, nd  # noqa: E402
from mxlite.gluon import nn  # noqa: E402
from wgan_gp import bar_images, eight_gaussians  # noqa: E402


def mlp(sizes, out_shape=None):
    """Dense layers with relu between them (none after the last); ``out_shape`` reshapes
    each output sample (the image generator)."""
    net = nn.HybridSequential()
    with net.name_scope():
        for i, n in enumerate(sizes[1:]):
            last = i == len(sizes) - 2
            net.add(nn.Dense(n, activation=None if last else "relu", in_units=sizes[i]))
        if out_shape is not None:
            net.add(nn.HybridLambda(lambda F, x: F.reshape(x, shape=(-1,) + out_shape)))
    return net


def conv_critic(channels=(8, 16)):
    """Two strided 3x3 convolutions with leaky ReLUs, then a linear score."""
    net = nn.HybridSequential()
    with net.name_scope():
        for c in channels:
            net.add(nn.Conv2D(c, 3, strides=2, padding=1), nn.LeakyReLU(0.2))
        net.add(nn.Dense(1))
    return net


def gradient_penalty(critic, real, fake):
    """``mean((||grad D(x_hat)||_2 - 1)^2)`` at random interpolates of the two batches;
    call under ``autograd.record()`` so it can be differentiated again."""
    shape = (real.shape[0],) + (1,) * (real.ndim - 1)
    alpha = nd.random.uniform(shape=shape, dtype=real.dtype)
    x_hat = (alpha * real + (1 - alpha) * fake).detach()
    x_hat.attach_grad()
    with autograd.record():
        score = critic(x_hat)
    grad = autograd.grad(score, [x_hat], head_grads=nd.ones_like(score), create_graph=True)[0]
    norms = nd.sqrt(nd.sum(grad.reshape((grad.shape[0], -1)) ** 2, axis=1) + 1e-12)
    return nd.mean((norms - 1) ** 2)


def build(conv, hidden):
    """(sample real data, noise size, generator, critic)."""
    if conv:
        return bar_images, 16, mlp([16, hidden, 256], out_shape=(1, 16, 16)), conv_critic()
    return eight_gaussians, 2, mlp([2, hidden, hidden, 2]), mlp([2, hidden, hidden, 1])


def train(steps, conv=False, critic_iters=5, batch=128, hidden=64, lam=1.0, lr=1e-3,
          hybridize=True, log_every=50, seed=0, out=sys.stdout):
    """Train; returns a dict with the loss history, the networks and final batches."""
    mx.random.seed(seed)
    sample, n_noise, generator, critic = build(conv, hidden)
    for net in (generator, critic):
        net.initialize(mx.init.Xavier())
        if hybridize:
            net.hybridize()
    adam = {"learning_rate": lr, "beta1": 0.5, "beta2": 0.9}
    trainer_d = gluon.Trainer(critic.collect_params(), "adam", adam)
    trainer_g = gluon.Trainer(generator.collect_params(), "adam", adam)
    history = {"step": [], "wasserstein": [], "penalty": [], "generator": []}
    start = time.time()
    for step in range(1, steps + 1):
        for _ in range(critic_iters):
            real = sample(batch)
            fake = generator(nd.random.normal(shape=(batch, n_noise))).detach()
            with autograd.record():
                wasserstein = nd.mean(critic(real)) - nd.mean(critic(fake))
                penalty = gradient_penalty(critic, real, fake)
                loss = -wasserstein + lam * penalty
            loss.backward()
            trainer_d.step(1)
        with autograd.record():
            g_loss = -nd.mean(critic(generator(nd.random.normal(shape=(batch, n_noise)))))
        g_loss.backward()
        trainer_g.step(1)
        values = (step, wasserstein.asscalar(), penalty.asscalar(), g_loss.asscalar())
        for key, value in zip(("step", "wasserstein", "penalty", "generator"), values):
            history[key].append(value)
        if out is not None and (step % log_every == 0 or step == steps):
            print(f"step {step:5d}/{steps}  W {values[1]:8.4f}  GP {values[2]:8.5f}  "
                  f"G {values[3]:8.4f}  ({time.time() - start:5.1f} s)", file=out, flush=True)
    history["nets"] = (generator, critic)
    history["real"] = sample(512)
    history["fake"] = generator(nd.random.normal(shape=(512, n_noise)))
    return history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conv", action="store_true",
                        help="a convolutional critic on synthetic 16x16 images")
    parser.add_argument("--steps", type=int, default=None,
                        help="generator steps (default 300, or 60 with --conv)")
    parser.add_argument("--critic-iters", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lam", type=float, default=None,
                        help="penalty weight (default 1 for the toy, 10 with --conv)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--no-hybridize", action="store_true",
                        help="run the blocks imperatively")
    parser.add_argument("--log-every", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    steps = args.steps or (60 if args.conv else 300)
    lam = args.lam if args.lam is not None else (10.0 if args.conv else 1.0)
    print(f"WGAN-GP (Gluon, {'imperative' if args.no_hybridize else 'hybridized'}), "
          f"{'conv critic on 16x16 images' if args.conv else '8 Gaussians'}: {steps} "
          f"generator steps x {args.critic_iters} critic steps, batch {args.batch}")
    history = train(steps, conv=args.conv, critic_iters=args.critic_iters, batch=args.batch,
                    hidden=args.hidden, lam=lam, lr=args.lr, hybridize=not args.no_hybridize,
                    log_every=args.log_every or max(1, steps // 10), seed=args.seed)
    real, fake = history["real"].asnumpy(), history["fake"].asnumpy()
    print(f"wasserstein estimate = {history['wasserstein'][-1]:.5f}")
    print(f"gradient penalty = {history['penalty'][-1]:.6f}")
    print(f"real mean = {[round(float(v), 3) for v in real.reshape(len(real), -1).mean(0)[:2]]}")
    print(f"generated mean = {[round(float(v), 3) for v in fake.reshape(len(fake), -1).mean(0)[:2]]}")


if __name__ == "__main__":
    main()
