"""Build mxlite: Tempita-expand the kernel templates, then compile every Cython extension.

The one explicit list of extensions is ``EXTENSIONS`` below. A template ``X.pyx.in`` is
expanded to ``X.pyx`` with the shared expression tables of ``mxlite/_core/kernel_table.py``
in its namespace, so the CPU (Cython) and GPU (CUDA) kernels are generated from one table.
"""
import glob
import os
import runpy
import sys

import numpy
from Cython.Build import cythonize
from Cython.Tempita import sub
from setuptools import Extension, find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CORE = os.path.join("mxlite", "_core")

# One line per extension module in mxlite/_core (name, generated from a template?).
EXTENSIONS = [
    ("elemwise", True),   # unary math + broadcasting binary ops, one C expression table
    ("copy", False),      # strided N-d copy (transpose, flip, slicing, broadcast_to, ...)
    ("reduce", True),     # sum/prod/max/min/norm and argmax/argmin over axis groups
    ("index", True),      # take, pick, one_hot, where, clip + scatter-adds (gradients)
    ("finite", True),     # isfinite/isinf/isnan on float bits, all_finite scan, hardmax
    ("random", False),    # Philox4x32-10 streams: uniform/normal/.../randint/multinomial/shuffle
    ("dispatch", False),  # the NDArray handle's fields, invoke, the tape's Node/parents/attach
    ("engine", False),    # the backward engine: nodes walked in creation order, FGradients
    ("activation", False),  # FullyConnected helpers, activations, softmax family, loss layers
    ("conv", False),      # im2col/col2im (Convolution, Deconvolution), Pooling, UpSampling
    ("norm", False),      # BatchNorm/LayerNorm/InstanceNorm statistics, Dropout, Embedding
    ("sorting", False),   # topk/sort/argsort, cumsum, sequence ops
    ("optim", False),     # fused optimizer updates (sgd, adam, ...), in place
    ("ctc", False),       # CTCLoss: alpha/beta recursions per sequence, threads over the batch
    ("resample", False),  # the separable tap filter of the image resize ops, rows per thread
    ("hawkes", False),    # contrib.hawkesll and its scan: one pass per sample, threads over the batch
    ("sparse", False),    # dot with a csr operand: csr @ dense, csr.T @ dense, dense @ csr
]
# Built only where oneDNN's headers are found (see onednn_include): the primitives under the
# heavy CPU operators. It links against no library; mxlite/ops/onednn.py loads libdnnl.
ONEDNN_EXTENSION = "dnnl"
# where the onednn-cpu-gomp wheels exist (a requirement marker)
ONEDNN_PLATFORMS = "platform_machine == 'x86_64' and sys_platform == 'linux'"


def onednn_include():
    """The folder holding ``oneapi/dnnl/dnnl.hpp``: from the ``onednn-devel-cpu-gomp``
    distribution (a build requirement on Linux x86-64, see pyproject.toml), from
    ``$MXLITE_ONEDNN_INCLUDE``, or under this Python's prefix; None when absent."""
    candidates = [os.environ.get("MXLITE_ONEDNN_INCLUDE")]
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        dist = distribution("onednn-devel-cpu-gomp")
        for f in dist.files or ():
            if str(f).replace(os.sep, "/").endswith("include/oneapi/dnnl/dnnl.hpp"):
                candidates.append(str(dist.locate_file(f).resolve().parents[2]))
    except PackageNotFoundError:
        pass
    candidates.append(os.path.join(sys.prefix, "include"))
    for folder in candidates:
        if folder and os.path.exists(os.path.join(folder, "oneapi", "dnnl", "dnnl.hpp")):
            return folder
    return None


def expand_templates():
    """Expand each ``.pyx.in`` whose output is missing or older than its inputs."""
    table_path = os.path.join(HERE, CORE, "kernel_table.py")
    table = runpy.run_path(table_path)
    namespace = {k: v for k, v in table.items() if not k.startswith("__")}
    for name, templated in EXTENSIONS:
        if not templated:
            continue
        src = os.path.join(HERE, CORE, name + ".pyx.in")
        dst = src[:-3]
        newest = max(os.path.getmtime(src), os.path.getmtime(table_path))
        if os.path.exists(dst) and os.path.getmtime(dst) >= newest:
            continue
        with open(src) as f:
            text = sub(f.read(), **namespace)
        with open(dst, "w") as f:
            f.write(text)


