"""``BatchProcessor``: what the Estimator does with one batch, in training and in
validation (MXNet 1.9.1's ``gluon.contrib.estimator.BatchProcessor``)."""
from .... import autograd
from ....base import MXNetError
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Runs the Estimator's network and loss on one batch.

    Subclass it and override :py:meth:`fit_batch` / :py:meth:`evaluate_batch` for models
    whose batches are not ``(data, label)`` or whose step is not "forward, loss, backward",
    then pass an instance as ``Estimator(..., batch_processor=...)``. Both methods return
    ``(data, label, pred, loss)``: lists with one entry per context of the estimator.
    The gradient step itself is :py:class:`GradientUpdateHandler`'s, at batch end.
    """

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        """The batch's data and label, each split along ``batch_axis`` over ``ctx``."""
        if not isinstance(batch, (list, tuple)) or len(batch) < 2:
            raise MXNetError("BatchProcessor: a batch must be a (data, label) pair, got "
                             f"{type(batch).__name__}"
                             + (f" of length {len(batch)}" if isinstance(batch, (list, tuple))
                                else "")
                             + "; give the DataLoader a dataset of (data, label) samples "
                             "or override fit_batch/evaluate_batch")
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predictions and losses of ``estimator.val_net`` / ``estimator.val_loss`` on one
        validation batch (no gradient is recorded).

        Returns ``(data, label, pred, loss)``, lists with one array per context."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward ``estimator.net`` and ``estimator.loss`` on one training batch under
        ``autograd.record()`` and back-propagate each context's loss.

        Returns ``(data, label, pred, loss)``, lists with one array per context."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for each in loss:
            each.backward()
        return data, label, pred, loss
