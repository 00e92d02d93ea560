#pragma once

#include "models/registry.h"

namespace opscope::samples {

Sample makeMlp(uint64_t seed);
Sample makeLenet(uint64_t seed);
/// A small CNN for Fashion-MNIST: two relu Conv2D(3×3, padded) + max pooling, Dense(64, relu), Dense(10).
Sample makeFashion(uint64_t seed);
Sample makeMiniResnet(uint64_t seed);
Sample makeTinyTransformer(uint64_t seed);
Sample makeNanDemo(uint64_t seed);

/// n points of 3 interleaved spirals in [-1, 1]², row i of class i % 3 (data for `mlp`).
Tensor spiralPoints(int n, uint64_t seed);
/// A 1×1×28×28 image of a handwritten-style digit `digit` (0-9) drawn with strokes, values in [0, 1].
Tensor digitImage(int digit);

} // namespace opscope::samples
