"""Shared by the tests that compare a kernel's results at the baseline SIMD level with the
best level this CPU runs (the level is chosen when mxlite imports, so each runs in a
process of its own)."""
import os
import subprocess
import sys

import numpy as np


def outputs_at_each_level(tmp_path, script, arrays):
    """The results of ``script`` (run as ``python -c script IN.npz OUT.npz``: it reads
    ``arrays`` from IN and writes its outputs to OUT) with ``MXLITE_SIMD=baseline`` and with
    the best level: two loaded ``.npz`` files."""
    src = tmp_path / "in.npz"
    np.savez(src, **arrays)
    outs = []
    for level in ("baseline", None):
        env = dict(os.environ)
        env.pop("MXLITE_SIMD", None)
        if level:
            env["MXLITE_SIMD"] = level
        dst = tmp_path / f"out_{level}.npz"
        subprocess.run([sys.executable, "-c", script, str(src), str(dst)], env=env,
                       check=True)
        outs.append(np.load(dst))
    return outs
