"""The ONNX tests' coverage check: when the whole directory runs, every registered ONNX
translation must have been exported by some test, and imported back (mx -> ONNX -> mx) by
some test; a translation no test reaches fails the session, naming it."""
import os

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
_exported, _imported, _pending = set(), set(), set()


def _recorded(name, translation):
    def translate(ctx, node, ins, outs):
        _exported.add(name)
        _pending.add(name)
        return translation.fn(ctx, node, ins, outs)
    return translation._replace(fn=translate)


def pytest_configure(config):
    try:
        from mxlite.onnx import importer, table, translations  # noqa: F401
    except ImportError:                 # no onnx here: the tests skip themselves
        return
    for name, translation in list(table.TRANSLATIONS.items()):
        table.TRANSLATIONS[name] = _recorded(name, translation)
    run = importer.import_model

    def import_model(path):
        result = run(path)
        _imported.update(_pending)      # what this test exported came back
        return result
    importer.import_model = import_model


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _pending.clear()
    yield


def _whole_directory(session):
    """Every test module here ran, unfiltered, and nothing failed."""
    option = session.config.option
    if session.testsfailed or getattr(option, "keyword", "") or getattr(option, "lf", False):
        return False
    modules = {f for f in os.listdir(_HERE) if f.startswith("test_") and f.endswith(".py")}
    ran = {os.path.basename(str(item.fspath)) for item in session.items}
    return modules <= ran


def pytest_sessionfinish(session, exitstatus):
    if not _exported or not _whole_directory(session):
        return
    from mxlite.onnx.table import TRANSLATIONS
    untested = sorted(set(TRANSLATIONS) - _exported)
    unimported = sorted(set(TRANSLATIONS) - _imported)
    if untested or unimported:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"ONNX translations no test exports: {untested}; no test "
                            f"imports back: {unimported}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
