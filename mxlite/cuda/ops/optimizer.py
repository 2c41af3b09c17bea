"""GPU fused optimizer updates (``mxlite/ops/optimizer_ops.py``): one kernel per (algorithm,
dtype) over the element functions of ``mx_optim.h`` that the CPU loops run too, so both
devices compute the same formulas in the same order.

The operators' compute function is the CPU one; on GPU it calls ``update`` below, which takes
the arguments of ``mxlite._core.optim.update``: the overlap check runs on the host (array
extents only), the parameters travel by value as an ``mx_optim_params`` record, and
``_adamw_update``'s ``rescale_grad`` array is read by the kernel itself (a NaN, infinite or
zero scale makes every thread copy its weight element instead), so nothing waits for the
device.
"""
import types

import numpy as np

from ..._core import optim as _cpu
from ...base import MXNetError
from ...ops.common import DEVICE_KERNELS
from .. import runtime
from ..casts import CTYPE
from ..kernels import kernel
from . import device_generic

__all__ = ["update", "params_record"]

_RECORD = np.dtype([(name, "<f8") for name in _cpu.PARAMS])
_NAMES = {algo: name for name, (algo, _) in _cpu.ALGOS.items()}
_FLOATS = ("float32", "float64")
_STATES = "T* s0, T* s1, T* s2"


def _kernel(algo, dtype, scale=None):
    """The update kernel of ``algo`` on ``dtype`` arrays; with ``scale`` (a float dtype) it
    reads ``rescale_grad`` from a one-element array of that dtype."""
    name = f"mxlite_optim_{_NAMES[algo]}_{dtype}" + (f"_{scale}" if scale else "")
    T = CTYPE[dtype]
    if scale is None:
        extra, prologue = "", ""
    else:
        extra = f", const {CTYPE[scale]}* scale"
        prologue = """p.rescale = (double)scale[0];
    if (mx_optim_skip(p.rescale)) {
        MX_GRID_LOOP(i, n) out[i] = w[i];
        return;
    }
"""
    return kernel("optimizer", name, f"""#include "mx_optim.h"
extern "C" __global__ void {name}(mx_optim_params p, {T}* out, const {T}* w, const {T}* g,
                                  {_STATES.replace("T*", T + "*")}, mx_idx n{extra}) {{
    typedef {T} T;
    {prologue}const mx_optim_consts<T> c = mx_optim_prepare<T>(p);
    MX_GRID_LOOP(i, n) mx_optim_elem<{algo}, T>(c, out, w, g, s0, s1, s2, i);
}}
""")


KERNELS = {(algo, dt, None): _kernel(algo, dt) for algo in _NAMES for dt in _FLOATS}
KERNELS.update({(_cpu.ALGOS["adamw"][0], dt, s): _kernel(_cpu.ALGOS["adamw"][0], dt, s)
                for dt in _FLOATS for s in _FLOATS})


def params_record(params):
    """The ``mx_optim_params`` record of a mapping of PARAMS names (a missing one is 0)."""
    rec = np.zeros((), _RECORD)
    for name in _cpu.PARAMS:
        value = params.get(name)
        rec[name] = 0.0 if value is None else value
    return rec[()]


def update(algo, weight, grad, states, out, params, scale=None):
    """``mxlite._core.optim.update`` on the GPU: returns None, or the positions in
    ``[weight, grad, out] + states`` of two arrays that overlap where they must not (a state
    with anything else, or ``grad`` with ``out``), in which case nothing was launched."""
    xp = runtime.namespace_of(weight)
    n_states = _cpu.ALGOS[_NAMES[algo]][1] if algo in _NAMES else -1
    if len(states) != n_states:
        raise MXNetError(f"optim.update: algorithm {algo} takes {n_states} state array(s), "
                         f"got {len(states)}")
    arrays = [weight, grad, out] + list(states)
    for a in arrays:
        if a.dtype != weight.dtype or a.size != weight.size or a.dtype.name not in _FLOATS:
            raise MXNetError(f"optim.update: arrays differ in dtype or size, or are not "
                             f"float32/float64 ({a.dtype}, {a.size} against {weight.dtype}, "
                             f"{weight.size})")
    if weight.size:
        for k in range(len(arrays)):
            for j in range(k + 1, len(arrays)):
                if (j >= 3 or (k, j) == (1, 2)) and xp.may_share_memory(arrays[k], arrays[j]):
                    return (k, j)
    s = list(states) + [out] * (3 - len(states))    # unused state pointers: never read
    key = (algo, weight.dtype.name, None if scale is None else scale.dtype.name)
    k = KERNELS.get(key)
    if k is None:
        raise MXNetError(f"optim.update: no GPU kernel for {key}")
    args = [params_record(params), out, weight, grad, *s, np.int64(weight.size)]
    if scale is not None:
        args.append(scale)
    xp.launch(k, weight.size, *args)
    return None


DEVICE_KERNELS[("gpu", _cpu.__name__)] = types.SimpleNamespace(update=update)
device_generic("sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update",
               "_adamw_update", "rmsprop_update", "rmspropalex_update", "signsgd_update",
               "signum_update", "ftrl_update", "ftml_update", "mp_sgd_update",
               "mp_sgd_mom_update", "mp_nag_mom_update", "lamb_update_phase1",
               "mp_lamb_update_phase1", "lamb_update_phase2", "mp_lamb_update_phase2",
               *(pre + "multi_" + base + "_update" for pre in ("", "preloaded_")
                 for base in ("sgd", "sgd_mom", "mp_sgd", "mp_sgd_mom")),
               # optimizer_multi: run the registered ops' compute functions of the device
               "_mp_adamw_update", "_multi_adamw_update", "_multi_mp_adamw_update",
               "_multi_lamb_update", "_multi_mp_lamb_update", "multi_sum_sq", "multi_lars",
               "_contrib_group_adagrad_update")
