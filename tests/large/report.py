"""Summarise a full-scale large-table run: ``python tests/large/report.py REPORT.json``
(the file MXLITE_LARGE_REPORT names; the sweep also appends each answer as it comes to
that path + ".rows", one JSON line each). Prints the tally per device, the total time and
CPU time, the highest peaks and the slowest rows. ``--write-peaks`` also records each CPU
row's peak in tests/large/peaks.json, which the sweep (tests/large/sweep.py) packs rows by."""
import json
import os
import sys


def main(path):
    with open(path) as f:
        answers = json.load(f)
    for device in sorted({a["device"] for a in answers}):
        rows = [a for a in answers if a["device"] == device]
        failed = [a["op"] for a in rows if not a["ok"]]
        total = sum(a["seconds"] for a in rows)
        cpu = sum(a.get("cpu_seconds", 0.0) for a in rows)
        print(f"{device}: {len(rows) - len(failed)} of {len(rows)} rows passed, "
              f"{total:.0f} s in rows ({cpu:.0f} s of CPU time), "
              f"peak host memory {max(a['peak_gb'] for a in rows):.1f} GB"
              + (f", device {max(a['device_peak_gb'] for a in rows):.1f} GB"
                 if device == "gpu" else ""))
        if failed:
            print("  failed:", " ".join(failed))
        by_time = sorted(rows, key=lambda a: -a["seconds"])[:10]
        print("  slowest:", ", ".join(f"{a['op']} {a['seconds']:.1f} s" for a in by_time))
        by_cpu = sorted(rows, key=lambda a: -a.get("cpu_seconds", 0.0))[:10]
        print("  most CPU time:", ", ".join(f"{a['op']} {a.get('cpu_seconds', 0.0):.1f} s"
                                            for a in by_cpu))
        by_peak = sorted(rows, key=lambda a: -a["peak_gb"])[:5]
        print("  highest peaks:", ", ".join(f"{a['op']} {a['peak_gb']:.1f} GB" for a in by_peak))


def write_peaks(path):
    """Record the peak GB of each CPU row of the report that passed (rounded up to 0.1 GB)
    in tests/large/peaks.json, keeping the other rows' records."""
    with open(path) as f:
        answers = json.load(f)
    peaks = {a["op"]: -(-a["peak_gb"] * 10 // 1) / 10 for a in answers
             if a.get("device") == "cpu" and a.get("ok")}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peaks.json")
    try:
        with open(out) as f:
            recorded = json.load(f)
    except (OSError, ValueError):
        recorded = {}
    recorded.update(peaks)
    with open(out, "w") as f:
        json.dump(dict(sorted(recorded.items())), f, indent=0)
        f.write("\n")
    print(f"recorded {len(peaks)} peaks in {out} ({len(recorded)} rows)")


if __name__ == "__main__":
    main(sys.argv[1])
    if "--write-peaks" in sys.argv[2:]:
        write_peaks(sys.argv[1])
