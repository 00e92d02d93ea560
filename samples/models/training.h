#pragma once

#include "gluon/block.h"
#include "gluon/trainer.h"
#include "models/datasets.h"
#include "tensor/shape.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opscope::samples {

/// How a built-in sample trains: its data (a real data set, or one the project makes from a seed),
/// the optimizer and the defaults `opscope-cli train` uses. Losses are softmax cross-entropy on class
/// indices.
struct TrainSetup {
    std::string data; ///< the data set's name (models/real_data.h: mnist, fashion, digits, spirals, moons)
    Dataset train;
    Dataset test; ///< held out: the data set's fixed test part, or made from another seed
    /// Randomly transformed copies of each training image (models/augment.h) added to the training
    /// set; 0: none. Images only.
    int augment = 0;
    std::string optimizer = "adam";
    double learningRate = 0.01;
    int decayEpochs = 0; ///< the last this many epochs run at a tenth of the learning rate
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

/// Whether a built-in sample has training data (mlp, lenet, fashion).
bool hasTrainingData(const std::string& sample);
/// The data set, optimizer, learning rate, epochs and batch of a sample, without loading its data
/// (cheap). Throws UsageError for a sample that has no training data.
TrainSetup trainingDefaults(const std::string& sample);
/// The data sets a sample's input takes: for images (1, 28, 28) mnist, fashion and digits; for 2-D
/// points spirals and moons. The sample's own data set first.
std::vector<std::string> dataSetsFor(const std::string& sample);

/// The setup of a built-in sample on `data` (default: its own: `mlp` learns 2-D spirals (3
/// classes), `lenet` real MNIST digits, `fashion` Fashion-MNIST). Throws UsageError for a sample
/// without training data or a data set its input does not take (naming both shapes), DataMissing
/// (models/real_data.h) when a real data set is not installed.
/// `augment` >= 0 replaces the sample's count of augmented copies.
TrainSetup trainingSetup(
    const std::string& sample, uint64_t seed = 0, const std::string& data = {}, int augment = -1);

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
