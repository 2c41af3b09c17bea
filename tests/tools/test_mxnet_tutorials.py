"""The MXNet tutorial runner (python -m mxlite.tools.mxnet_tutorials) on small fake pages:
block extraction (fences, indented fences, magics), the offline stand-ins' shapes, page
isolation (a crashing or hanging page is recorded and the run goes on), the table."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mxlite as mx
from mxlite.tools.mxnet_tutorials import (PageTally, extract_blocks, outputs_agree,
                                          page_set, run_page, table)
from mxlite.tools.mxnet_tutorials.report import cause, details, failures, totals
from mxlite.tools.mxnet_tutorials.site import standins

PAGE = '''
# A page

```python
import mxnet as mx
%matplotlib inline
x = mx.nd.ones((2,))
```

Output, not code:

```
[1. 1.]
```

```{.python .input  n=3}
for i in range(2):
    display(x)
!pip install something
y = (1 +
     2)
```

1. A list item with an indented block:

   ```python
   def f():
       return 3
   ```

```bash
echo not python
```

```python
%%time
z = f()
```

```python
%%bash
ls
```

```python
%matplotlib inline
```

```r
x <- 1
```

Inline ```python``` mention in prose.
'''


def test_blocks_are_the_python_fences_in_order():
    blocks = extract_blocks(PAGE)
    assert blocks == [
        "import mxnet as mx\npass\nx = mx.nd.ones((2,))\n",
        "for i in range(2):\n    pass\npass\ny = (1 +\n     2)\n",
        "def f():\n    return 3\n",
        "z = f()\n",
    ]
    for block in blocks:
        compile(block, "<block>", "exec")     # each one is valid Python


def test_a_percent_inside_an_expression_is_not_a_magic():
    source = "```python\nprint('%d'\n      % 3)\nx = 5 %2\n```\n"
    assert extract_blocks(source) == ["print('%d'\n      % 3)\nx = 5 %2\n"]


def test_the_page_set_and_the_reasons(tmp_path):
    tutorials = tmp_path / "tutorials"
    (tutorials / "packages" / "ndarray" / "sparse").mkdir(parents=True)
    (tutorials / "packages" / "a.md").write_text("```python\nx = 1\n```\n")
    (tutorials / "packages" / "prose.md").write_text("no code\n```\nx = 1\n```\n")
    (tutorials / "packages" / "ndarray" / "sparse" / "csr.md").write_text(
        "```python\nx = 1\n```\n")
    run, left_out = page_set(str(tutorials))
    assert run == ["packages/a.md"]
    assert left_out == {"packages/prose.md": "no Python blocks",
                        "packages/ndarray/sparse/csr.md": "sparse storage"}


# -- the stand-ins ------------------------------------------------------------------------

@pytest.mark.parametrize("name, train, shape, classes", [
    ("MNIST", True, (28, 28, 1), 10), ("FashionMNIST", False, (28, 28, 1), 10),
    ("CIFAR10", True, (32, 32, 3), 10), ("CIFAR100", False, (32, 32, 3), 100)])
def test_random_datasets_have_the_real_shapes(name, train, shape, classes):
    get_data = standins._random_get_data(mx, shape, classes)
    dataset = type(name, (), {"_train": train})()
    data, label = get_data(dataset)
    length = standins.TRAIN_LENGTH if train else standins.TEST_LENGTH
    assert data.shape == (length,) + shape and data.dtype == np.uint8
    assert label.shape == (length,) and label.dtype == np.int32
    assert 0 <= label.min() and label.max() < classes
    assert dataset._data is data and dataset._label is label     # MXNet's way too


def test_coarse_cifar100_labels_have_20_classes():
    dataset = type("CIFAR100", (), {"_train": True, "_fine_label": False})()
    _, label = standins._random_get_data(mx, (32, 32, 3), 100)(dataset)
    assert label.max() < 20


def test_get_mnist_stand_in():
    data = standins.get_mnist()
    assert data["train_data"].shape == (standins.TRAIN_LENGTH, 1, 28, 28)
    assert data["test_label"].shape == (standins.TEST_LENGTH,)
    assert data["train_data"].dtype == np.float32 and data["train_data"].max() <= 1
    assert data["train_label"].dtype == np.int8


def test_downloads_write_placeholders_where_the_real_ones_write(tmp_path, monkeypatch):
    pytest.importorskip("PIL")
    from PIL import Image
    monkeypatch.chdir(tmp_path)
    image = standins.test_utils_download("https://host/x/cat.jpg?raw=true")
    assert image == "cat.jpg"
    with Image.open(image) as img:
        assert img.format == "JPEG" and img.size == standins.PLACEHOLDER_SIZE
    (tmp_path / "data").mkdir()
    archive = standins.gluon_download("https://host/d/archive.tar.gz", path="data")
    assert archive == os.path.join("data", "archive.tar.gz")
    assert "https://host/d/archive.tar.gz" in open(archive).read()
    named = standins.gluon_download("https://host/a.png", path=str(tmp_path / "b.png"))
    assert named == str(tmp_path / "b.png") and Image.open(named).format == "PNG"
    assert standins.test_utils_download("https://h/f.txt", fname="g.txt", dirname="data") \
        == os.path.join("data", "g.txt")


def test_pretrained_gives_an_initialised_untrained_network():
    calls = []

    def build(pretrained=False, **kwargs):
        calls.append(pretrained)
        net = mx.gluon.nn.Dense(4)
        return net
    net = standins._untrained(mx, build)(pretrained=True)
    assert calls == [False]
    assert net.weight.shape == (4, 3 * 224 * 224)       # a forward pass gave the shape


# -- running pages --------------------------------------------------------------------------

@pytest.fixture
def fake_mxnet(tmp_path):
    """A stand-in "MXNet install" that imports in no time, for the tests of the process
    machinery (the page process then runs as on the MXNet side: no alias)."""
    (tmp_path / "fake_site" / "mxnet").mkdir(parents=True)
    (tmp_path / "fake_site" / "mxnet" / "__init__.py").write_text("")
    return str(tmp_path / "fake_site")


def _run(tmp_path, blocks, timeout=10, page="fake/page.md", site=None):
    """Run a page on mxlite, or with ``site`` on the fake MXNet in that folder."""
    if site is None:
        return run_page(sys.executable, "mxlite", page, blocks, str(tmp_path), timeout=timeout)
    return run_page(sys.executable, "mxnet", page, blocks, str(tmp_path / "out"),
                    timeout=timeout, pythonpath=[site])


def _outcomes(records):
    return [(r["block"], r["outcome"]) for r in records if r["type"] == "result"]


def test_blocks_share_a_namespace_and_stop_at_the_first_error(tmp_path):
    records = _run(tmp_path, ["import mxnet as mx\nx = mx.nd.ones((2,))\n",
                              "print('sum', x.sum().asscalar())\nx.shape\n",
                              "import mxnet.no_such_module\n", "never = 1\n"])
    assert _outcomes(records) == [(0, "ran"), (1, "ran"), (2, "error")]
    shown = [r for r in records if r["type"] == "result"]
    assert shown[1]["output"] == "sum 2.0\n" and shown[1]["value"] == "(2,)"
    assert shown[2]["error"] == "ModuleNotFoundError"
    assert "mxnet.no_such_module" in shown[2]["message"]


def test_pages_of_one_folder_share_their_working_folder(tmp_path, fake_mxnet):
    def run(page, block):
        return _run(tmp_path, [block], page=page, site=fake_mxnet)
    assert _outcomes(run("a/train.md", "open('net.params', 'w').write('w')\n")) == [(0, "ran")]
    assert _outcomes(run("a/predict.md", "open('net.params').read()\n")) == [(0, "ran")]
    other = run("b/predict.md", "open('net.params').read()\n")
    assert _outcomes(other) == [(0, "error")] and other[-1]["error"] == "FileNotFoundError"


def test_a_forked_child_does_not_run_the_rest_of_the_page(tmp_path, fake_mxnet):
    records = _run(tmp_path, ["import os, time\nchild = os.fork()\n", "x = 1\n"],
                   site=fake_mxnet)
    assert _outcomes(records) == [(0, "ran"), (1, "ran")]


def test_the_network_is_refused_in_the_page(tmp_path, fake_mxnet):
    records = _run(tmp_path, ["import urllib.request\n"
                              "urllib.request.urlopen('http://example.com')\n"],
                   site=fake_mxnet)
    (result,) = [r for r in records if r["type"] == "result"]
    assert result["error"] == "ConnectionRefusedError" and "offline" in result["message"]


def test_a_crashing_page_is_recorded(tmp_path, fake_mxnet):
    records = _run(tmp_path, ["x = 1\n", "import os\nos.abort()\n", "y = 2\n"],
                   site=fake_mxnet)
    assert _outcomes(records) == [(0, "ran"), (1, "crash")]


def test_a_slow_block_times_out_and_a_hang_is_killed(tmp_path, monkeypatch, fake_mxnet):
    slow = _run(tmp_path, ["try:\n    import time; time.sleep(30)\nexcept Exception:\n"
                           "    pass\n"], timeout=1, site=fake_mxnet)
    assert _outcomes(slow) == [(0, "error")] and "timed out" in slow[-1]["message"]
    # a block that ignores SIGALRM is stopped by the watchdog
    monkeypatch.setattr("mxlite.tools.mxnet_tutorials.runner.GRACE_SECONDS", 1)
    hung = _run(tmp_path, ["import signal, time\nsignal.signal(signal.SIGALRM, "
                           "signal.SIG_IGN)\ntime.sleep(30)\n"], timeout=1, site=fake_mxnet)
    assert _outcomes(hung) == [(0, "hang")]


def test_the_command_goes_on_after_a_broken_page(tmp_path):
    tutorials = tmp_path / "src" / "docs" / "python_docs" / "python" / "tutorials"
    (tutorials / "packages").mkdir(parents=True)
    (tutorials / "packages" / "a_crash.md").write_text(
        "```python\nimport os\nos.abort()\n```\n")
    (tutorials / "packages" / "b_fine.md").write_text(
        "```python\nimport mxnet as mx\n```\n\n```python\nmx.nd.zeros((1,))\n```\n")
    proc = subprocess.run([sys.executable, "-m", "mxlite.tools.mxnet_tutorials",
                           str(tmp_path / "src"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()
            if line.startswith("packages/") and "blocks:" not in line}
    assert rows["packages/a_crash.md"][:2] == ["1", "0"]
    assert rows["packages/b_fine.md"][:2] == ["2", "2"]


# -- the table ------------------------------------------------------------------------------

def _records(outcomes, **failure):
    out = []
    for i, outcome in enumerate(outcomes):
        record = {"type": "result", "block": i, "outcome": outcome, "output": "", "value": None}
        if outcome != "ran":
            record.update(error=failure.get("error", "RuntimeError"),
                          message=failure.get("message", "boom"))
        out.append(record)
    return out


def test_the_table_arithmetic():
    missing = dict(error="AttributeError",
                   message="AttributeError: module 'mxlite.gluon' has no attribute 'rnn'")
    tallies = [
        PageTally.of("a.md", 5, _records(["ran"] * 5), _records(["ran"] * 5)),
        PageTally.of("b.md", 4, _records(["ran", "error"], **missing),
                     _records(["ran", "ran", "ran", "error"])),
        PageTally.of("c.md", 3, _records(["ran", "ran"] + ["error"]),
                     _records(["ran", "error"])),
        PageTally.of("d.md", 2, [{"type": "setup_error", "error": "ImportError",
                                  "message": "ImportError: no"}], _records(["ran", "ran"])),
    ]
    assert totals(tallies) == (4, 14, 5 + 3 + 1 + 2, 5 + 1 + 2 + 0, 5 + 1 + 1 + 0, 2,
                               5 + 1 + 1 + 0)
    lines = table(tallies).splitlines()
    assert lines[3].split() == ["b.md", "4", "3", "1", "1", "no", "1"]
    assert lines[-3].split() == ["total", "(4", "pages)", "14", "11", "8", "7", "2", "7"]
    assert lines[-1].startswith("4 pages, 14 code blocks: MXNet runs 11 of them, mxlite 8, "
                                "both 7; 2 of the 4 pages")
    assert failures(tallies) == {"ImportError: no": [("d.md", 1)],
                                 "missing mxnet.gluon.rnn": [("b.md", 2)]}
    assert details(tallies).splitlines() == [
        "b.md  mxnet block 4: RuntimeError: boom", "b.md  mxlite block 2: missing mxnet.gluon.rnn",
        "c.md  mxnet block 2: RuntimeError: boom", "c.md  mxlite block 3: RuntimeError: boom",
        "d.md  mxlite block 1: ImportError: no"]


def test_causes_name_what_is_missing():
    def c(error, message):
        return cause({"error": error, "message": message})
    assert c("ModuleNotFoundError", "ModuleNotFoundError: No module named 'mxnet.foo'") \
        == "missing module mxnet.foo"
    assert c("ImportError", "ImportError: cannot import name 'Bar' from 'mxlite.gluon' "
             "(/x/__init__.py)") == "missing mxnet.gluon.Bar"
    assert c("ValueError", "ValueError: bad") == "ValueError: bad"
    assert c("ReadError", "tarfile.ReadError: not a gzip file") == \
        "tarfile.ReadError: not a gzip file"
    assert c("hang", "the page process made no progress") == \
        "hang: the page process made no progress"


def test_outputs_agree_within_the_tolerance():
    assert outputs_agree("loss 0.12345 acc [1. 2.]", "loss 0.12349 acc [1. 2.]")
    assert not outputs_agree("loss 0.1234", "loss 0.1240")
    assert not outputs_agree("loss 0.1", "accuracy 0.1")
    assert outputs_agree("x 1e6", "x 1.00001e6")            # relative for large numbers


def test_a_page_without_a_baseline_lists_what_stopped_it():
    tally = PageTally.of("a.md", 3, _records(["ran", "error"], error="NameError",
                                             message="NameError: name 'q' is not defined"))
    row = table([tally]).splitlines()[2]
    assert row.split()[:3] == ["a.md", "3", "1"] and "missing name q" in row
    json.dumps(tally.mxlite)     # records stay plain JSON
