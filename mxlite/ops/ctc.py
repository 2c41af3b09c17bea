"""Connectionist temporal classification: CTCLoss / ctc_loss."""
