"""Sphinx extension: the ONNX support matrix of docs/guide/onnx.rst, generated from the
translation table (``mxlite.onnx.table``: the same records the exporter uses) when the
builder starts, into ``docs/guide/_generated/onnx_support.rst`` (not checked in).

Run as a script to print the table: ``python docs/_ext/mxlite_onnx_matrix.py``.
"""
import os
import sys

OUT = os.path.join("guide", "_generated", "onnx_support.rst")


def matrix_rst():
    """The support matrix as an RST list-table: every registered operator with a
    translation (ONNX operators, least opset, notes), then those ONNX cannot express."""
    from mxlite.onnx.table import NOT_EXPRESSIBLE, TRANSLATIONS
    import mxlite.onnx.translations  # noqa: F401  (fills the table)
    lines = [".. list-table:: Operators that export",
             "   :header-rows: 1",
             "   :widths: 25 35 8 32", "",
             "   * - operator", "     - ONNX operators", "     - opset", "     - notes"]
    for name in sorted(TRANSLATIONS, key=str.lower):
        t = TRANSLATIONS[name]
        lines += [f"   * - ``{name}``", f"     - {', '.join(t.onnx_ops)}",
                  f"     - {t.opset}", f"     - {t.notes or ''}"]
    lines.append("")
    if NOT_EXPRESSIBLE:
        lines += [".. list-table:: Operators ONNX cannot express", "   :header-rows: 1",
                  "   :widths: 30 70", "", "   * - operator", "     - why"]
        for name in sorted(NOT_EXPRESSIBLE, key=str.lower):
            lines += [f"   * - ``{name}``", f"     - {NOT_EXPRESSIBLE[name]}"]
        lines.append("")
    return "\n".join(lines)


def _on_builder_inited(app):
    path = os.path.join(app.srcdir, OUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = matrix_rst()
    old = open(path).read() if os.path.exists(path) else None
    if old != text:                     # unchanged: Sphinx need not rebuild the page
        with open(path, "w") as f:
            f.write(text)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.stdout.write(matrix_rst())
