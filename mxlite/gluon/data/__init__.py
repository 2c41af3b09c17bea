"""Gluon data loading (being written)."""
