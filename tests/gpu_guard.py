"""Under the host emulator a GPU compute function that called a compiled CPU kernel would
pass on the emulator's NumPy storage: ``refuse_cpu_kernels`` makes such a call fail."""
import importlib

# the compiled kernel modules a GPU path must not call
CPU_KERNEL_MODULES = ("elemwise", "reduce", "index", "copy", "finite", "random", "conv",
                      "norm", "optim", "sorting", "activation", "hawkes", "resample", "sparse")
# functions of those modules that answer questions about dtypes and touch no data
CPU_METADATA = ("supports_unary", "supports_binary", "acc_dtype")


def refuse_cpu_kernels(monkeypatch, modules=CPU_KERNEL_MODULES):
    """Replace every public kernel function of ``modules`` by one that raises."""
    for name in modules:
        module = importlib.import_module(f"mxlite._core.{name}")
        for attr in dir(module):
            fn = getattr(module, attr)
            if attr.startswith("_") or not callable(fn) or isinstance(fn, type) \
                    or attr in CPU_METADATA:
                continue
            monkeypatch.setattr(module, attr, _refusing(f"mxlite._core.{name}.{attr}"))


def _refusing(what):
    def refuse(*args, **kwargs):
        raise AssertionError(f"{what}: a CPU kernel was called on the GPU")
    return refuse
