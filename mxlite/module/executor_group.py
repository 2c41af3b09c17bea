"""``DataParallelExecutorGroup``: one bound executor per context, each running a slice of
the batch (MXNet 1.x's ``mx.module.executor_group``).

A batch is cut along its batch axis (the position of ``'N'`` in each input's ``DataDesc``
layout) into one contiguous slice per context, sized by ``workload``. Every executor binds
the same symbol at its slice's shapes; the parameters of each context are its own arrays
(the module keeps them equal), and the gradients stay per context until the module's
``update`` sums them (through a kvstore) or applies each copy (``Updater``). Outputs and
input gradients are merged back along their batch axis (an output's from its
``__layout__`` attribute, axis 0 without one).
"""
from collections import OrderedDict

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError
from ..context import cpu
from ..executor import Executor, _from_buffer
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup", "split_batch"]


def split_batch(batch_size, workload):
    """Contiguous ``slice`` objects cutting ``batch_size`` examples in proportion to
    ``workload`` (one positive number per context): slice ``i`` ends at
    ``round(batch_size * (w_0 + ... + w_i) / sum(w))``, so the sizes add up exactly.
    An empty slice (more contexts than examples) raises MXNetError."""
    if not workload or any(not isinstance(w, (int, float)) or isinstance(w, bool) or
                           not w > 0 for w in workload):
        raise MXNetError(f"Module: work_load_list must be positive numbers, one per context, "
                         f"got {workload!r}")
    total = float(sum(workload))
    bounds, acc = [0], 0.0
    for w in workload:
        acc += w
        bounds.append(int(round(batch_size * acc / total)))
    bounds[-1] = batch_size
    slices = [slice(b, e) for b, e in zip(bounds, bounds[1:])]
    if any(s.stop <= s.start for s in slices):
        raise MXNetError(f"Module: a batch of {batch_size} cannot be split over "
                         f"{len(workload)} contexts with workload {list(workload)}: some "
                         "slices would be empty")
    return slices


def _batch_axis(desc):
    return DataDesc.get_batch_axis(getattr(desc, "layout", None))


def _slice_along(array, axis, sl):
    """``array``'s examples ``sl`` along ``axis`` (the array itself when that is all)."""
    if axis < 0 or (sl.start == 0 and sl.stop == array.shape[axis]):
        return array
    if axis == 0:
        return array[sl]
    return nd.slice_axis(array, axis=axis, begin=sl.start, end=sl.stop)


def _merge(blocks, axis):
    """The per-context arrays of one output as one array: concatenated along ``axis``
    (on the first context), or the first context's where the output has no batch axis."""
    if axis < 0 or len(blocks) == 1:
        return blocks[0]
    ctx = blocks[0].context
    return nd.concat(*[b.as_in_context(ctx) for b in blocks], dim=axis)


