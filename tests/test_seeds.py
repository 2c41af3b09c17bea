"""Tests are replayable: no RNG is seeded from Python's salted ``hash()`` (it changes with
every interpreter run unless PYTHONHASHSEED is fixed); seeds come from ``zlib.crc32``."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
# hash( used inside a seed or generator construction, e.g. default_rng(abs(hash(name)) % 2**32)
SALTED = re.compile(r"(seed|rng|RandomState|Generator)\w*\([^\n]*\bhash\(")


def test_no_seed_comes_from_pythons_salted_hash():
    offenders = []
    for folder in ("tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for lineno, line in enumerate(path.read_text().splitlines(), 1):
                if SALTED.search(line) and path.name != "test_seeds.py":
                    offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not offenders, "seeds from salted hash():\n" + "\n".join(offenders)
