"""The translation tables held against the registry: export translations and reasons are
for registered operators, import handlers produce registered operators."""
from mxlite.ops.registry import REGISTRY
from mxlite.onnx import import_ops  # noqa: F401  (fills IMPORTS)
from mxlite.onnx import translations  # noqa: F401  (fills TRANSLATIONS)
from mxlite.onnx.import_table import IMPORTS
from mxlite.onnx.table import NOT_EXPRESSIBLE, TRANSLATIONS

REGISTERED = {op.name for op in REGISTRY.values()}


def test_export_translations_are_for_registered_operators():
    stray = sorted(set(TRANSLATIONS) - REGISTERED)
    assert not stray, f"translations of operators that are not registered: {stray}"


def test_reasons_are_for_registered_untranslated_operators_and_say_why():
    stray = sorted(set(NOT_EXPRESSIBLE) - REGISTERED)
    assert not stray, f"reasons for operators that are not registered: {stray}"
    both = sorted(set(NOT_EXPRESSIBLE) & set(TRANSLATIONS))
    assert not both, f"operators both translated and called inexpressible: {both}"
    short = sorted(n for n, why in NOT_EXPRESSIBLE.items() if len(why.split()) < 4)
    assert not short, f"reasons too short to say why: {short}"


def test_importers_produce_registered_operators():
    stray = {t: sorted(set(i.into) - REGISTERED) for t, i in IMPORTS.items()}
    stray = {t: s for t, s in stray.items() if s}
    assert not stray, f"importers naming operators that are not registered: {stray}"


def test_every_registered_operator_exports_or_says_why_it_cannot():
    """The registry-wide coverage: each registered operator has an ONNX translation or a
    written reason why ONNX cannot express it; a new operator without either fails here."""
    missing = sorted(REGISTERED - set(TRANSLATIONS) - set(NOT_EXPRESSIBLE))
    assert not missing, f"operators with neither an ONNX translation nor a reason: {missing}"
