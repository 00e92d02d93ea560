#pragma once

#include "gluon/block.h"
#include "gluon/trainer.h"
#include "models/datasets.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opscope::samples {

/// How a built-in sample trains: its data (made by the project, from a seed), the optimizer and
/// the defaults `opscope-cli train` uses. Losses are softmax cross-entropy on class indices.
struct TrainSetup {
    Dataset train;
    Dataset test; ///< held out, from another seed
    std::string optimizer = "adam";
    double learningRate = 0.01;
    int epochs = 10;
    int64_t batch = 32;
};

/// One epoch's figures: the mean training loss and the accuracies on the training and test sets.
struct EpochReport {
    int epoch = 0;
    double loss = 0;
    double trainAccuracy = 0;
    double testAccuracy = 0;
    double seconds = 0;
};

/// Whether a built-in sample has training data (mlp, lenet).
bool hasTrainingData(const std::string& sample);
/// The optimizer, learning rate, epochs and batch of a sample, without making its data (cheap).
/// Throws UsageError for a sample that has no training data.
TrainSetup trainingDefaults(const std::string& sample);

/// The setup of a built-in sample: `mlp` learns 2-D spirals (3 classes), `lenet` synthetic
/// handwritten digits. Throws UsageError for a sample that has no training data.
TrainSetup trainingSetup(const std::string& sample, uint64_t seed = 0);

/// Runs one mini-batch step of train() in place of trainBatch (a debugger's, say): returns the
/// batch's summed loss, or nothing to end the training there. `epoch` counts from 1, `batch` from 0.
using StepFunction = std::function<std::optional<double>(const Tensor& x, const Tensor& y, int epoch, int64_t batch)>;

/// Trains `block` (hybridized here) on the setup's data with shuffled mini-batches, autograd and a
/// Trainer; `onEpoch` is called after each epoch. Returns every epoch's report (complete epochs only
/// when `step` ended the training early).
std::vector<EpochReport> train(gluon::HybridBlock& block, const TrainSetup& setup, uint64_t seed = 0,
    const std::function<void(const EpochReport&)>& onEpoch = {}, const StepFunction& step = {});

/// Rows `order[begin, end)` of `t` (first axis), copied into one tensor: a shuffled mini-batch.
Tensor gatherRows(const Tensor& t, const std::vector<int64_t>& order, size_t begin, size_t end);

/// One step on the mini-batch (x, y): forward under autograd::record, `loss`, backward and
/// trainer.step. Returns the batch's summed loss.
double trainBatch(
    gluon::HybridBlock& block, gluon::HybridBlock& loss, gluon::Trainer& trainer, const Tensor& x, const Tensor& y);

/// The fraction of `data` that `block` classifies right (argmax over its outputs' axis 1).
double accuracy(gluon::HybridBlock& block, const Dataset& data, int64_t batch = 256);

} // namespace opscope::samples