def extensions():
    openmp = ["-fopenmp"] if sys.platform != "darwin" else []
    # the headers and included Cython files every kernel module may read: an edit of one
    # rebuilds the modules (setuptools does not follow #include or include)
    shared = sorted(glob.glob(os.path.join(CORE, "mx_*.h"))
                    + glob.glob(os.path.join(CORE, "*.pxi"))
                    + glob.glob(os.path.join(CORE, "*.pxd")))
    built = [
        Extension(
            f"mxlite._core.{name}",
            [os.path.join(CORE, name + ".pyx")],
            depends=[d for d in shared if not os.path.basename(d).startswith("mx_dnnl")],
            include_dirs=[numpy.get_include(), CORE],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            # -fwrapv: integer overflow wraps (as NumPy's does) instead of being undefined;
            # -ffp-contract=off: no fused multiply-add, so every SIMD level (mx_simd.h) and
            # every compiler rounds each operation alike; -fno-trapping-math: floating-point
            # exceptions never trap (NumPy's rule too), which lets comparisons, selects and
            # floor/ceil/trunc vectorize -- the values stay IEEE-exact
            extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math", "-fwrapv",
                                "-ffp-contract=off", "-Wno-unused-function"] + openmp,
            extra_link_args=openmp,
        )
        for name, _ in EXTENSIONS
    ]
    include = onednn_include()
    if include is None:
        print("mxlite: oneDNN headers not found; building without the oneDNN kernels",
              file=sys.stderr)
    else:
        built.append(Extension(
            f"mxlite._core.{ONEDNN_EXTENSION}", [os.path.join(CORE, ONEDNN_EXTENSION + ".pyx")],
            depends=sorted(glob.glob(os.path.join(CORE, "mx_dnnl*.h"))),   # rebuild on edits
            include_dirs=[numpy.get_include(), CORE, include],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            extra_compile_args=["-O2", "-std=c++17", "-Wno-unused-function"]))
    return built


expand_templates()
setup(
    name="mxlite",
    version="0.1.0",
    description="A small, fast, MXNet-compatible NDArray framework",
    packages=find_packages(include=["mxlite", "mxlite.*"]),
    # the kernel sources ship too: tests/test_index_width.py scans what users install
    package_data={"mxlite._core": ["*.pxd", "*.h", "*.pxi", "*.pyx", "*.pyx.in"],
                  "mxlite.cuda": ["*.h"],
                  # the runner of MXNet's own tests puts these folders on the tests' path
                  "mxlite.tools.mxnet_suite": ["site/alias/mxnet/*.py", "site/harness/*.py",
                                               "site/harness/nose/*.py"]},
    python_requires=">=3.9",
    # oneDNN (the CPU-only GNU-OpenMP build; `import mxlite` works without it, slower):
    # the library MXNet's and torch's CPU builds use for the same convolution-class kernels
    # ml_dtypes: NumPy's bfloat16 dtype (0.4: the first release built for NumPy 2)
    install_requires=["numpy>=1.23", "ml_dtypes>=0.4.0",
                      "onednn-cpu-gomp==2023.2.0; " + ONEDNN_PLATFORMS],
    extras_require={
        # [test] stays light (no CUDA wheels): the NVRTC compile checks of the CUDA kernels
        # need [gpu-compile] (about 240 MB), which CI installs; without it they skip
        "test": ["pytest", "pytest-benchmark", "hypothesis", "scipy", "sympy", "mpich", "mpi4py",
                 "pillow", "graphviz", "onnx", "onnxruntime"],
        "gpu-compile": ["cupy-cuda12x", "nvidia-cuda-nvrtc-cu12"],
        "dist": ["mpich", "mpi4py"],
        "gpu": ["cupy-cuda12x"],
        "docs": ["sphinx>=5"],
        "demo": ["matplotlib"],
        # image decoding (mx.nd.imdecode, _cvimdecode, _cvimread): optional, imported on use
        "image": ["pillow"],
        # mx.viz.plot_network's graphviz.Digraph: optional, imported on use
        "viz": ["graphviz"],
        # mx.onnx.export_model writes ONNX through the onnx package (onnxruntime runs the
        # exported models): optional, imported on use
        "onnx": ["onnx", "onnxruntime"],
    },
    ext_modules=cythonize(
        extensions(),
        language_level=3,
        nthreads=os.cpu_count() or 1,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
    ),
    options={"build_ext": {"parallel": os.cpu_count() or 1}},   # compile extensions side by side
    zip_safe=False,
)
