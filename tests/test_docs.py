"""Documentation that runs: docstring examples, the README's quick start and set-up commands."""
import doctest
import importlib
import os
import pkgutil
import re
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def fenced_blocks(markdown, language):
    return re.findall(rf"```{language}\n(.*?)```", markdown, flags=re.S)


def section(markdown, title):
    """The text of the ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, flags=re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


# ---- docstring examples ---------------------------------------------------------------------
def _docstring_examples():
    """Every docstring with a ``>>>`` example: operator docs and mxlite's modules."""
    finder, parser, found = doctest.DocTestFinder(), doctest.DocTestParser(), {}
    globs = {"mx": mx, "np": np}
    for name in sorted(REGISTRY):
        doc = REGISTRY[name].doc or ""
        if ">>>" in doc and REGISTRY[name].name == name:   # aliases share the record
            found[f"op:{name}"] = parser.get_doctest(doc, dict(globs), name, None, 0)
    for info in pkgutil.walk_packages(mx.__path__, "mxlite."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as e:    # GPU modules need the optional CuPy
            if (e.name or "").split(".")[0] == "cupy":
                continue
            raise
        # as ``python -m doctest`` does: the module's own globals, plus mx and np
        for test in finder.find(module, extraglobs=globs):
            if test.examples and not _is_generated(test.name):
                found[f"py:{test.name}"] = test
    return found


def _is_generated(dotted):
    """True for an ``mx.nd`` function generated from a registry record (tested as ``op:``)."""
    module, _, attr = dotted.rpartition(".")
    obj = getattr(sys.modules.get(module), attr, None)
    return getattr(obj, "op", None) is not None


EXAMPLES = _docstring_examples()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_docstring_example(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    result = runner.run(EXAMPLES[name], out=out.append)
    assert result.failed == 0, "".join(out)


# ---- README -----------------------------------------------------------------------------------
def setup_commands():
    return [b.strip() for b in fenced_blocks(section(read("README.md"), "Set up"), "bash")]


def test_readme_has_exactly_two_setup_commands():
    demo, tests = setup_commands()
    for command in (demo, tests):
        assert "\n" not in command
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e ")
    assert demo.endswith(" && python examples/wgan_gp.py") and "'.[demo]'" in demo
    assert os.path.exists(os.path.join(ROOT, "examples", "wgan_gp.py"))
    assert tests.endswith(" && pytest -q") and "'.[test]'" in tests


def test_ci_tests_the_installed_wheel_with_large_tests_and_docs():
    """The README's test command is the developers' (editable); CI tests what users get:
    the wheel built from the sdist, installed into a fresh environment, with the suite run
    from outside the source tree, the large-tensor tests beside it and a -W docs build."""
    ci = read(".ci/run")
    lines = [line.strip() for line in ci.splitlines() if line.strip() and not line.startswith("#")]

    def first(pattern):
        found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
        assert found, f".ci/run has no line matching {pattern!r}"
        return found[0]

    build = first(r"-m build\b")
    assert "--sdist" not in lines[build] and "--wheel" not in lines[build]   # wheel from sdist
    venv = first(r"python3 -m venv ")
    install = first(r"pip install .*\.whl.*\[test")
    cd_out = first(r'^cd "\$RUN"')
    guard = first(r"pytest .*test_mxlite_is_the_installed_package")
    suite = first(r"^pytest -q -p no:cacheprovider$")
    # the large-tensor sweep starts beside the suite (in the background) and is waited for
    # after the docs build, its exit status checked
    large = first(r"^(MXLITE_LARGE_REPORT=\S+ )?pytest .*-m large tests/large")
    docs = first(r"^sphinx-build -W .*-b html docs ")
    waited = first(r'^wait "\$LARGE"')
    assert build < install and venv < install < cd_out < guard < large < suite < docs < waited
    assert 'exit "$status"' in ci
    assert "pip install -e" not in ci and "build_ext --inplace" not in ci
    assert "MXLITE_TEST_INSTALLED=1" in ci
    assert re.search(r"^cp -r tests .*\"\$RUN/\"$", ci, flags=re.M)   # tests copied out...
    assert not re.search(r"^cp .*\bmxlite\b", ci, flags=re.M)        # ...without the package
    assert "set -euo pipefail" in ci


def declared_dependencies():
    """Package names from setup.py's install_requires/extras_require and pyproject's build
    requirements (setuptools and wheel aside)."""
    setup_py, pyproject = read("setup.py"), read("pyproject.toml")
    blocks = re.findall(r"install_requires=\[(.*?)\]", setup_py, flags=re.S)
    blocks += re.findall(r"extras_require=\{(.*?)\n    \}", setup_py, flags=re.S)
    blocks += re.findall(r"^requires = \[(.*?)\]", pyproject, flags=re.S | re.M)
    names, extras = set(), set()
    for block in blocks:
        extras |= set(re.findall(r"\"([A-Za-z0-9_.\-]+)\":\s*\[", block))   # the extras' names
        for spec in re.findall(r"\"([A-Za-z0-9_.\-]+)[^\"]*\"", block):
            names.add(spec.lower())
    assert {"test", "docs", "image"} <= extras, f"extras_require not parsed: {extras}"
    return names - extras - {"setuptools", "wheel"}


def test_readme_lists_every_dependency():
    listed = set(re.findall(r"^- \*\*([A-Za-z0-9_.\-]+)\*\*", section(read("README.md"),
                                                                     "Dependencies"), flags=re.M))
    declared = declared_dependencies()
    assert {"numpy", "cython", "pytest", "hypothesis", "scipy", "cupy-cuda12x"} <= declared
    assert declared <= {n.lower() for n in listed}, "README's Dependencies section is missing some"


def test_readme_quick_start_runs():
    (code,) = fenced_blocks(section(read("README.md"), "Quick start"), "python")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the sums of exp(x / 6) over each row, and x @ x.T after zeroing row 1
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    want_sum = np.exp(x / 6).sum(axis=1)
    printed = [float(v) for v in re.findall(r"[-+]?\d+\.\d*(?:e[-+]?\d+)?", proc.stdout)]
    assert np.allclose(printed[:2], want_sum, rtol=1e-5), proc.stdout
    x[1] = 0
    assert np.allclose(printed[2:6], (x @ x.T).ravel()), proc.stdout


def test_ci_exits_zero_when_the_background_sweep_has_finished(tmp_path):
    """The head of .ci/run (options, work folder, the EXIT trap) run for real, followed by a
    finished background job in $LARGE and a normal end: the script must exit 0 and remove its
    work folder. (A trap written as `[ -n "$LARGE" ] && kill "$LARGE"` under `set -e` ended
    with the failed kill's status 1 after every step had passed.)"""
    ci = read(".ci/run").splitlines()
    end = next(i for i, line in enumerate(ci) if line.startswith("trap "))
    head = [line for line in ci[:end + 1] if not line.startswith("cd ")]
    script = tmp_path / "head.sh"
    script.write_text("\n".join(head + [
        'echo "$WORK" > "$TMPDIR/work"',
        "sleep 0.1 &", "LARGE=$!", 'wait "$LARGE"', "echo done"]) + "\n")
    import subprocess
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert not os.path.exists((tmp_path / "work").read_text().strip())
