#pragma once

#include "gluon/block.h"
#include "models/datasets.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace opscope::samples {

/// A classifier's answers on a labelled set: per sample the predicted class and its softmax
/// probability, the confusion matrix and the accuracy.
struct Evaluation {
    int64_t classes = 0;
    std::vector<int64_t> predicted; ///< per sample
    std::vector<float> confidence; ///< softmax probability of the predicted class
    /// classes × classes counts, row = true class, column = predicted class.
    std::vector<int64_t> confusion;
    double accuracy = 0;

    int64_t count(int64_t trueClass, int64_t predictedClass) const
    {
        return confusion[static_cast<size_t>(trueClass * classes + predictedClass)];
    }
    /// The samples of one cell, most confident first.
    std::vector<int64_t> cell(const Dataset& data, int64_t trueClass, int64_t predictedClass) const;
    /// The misclassified samples, most confident first, at most `limit`.
    std::vector<int64_t> mistakes(const Dataset& data, size_t limit) const;
};

/// Runs `block` over `data` in batches of `batch` (argmax over the output's axis 1). The classes are
/// the output's width. Nothing when `stop` says so between batches.
std::optional<Evaluation> evaluate(gluon::HybridBlock& block, const Dataset& data, int64_t batch = 256,
    const std::function<bool()>& stop = {});

} // namespace opscope::samples
