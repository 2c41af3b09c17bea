"""Gluon Trainer (being written)."""


class Trainer:
    """Applies an optimizer to a set of parameters (being written)."""
