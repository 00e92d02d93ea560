#pragma once

#include "debug/tensor_stats.h"
#include "gluon/block.h"
#include "gluon/trainer.h"
#include "models/evaluation.h"
#include "models/training.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QImage>

namespace opscope::gui {

/// What the Train dock asks for: a built-in sample's data and the optimizer's settings.
struct TrainConfig {
    std::string sample; ///< "mlp", "lenet" or "fashion"
    std::string data; ///< the data set (models/real_data.h); empty: the sample's own
    int epochs = 10;
    int64_t batch = 32;
    double learningRate = 0.01;
    std::string optimizer = "adam"; ///< "sgd" or "adam"
    uint64_t seed = 0;
    bool fromInitial = false; ///< start from the sample's untrained initial weights
    int64_t maxSteps = 0; ///< end after this many mini-batch steps (0: train every epoch)
    int64_t skipSteps = 0; ///< pass over this many mini-batches first (the steps a previous training took)
};

/// One parameter's gradient (or its values) after the last mini-batch of an epoch.
struct GradientInfo {
    std::string name;
    Shape shape;
    debug::TensorStats stats;
    debug::Histogram histogram;
};

/// What the worker hands over after each epoch (made on the worker).
struct EpochResult {
    samples::EpochReport report;
    QImage decision; ///< null unless the data is 2-D
    std::vector<GradientInfo> gradients;
    std::vector<GradientInfo> weights; ///< each parameter's values, as gradients holds its gradient
    /// The held-out set and the model's answers on it (confusion matrix, mistakes).
    std::shared_ptr<const samples::Dataset> testSet;
    samples::Evaluation test;
    std::vector<std::string> classNames; ///< by class index, where the data set names them
};

/// The worker's hooks. All are called on the worker thread.
struct TrainCallbacks {
    std::function<bool()> shouldStop; ///< checked between mini-batches
    std::function<void(const QString&)> onStatus;
    /// A running mean of the loss at `epochPosition` (epochs done, fractional).
    std::function<void(double epochPosition, double loss)> onBatchLoss;
    std::function<void(EpochResult&&)> onEpoch;
    /// Runs one mini-batch step instead of samples::trainBatch (the debugger's: a training step as a
    /// debug-session run) with the loss and trainer of this training; returns the batch's summed
    /// loss, or nothing to end the training (a stopped step). `step` counts from 0.
    std::function<std::optional<double>(const Tensor& x, const Tensor& y,
        const std::shared_ptr<gluon::HybridBlock>& loss, const std::shared_ptr<gluon::Trainer>& trainer, int64_t step)>
        step;
};

/// What a training may keep for the next one (the Train dock's debug steps): the loss and the
/// trainer, so that Adam's moments carry over from one step to the next. runTraining makes what is
/// missing. Used by one training thread at a time; the panel replaces it only while none runs.
struct TrainState {
    std::shared_ptr<gluon::HybridBlock> loss;
    std::shared_ptr<gluon::Trainer> trainer;
};

/// Trains `block` on the sample's data, as samples::train does (shuffled mini-batches, softmax
/// cross-entropy, a Trainer), with a stop check between mini-batches and, after each epoch, the
/// accuracies, the gradient statistics of every parameter and (2-D data) the decision picture.
/// Returns false when stopped (by the flag or by `step`), true when every epoch (or maxSteps steps) ran. Throws opscope::Error on a bad setting. Only while nothing else
/// calls the block.
bool runTraining(gluon::HybridBlock& block, const TrainConfig& config, const TrainCallbacks& callbacks,
    const std::shared_ptr<TrainState>& state = nullptr);

/// Copies the untrained weights of `samples::makeSample(sample, seed, false)` into `block`'s
/// parameters, matched by name.
void reinitialiseFromSample(gluon::HybridBlock& block, const std::string& sample, uint64_t seed);

/// The class `block` predicts over a `grid`×`grid` lattice covering the 2-D points of `data` (with
/// a margin), shaded by confidence and scaled to `size` pixels, with the points drawn on top.
QImage decisionImage(gluon::HybridBlock& block, const samples::Dataset& data, int grid = 160, int size = 320);

/// The colour of class `c` (tab10).
QColor classColor(int c);

} // namespace opscope::gui
