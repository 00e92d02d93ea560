#include "server/served_training.h"

#include "core/error.h"
#include "gluon/loss.h"

namespace opscope::server {

std::vector<samples::EpochReport> trainServed(debug::Session& session, samples::Sample& sample,
    const samples::TrainSetup& setup, uint64_t seed, const std::function<void(const samples::EpochReport&)>& onEpoch,
    const std::atomic<bool>& stop)
{
    sample.block->hybridize();
    auto loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>(
        -1, true, false, std::nullopt, 0, std::string("softmaxcrossentropyloss0_"));
    auto trainer = std::make_shared<gluon::Trainer>(sample.block->collect_params(), setup.optimizer,
        std::map<std::string, double> { { "learning_rate", setup.learningRate } });
    session.load(sample.block, sample.inputNames);
    session.setTraining(loss, trainer);
    auto step = [&](const Tensor& x, const Tensor& y, int, int64_t) -> std::optional<double> {
        if (stop) return std::nullopt;
        session.setInputs({ x });
        session.setLabel(y);
        session.startTrainStep();
        // Paused at a client's breakpoint, the step waits for it; a stop request ends it.
        while (!session.waitUntilIdle(std::chrono::milliseconds(200)))
            if (stop) session.stop();
        const std::optional<debug::Session::TrainStepResult> r = session.lastTrainStep();
        if (stop || !r) return std::nullopt;
        if (!r->error.empty()) throw Error("training step " + std::to_string(r->runId) + ": " + r->error);
        return r->completed ? r->lossSum : 0.0;
    };
    return samples::train(*sample.block, setup, seed, onEpoch, step);
}

} // namespace opscope::server
