"""Correlation (FlowNet's cost volume) and contrib.DeformablePSROIPooling."""
