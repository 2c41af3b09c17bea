"""Sphinx extension: write the operator reference from mxlite's registry at docs-build time.

Nothing here restates an operator. For every ``OpDef`` in ``mxlite.ops.registry.REGISTRY``
the pages show its public names (``mx.nd.X``, ``mx.nd.random.X``, ``mx.nd.contrib.X``, ...),
the signature of the generated ``mx.nd`` function, the inputs and parameters (kind, default,
choices, doc), whether it is differentiable, its devices (the keys of ``op.compute``) and
its docstring. Operators are grouped by the module that registered them (the family).

The ``.rst`` files go to ``docs/api/ops/`` (not checked in) when the builder starts. A
docstring that is not clean reStructuredText on its own (docutils reports a problem, or it
holds a section title) is shown verbatim as a literal block and listed in
``MALFORMED`` (and in the build log), so one bad docstring cannot break the build.

Usable without Sphinx: ``python docs/_ext/mxlite_apigen.py OUTDIR`` writes the pages.
"""
import inspect
import io
import os
import re
import sys

OUT_SUBDIR = os.path.join("api", "ops")

# Family pages in reading order (others follow alphabetically).
FAMILY_ORDER = ["creation", "elemwise", "reduce", "shape", "index", "indexing", "linalg",
                "la", "nn", "conv", "pooling", "norm", "sorting", "sequence",
                "optimizer_ops", "random", "debug", "control"]
FAMILY_TITLES = {
    "creation": "Creation", "elemwise": "Element-wise", "reduce": "Reduction",
    "shape": "Shape", "index": "Index", "indexing": "Indexing", "linalg": "Matrix products",
    "la": "Linear algebra (mx.nd.linalg)", "nn": "Dense layers, activations and losses",
    "conv": "Convolution", "pooling": "Pooling and upsampling",
    "norm": "Normalization, dropout and embedding", "sorting": "Sorting and scans",
    "sequence": "Sequence", "optimizer_ops": "Optimizer updates",
    "random": "Random sampling", "debug": "Finite checks and debugging",
    "control": "Graph control",
}

# Docstrings shown verbatim because they are not clean RST: {label: first problem}.
MALFORMED = {}
# Check docstrings with docutils (Sphinx brings it); the coverage test runs without it.
CHECK_RST = True


# ---- what the registry holds -----------------------------------------------------------------
def registry():
    from mxlite.ops.registry import REGISTRY
    return REGISTRY


def public_name(name):
    """``mx.nd.X`` / ``mx.nd.random.X`` / ``mx.nd._internal.X`` for a registered name."""
    from mxlite.ops.registry import namespace_of
    ns, public = namespace_of(name)
    return "mx.nd." + (f"{ns}." if ns else "") + public


def front_end_function(name):
    """The ``mx.nd`` function a registered name became (None if the front end lacks it)."""
    import mxlite as mx
    from mxlite.ops.registry import namespace_of
    ns, public = namespace_of(name)
    module = getattr(mx.nd, ns, None) if ns else mx.nd
    return getattr(module, public, None)


def family_of(op):
    """The ``mxlite.ops`` module that registered ``op`` (from its kernels' module)."""
    for fn in op.compute.values():
        module = getattr(fn, "__module__", "") or ""
        if module.startswith("mxlite.ops."):
            return module.rsplit(".", 1)[1]
    return "other"


def operators():
    """Each distinct ``OpDef`` once, with all its registered names (main name first)."""
    seen, ops = {}, []
    for name in sorted(registry()):
        op = registry()[name]
        if id(op) not in seen:
            seen[id(op)] = (op, [])
            ops.append(seen[id(op)])
        seen[id(op)][1].append(name)
    result = []
    for op, names in ops:
        names = sorted(set(names), key=lambda n: (n != op.name, n))
        result.append((op, names))
    return sorted(result, key=lambda item: item[0].name.lstrip("_").lower())


def families():
    """``{family: [(op, names), ...]}`` in reading order."""
    groups = {}
    for op, names in operators():
        groups.setdefault(family_of(op), []).append((op, names))
    order = [f for f in FAMILY_ORDER if f in groups] + sorted(set(groups) - set(FAMILY_ORDER))
    return {f: groups[f] for f in order}


def differentiable(op):
    from mxlite.ops.registry import NON_DIFFERENTIABLE
    if callable(op.gradient):
        return "yes"
    if op.gradient == NON_DIFFERENTIABLE:
        return "no (declared non-differentiable)"
    return "not declared (backward raises MXNetError)"


def labels():
    """``{registered name: RST label}``. RST labels ignore case, and MXNet has names that
    differ only in case (``cast``/``Cast``, aliases of one op): one label per op and
    lower-cased name, with a numeric suffix should two different ops ever collide."""
    taken, result = {}, {}
    for op, names in operators():
        for name in names:
            base = "op-" + name.lower()
            label, n = base, 1
            while label in taken and taken[label] is not op:
                n += 1
                label = f"{base}-{n}"
            taken[label] = op
            result[name] = label
    return result


def page_name(family):
    """The file (without .rst) of a family's page."""
    return f"{family}-ops"