class DataParallelExecutorGroup:
    """Executors of ``symbol``, one per context in ``contexts``, over slices of each batch.

    Parameters are as MXNet's: ``workload`` (relative slice sizes), ``data_shapes`` /
    ``label_shapes`` (``DataDesc`` or ``(name, shape)``), ``param_names`` (the learned
    arguments), ``for_training``, ``inputs_need_grad``, ``shared_group`` (another group
    whose parameter and gradient arrays, and input buffers, this one shares: the buckets of
    a ``BucketingModule``), ``fixed_param_names`` (no gradient), ``grad_req`` ('write',
    'add', 'null', or a list/dict of them), ``state_names`` (inputs set with
    ``set_states``). ``group2ctxs`` is accepted and ignored: an executor runs on one device.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=None,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload)
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.logger = logger
        self.shared_group = shared_group
        if len(self.workload) != len(self.contexts):
            raise MXNetError(f"DataParallelExecutorGroup: {len(self.workload)} workloads for "
                             f"{len(self.contexts)} contexts")
        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in self.contexts]
        self.output_names = symbol.list_outputs()
        self.output_layouts = [DataDesc.get_batch_axis(symbol[name].attr("__layout__"))
                               for name in self.output_names]
        self.execs = []
        self.data_shapes = self.label_shapes = None
        self.grad_req = self._grad_reqs(grad_req, [d[0] for d in data_shapes])
        self.bind_exec(data_shapes, label_shapes, shared_group)

    # ---- binding ---------------------------------------------------------------------------
    def _grad_reqs(self, grad_req, data_names):
        """{argument: 'write' | 'add' | 'null'}: parameters get ``grad_req`` (fixed ones
        'null'), data inputs get it only with ``inputs_need_grad``, the rest 'null'; nothing
        when not training."""
        if not self.for_training:
            return dict.fromkeys(self.arg_names, "null")
        if isinstance(grad_req, str):
            reqs = {}
            for name in self.arg_names:
                if name in self.param_names:
                    reqs[name] = "null" if name in self.fixed_param_names else grad_req
                elif name in data_names:
                    reqs[name] = grad_req if self.inputs_need_grad else "null"
                else:
                    reqs[name] = "null"
            return reqs
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise MXNetError(f"bind: grad_req has {len(grad_req)} entries for "
                                 f"{len(self.arg_names)} arguments {self.arg_names}")
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            reqs = dict.fromkeys(self.arg_names, "null")
            reqs.update(grad_req)
            return reqs
        raise MXNetError(f"bind: grad_req must be a str, list or dict, got {grad_req!r}")

    def decide_slices(self, data_shapes):
        """Set and return the per-context slices of ``data_shapes``' batch."""
        self.batch_size, self.slices = self.batch_size_and_slices(data_shapes)
        return self.slices

    def batch_size_and_slices(self, data_shapes):
        """The batch size of ``data_shapes`` (equal along every input's batch axis) and the
        per-context slices."""
        sizes = {}
        for desc in data_shapes:
            axis = _batch_axis(desc)
            if axis >= 0:
                if axis >= len(desc.shape):
                    raise MXNetError(f"bind: input {desc.name!r} has layout {desc.layout!r} "
                                     f"but shape {desc.shape}")
                sizes[desc.name] = desc.shape[axis]
        if len(set(sizes.values())) > 1:
            raise MXNetError(f"bind: the inputs disagree on the batch size: {sizes}")
        batch_size = next(iter(sizes.values()), 0)
        return batch_size, split_batch(batch_size, self.workload)

    def _sliced(self, descs, sl):
        """``descs`` with the batch axis cut to slice ``sl``: ``{name: shape}``."""
        shapes = {}
        for desc in descs:
            shape = list(desc.shape)
            axis = _batch_axis(desc)
            if axis >= 0:
                shape[axis] = sl.stop - sl.start
            shapes[desc.name] = tuple(shape)
        return shapes

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with ``reshape``, reshape) one executor per context for these shapes."""
        label_shapes = list(label_shapes or [])
        batch_size, slices = self.batch_size_and_slices(data_shapes)
        descs = list(data_shapes) + label_shapes
        dtypes = {d.name: getattr(d, "dtype", np.float32) for d in descs}
        execs = []        # all made before any is kept: a failure leaves the group as it was
        for i, (ctx, sl) in enumerate(zip(self.contexts, slices)):
            shapes = self._sliced(descs, sl)
            if reshape:
                execs.append(self._default_execs[i].reshape(allow_up_sizing=True, **shapes))
            else:
                shared = shared_group.execs[i] if shared_group is not None else None
                execs.append(self._bind_ith_exec(i, ctx, shapes, dtypes, shared))
        self.execs, self.batch_size, self.slices = execs, batch_size, slices
        if not reshape:
            self._default_execs = list(execs)
        self.data_shapes = list(data_shapes)
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes]
        self.data_layouts = [_batch_axis(d) for d in data_shapes]
        self.label_layouts = [_batch_axis(d) for d in label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Rebind for new input shapes, sharing memory with the executors bound first."""
        if data_shapes == self.data_shapes and list(label_shapes or []) == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _bind_ith_exec(self, i, ctx, shapes, dtypes, shared_exec):
        """An executor on ``ctx``: parameters (and their gradients) are ``shared_exec``'s
        arrays where given, else new; every other argument comes from this context's
        ``shared_data_arrays`` buffer (MXNet's rule, so buckets share input memory)."""
        symbol = self.symbol
        arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
        if arg_shapes is None:
            partial, _, _ = symbol.infer_shape_partial(**shapes)
            unknown = [n for n, s in zip(self.arg_names, partial) if not s or 0 in s]
            raise MXNetError(f"bind: the input shapes {shapes} do not determine the shapes "
                             f"of {unknown}")
        arg_types, _, aux_types = symbol.infer_type_partial(
            **{n: t for n, t in dtypes.items() if n in self.arg_names})
        buffer = self.shared_data_arrays[i]
        args, grads = [], {}
        for name, shape, dt in zip(self.arg_names, arg_shapes, arg_types):
            shape, dt = tuple(shape), np.dtype(dt if dt is not None else np.float32)
            req = self.grad_req[name]
            if name in self.param_names:
                arr, grad = self._param_array(shared_exec, name, shape, dt, ctx, req)
            else:
                arr = _from_buffer(buffer, name, shape, dt, ctx)
                grad = None if req == "null" else nd.zeros(shape, ctx=ctx, dtype=dt)
            args.append(arr)
            if grad is not None:
                grads[name] = grad
        aux = [self._aux_array(shared_exec, name, tuple(s), t, ctx)
               for name, s, t in zip(self.aux_names, aux_shapes, aux_types)]
        return Executor(symbol, ctx, args, grads, self.grad_req, aux)

    @staticmethod
    def _param_array(shared_exec, name, shape, dtype, ctx, req):
        if shared_exec is not None and name in shared_exec.arg_dict:
            arr = shared_exec.arg_dict[name]
            if arr.shape != shape:
                raise MXNetError(f"bind: parameter {name!r} has shape {shape} here but "
                                 f"{arr.shape} in the shared module")
            grad = shared_exec.grad_dict.get(name)
            if grad is None and req != "null":
                grad = nd.zeros(shape, ctx=ctx, dtype=dtype)
            return arr, (grad if req != "null" else None)
        grad = None if req == "null" else nd.zeros(shape, ctx=ctx, dtype=dtype)
        return nd.zeros(shape, ctx=ctx, dtype=dtype), grad

    @staticmethod
    def _aux_array(shared_exec, name, shape, dtype, ctx):
        if shared_exec is not None and name in shared_exec.aux_dict and \
                shared_exec.aux_dict[name].shape == shape:
            return shared_exec.aux_dict[name]
        return nd.zeros(shape, ctx=ctx, dtype=dtype if dtype is not None else np.float32)

    def _collect_arrays(self):
        """Per-name lists over the contexts: ``param_arrays``, ``grad_arrays``,
        ``aux_arrays``, ``data_arrays``/``label_arrays`` (``(slice, array)`` pairs),
        ``input_grad_arrays``, ``state_arrays``."""
        execs = self.execs
        self.data_arrays = [[(sl, e.arg_dict[n]) for sl, e in zip(self.slices, execs)]
                            for n in self.data_names]
        self.label_arrays = [[(sl, e.arg_dict[n]) for sl, e in zip(self.slices, execs)]
                             for n in self.label_names if n in self.arg_names]
        self.state_arrays = [[e.arg_dict[n] for e in execs] for n in self.state_names]
        self.param_arrays = [[e.arg_dict[n] for e in execs] for n in self.param_names]
        if self.for_training:
            self.grad_arrays = [[e.grad_dict.get(n) for e in execs] for n in self.param_names]
        else:
            self.grad_arrays = None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_dict[n] for e in execs] for n in self.data_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_dict[n] for e in execs] for n in self.aux_names]
        self._total_exec_bytes = sum(
            a.size * np.dtype(a.dtype).itemsize
            for e in execs for a in e.arg_arrays + e.aux_arrays +
            [g for g in e.grad_arrays if g is not None])

    # ---- parameters ------------------------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy ``arg_params`` / ``aux_params`` into every context's arrays; names the
        symbol lacks raise MXNetError unless ``allow_extra``."""
        arg_params, aux_params = arg_params or {}, aux_params or {}
        for what, params, kind, names in (
                ("arg_params", arg_params, "arguments", self.arg_names),
                ("aux_params", aux_params, "auxiliary states", self.aux_names)):
            extra = sorted(set(params) - set(names))
            if extra and not allow_extra:
                raise MXNetError(f"set_params: {what} has names {extra} that the symbol does "
                                 f"not have (its {kind} are {names}); pass allow_extra=True "
                                 "to ignore them")
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=True)

    def get_params(self, arg_params, aux_params):
        """Write the mean over the contexts of each parameter and auxiliary state into
        ``arg_params`` / ``aux_params`` (arrays of those names, updated in place)."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    mean = block[0]
                else:           # summed on the first copy's device, then brought over
                    ctx = block[0].context
                    mean = nd.add_n(*[w.as_in_context(ctx) for w in block]) / len(block)
                mean.as_in_context(cpu()).astype(target[name].dtype).copyto(target[name])

    def get_states(self, merge_multi_context=True):
        """The state inputs' arrays (per context, or merged)."""
        return self._maybe_merged(self.state_arrays, [0] * len(self.state_arrays),
                                  merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the state inputs: ``states`` (a list per state of a list per context), or
        every element to ``value``."""
        if (states is None) == (value is None):
            raise MXNetError("set_states: give exactly one of states and value")
        if states is not None:
            for dst_block, src_block in zip(self.state_arrays, states):
                for dst, src in zip(dst_block, src_block):
                    src.copyto(dst)
        else:
            for block in self.state_arrays:
                for dst in block:
                    dst[:] = value

    # ---- running ---------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Copy each context's slice of ``data_batch`` into its executor and run forward
        (``is_train`` None: ``for_training``)."""
        self._load(getattr(data_batch, "data"), self.data_arrays, self.data_layouts, "data")
        if is_train is None:
            is_train = self.for_training
        label = getattr(data_batch, "label", None)
        if self.label_arrays and label:
            self._load(label, self.label_arrays, self.label_layouts, "label")
        for e in self.execs:
            e.forward(is_train=is_train)

    @staticmethod
    def _load(sources, targets, axes, what):
        if len(sources) != len(targets):
            raise MXNetError(f"forward: the batch has {len(sources)} {what} arrays, the module "
                             f"was bound with {len(targets)}")
        for src, block, axis in zip(sources, targets, axes):
            if not isinstance(src, nd.NDArray):
                src = nd.array(src)
            for sl, dst in block:
                part = _slice_along(src, axis, sl)
                if part.shape != dst.shape:
                    raise MXNetError(f"forward: a {what} slice has shape {part.shape}, the "
                                     f"executor's input has {dst.shape}")
                part.as_in_context(dst.context).astype(dst.dtype, copy=False).copyto(dst)

    def backward(self, out_grads=None):
        """Backward on every context; ``out_grads`` (whole-batch head gradients) are cut
        into the same slices along each output's batch axis."""
        if not self.for_training:
            raise MXNetError("backward: the module was bound with for_training=False")
        if out_grads is not None and isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        for e, sl, ctx in zip(self.execs, self.slices, self.contexts):
            grads = None
            if out_grads is not None:
                grads = [_slice_along(g, axis, sl).as_in_context(ctx)
                         for g, axis in zip(out_grads, self.output_layouts)]
            e.backward(out_grads=grads)

    def _maybe_merged(self, blocks, axes, merge):
        if merge:
            return [_merge(b, a) for b, a in zip(blocks, axes)]
        return blocks

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``begin:end``: one array each (merged over the contexts) or, with
        ``merge_multi_context=False``, a list per output of the per-context arrays."""
        end = len(self.output_names) if end is None else end
        blocks = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        return self._maybe_merged(blocks, self.output_layouts[begin:end], merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (needs ``inputs_need_grad``)."""
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: the module was bound with "
                             "inputs_need_grad=False")
        return self._maybe_merged(self.input_grad_arrays, self.data_layouts,
                                  merge_multi_context)

    def get_output_shapes(self):
        """``(name, shape)`` of each output for the whole batch."""
        shapes = []
        for name, axis, out in zip(self.output_names, self.output_layouts,
                                   self.execs[0].outputs):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each context's outputs and its slice of ``labels``
        (``pre_sliced``: ``labels`` is already a list per context)."""
        for k, (e, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                part = labels[k]
            else:
                part = [_slice_along(lab, axis, sl) for lab, axis in
                        zip(labels or [], self.label_layouts)]
            eval_metric.update_dict(OrderedDict(zip(self.label_names, part)),
                                    OrderedDict(zip(self.output_names, e.outputs)))

    def install_monitor(self, mon):
        """Install ``mon`` (an ``mx.monitor.Monitor``) on every executor."""
        for e in self.execs:
            mon.install(e)
