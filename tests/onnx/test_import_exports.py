"""The exports that no other round trip reaches -- the ONNX Loops (the NMS family,
ROIPooling's argmax, hawkesll, the rejection samplers and unique Zipfian classes), the
random image transforms, the densities, and the graphs of contrib math, indexing and
normalisation -- run back through mxlite's import: each is its export test, with its own
checks against mxlite's values (or, for random ops, against the distributions), on
mx -> ONNX -> mx instead of onnxruntime."""
import test_export_detection as detection
import test_export_image as image
import test_export_indexing as indexing
import test_export_mathops as mathops
import test_export_misc as misc
import test_export_nms as nms
import test_export_normalize as normalize
import test_export_random as random
import test_export_random_loops as samplers
import test_export_roi as roi
from onnx_harness import via_import

# ---- Loops --------------------------------------------------------------------------------
test_nms_family = via_import(nms.test_export)
test_box_nms_gradient_graph = via_import(nms.test_box_nms_gradient_graph)
test_roi_pooling_argmax = via_import(roi.test_roi_pooling_argmax)
test_hawkesll = via_import(misc.test_hawkesll)
test_hawkesll_against_the_closed_form = via_import(misc.test_hawkesll_against_the_closed_form)
test_hawkesll_scan = via_import(misc.test_hawkesll_scan)
test_hawkesll_gradient_graph = via_import(misc.test_hawkesll_gradient_graph)
test_random = via_import(samplers.test_random)
test_random_like = via_import(samplers.test_random_like_takes_the_shape_and_dtype_of_data)
test_sample_per_distribution = via_import(samplers.test_sample_per_distribution)
test_sample_without_shape = via_import(samplers.test_sample_without_shape)
test_poisson_probability_mass = via_import(samplers.test_poisson_probability_mass)
test_gamma_distribution_function = via_import(samplers.test_gamma_distribution_function)
test_unique_zipfian_one_class_per_row = via_import(
    samplers.test_unique_zipfian_one_class_per_row_is_log_uniform)
test_unique_zipfian_in_distribution = via_import(
    samplers.test_unique_zipfian_matches_mxlite_in_distribution)

# ---- the rest -----------------------------------------------------------------------------
test_contrib_batch_norms = via_import(
    normalize.test_contrib_batch_norms_export_their_inference_form)
test_multibox_prior = via_import(detection.test_multibox_prior_is_a_constant_of_the_shape)
test_box_encode = via_import(detection.test_box_encode)
test_contrib_math_graph = via_import(
    mathops.test_contrib_math_graph_runs_in_onnxruntime_as_in_mxlite)
test_more_indexing_graph = via_import(
    indexing.test_more_indexing_graph_runs_in_onnxruntime_as_in_mxlite)
test_copy_make_border = via_import(image.test_copy_make_border)
test_random_brightness = via_import(image.test_random_brightness_scales_by_one_factor_in_range)
test_random_colour_with_one_factor = via_import(
    image.test_random_colour_with_one_factor_is_mxlites)
test_random_colour_factor_in_range = via_import(image.test_random_colour_factor_in_range)
test_random_lighting = via_import(image.test_random_lighting_adds_eig_times_normal_alphas)
test_color_jitter_tiny_strengths = via_import(
    misc.test_color_jitter_with_tiny_strengths_is_mxlite_s_composition)
test_color_jitter_brightness = via_import(misc.test_color_jitter_brightness_factor_is_uniform)
test_color_jitter_distribution = via_import(misc.test_color_jitter_distribution_is_mxlite_s)
test_imdecode_is_a_constant = via_import(misc.test_imdecode_is_a_constant)
test_pdf = via_import(misc.test_pdf)
test_pdf_gradient_graph = via_import(misc.test_pdf_gradient_graph)
test_pdf_poisson = via_import(misc.test_pdf_poisson_against_the_closed_form)
test_pdf_generalized_negative_binomial = via_import(
    misc.test_pdf_generalized_negative_binomial_keeps_log1p_precision)
test_sample_exponential_without_shape = via_import(random.test_sample_exponential_without_shape)
test_shuffle_is_uniform_over_permutations = via_import(
    random.test_shuffle_is_uniform_over_permutations)
