#include "cli/train_command.h"

#include "cli/commands.h"
#include "cli/pause_output.h"
#include "core/error.h"
#include "debug/session.h"
#include "gluon/export.h"
#include "gluon/loss.h"
#include "models/registry.h"
#include "models/training.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace opscope::cli {

namespace {

// Runs each mini-batch step in a debug session until a breakpoint or watchpoint hits.
class DebuggedSteps {
public:
    DebuggedSteps(const samples::Sample& sample, const samples::TrainSetup& setup, std::vector<debug::Breakpoint> breaks)
        : m_breaks(std::move(breaks))
    {
        sample.block->hybridize();
        auto loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>(
            -1, true, false, std::nullopt, 0, std::string("softmaxcrossentropyloss0_"));
        auto trainer = std::make_shared<gluon::Trainer>(
            sample.block->collect_params(), setup.optimizer, std::map<std::string, double> { { "learning_rate", setup.learningRate } });
        m_session.load(sample.block, sample.inputNames);
        m_session.setTraining(loss, trainer);
        for (const debug::Breakpoint& b : m_breaks)
            m_session.addBreakpoint(b);
        m_breaks = m_session.breakpoints();
    }

    // The step's summed loss, or nothing when it paused (printed, stopped) — `m_status` says how it ended.
    std::optional<double> step(const Tensor& x, const Tensor& y, int epoch, int64_t batch, const std::string& dump)
    {
        m_listener.reset();
        m_session.setInputs({ x });
        m_session.setLabel(y);
        const bool first = m_steps++ == 0;
        m_session.startTrainStep(first ? debug::StartMode::PauseAtEntry : debug::StartMode::Run);
        if (first) {
            // The training graph exists now: a --break node it lacks is a usage error.
            m_listener.waitPausedOrDone();
            const auto graph = m_session.graph();
            for (const debug::Breakpoint& b : m_breaks) {
                if (b.kind != debug::Breakpoint::Kind::Node || !graph) continue;
                auto id = graph->findNode(b.location);
                if (!id || (graph->node(*id).isVariable() && !graph->firstReader(*id))) {
                    m_session.stop();
                    m_listener.waitDone();
                    m_status = kUsage;
                    m_error = "--break " + b.location
                        + ": a training step has no node of that name (forward, loss or <node>_backward) that an operator reads";
                    return std::nullopt;
                }
            }
            // Continue only from the entry pause itself; a breakpoint on the first op is a hit.
            bool atEntry = false;
            {
                std::lock_guard lock(m_listener.m_mutex);
                if (m_listener.m_pause && m_listener.m_pause->reason == debug::PauseReason::Entry) {
                    m_listener.m_pause.reset();
                    atEntry = true;
                }
            }
            if (atEntry) m_session.continueRun();
        }
        m_listener.waitPausedOrDone();
        if (m_listener.m_pause) {
            const debug::PauseEvent e = *m_listener.m_pause;
            m_session.stop();
            m_listener.waitDone();
            std::cout << "epoch " << epoch << ", mini-batch " << batch << " (training step " << m_steps
                      << "): the step was stopped, its update not applied\n";
            printPause(std::cout, e, m_breaks);
            dumpPause(e, dump);
            m_status = kOk;
            return std::nullopt;
        }
        if (!m_listener.m_error.empty()) {
            m_status = kRunFailed;
            m_error = m_listener.m_error;
            return std::nullopt;
        }
        const auto result = m_session.lastTrainStep();
        if (!result || !result->updated) {
            m_status = kRunFailed;
            m_error = "training step " + std::to_string(m_steps) + " ended without an update"
                + (result && !result->error.empty() ? ": " + result->error : std::string());
            return std::nullopt;
        }
        return result->lossSum;
    }

    int m_status = kOk;
    std::string m_error;

private:
    std::vector<debug::Breakpoint> m_breaks;
    WaitingListener m_listener;
    debug::Session m_session { &m_listener };
    int64_t m_steps = 0;
};

} // namespace

int trainCommand(const TrainOptions& o)
{
    if (o.model.rfind("sample:", 0) != 0) {
        return fail(kUsage, "train: " + o.model + ": only built-in samples train (sample:mlp, sample:lenet, sample:fashion)");
    }
    const std::string name = o.model.substr(7);
    samples::Sample sample;
    samples::TrainSetup setup;
    try {
        sample = samples::makeSample(name, o.seed, false); // from its initial parameters, reproducibly
        setup = samples::trainingSetup(name, o.seed, o.data, o.augment);
    } catch (const std::exception& e) {
        return fail(kUsage, std::string("train: ") + e.what());
    }
    std::vector<debug::Breakpoint> breaks;
    try {
        for (const std::string& b : o.breaks)
            breaks.push_back(debug::parseBreakSpec(b));
        for (const std::string& c : o.breakOn)
            breaks.push_back(debug::Breakpoint::watch(debug::Condition::parse(c)));
    } catch (const Error& e) {
        return fail(kUsage, std::string("train: ") + e.what());
    }
    if (!o.dump.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(o.dump, ec);
        if (ec) {
            return fail(kUsage, "train: " + o.dump + ": cannot create directory: " + ec.message());
        }
    }
    if (o.epochs > 0) setup.epochs = o.epochs;
    if (o.batch > 0) setup.batch = o.batch;
    if (o.lr > 0) setup.learningRate = o.lr;
    std::cout << "training " << name << " on " << setup.data << ": " << setup.train.data.shape()[0] << " samples"
              << (setup.augment > 0 ? " (with " + std::to_string(setup.augment) + " transformed copies of each)" : "")
              << ", "
              << setup.test.data.shape()[0] << " held out, " << setup.optimizer << " lr " << setup.learningRate
              << ", batch " << setup.batch << ", " << setup.epochs << " epochs\n";
    std::unique_ptr<DebuggedSteps> debugged;
    bool ended = false; // a debugged step paused or failed
    try {
        samples::StepFunction step;
        if (!breaks.empty()) {
            debugged = std::make_unique<DebuggedSteps>(sample, setup, breaks);
            step = [&](const Tensor& x, const Tensor& y, int epoch, int64_t batch) {
                std::optional<double> sum = debugged->step(x, y, epoch, batch, o.dump);
                ended = !sum;
                return sum;
            };
        }
        samples::train(
            *sample.block, setup, o.seed,
            [](const samples::EpochReport& r) {
                char line[160];
                std::snprintf(line, sizeof line,
                    "epoch %d: loss %.4f  train accuracy %.4f  test accuracy %.4f  (%.1f s)", r.epoch, r.loss,
                    r.trainAccuracy, r.testAccuracy, r.seconds);
                std::cout << line << std::endl;
            },
            step);
    } catch (const std::exception& e) {
        return fail(kRunFailed, std::string("train: ") + e.what());
    }
    if (ended) {
        return debugged->m_status == kOk ? kOk : fail(debugged->m_status, "train: " + debugged->m_error);
    }
    if (debugged) std::cout << "no breakpoint hit\n";
    if (!o.save.empty()) {
        try {
            gluon::export_(*sample.block, o.save, 0);
        } catch (const Error& e) {
            return fail(kBadFile, std::string("train: ") + e.what());
        }
        std::cout << "saved " << o.save << "-symbol.json and " << o.save << "-0000.params\n";
    }
    return debugged ? kNoHit : kOk;
}

} // namespace opscope::cli
