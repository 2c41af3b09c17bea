"""Indexing and shape operators beyond shape.py's."""
