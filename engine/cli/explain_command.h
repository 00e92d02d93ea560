#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::cli {

/// `explain MODEL [--params F] [--input NAME=FILE.npy|SHAPE] --method saliency|gradient-x-input|gradcam|occlusion
/// [--class K] [--layer NODE] [--patch P] [--stride S] [--top K] [--output heat.npy] [--png FILE] [--json FILE]`.
struct ExplainOptions {
    std::string model;
    std::string params;
    std::vector<std::string> inputs;
    uint64_t seed = 0;
    std::string method = "saliency";
    int64_t classIndex = -1; ///< -1: the top class
    std::string layer; ///< Grad-CAM's node (default: the last convolution)
    int64_t patch = 0, stride = 0; ///< occlusion (0: defaults)
    int top = 5;
    std::string output; ///< the heat map as .npy
    std::string png; ///< the heat map over the input as a PNG
    std::string json; ///< the figures as JSON
};

/// Explains a classifier's prediction for its input (debug/explain.h): prints the top classes and
/// where the explanation is strongest, writes the heat map (--output, float32 (H, W) for an image),
/// an overlay on the input (--png) and the figures (--json: method, class, class_name, score,
/// top[{class, name, score}], layer, heat_shape, peak{row, col, value}). Exit 0, 2 for bad usage
/// (a model that is not a classifier, a class out of range), 3 for a bad file, 4 when it fails.
int explainCommand(const ExplainOptions& options);

} // namespace opscope::cli
