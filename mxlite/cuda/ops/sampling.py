"""GPU compute of the per-element samplers of ``mxlite/ops/sampling.py`` (``_sample_uniform``,
``_sample_normal``, ``_sample_gamma``, ``_sample_exponential``, ``_sample_poisson``,
``_sample_negative_binomial``, ``_sample_generalized_negative_binomial``).

Their compute function reads the parameters through ``xp.to_host`` and writes the output
block by block (``BLOCK`` elements) through ``xp.from_host`` and ``xp.copyto``, so it runs
unchanged on a GPU: the samples are drawn by the host's kernels from the GPU's own stream
``(seed, offset)`` and are bit-identical to the CPU's for the same seed and call sequence.
Device-specific cost: one host-to-device copy per block (the per-element rejection samplers
would need a kernel per distribution; the transfer is the smaller part of their cost)."""
from . import device_generic

device_generic("_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential",
               "_sample_poisson", "_sample_negative_binomial",
               "_sample_generalized_negative_binomial")
