"""Gradient specs: SequenceMask, SequenceLast, SequenceReverse and _sequence_last_grad
(mxlite/ops/sequence.py). Each op is linear in data, so the calls square the data first."""
import numpy as np

from . import Spec

LENGTHS = np.array([2, 4, 1], dtype=np.float64)       # T = 4, B = 3


def _len(nd):
    return nd.array(LENGTHS, dtype="float64")


SPECS = {
    "SequenceMask": Spec([(4, 3, 2)], lambda nd, x: nd.SequenceMask(
        x * x, _len(nd), use_sequence_length=True, value=0.5)),
    "SequenceLast": Spec([(3, 4, 2)], lambda nd, x: nd.SequenceLast(
        x * x, _len(nd), use_sequence_length=True, axis=1)),
    "SequenceReverse": Spec([(4, 3, 2)], lambda nd, x: nd.SequenceReverse(
        x * x, _len(nd), use_sequence_length=True)),
    "_sequence_last_grad": Spec([(3, 2)], lambda nd, g: nd._internal._sequence_last_grad(
        g * g, nd.zeros((4, 3, 2), dtype="float64"), _len(nd), use_sequence_length=True)),
}
