"""The tutorial pages the runner runs, and the Python code blocks read from each page.

A page is a Markdown file under ``docs/python_docs/python/tutorials`` of an MXNet 1.9.1
source tree. Its code blocks are the fenced blocks tagged ``python`` (```` ```python ````)
or in the notedown form ``{.python .input ...}``, in page order; an untagged fence is
output or shell text, not code. A fence may be indented (inside a list item): the block
loses the fence's indentation.

Jupyter-only lines do not run in a plain Python process: line magics (``%matplotlib
inline``), shell escapes (``!pip install``), ``display(...)`` and ``get_ipython()`` lines
become ``pass`` (so an indented body stays valid); a cell magic that only measures
(``%%time``, ``%%timeit``, ``%%capture``) is dropped and the cell runs once; a cell of
another language (``%%bash``, ``%%writefile``) is not Python and is left out of the page.
"""
import glob
import os
import re

TUTORIALS = os.path.join("docs", "python_docs", "python", "tutorials")

# Pages left out, and why: the runner measures what a CPU-only, offline machine can run.
# Every other page with Python blocks is in the set.
EXCLUDED = {
    "deploy/export/onnx.md": "ONNX export",
    "deploy/inference/image_classification_jetson.md": "NVIDIA Jetson device",
    "deploy/inference/wine_detector.md": "Raspberry Pi camera and AWS IoT services",
    "deploy/run-on-aws/cloud.md": "AWS (and no Python blocks)",
    "getting-started/crash-course/6-use_gpus.md": "needs a GPU",
    "packages/ndarray/03-ndarray-contexts.md": "needs a GPU",
    "packages/ndarray/sparse/csr.md": "sparse storage",
    "packages/ndarray/sparse/row_sparse.md": "sparse storage",
    "packages/ndarray/sparse/train.md": "sparse storage",
    "packages/ndarray/sparse/train_gluon.md": "sparse storage",
    "packages/onnx/fine_tuning_gluon.md": "ONNX",
    "packages/onnx/inference_on_onnx_model.md": "ONNX",
    "packages/onnx/super_resolution.md": "ONNX",
    "performance/backend/amp.md": "AMP (mixed precision on a GPU)",
    "performance/backend/mkldnn/mkldnn_quantization.md": "quantisation",
    "performance/backend/mkldnn/mkldnn_readme.md": "MKL-DNN build notes (no Python blocks)",
    "performance/backend/tensorrt/tensorrt.md": "TensorRT",
    "packages/autograd/index.md": "no Python-tagged blocks (untagged fences only)",
    "packages/gluon/loss/kl_divergence.md": "no Python-tagged blocks (untagged fences only)",
}

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)```\s*(?:python|\{\s*\.python\b[^}]*\})\s*$")
_FENCE_ANY = re.compile(r"^(?P<indent>[ \t]*)```")
_FENCE_CLOSE = re.compile(r"^[ \t]*```\s*$")
_LINE_MAGIC = re.compile(r"^(?P<indent>\s*)(?:%[A-Za-z]|!\S|display\(|get_ipython\(\))")
_MEASURING_CELL_MAGICS = ("time", "timeit", "capture", "prun")


def tutorials_dir(source):
    """The tutorials folder of an MXNet source tree (or ``source`` if it is that folder)."""
    for path in (os.path.join(source, TUTORIALS), source):
        if os.path.isdir(os.path.join(path, "packages")):
            return os.path.abspath(path)
    raise SystemExit("%s is neither an MXNet source tree nor its %s folder (no packages/ "
                     "folder found)" % (source, TUTORIALS))


def all_pages(tutorials):
    """Every Markdown page under ``tutorials``, as paths relative to it, sorted."""
    found = glob.glob(os.path.join(tutorials, "**", "*.md"), recursive=True)
    return sorted(os.path.relpath(p, tutorials).replace(os.sep, "/") for p in found)


def page_set(tutorials):
    """(pages to run, {excluded page: reason}): the pages with Python blocks not in
    ``EXCLUDED``; a page without Python blocks is excluded with that reason."""
    run, left_out = [], {}
    for page in all_pages(tutorials):
        if page in EXCLUDED:
            left_out[page] = EXCLUDED[page]
            continue
        with open(os.path.join(tutorials, page), encoding="utf-8") as f:
            if extract_blocks(f.read()):
                run.append(page)
            else:
                left_out[page] = "no Python blocks"
    return run, left_out


def extract_blocks(markdown):
    """The page's Python code blocks, in order, ready to run (see the module docstring)."""
    blocks, lines, fence_indent, inside_other = [], None, 0, False
    for line in markdown.splitlines():
        if lines is not None:                       # inside a Python block
            if _FENCE_CLOSE.match(line):
                block = _clean(lines)
                if block is not None:
                    blocks.append(block)
                lines = None
            else:
                lines.append(_dedent(line, fence_indent))
            continue
        if inside_other:                            # inside an untagged/other fence
            inside_other = not _FENCE_CLOSE.match(line)
            continue
        opened = _FENCE_OPEN.match(line)
        if opened:
            lines, fence_indent = [], len(opened.group("indent").expandtabs())
        elif _FENCE_ANY.match(line) and not _one_line_fence(line):
            inside_other = True
    return blocks


def _one_line_fence(line):
    """```x``` on one line (inline code written with a fence) opens nothing."""
    return line.strip().count("```") >= 2


def _dedent(line, width):
    """``line`` without up to ``width`` leading columns of the fence's indentation."""
    expanded = line.expandtabs()
    strip = min(width, len(expanded) - len(expanded.lstrip()))
    return expanded[strip:]


def _clean(lines):
    """The block's source with Jupyter-only lines neutralised, or None for a cell that is not
    Python or holds nothing but magics."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].strip()[2:].split()[0] if lines[0].strip()[2:] else ""
        if magic not in _MEASURING_CELL_MAGICS:
            return None
        lines = lines[1:]
    out, code = [], False
    for line in lines:
        magic = _LINE_MAGIC.match(line)
        out.append(magic.group("indent") + "pass" if magic else line)
        code = code or bool(line.strip() and not magic)
    return "\n".join(out).rstrip() + "\n" if code else None   # a magics-only cell is no block
