"""Tests of the benchmark code (a package, so file names may repeat those elsewhere)."""
