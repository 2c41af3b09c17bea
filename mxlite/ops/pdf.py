"""Probability densities of the samplers (random_pdf_*), differentiable in the sample and the parameters."""
