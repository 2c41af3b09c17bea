"""GPU compute functions: (being written)."""
