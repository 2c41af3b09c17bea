"""Per-element samplers (sample_*, distribution parameters as arrays) and the densities random_pdf_*."""
