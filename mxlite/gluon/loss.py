"""Gluon losses (being written)."""
