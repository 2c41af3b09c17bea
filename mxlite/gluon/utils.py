"""Gluon utilities (being written)."""
