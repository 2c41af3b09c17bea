"""The model benchmark's table (text and markdown) and its bar chart of speed ratios.

Ratios are mxlite's time / the other system's time: below 1 mxlite is faster."""
import json
import os

from . import CASES

__all__ = ["format_table", "markdown", "plot", "write_outputs", "MissingMatplotlib"]

_COLUMNS = ("case", "torch", "MXNet", "mx hybrid", "mx imper.", "hyb/torch", "imp/torch",
            "hyb/MXNet", "peak MB torch", "peak MB mx hyb/imp", "step-1 diff")


class MissingMatplotlib(RuntimeError):
    """--plot was asked for where matplotlib is not installed."""


def _ms(stats):
    return f"{stats['median'] * 1e3:.1f}" if "median" in stats else "n/a"


def _ratio(r):
    """'0.85 (0.80-0.91)': the median per-round ratio and its quartiles."""
    return "n/a" if r is None else f"{r['median']:.2f} ({r['q1']:.2f}-{r['q3']:.2f})"


def _mb(stats):
    peak = stats.get("peak_mb")
    return "n/a" if peak is None else f"{peak:.0f}"


def _diff(d):
    return "n/a" if d is None else f"{d:.0e}"


def rows(summaries):
    """One list of cell strings per case, in the order of ``_COLUMNS``."""
    out = []
    for name, s in summaries.items():
        sy, ra = s["systems"], s["ratios"]
        cell = lambda k: sy.get(k, {})  # noqa: E731
        out.append([name, _ms(cell("torch")), _ms(cell("mxnet")), _ms(cell("mxlite-hybrid")),
                    _ms(cell("mxlite-imperative")), _ratio(ra.get("hybrid/torch")),
                    _ratio(ra.get("imperative/torch")), _ratio(ra.get("hybrid/mxnet")),
                    _mb(cell("torch")),
                    f"{_mb(cell('mxlite-hybrid'))}/{_mb(cell('mxlite-imperative'))}",
                    _diff(s.get("disagreement"))])
    return out


def _notes(summaries):
    """Footnotes: every system that did not run a case, and why."""
    notes = []
    for name, s in summaries.items():
        for system, stats in s["systems"].items():
            if "error" in stats:
                notes.append(f"{name}, {system}: {stats['error']}")
    return notes


def format_table(summaries):
    """The table as aligned text (times in ms per step, median)."""
    body = [list(_COLUMNS)] + rows(summaries)
    widths = [max(len(r[i]) for r in body) for i in range(len(_COLUMNS))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in body]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines + [f"  n/a: {n}" for n in _notes(summaries)])


def markdown(summaries, header=""):
    """The table as markdown, with the cases' descriptions and the footnotes."""
    lines = [header, ""] if header else []
    lines += ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(summaries)]
    lines += [""] + [f"- `{n}`: {CASES[n].title}" for n in summaries if n in CASES]
    notes = _notes(summaries)
    if notes:
        lines += ["", "Not run:"] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingMatplotlib("--plot needs matplotlib (pip install matplotlib); the "
                                "table was written without the chart") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot(summaries, path):
    """A horizontal bar chart of the ratios per case (median, quartile whiskers, log
    scale, a line at 1) written to ``path`` (PNG)."""
    plt = _pyplot()
    labels = ("hybrid/torch", "imperative/torch", "hybrid/mxnet")
    names = list(summaries)
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(names) * len(labels) / 2 + 1.5))
    height = 0.8 / len(labels)
    for j, label in enumerate(labels):
        ys, meds, lo, hi = [], [], [], []
        for i, name in enumerate(names):
            r = summaries[name]["ratios"].get(label)
            if r is not None:
                ys.append(i + (j - 1) * height)
                meds.append(r["median"])
                lo.append(r["median"] - r["q1"])
                hi.append(r["q3"] - r["median"])
        ax.barh(ys, meds, height, xerr=[lo, hi], label=f"mxlite {label}", capsize=2)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    # plain ratios on the log axis (0.5, 1, 2), not powers of ten
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(plt.FuncFormatter(
        lambda v, _: f"{v:g}" if round(v * 10) in (3, 5, 7, 15, 20, 30) else ""))
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("time ratio (below 1: mxlite faster)")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_outputs(summaries, prefix, header="", with_plot=False):
    """Write ``prefix``.md (table), ``prefix``.json (every number) and, with ``with_plot``,
    ``prefix``.png; returns the paths written. Raises MissingMatplotlib after writing the
    table and numbers if the chart cannot be drawn."""
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    paths = [prefix + ".md", prefix + ".json"]
    with open(paths[0], "w") as f:
        f.write(markdown(summaries, header))
    with open(paths[1], "w") as f:
        json.dump({"header": header, "cases": summaries}, f, indent=1)
    if with_plot:
        paths.append(plot(summaries, prefix + ".png"))
    return paths
