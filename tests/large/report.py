"""Summarise a full-scale large-table run: ``python tests/large/report.py REPORT.json``
(the file MXLITE_LARGE_REPORT names). Prints the tally per device, the total time, the
highest peaks and the slowest rows."""
import json
import sys


def main(path):
    with open(path) as f:
        answers = json.load(f)
    for device in sorted({a["device"] for a in answers}):
        rows = [a for a in answers if a["device"] == device]
        failed = [a["op"] for a in rows if not a["ok"]]
        total = sum(a["seconds"] for a in rows)
        print(f"{device}: {len(rows) - len(failed)} of {len(rows)} rows passed, "
              f"{total:.0f} s in rows, peak host memory {max(a['peak_gb'] for a in rows):.1f} GB"
              + (f", device {max(a['device_peak_gb'] for a in rows):.1f} GB"
                 if device == "gpu" else ""))
        if failed:
            print("  failed:", " ".join(failed))
        by_time = sorted(rows, key=lambda a: -a["seconds"])[:10]
        print("  slowest:", ", ".join(f"{a['op']} {a['seconds']:.1f} s" for a in by_time))
        by_peak = sorted(rows, key=lambda a: -a["peak_gb"])[:5]
        print("  highest peaks:", ", ".join(f"{a['op']} {a['peak_gb']:.1f} GB" for a in by_peak))


if __name__ == "__main__":
    main(sys.argv[1])
