"""Every module attribute mxlite's own source uses exists.

A name that does not exist fails only when its line runs: ``nd.add_n`` in the multi-context
save path raised AttributeError at the end of a multi-device training run and lost the model.
This test parses every source file of the package with ``ast`` and resolves, against the
imported modules, each attribute read on a name bound to an mxlite module: ``nd.X``,
``sym.X``, ``ndarray.X``, ``symbol.X``, ``mx.nd.X`` (chains through submodules such as
``nd.random.X``), ``getattr(nd, "X")`` with a literal name, and ``F.X``: ``F`` is the
namespace a ``hybrid_forward`` or an FGradient receives, ``mx.nd`` or ``mx.sym``, so where it
is not bound by an import, ``F.X`` must exist in both. ``from <mxlite module> import X`` is
checked too: inside a function it fails only when the function runs.

Scopes follow Python's rules closely enough for this purpose: a function parameter or
assignment hides a module-level import of the same name inside that function; class bodies do
not leak into their methods.
"""
import ast
import importlib.machinery
import importlib.util
import pathlib
import sys
import types

import pytest

import mxlite

PACKAGE = pathlib.Path(mxlite.__file__).parent
FRONT_ENDS = (mxlite.ndarray, mxlite.symbol)
_EITHER = object()     # the binding of an F that no import names: mx.nd or mx.sym


