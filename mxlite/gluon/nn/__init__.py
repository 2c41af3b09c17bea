"""Gluon layers (being written)."""
