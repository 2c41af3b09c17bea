"""(placeholder)."""
