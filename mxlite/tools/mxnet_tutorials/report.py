"""Tally each page's blocks on each side, print the comparison table and group mxlite's
failures by cause."""
import re
from dataclasses import dataclass

SIDES = ("mxnet", "mxlite")
TOLERANCE = 1e-4
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@dataclass
class PageTally:
    """One page: its number of blocks and each side's result records ({block: record})."""
    page: str
    blocks: int
    mxlite: dict
    mxnet: dict = None          # None without a baseline

    @staticmethod
    def of(page, blocks, mxlite_records, mxnet_records=None):
        def results(records):
            out = {r["block"]: r for r in records if r["type"] == "result"}
            for r in records:       # the process could not even import mxnet
                if r["type"] == "setup_error":
                    out[0] = dict(r, type="result", block=0, outcome="error")
            return out
        return PageTally(page, blocks, results(mxlite_records),
                         None if mxnet_records is None else results(mxnet_records))

    def ran(self, side):
        """How many blocks ``side`` ran (the page stops at its first failing block)."""
        return sum(r["outcome"] == "ran" for r in (getattr(self, side) or {}).values())

    def both(self):
        """How many blocks both sides ran (each side runs a prefix of the page)."""
        return min(self.ran("mxlite"), self.ran("mxnet"))

    def as_far(self):
        """Whether mxlite ran at least as many of the page's blocks as MXNet."""
        return self.ran("mxlite") >= self.ran("mxnet")

    def failure(self, side):
        """The record of the block that stopped ``side``, or None if every block ran."""
        for record in (getattr(self, side) or {}).values():
            if record["outcome"] != "ran":
                return record
        return None

    def same_output(self):
        """How many blocks both sides ran with the same printed text and value (numbers
        within ``TOLERANCE``)."""
        both = [b for b in range(self.blocks)
                if self.mxnet and b in self.mxnet and b in self.mxlite
                and self.mxnet[b]["outcome"] == self.mxlite[b]["outcome"] == "ran"]
        return sum(outputs_agree(_shown(self.mxnet[b]), _shown(self.mxlite[b])) for b in both)


def _shown(record):
    return (record.get("output") or "") + "\n" + (record.get("value") or "")


def outputs_agree(a, b, tolerance=TOLERANCE):
    """Whether two blocks' texts agree: the same words, and numbers within ``tolerance``
    (absolute, or relative to the larger)."""
    words_a, words_b = _NUMBER.split(a), _NUMBER.split(b)
    if [w.split() for w in words_a] != [w.split() for w in words_b]:
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        x, y = float(x), float(y)
        if abs(x - y) > tolerance * max(1.0, abs(x), abs(y)):
            return False
    return True


def table(tallies):
    """The per-page table: blocks, blocks MXNet runs, blocks mxlite runs, blocks both run,
    whether mxlite gets as far as MXNet, the blocks whose output agrees; then the totals."""
    baseline = all(t.mxnet is not None for t in tallies)
    width = max([len(t.page) for t in tallies] + [10])
    if baseline:
        head = "%-*s %6s %6s %6s %6s %5s %5s" % (width, "page", "blocks", "MXNet", "mxlite",
                                                 "both", "far", "same")
    else:
        head = "%-*s %6s %6s  %s" % (width, "page", "blocks", "mxlite", "stopped by")
    lines = [head, "-" * len(head)]
    for t in tallies:
        if baseline:
            lines.append("%-*s %6d %6d %6d %6d %5s %5d" % (
                width, t.page, t.blocks, t.ran("mxnet"), t.ran("mxlite"), t.both(),
                "yes" if t.as_far() else "no", t.same_output()))
        else:
            lines.append("%-*s %6d %6d  %s" % (width, t.page, t.blocks, t.ran("mxlite"),
                                               cause(t.failure("mxlite"))))
    lines.append("-" * len(head))
    lines.append(totals_line(tallies, width, baseline))
    if baseline:
        lines += ["", summary(tallies)]
    return "\n".join(lines)


