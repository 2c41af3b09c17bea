"""The shared starting point of every system: initial weights from (name, shape) pairs and
the batch, both from NumPy alone so the torch and MXNet interpreters need nothing else."""
import numpy as np

__all__ = ["batch", "initial_weights", "save", "load"]


def _init(name, shape, rng):
    """One parameter's starting value, by the Gluon name's role: BatchNorm and LayerNorm
    statistics and affine terms near their neutral values (random, so a mix-up of gamma
    and beta or of mean and variance changes the loss), biases small, convolution kernels
    He-scaled and every other matrix 1/sqrt(fan-in) so deep nets keep finite activations."""
    if name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, shape)
    if name.endswith("gamma"):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    if name.endswith(("beta", "running_mean", "bias")) or len(shape) == 1:
        return 0.1 * rng.standard_normal(shape)
    fan_in = int(np.prod(shape[1:]))
    scale = np.sqrt((2.0 if len(shape) == 4 else 1.0) / fan_in)
    return scale * rng.standard_normal(shape)


def initial_weights(named_shapes, seed=0):
    """float32 arrays for ``named_shapes`` ([(gluon name, shape)] in Gluon's parameter
    order), the same for every interpreter: they come from one NumPy Generator."""
    rng = np.random.default_rng(seed)
    return [_init(name, tuple(shape), rng).astype(np.float32) for name, shape in named_shapes]


def batch(case, dims, seed=1):
    """{input name: array} of one batch of ``case`` sized by ``dims``."""
    rng = np.random.default_rng(seed)
    n = dims["batch"]
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    if case in ("resnet_cnn", "resnet18", "resnet50_b1", "resnet50_b32"):
        out = {"x": normal(n, 3, dims["image"], dims["image"])}
        if case != "resnet50_b1" and case != "resnet50_b32":
            out["y"] = rng.integers(0, dims["classes"], n).astype(np.int64)
        return out
    if case == "transformer":
        return {"x": normal(n, dims["seq"], dims["d"]),
                "y": rng.integers(0, dims["classes"], n).astype(np.int64)}
    if case == "mlp":
        return {"x": normal(n, dims["features"]),
                "y": rng.integers(0, dims["classes"], n).astype(np.int64)}
    if case == "lstm_lm":
        shape = (dims["bptt"], n)
        return {"tokens": rng.integers(0, dims["vocab"], shape).astype(np.int64),
                "targets": rng.integers(0, dims["vocab"], shape).astype(np.int64)}
    if case == "wgan_gp":
        size = (n, 3, dims["image"], dims["image"])
        return {"real": rng.standard_normal(size).astype(np.float32),
                "fake": rng.standard_normal(size).astype(np.float32),
                "eps": rng.uniform(0, 1, (n, 1, 1, 1)).astype(np.float32)}
    raise ValueError(f"batch: unknown case {case!r}")


def save(path, names, weights, inputs):
    """Write the weights (in order, with their Gluon names) and the batch to ``path``."""
    arrays = {f"w{i:04d}": w for i, w in enumerate(weights)}
    arrays.update({f"in_{k}": v for k, v in inputs.items()})
    np.savez(path, names=np.array(names), **arrays)


def load(path):
    """(names, weights, inputs) as written by :func:`save`."""
    with np.load(path) as f:
        names = [str(n) for n in f["names"]]
        weights = [f[f"w{i:04d}"] for i in range(len(names))]
        inputs = {k[3:]: f[k] for k in f.files if k.startswith("in_")}
    return names, weights, inputs
