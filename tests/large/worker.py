"""Runs large-table rows in a process of its own, for tests/large/test_large_table.py.

Reads one JSON request per line on stdin, ``{"op": name, "device": "cpu" | "gpu",
"p32": int}``, runs that row and answers one JSON line on stdout: ``ok``, ``error``,
``seconds``, ``cpu_seconds`` (the process's CPU time, all threads: what the row costs
whatever else runs beside it), ``peak_gb`` (host: the resident-set high-water mark, reset
before each row) and ``device_peak_gb`` (GPU: the CuPy pool's size, emptied before each
row). A row that crashes the process fails alone: the test side starts a new worker for the
next row.
"""
import json
import sys
import time
import traceback


def host_peak_gb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2 ** 20
    return float("nan")


def reset_host_peak():
    with open("/proc/self/clear_refs", "w") as f:      # "5": reset the high-water mark
        f.write("5")


def main():
    import gc
    import mxlite as mx
    from largespecs import all_rows, run_row
    rows = all_rows()
    out = sys.stdout
    sys.stdout = sys.stderr          # anything a row prints stays off the answer channel
    for line in sys.stdin:
        req = json.loads(line)
        ctx = mx.cpu() if req["device"] == "cpu" else mx.gpu(0)
        pool = None
        if req["device"] == "gpu":
            import cupy
            pool = cupy.get_default_memory_pool()
            pool.free_all_blocks()
        gc.collect()
        reset_host_peak()
        answer = {"op": req["op"], "ok": True, "error": ""}
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            run_row(req["op"], rows[req["op"]], req["p32"], ctx)
            if pool is not None:       # a kernel fault surfaces at the row that caused it
                cupy.cuda.runtime.deviceSynchronize()
        except Exception:                              # noqa: BLE001 - reported to the test
            answer.update(ok=False, error=traceback.format_exc())
        answer["seconds"] = time.perf_counter() - start
        answer["cpu_seconds"] = time.process_time() - cpu_start
        gc.collect()
        answer["peak_gb"] = host_peak_gb()
        answer["device_peak_gb"] = pool.total_bytes() / 2 ** 30 if pool is not None else 0.0
        out.write(json.dumps(answer) + "\n")
        out.flush()
        if not answer["ok"]:
            # a CUDA fault is sticky (every later call of this process fails) and a failed
            # row may leave memory behind: the next row starts in a fresh worker
            return


if __name__ == "__main__":
    main()