def covered_names():
    """Every registered name the generated pages document (the test compares with REGISTRY)."""
    return {name for _, names in operators() for name in names}


# ---- reStructuredText helpers -------------------------------------------------------------------
def title(text, char):
    return f"{text}\n{char * len(text)}\n"


def literal(text):
    """``text`` as an inline literal (backquotes cannot nest: fall back to a quoted form)."""
    text = str(text)
    if "``" in text or text.endswith("`") or not text.strip():
        return repr(text) if text.strip() else "(empty)"
    return f"``{text}``"


def indent(text, prefix="   "):
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


# Sphinx's roles and directives are unknown to plain docutils: read them as literals / code.
_SPHINX_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`([^`]*)`")
_SPHINX_DIRECTIVE = re.compile(r"^(\s*)\.\. (?:code-block|sourcecode|highlight)::", re.M)


def rst_problem(text):
    """The first problem docutils finds in ``text`` as a standalone document, or None.

    Sphinx's own roles (``:class:`X```) and ``code-block`` are accepted. Always None when
    ``CHECK_RST`` is off."""
    if not CHECK_RST:
        return None
    from docutils import nodes
    from docutils.core import publish_doctree
    from docutils.utils import SystemMessage
    text = _SPHINX_ROLE.sub(lambda m: "``" + m.group(1).replace("`", "") + "``", text)
    text = _SPHINX_DIRECTIVE.sub(r"\1.. code::", text)
    stream = io.StringIO()
    try:
        tree = publish_doctree(text, settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream,
            "file_insertion_enabled": False, "raw_enabled": False})
    except SystemMessage as e:       # pragma: no cover (halt_level 5: never raised)
        return str(e)
    if stream.getvalue():
        return stream.getvalue().strip().splitlines()[0]
    if any(isinstance(n, (nodes.section, nodes.title, nodes.transition))
           for n in tree.findall()):
        return "holds a section title or transition"
    return None


def docstring_block(text, label):
    """``text`` as RST when it is clean on its own, else as a literal block."""
    text = inspect.cleandoc(text or "")
    if not text:
        return "*(no docstring)*\n"
    problem = rst_problem(text)
    if problem is None:
        return text + "\n"
    MALFORMED[label] = problem
    return "::\n\n" + indent(text) + "\n"


def _default(p):
    from mxlite.ops.registry import REQUIRED
    return "required" if p.default is REQUIRED else literal(repr(p.default))


# ---- pages --------------------------------------------------------------------------------------
def op_section(op, names, label_of):
    from mxlite.ndarray import NDArray
    main = public_name(op.name)
    fn = front_end_function(op.name)
    lines = [f".. _{label}:" for label in dict.fromkeys(label_of[n] for n in names)] + [""]
    lines.append(title(main, "-"))
    signature = str(inspect.signature(fn)) if fn is not None else "(front end missing)"
    lines += [".. code-block:: text", "", f"   {main}{signature}", ""]
    fields = []
    others = [public_name(n) for n in names if n != op.name]
    if others:
        fields.append((":Also: ", ", ".join(literal(o) for o in others)))
    fields.append((":Registered as: ", ", ".join(literal(n) for n in names)))
    method = getattr(NDArray, main.rsplit(".", 1)[1], None)
    if getattr(method, "op", None) is op:
        fields.append((":NDArray method: ", literal(f"x.{method.__name__}(...)")))
    fields.append((":Differentiable: ", differentiable(op)))
    fields.append((":Devices: ", ", ".join(literal(d) for d in sorted(op.compute)) or "none"))
    n_out = op.num_outputs if isinstance(op.num_outputs, int) else "set by the parameters"
    fields.append((":Outputs: ", str(n_out)))
    if op.elementwise:
        fields.append((":In place: ", "``out=`` may be one of the inputs (element-wise)"))
    lines += [k + v for k, v in fields] + [""]

    rows = []
    if op.variadic:
        rows.append((f"*{op.inputs[0] if op.inputs else 'data'}", "NDArray inputs",
                     "required", "any number of input arrays"))
    else:
        rows += [(i, "NDArray input", "required", "") for i in op.inputs]
    for p in op.params:
        doc = p.doc or ""
        if p.choices:
            doc = (doc + "; " if doc else "") + "one of " + ", ".join(
                literal(repr(c)) for c in p.choices)
        rows.append((p.name, p.kind, _default(p), doc))
    rows.append(("out", "NDArray, keyword-only", literal("None"),
                 "array to write the result into"))
    rows.append(("name", "str, keyword-only", literal("None"), "ignored (MXNet compatibility)"))
    lines += [".. list-table:: Parameters", "   :header-rows: 1", "   :widths: 15 15 15 55", "",
              "   * - name", "     - kind", "     - default", "     - description"]
    for name, kind, default, doc in rows:
        cell = _cell(doc, f"{op.name}.{name}")
        lines += [f"   * - {literal(name)}", f"     - {kind}", f"     - {default}",
                  f"     - {cell}"]
    lines.append("")
    lines.append(docstring_block(op.doc, op.name))
    return "\n".join(lines)


