"""Tally a file's results on each side and print the comparison table."""
from dataclasses import dataclass, field


@dataclass
class FileTally:
    """One test file: what each side passed, and the tests MXNet passes that mxlite does not."""
    name: str
    mxlite: dict                       # nodeid -> result record
    mxnet: dict = None                 # nodeid -> result record, or None without a baseline
    collect_errors: list = field(default_factory=list)   # mxlite's

    @staticmethod
    def of(name, mxlite_records, mxnet_records=None):
        def results(records):
            return {r["nodeid"]: r for r in records if r["type"] == "result"}
        return FileTally(name, results(mxlite_records),
                         None if mxnet_records is None else results(mxnet_records),
                         [r for r in mxlite_records if r["type"] == "collect_error"])

    def passed(self, side):
        results = self.mxlite if side == "mxlite" else self.mxnet
        return {n for n, r in (results or {}).items() if r["outcome"] == "passed"}

    def missing(self):
        """(nodeid, mxlite's outcome, message) for each test MXNet passes and mxlite does not."""
        rows = []
        for nodeid in sorted(self.passed("mxnet") - self.passed("mxlite")):
            record = self.mxlite.get(nodeid)
            if record is None:
                message = self.collect_errors[0]["message"] if self.collect_errors else ""
                rows.append((nodeid, "not run", message))
            else:
                rows.append((nodeid, record["outcome"], record.get("message", "")))
        return rows


def table(tallies):
    """The per-file table (plain text): MXNet's passes, mxlite's, and the count on both."""
    baseline = all(t.mxnet is not None for t in tallies)
    head = "%-28s %7s %7s %7s" % ("file", "tests", "mxlite", "failed")
    if baseline:
        head = "%-28s %7s %7s %7s %9s %8s" % ("file", "tests", "MXNet", "mxlite", "both", "missing")
    lines = [head, "-" * len(head)]
    total = [0] * 5
    for t in tallies:
        if baseline:
            tests = len(set(t.mxnet) | set(t.mxlite))
            counts = [tests, len(t.passed("mxnet")), len(t.passed("mxlite")),
                      len(t.passed("mxnet") & t.passed("mxlite")), len(t.missing())]
            lines.append("%-28s %7d %7d %7d %9d %8d" % ((t.name,) + tuple(counts)))
        else:
            tests = len(t.mxlite)
            counts = [tests, len(t.passed("mxlite")), tests - len(t.passed("mxlite"))]
            note = "  (%d collection errors)" % len(t.collect_errors) if t.collect_errors else ""
            lines.append("%-28s %7d %7d %7d%s" % ((t.name,) + tuple(counts) + (note,)))
        total = [a + b for a, b in zip(total, counts + [0] * (5 - len(counts)))]
    lines.append("-" * len(head))
    if baseline:
        lines.append("%-28s %7d %7d %7d %9d %8d" % (("total",) + tuple(total)))
    else:
        lines.append("%-28s %7d %7d %7d" % (("total",) + tuple(total[:3])))
    return "\n".join(lines)


def details(tallies):
    """Each test MXNet passes and mxlite does not, with the end of mxlite's message."""
    lines = []
    for t in tallies:
        for nodeid, outcome, message in t.missing():
            last = message.strip().splitlines()[-1] if message.strip() else ""
            lines.append("%s  [%s]  %s" % (nodeid, outcome, last[:160]))
    return "\n".join(lines)
