"""Gradient specs: CTCLoss of mxlite/ops/ctc.py (float64, small T/N/alphabet). The loss is
multiplied by a function of the data so the head gradient of the loss varies; the labels
cover repeats (a skip forbidden), both blank conventions and both kinds of lengths."""
from . import Spec


def _ctc(nd, x):
    first = nd.CTCLoss(x, nd.array([[1, 1], [2, 0]], dtype="float64"))
    last = nd.CTCLoss(x, nd.array([[0, 1], [1, 1]], dtype="float64"),
                      data_lengths=nd.array([3, 4], dtype="float64"),
                      label_lengths=nd.array([2, 1], dtype="float64"),
                      use_data_lengths=True, use_label_lengths=True, blank_label="last")
    return [first * nd.sum(x, axis=(0, 2)), last]


SPECS = {
    "CTCLoss": Spec([(4, 2, 3)], _ctc),
}