def totals(tallies):
    """(pages, blocks, MXNet's blocks run, mxlite's, both, pages where mxlite gets as far,
    blocks with the same output)."""
    baseline = all(t.mxnet is not None for t in tallies)
    return (len(tallies), sum(t.blocks for t in tallies),
            sum(t.ran("mxnet") for t in tallies) if baseline else None,
            sum(t.ran("mxlite") for t in tallies),
            sum(t.both() for t in tallies) if baseline else None,
            sum(t.as_far() for t in tallies) if baseline else None,
            sum(t.same_output() for t in tallies) if baseline else None)


def totals_line(tallies, width, baseline):
    pages, blocks, mxnet, mxlite, both, far, same = totals(tallies)
    label = "total (%d pages)" % pages
    if baseline:
        return "%-*s %6d %6d %6d %6d %5d %5d" % (width, label, blocks, mxnet, mxlite, both,
                                                 far, same)
    return "%-*s %6d %6d" % (width, label, blocks, mxlite)


def summary(tallies):
    """The measure in one sentence."""
    pages, blocks, mxnet, mxlite, both, far, _ = totals(tallies)
    return ("%d pages, %d code blocks: MXNet runs %d of them, mxlite %d, both %d; %d of the "
            "%d pages get as far on mxlite as on MXNet." % (pages, blocks, mxnet, mxlite, both,
                                                           far, pages))


# what a failure message says is missing, most specific first
_MISSING = (
    (re.compile(r"No module named '([^']+)'"), "module {0}"),
    (re.compile(r"cannot import name '([^']+)' from '([^']+)'"), "{1}.{0}"),
    (re.compile(r"module '([^']+)' has no attribute '([^']+)'"), "{0}.{1}"),
    (re.compile(r"'([^']+)' object has no attribute '([^']+)'"), "{0}.{1}"),
    (re.compile(r"type object '([^']+)' has no attribute '([^']+)'"), "{0}.{1}"),
    (re.compile(r"name '([^']+)' is not defined"), "name {0}"),
)


def cause(record):
    """A short cause for a failing block: the missing module or name when the message says
    one, else ``ErrorType: last line``; '' for None."""
    if record is None:
        return ""
    message = record.get("message", "")
    if record.get("error") in ("ModuleNotFoundError", "ImportError", "AttributeError",
                               "NameError"):
        for pattern, form in _MISSING:
            found = pattern.search(message)
            if found:
                return "missing " + form.format(*found.groups()).replace("mxlite", "mxnet", 1)
    head = message.split(":", 1)[0]       # 'tarfile.ReadError' names the type already
    named = head == record.get("error") or head.endswith("." + str(record.get("error")))
    return message if named else "%s: %s" % (record.get("error"), message)


def failures(tallies):
    """mxlite's failures on the pages where it stops before MXNet, grouped by cause:
    {cause: [(page, block number)]}, most pages first."""
    groups = {}
    for t in tallies:
        if t.mxnet is not None and t.as_far():
            continue
        record = t.failure("mxlite")
        if record is not None:
            groups.setdefault(cause(record)[:200], []).append((t.page, record["block"] + 1))
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def failure_report(tallies):
    """The grouped failures as text."""
    lines = []
    for reason, where in failures(tallies).items():
        lines.append("%s  (%d page%s)" % (reason, len(where), "" if len(where) == 1 else "s"))
        lines += ["    %s, block %d" % place for place in where]
    return "\n".join(lines)


def details(tallies):
    """Per page, the block that stopped each side and why (every page, not only mxlite's)."""
    lines = []
    for t in tallies:
        for side in SIDES:
            record = t.failure(side) if getattr(t, side) is not None else None
            if record is not None:
                lines.append("%s  %s block %d: %s" % (t.page, side, record["block"] + 1,
                                                     cause(record)[:160]))
    return "\n".join(lines)
