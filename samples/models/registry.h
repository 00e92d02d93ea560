#pragma once

#include "gluon/block.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace opscope::samples {

/// A built-in model: a Gluon HybridBlock built and initialised from a seed, with a default input.
struct Sample {
    std::string name;
    std::string description;
    std::shared_ptr<gluon::HybridBlock> block;
    std::vector<std::string> inputNames; ///< "data" (or data0, data1…), as the traced graph names them
    std::vector<Tensor> defaultInputs;
    bool trainedWeights = false; ///< set from shipped trained weights (else random from the seed)
    /// What each output of a classifier means, by class index ("0"… "9" for lenet, Fashion-MNIST's
    /// names for fashion); empty where the outputs are not named classes.
    std::vector<std::string> classNames;
};

/// Names of the built-in models, in display order: mlp, lenet, fashion, mini-resnet, tiny-transformer,
/// nan-demo, onnx-cnn, onnx-transformer.
std::vector<std::string> sampleNames();
/// One-line description of a built-in model.
std::string sampleDescription(const std::string& name);
/// Where its weights come from: "trained weights (98.6 % on …)" or "random weights (from the seed)".
std::string sampleWeights(const std::string& name);
/// Builds a built-in model (not hybridized) with parameters initialised from `seed` and its default
/// input. Block names start from a fresh count, so node names are the same every time. With
/// `pretrained`, a sample that ships trained weights (lenet) gets them instead of its initial ones.
/// The parameters' shapes are fixed by the default input's shape.
/// Throws UsageError for an unknown name (listing the known ones).
Sample makeSample(const std::string& name, uint64_t seed = 0, bool pretrained = true);

} // namespace opscope::samples
