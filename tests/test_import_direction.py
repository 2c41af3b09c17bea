"""The core never imports the GPU backend: ``mxlite.cuda`` depends on the core and registers
itself with ``mxlite.device``; ``mxlite/ops``, ``mxlite/device`` and ``mxlite/context.py`` ask
that registry."""
import ast
import pathlib

import pytest

import mxlite as mx
from mxlite import device
from mxlite.base import MXNetError

PKG = pathlib.Path(mx.__file__).parent
CORE = sorted([*PKG.joinpath("ops").rglob("*.py"), *PKG.joinpath("device").rglob("*.py"),
               PKG / "context.py", PKG / "ndarray" / "ndarray.py"])


def _module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts), parts[-1] == "__init__"


def imported_modules(path, root=PKG):
    """Every module an ``import`` statement in ``path`` (a file of the package at ``root``)
    names, at any depth, relative imports resolved; ``from pkg import name`` yields
    ``pkg.name`` too, since ``name`` may be a module."""
    name, is_pkg = _module_name(path, root)
    package = name if is_pkg else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def test_the_scan_sees_relative_and_nested_imports(tmp_path):
    # the checker itself, on the import that context.py had: relative, inside a function
    root = tmp_path / "mxlite"
    (root / "device").mkdir(parents=True)
    (root / "context.py").write_text("def num_gpus():\n    from .cuda import runtime\n")
    (root / "device" / "__init__.py").write_text("from .. import cuda\nimport numpy\n")
    assert "mxlite.cuda" in set(imported_modules(root / "context.py", root))
    assert {"mxlite.cuda", "numpy"} <= set(imported_modules(root / "device" / "__init__.py",
                                                              root))


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PKG)))
def test_core_does_not_import_the_gpu_backend(path):
    bad = sorted({m for m in imported_modules(path)
                  if m == "mxlite.cuda" or m.startswith("mxlite.cuda.")})
    assert not bad, f"{path.relative_to(PKG.parent)} imports {bad}"


def test_the_gpu_backend_registers_itself():
    import mxlite.cuda.runtime
    assert device.gpu_backend() is mxlite.cuda.runtime


def test_without_a_gpu_backend(monkeypatch):
    monkeypatch.setattr(device, "_GPU_BACKEND", [])
    monkeypatch.setitem(device._NAMESPACES, "gpu", None)
    monkeypatch.delitem(device._NAMESPACES, "gpu")
    assert mx.num_gpus() == 0
    assert "no GPU backend is registered" in device.gpu_unavailable_reason()
    mx.nd.waitall()                          # nothing to wait for
    with pytest.raises(MXNetError, match="gpu_memory_info: no GPU backend"):
        mx.context.gpu_memory_info(0)
    with pytest.raises(MXNetError, match=r"gpu\(0\): no GPU backend"):
        mx.nd.zeros((2,), ctx=mx.gpu(0))


def test_register_gpu_backend_checks_the_backend(monkeypatch):
    monkeypatch.setattr(device, "_GPU_BACKEND", list(device._GPU_BACKEND))

    class Half:
        def device_count(self):
            return 0
    with pytest.raises(MXNetError, match="lacks .*unavailable_reason"):
        device.register_gpu_backend(Half())
