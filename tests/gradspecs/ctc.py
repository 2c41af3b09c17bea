"""Gradient specs: CTCLoss of mxlite/ops/ctc.py (float64, small T/N/alphabet) and the two
recursions of its gradient graph. The loss is multiplied by a function of the data so the
head gradient of the loss varies; the labels cover repeats (a skip forbidden), both blank
conventions and both kinds of lengths. ``_ctc_alpha`` is checked through exp (as the graph
reads it): a state no path reaches holds log 0 (-1e30) plus its emission, which rounds to
-1e30, so finite differences see no slope there while the recursion's derivative in the
emission is 1; exp makes both 0. Its masks allow a skip into some states and not others,
and one sequence ends early."""
from . import Spec


def _ctc(nd, x):
    first = nd.CTCLoss(x, nd.array([[1, 1], [2, 0]], dtype="float64"))
    last = nd.CTCLoss(x, nd.array([[0, 1], [1, 1]], dtype="float64"),
                      data_lengths=nd.array([3, 4], dtype="float64"),
                      label_lengths=nd.array([2, 1], dtype="float64"),
                      use_data_lengths=True, use_label_lengths=True, blank_label="last")
    return [first * nd.sum(x, axis=(0, 2)), last]


def _alpha(nd, e):
    skip = nd.array([[0, 0, 0, 1, 0], [0, 0, 0, 0, 0]], dtype="float64")
    first = nd.array([[1, 1, 0, 0, 0], [1, 1, 0, 0, 0]], dtype="float64")
    lengths = nd.array([4, 3], dtype="float64")
    return nd.exp(nd._internal._ctc_alpha(e, skip, first, lengths))


def _wrec(nd, w0, w1, w2, g):
    return [nd._internal._ctc_wrec(w0, w1, w2, g),
            nd._internal._ctc_wrec(w0, w1, w2, g, reverse=True)]


SPECS = {
    "CTCLoss": Spec([(4, 2, 3)], _ctc),
    "_ctc_alpha": Spec([(2, 4, 5)], _alpha),
    "_ctc_wrec": Spec([(2, 4, 5)] * 4, _wrec, domains=((-0.5, 0.5),)),
}


def _loss_grad(nd, x):
    """The gradient op as CTCLoss records it (its order 3 is the loss's order 4)."""
    return [nd._internal._ctc_loss_grad(x, nd.array([[1, 1], [2, 0]], dtype="float64")),
            nd._internal._ctc_loss_grad(x, nd.array([[0, 1], [1, 1]], dtype="float64"),
                                        nd.array([3, 4], dtype="float64"),
                                        nd.array([2, 1], dtype="float64"),
                                        use_data_lengths=True, use_label_lengths=True,
                                        blank_label="last")]


SPECS["_ctc_loss_grad"] = Spec([(4, 2, 3)], _loss_grad)
