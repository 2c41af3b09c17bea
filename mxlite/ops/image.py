"""mx.nd.image: to_tensor, normalize, resize, crop, flips, the random colour operators, adjust_lighting; and image decoding."""
