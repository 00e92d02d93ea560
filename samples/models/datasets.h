#pragma once

#include "tensor/tensor.h"

#include <cstdint>

namespace opscope::samples {

/// A labelled training set: `data` has the samples along its first axis, `label` holds each
/// sample's class index as a float, shape (N,).
struct Dataset {
    Tensor data;
    Tensor label;
};

/// `n` points of `classes` interleaved spirals in [-1, 1]², row i of class i % classes, shape (N, 2).
/// Same parameterisation as spiralPoints (radius r uniform in [0.05, 1], angle 3.5·r + class·2π/classes
/// plus normal noise of standard deviation `noise` radians): spirals(n, 3, 0.15, s) equals spiralPoints(n, s).
Dataset spirals(int64_t n, int classes = 3, double noise = 0.15, uint64_t seed = 0);

/// Two interleaving half circles like scikit-learn's make_moons: ⌊n/2⌋ points of class 0 on the upper
/// arc, the rest of class 1 on the lower one, Gaussian noise of standard deviation `noise`, rows shuffled.
/// Shape (N, 2).
Dataset moons(int64_t n, double noise = 0.1, uint64_t seed = 0);

/// How much the synthetic digits vary. Lengths are in pixels of the 28×28 output.
struct DigitStyle {
    double maxRotation = 15.0; ///< degrees either way
    double maxShear = 0.3; ///< horizontal shear (slant) factor, mostly to the right
    double minAspect = 0.75, maxAspect = 1.25; ///< width scale relative to height
    double jitter = 1.0; ///< scale of the random control-point displacement (0: ideal skeletons)
    double minStroke = 1.3, maxStroke = 4.5; ///< stroke width after scaling into the 20-pixel box
    double blurProbability = 0.25; ///< chance of a slight blur of the finished image
    double noise = 0.08; ///< largest standard deviation of the intensity noise on ink pixels
    int canvas = 72; ///< side of the square canvas the strokes are rasterised on
};

/// `n` synthetic handwritten-style digits, data (N, 1, 28, 28) in [0, 1], labels 0-9 balanced
/// (each class ⌊n/10⌋ or ⌈n/10⌉ times) in shuffled order. Each digit is a jittered stroke skeleton
/// (several shape variants per class) under a random affine map, drawn with round strokes of random
/// width, then fitted like MNIST and the drawing pad: ink bounding box scaled to 20 pixels on its long
/// side, centre of mass at the centre of the 28×28 field. Deterministic from `seed`.
Dataset digits(int64_t n, uint64_t seed = 0, const DigitStyle& style = {});

} // namespace opscope::samples
