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

#: the export tests rerun here, collected as test_<family>_<name> (family: their module)
RERUN = [
    # the Loops
    nms.test_export,
    nms.test_box_nms_gradient_graph,
    roi.test_roi_pooling_argmax,
    misc.test_hawkesll,
    misc.test_hawkesll_against_the_closed_form,
    misc.test_hawkesll_scan,
    misc.test_hawkesll_gradient_graph,
    samplers.test_random,
    samplers.test_random_like_takes_the_shape_and_dtype_of_data,
    samplers.test_sample_per_distribution,
    samplers.test_sample_without_shape,
    samplers.test_poisson_probability_mass,
    samplers.test_gamma_distribution_function,
    samplers.test_unique_zipfian_one_class_per_row_is_log_uniform,
    samplers.test_unique_zipfian_matches_mxlite_in_distribution,
    # the rest
    normalize.test_contrib_batch_norms_export_their_inference_form,
    detection.test_multibox_prior_is_a_constant_of_the_shape,
    detection.test_box_encode,
    mathops.test_contrib_math_graph_runs_in_onnxruntime_as_in_mxlite,
    indexing.test_more_indexing_graph_runs_in_onnxruntime_as_in_mxlite,
    image.test_copy_make_border,
    image.test_random_brightness_scales_by_one_factor_in_range,
    image.test_random_colour_with_one_factor_is_mxlites,
    image.test_random_colour_factor_in_range,
    image.test_random_lighting_adds_eig_times_normal_alphas,
    misc.test_color_jitter_with_tiny_strengths_is_mxlite_s_composition,
    misc.test_color_jitter_brightness_factor_is_uniform,
    misc.test_color_jitter_distribution_is_mxlite_s,
    misc.test_imdecode_is_a_constant,
    misc.test_pdf,
    misc.test_pdf_gradient_graph,
    misc.test_pdf_poisson_against_the_closed_form,
    misc.test_pdf_generalized_negative_binomial_keeps_log1p_precision,
    random.test_sample_exponential_without_shape,
    random.test_shuffle_is_uniform_over_permutations,
]
globals().update({f"test_{test.__module__[12:]}_{test.__name__[5:]}": via_import(test)
                 for test in RERUN})