def _cell(text, label):
    """A one-line table cell: RST if clean, else a literal."""
    text = " ".join(str(text).split())
    if not text:
        return ""
    problem = rst_problem(text)
    if problem is None:
        return text
    MALFORMED[label] = problem
    return literal(text)


def family_page(family, entries, label_of):
    module_name = f"mxlite.ops.{family}"
    heading = FAMILY_TITLES.get(family, family.capitalize()) + " operators"
    lines = [f".. This file is generated by docs/_ext/mxlite_apigen.py; do not edit.", "",
             f".. _ops-{family}:", "", title(heading, "=")]
    module = sys.modules.get(module_name)
    if module is not None:
        lines.append(f"Registered by ``{module_name}``.\n")
        lines.append(docstring_block(module.__doc__, module_name))
    lines.append(".. contents:: Operators\n   :local:\n   :depth: 1\n")
    for op, names in entries:
        lines.append(op_section(op, names, label_of))
    return "\n".join(lines)


def index_page(groups, label_of):
    n_ops = sum(len(v) for v in groups.values())
    n_names = sum(len(names) for v in groups.values() for _, names in v)
    lines = [".. This file is generated by docs/_ext/mxlite_apigen.py; do not edit.", "",
             ".. _ops-reference:", "", title("Operators (generated from the registry)", "="),
             f"mxlite registers {n_ops} operators under {n_names} names. This reference is "
             "written from the registry (``mxlite.ops.registry.REGISTRY``) each time the docs "
             "are built, so it lists exactly what ``mx.nd`` holds: each operator's public "
             "names, the signature of its ``mx.nd`` function, its parameters with their kinds "
             "and defaults, whether autograd can differentiate it and the devices it has "
             "kernels for. ``mx.operator.list_ops()`` gives the same list at run time.", "",
             "Names starting with ``_`` live in ``mx.nd._internal`` (scalar forms of the "
             "arithmetic operators, gradient helpers); ``_random_*`` and ``_sample_*`` names "
             "are ``mx.nd.random.*``, ``_contrib_*`` names ``mx.nd.contrib.*``.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {page_name(family)}" for family in groups] + [""]
    lines += [".. list-table:: Every registered name", "   :header-rows: 1",
              "   :widths: 35 25 15 25", "", "   * - public name", "     - family",
              "     - devices", "     - differentiable"]
    rows = []
    for family, entries in groups.items():
        for op, names in entries:
            for name in names:
                rows.append((public_name(name), name, family, op))
    for public, name, family, op in sorted(rows, key=lambda r: r[0].lower()):
        lines += [f"   * - :ref:`{public} <{label_of[name]}>`",
                  f"     - :ref:`{FAMILY_TITLES.get(family, family)} <ops-{family}>`",
                  f"     - {', '.join(sorted(op.compute))}",
                  f"     - {differentiable(op).split(' ')[0]}"]
    lines.append("")
    return "\n".join(lines)


def pages():
    """``{relative file name: text}`` of every generated page."""
    MALFORMED.clear()
    groups, label_of = families(), labels()
    out = {"index.rst": index_page(groups, label_of)}
    for family, entries in groups.items():
        out[f"{page_name(family)}.rst"] = family_page(family, entries, label_of)
    return out


def write_pages(outdir):
    """Write the pages into ``outdir`` (only files whose text changed); drop stale ones."""
    os.makedirs(outdir, exist_ok=True)
    texts = pages()
    for name, text in texts.items():
        path = os.path.join(outdir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    for name in os.listdir(outdir):
        if name.endswith(".rst") and name not in texts:
            os.remove(os.path.join(outdir, name))
    return sorted(texts)


# ---- Sphinx hook ------------------------------------------------------------------------------
def _on_builder_inited(app):
    from sphinx.util import logging
    logger = logging.getLogger(__name__)
    write_pages(os.path.join(app.srcdir, OUT_SUBDIR))
    for label, problem in sorted(MALFORMED.items()):
        # not a warning: the page still renders (verbatim); see MALFORMED
        logger.info(f"mxlite_apigen: docstring of {label} is not clean RST ({problem}); "
                    "shown verbatim")


def _on_process_docstring(app, what, name, obj, options, lines):
    """Show an autodoc'd docstring that is not clean RST verbatim (after napoleon has run),
    so a docstring written as plain text cannot break a ``-W`` build."""
    problem = rst_problem("\n".join(lines)) if lines else None
    if problem is None:
        return
    from sphinx.util import logging
    MALFORMED[name] = problem
    logging.getLogger(__name__).info(
        f"mxlite_apigen: docstring of {name} is not clean RST ({problem}); shown verbatim")
    lines[:] = ["::", ""] + ["   " + line if line.strip() else "" for line in lines] + [""]


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    app.connect("builder-inited", _on_builder_inited)
    # after napoleon (priority 500), which turns NumPy sections into RST first
    app.connect("autodoc-process-docstring", _on_process_docstring, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    print("\n".join(write_pages(sys.argv[1] if len(sys.argv) > 1 else OUT_SUBDIR)))
    for label, problem in sorted(MALFORMED.items()):
        print(f"verbatim: {label}: {problem}", file=sys.stderr)
