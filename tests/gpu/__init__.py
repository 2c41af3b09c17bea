"""GPU backend tests (a package, so file names may repeat those of tests/ops)."""
