"""Whole-model training (and inference) steps, timed in mxlite, torch and MXNet 1.9.1.

Every case is one architecture written three ways -- Gluon for mxlite and MXNet
(``gluon_nets``, one source for both: the two share the API), torch eager (``torch_nets``)
-- that start from the same weights and the same batch (``data``) and do the same step:
forward, loss, backward and an SGD update (lr 0.01, momentum 0.9), or for the inference
cases one forward pass. ``runner`` starts one interpreter per system and times them in
turn; ``table`` prints and plots the result::

    python benchmarks/report.py --models [--quick] [--plot] [case ...]

This module only describes the cases (plain Python, importable by every interpreter).
"""
from collections import namedtuple

__all__ = ["Case", "CASES", "LR", "MOMENTUM"]

LR, MOMENTUM = 0.01, 0.9

#: ``dims`` sizes the full case, ``small`` the same architecture for the unit test (fewer
#: samples, smaller images); ``rounds`` x ``steps`` timed steps per system after ``warmup``
#: untimed ones, ``quick_rounds`` under ``--quick``.
Case = namedtuple("Case", "name title train dims small rounds steps quick_rounds warmup")

_CASES = [
    Case("resnet_cnn", "ResNet-style CNN, 3x32x32, batch 32", True,
         dict(batch=32, image=32, classes=10), dict(batch=4, image=16, classes=10),
         rounds=7, steps=3, quick_rounds=3, warmup=2),
    Case("transformer", "transformer encoder block, d 256, seq 64, batch 16", True,
         dict(batch=16, seq=64, d=256, heads=4, ffn=1024, classes=10),
         dict(batch=2, seq=8, d=256, heads=4, ffn=1024, classes=10),
         rounds=7, steps=3, quick_rounds=3, warmup=2),
    Case("mlp", "MLP 784-1024-1024-10, batch 128", True,
         dict(batch=128, features=784, hidden=1024, classes=10),
         dict(batch=8, features=784, hidden=1024, classes=10),
         rounds=7, steps=5, quick_rounds=3, warmup=2),
    Case("resnet18", "ResNet-18 v1, 3x224x224, batch 8", True,
         dict(batch=8, image=224, classes=1000), dict(batch=2, image=64, classes=1000),
         rounds=5, steps=1, quick_rounds=2, warmup=1),
    Case("lstm_lm", "2-layer LSTM LM, vocab 10000, bptt 35, batch 20", True,
         dict(batch=20, bptt=35, vocab=10000, embed=200, hidden=200, layers=2),
         dict(batch=3, bptt=5, vocab=10000, embed=200, hidden=200, layers=2),
         rounds=7, steps=2, quick_rounds=3, warmup=2),
    Case("wgan_gp", "WGAN-GP critic step with gradient penalty, 3x32x32, batch 32", True,
         dict(batch=32, image=32, width=64, penalty=10.0),
         dict(batch=4, image=32, width=64, penalty=10.0),
         rounds=7, steps=2, quick_rounds=3, warmup=2),
    Case("resnet50_b1", "ResNet-50 v1 inference, batch 1", False,
         dict(batch=1, image=224, classes=1000), dict(batch=1, image=64, classes=1000),
         rounds=7, steps=3, quick_rounds=3, warmup=2),
    Case("resnet50_b32", "ResNet-50 v1 inference, batch 32", False,
         dict(batch=32, image=224, classes=1000), dict(batch=2, image=64, classes=1000),
         rounds=3, steps=1, quick_rounds=1, warmup=1),
]

#: name -> Case, in table order
CASES = {c.name: c for c in _CASES}