def _module_name(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _package_of(path):
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _loaded_module(name):
    """The module ``name`` if ``import mxlite`` loaded it (the scan imports nothing: a module
    such as the MPI store loads only when asked for)."""
    return sys.modules.get(name) if name and name.split(".")[0] == "mxlite" else None


def _mxlite_module(obj):
    return isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "mxlite"


def _import_bindings(node, package):
    """({local name: module} for the mxlite modules an Import/ImportFrom statement binds,
    [the names it imports from a loaded mxlite module that has no such name])."""
    found, missing = {}, []
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name if alias.asname else alias.name.split(".")[0]
            module = _loaded_module(name)
            if _mxlite_module(module):
                found[alias.asname or name] = module
        return found, missing
    base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
        if node.level else node.module
    parent = _loaded_module(base)
    if parent is None:
        return found, missing
    for alias in node.names:
        if alias.name == "*":
            continue
        obj = _loaded_module(f"{base}.{alias.name}") or getattr(parent, alias.name, None)
        if _mxlite_module(obj):
            found[alias.asname or alias.name] = obj
        elif obj is None and not _is_source(f"{base}.{alias.name}"):
            missing.append(f"{base}.{alias.name}")
    return found, missing


def _is_source(dotted):
    """Whether ``dotted`` names a module or package of mxlite's source tree, or a compiled
    extension module beside them (one that ``import mxlite`` does not load: the oneDNN
    kernels load on first use)."""
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or any(
        path.with_name(path.name + suffix).is_file()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _local_names(fn):
    """Names a function binds itself (parameters and stores, not in nested functions)."""
    names = {a.arg for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs}
    names |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _chain(node):
    """(base name, [attr, ...]) of ``a.b.c`` read as a value, else None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id, attrs[::-1]) if isinstance(node, ast.Name) else None


def _missing(module, attrs):
    """The dotted prefix of ``attrs`` that does not resolve on ``module``, or None. Checking
    stops at the first object that is not an mxlite module (an NDArray method, a class)."""
    obj = module
    for i, attr in enumerate(attrs):
        if not hasattr(obj, attr):
            return ".".join(attrs[:i + 1])
        obj = getattr(obj, attr)
        if not _mxlite_module(obj):
            return None
    return None


class _Scanner(ast.NodeVisitor):
    """Collects (line, expression, module name) for each unresolved attribute."""

    def __init__(self, package):
        self.package = package
        self.scopes = [{"F": _EITHER}]
        self.problems, self.checked = [], 0

    def _bound(self, name):
        return self.scopes[-1].get(name)

    def _check(self, node, name, attrs):
        binding = self._bound(name)
        if binding is None or not attrs:
            return
        for module in (FRONT_ENDS if binding is _EITHER else (binding,)):
            self.checked += 1
            bad = _missing(module, attrs)
            if bad is not None:
                self.problems.append((node.lineno, f"{name}.{bad}", module.__name__))

    def _bind_imports(self, node):
        found, missing = _import_bindings(node, self.package)
        self.scopes[-1].update(found)
        self.checked += len(node.names)
        self.problems += [(node.lineno, f"import of {name}", name.rpartition(".")[0])
                          for name in missing]

    visit_Import = visit_ImportFrom = _bind_imports

    def _visit_function(self, node):
        for d in node.decorator_list + node.args.defaults + node.args.kw_defaults:
            if d is not None:
                self.visit(d)
        scope = {k: v for k, v in self.scopes[-1].items() if k not in _local_names(node)}
        if "F" in _local_names(node) and "F" in {a.arg for a in node.args.args}:
            scope["F"] = _EITHER          # hybrid_forward(self, F, ...), gradient(F, node, ...)
        self.scopes.append(scope)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _visit_function

    def visit_ClassDef(self, node):
        for d in node.decorator_list + node.bases:
            self.visit(d)
        self.scopes.append(dict(self.scopes[-1]))   # methods see the enclosing scope only
        outer = self.scopes[-2]
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.scopes.append(outer)
                self.visit(stmt)
                self.scopes.pop()
            else:
                self.visit(stmt)
        self.scopes.pop()

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):     # ``nd = ...`` replaces an imported module
            self.scopes[-1].pop(node.id, None)

    def visit_Attribute(self, node):
        chain = _chain(node)
        if chain is not None and isinstance(node.ctx, ast.Load):
            self._check(node, *chain)
            return                        # the inner attributes are part of this chain
        self.generic_visit(node)

    def visit_Call(self, node):
        f, args = node.func, node.args
        if (isinstance(f, ast.Name) and f.id == "getattr" and len(args) == 2
                and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)):
            chain = _chain(args[0])
            if chain is not None:
                self._check(node, chain[0], chain[1] + [args[1].value])
        self.generic_visit(node)


def scan_source(text, path, package):
    """The unresolved attributes of one source text: [(line, expression, module)] and the
    number of references checked."""
    scanner = _Scanner(package)
    scanner.visit(ast.parse(text, str(path)))
    return scanner.problems, scanner.checked


def _sources():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_attribute_in_the_package_exists():
    problems, checked = [], 0
    for path in _sources():
        found, n = scan_source(path.read_text(encoding="utf-8"), path, _package_of(path))
        checked += n
        problems += [f"{path.relative_to(PACKAGE.parent)}:{line}: {expr} (no such name in "
                     f"{module})" for line, expr, module in found]
    assert checked > 1000, f"only {checked} references were checked: the scan is not working"
    assert not problems, "names that do not exist:\n" + "\n".join(problems)


@pytest.mark.parametrize("source, bad", [
    ("from . import ndarray as nd\ndef f(x):\n    return nd.no_such_op(x)\n", "nd.no_such_op"),
    ("import mxlite as mx\ny = mx.nd.random.no_such_sampler\n", "mx.nd.random.no_such_sampler"),
    ("def hybrid_forward(self, F, x):\n    return F.no_such_op(x)\n", "F.no_such_op"),
    ("from . import symbol as sym\nz = getattr(sym, 'no_such_op')\n", "sym.no_such_op"),
    # an op that exists in mx.nd only is not enough for F
    ("def grad(F, node, g):\n    return F.waitall()\n", "F.waitall"),
    # an import inside a function fails only when the function runs
    ("def f():\n    from .ndarray import no_such_op\n", "import of mxlite.ndarray.no_such_op"),
])
def test_the_scan_finds_a_missing_name(source, bad):
    problems, _ = scan_source(source, "<test>", "mxlite")
    assert bad in [expr for _, expr, _ in problems]


@pytest.mark.parametrize("source", [
    "from . import ndarray as nd\ndef f(nd):\n    return nd.anything\n",          # a parameter
    "from . import symbol as sym\ndef f(x):\n    sym = x\n    return sym.list_x()\n",
    "from . import ndarray as nd\nnd.new_name = 1\n",                                # a store
    "def hybrid_forward(self, F, x):\n    return F.FullyConnected(x, num_hidden=2)\n",
    "class A:\n    nd = 1\n    def f(self):\n        return nd.whatever\n",         # unbound
    "from . import ndarray as nd\nnd = None\ny = nd.whatever\n",                    # rebound
])
def test_the_scan_leaves_other_bindings_alone(source):
    problems, _ = scan_source(source, "<test>", "mxlite")
    assert problems == []
