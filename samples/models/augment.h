#pragma once

#include "models/datasets.h"

#include <cstdint>

namespace opscope::samples {

/// How far augment() moves an image. Lengths in pixels.
struct AugmentStyle {
    double maxRotation = 12.0; ///< degrees either way
    double minScale = 0.9, maxScale = 1.1;
    double maxShear = 0.15; ///< horizontal shear factor either way
    double maxShift = 2.0; ///< either way, on each axis
};

/// The images of `d` (N, C, H, W) followed by `copies` randomly transformed copies of each (a random
/// rotation, scale, shear and shift about the image centre, bilinear, zero outside), labels
/// repeated. Deterministic from `seed`. copies = 0 returns `d` unchanged.
Dataset augment(const Dataset& d, int copies, uint64_t seed, const AugmentStyle& style = {});

} // namespace opscope::samples
