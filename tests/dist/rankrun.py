"""Runs the ``check_*`` functions of a rank script in order and reports, on each rank,
``rank R PASS name`` or ``rank R FAIL name: message`` (an AssertionError fails one check;
any other exception escapes and ends the job): on stdout, and as lines of
``$KV_TEST_RESULTS/rank<R>.txt`` when that variable names a folder (the launcher may
interleave the ranks' stdout)."""
import os
import sys
import traceback


def run_checks(namespace, rank, *args):
    """Call every ``check_<name>(*args)`` of ``namespace`` (a module's globals) in order;
    ``rank`` labels the output."""
    folder = os.environ.get("KV_TEST_RESULTS")
    log = open(os.path.join(folder, f"rank{rank}.txt"), "w") if folder else None
    for name, fn in list(namespace.items()):
        if not (name.startswith("check_") and callable(fn)):
            continue
        try:
            fn(*args)
        except AssertionError as e:
            detail = str(e).replace("\n", " | ")[:2000]
            line = f"rank {rank} FAIL {name[6:]}: {detail}"
            traceback.print_exc()
        else:
            line = f"rank {rank} PASS {name[6:]}"
        print(line, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()
    sys.stdout.flush()
    if log:
        log.close()


def raises(fn, *fragments):
    """Call ``fn``; assert it raised MXNetError whose message holds every fragment."""
    import mxlite as mx
    try:
        fn()
    except mx.MXNetError as e:
        for fragment in fragments:
            assert fragment in str(e), f"{fragment!r} not in {str(e)!r}"
        return str(e)
    raise AssertionError(f"no MXNetError (wanted one mentioning {fragments})")
