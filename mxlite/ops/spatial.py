"""Spatial sampling and cropping layers: Crop, BilinearSampler, GridGenerator, SpatialTransformer, Correlation, ROIPooling, BilinearResize2D, AdaptiveAvgPooling2D."""
