"""The large-tensor table (tests/largespecs): every registered op past 2**32 elements.

* Every registered op has a row, and a row below 2**32 says why.
* In the ordinary suite every row runs at a small scale (2**12 standing for 2**32) on every
  device, the GPU included (on the host emulator in CI): the row's own logic is tested.
* Under ``-m large`` every row runs at full scale on the CPU, and on a CUDA GPU with enough
  memory (marked ``gpu`` too; skipped without one, and on the emulator, which is too slow
  for 2**32 elements). Rows run in worker processes (tests/large/worker.py), so a crash
  fails one row; CPU rows two at a time where their recorded peaks fit in memory
  (tests/large/sweep.py), GPU rows one by one. Each reports its peak memory, which must
  stay under PEAK_LIMIT_GB.
  Set MXLITE_LARGE_REPORT=path to get the timings and peaks of the run as JSON.
"""
import json
import os

import pytest

import mxlite as mx
from mxlite.ops.registry import REGISTRY
from largespecs import SIZES, all_rows, run_row
from sweep import Sweep, Worker

ROWS = all_rows()
SMALL_P32 = 2 ** 12
FULL_P32 = 2 ** 32
PEAK_LIMIT_GB = 16.0
GPU_MEMORY_GB = 70          # a row needs up to ~20 GB of device memory at 2**32 (float32)


def test_every_registered_op_has_a_row():
    ops = sorted({op.name for op in REGISTRY.values()})
    missing = [name for name in ops if name not in ROWS]
    assert not missing, f"registered ops without a large-tensor row: {missing}"
    stale = [name for name in ROWS if name not in REGISTRY]
    assert not stale, f"large-tensor rows for unregistered ops: {stale}"


def test_rows_say_their_size_and_why_it_is_below_2_32():
    bad = [name for name, row in ROWS.items() if row.size not in SIZES]
    assert not bad, f"rows with a size other than {SIZES}: {bad}"
    unexplained = [name for name, row in ROWS.items() if row.size != "2**32" and not row.reason]
    assert not unexplained, f"rows below 2**32 without a reason: {unexplained}"


@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_at_small_scale(name, device):
    run_row(name, ROWS[name], SMALL_P32, device)


# ---- full scale ----------------------------------------------------------------------------
class Report:
    """The answers of the run, written to MXLITE_LARGE_REPORT (JSON) at the end."""

    def __init__(self):
        self.answers = []

    def write(self):
        path = os.environ.get("MXLITE_LARGE_REPORT")
        if path and self.answers:
            with open(path, "w") as f:
                json.dump(self.answers, f, indent=1)


@pytest.fixture(scope="module")
def report():
    r = Report()
    yield r
    r.write()


@pytest.fixture(scope="module")
def cpu_sweep(request, report):
    """The selected CPU rows, run ahead two at a time where memory allows (sweep.py)."""
    names = [item.callspec.params["name"] for item in request.session.items
             if getattr(item, "originalname", None) == "test_row_past_2_32_on_cpu"]
    jobs = int(os.environ.get("MXLITE_LARGE_JOBS", "2"))
    s = Sweep(names, FULL_P32, PEAK_LIMIT_GB, jobs=jobs)
    yield s
    report.answers.extend(s.close())


@pytest.fixture(scope="module")
def gpu_worker(report):
    """GPU rows one at a time (device memory), in a worker process of their own."""
    w = Worker(FULL_P32)

    def run(name):
        answer = w.run(name, "gpu")
        report.answers.append(answer)
        return answer
    yield run
    w.close()


def _check_answer(answer, name, device):
    if "died" in answer:
        code = answer["died"]
        hint = " (SIGKILL: out of memory?)" if code == -9 else ""
        pytest.fail(f"{name} on {device}: the worker died with exit code {code}{hint}")
    assert answer["ok"], answer["error"]
    assert answer["peak_gb"] < PEAK_LIMIT_GB, \
        f"peak host memory {answer['peak_gb']:.1f} GB, over {PEAK_LIMIT_GB} GB"


def _real_gpu_with_memory():
    if mx.num_gpus() == 0:
        return False
    from mxlite.cuda import runtime
    if runtime.backend() != "cupy":
        return False
    import cupy
    return cupy.cuda.Device(0).mem_info[1] / 2 ** 30 >= GPU_MEMORY_GB


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_past_2_32_on_cpu(name, cpu_sweep):
    _check_answer(cpu_sweep.result(name), name, "cpu")


@pytest.mark.large
@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_past_2_32_on_gpu(name, gpu_worker):
    if not _real_gpu_with_memory():
        pytest.skip(f"needs a CUDA GPU with {GPU_MEMORY_GB} GB (the emulator is too slow "
                    "for 2**32 elements; the rows run on it at small scale)")
    _check_answer(gpu_worker(name), name, "gpu")
