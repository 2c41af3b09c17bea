"""Region-of-interest and deformable operators: ROIAlign, RROIAlign, PSROIPooling, DeformablePSROIPooling, DeformableConvolution, ModulatedDeformableConvolution."""
