// One training step of the `lenet` and `mlp` samples (batch 64): forward under autograd::record,
// SoftmaxCrossEntropyLoss, backward and Trainer::step with plain SGD (lr 0.01), as
// samples/models/training.cpp does it. tests/bench/torch_train_step.py times the same step in
// PyTorch and tests/bench/report.py puts both in docs/BENCHMARKS.md. Threads: OMP_NUM_THREADS as
// the environment gives it.

#include "debug/session.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/trainer.h"
#include "models/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <ctime>
#include <map>
#include <string>
#include <vector>

using namespace opscope;
using namespace opscope::gluon;

namespace {

constexpr int64_t kBatch = 64;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Step {
    samples::Sample sample;
    SoftmaxCrossEntropyLoss loss;
    std::unique_ptr<Trainer> trainer;
    Tensor x, y;

    Step(const std::string& name, bool hybrid)
        : sample(samples::makeSample(name, 0, false))
    {
        const bool lenet = name == "lenet";
        const int64_t classes = lenet ? 10 : 3;
        Generator gen(7);
        x = Tensor::uniform(lenet ? Shape({ kBatch, 1, 28, 28 }) : Shape({ kBatch, 2 }), -1, 1, &gen);
        y = Tensor(Shape({ kBatch }));
        for (int64_t i = 0; i < kBatch; ++i)
            y.data()[i] = static_cast<float>(gen.next() % static_cast<uint64_t>(classes));
        if (hybrid) {
            sample.block->hybridize();
            loss.hybridize();
        }
        trainer = std::make_unique<Trainer>(
            sample.block->collect_params(), "sgd", std::map<std::string, double> { { "learning_rate", 0.01 } });
    }

    Tensor forward()
    {
        auto r = autograd::record();
        return loss.call({ sample.block->call(x), y }).at(0);
    }

    void run()
    {
        Tensor l = forward();
        autograd::backward(l);
        trainer->step(kBatch);
    }
};

// CPU time of the calling thread, in ms: with one OpenMP thread every kernel runs on it, and time spent
// descheduled (other processes on the machine) is left out.
double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// CPU time of the whole process, in ms (every thread's).
double processCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// One whole step. Counters median_ms and median_cpu_ms: the medians of the steps' wall times and of
// the calling thread's CPU times (what the PyTorch script reports); the benchmark's own time is the
// mean wall time.
void BM_TrainStep(benchmark::State& state, const std::string& name, bool hybrid)
{
    Step step(name, hybrid);
    for (int i = 0; i < 5; ++i)
        step.run();
    std::vector<double> times, cpuTimes;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const double c0 = threadCpuMs();
        step.run();
        cpuTimes.push_back(threadCpuMs() - c0);
        times.push_back(msSince(t0));
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
    state.counters["median_ms"] = median(std::move(times));
    state.counters["median_cpu_ms"] = median(std::move(cpuTimes));
}

// The step's phases timed separately: forward + loss (recorded), backward, update. Counters are ms
// per step (medians).
void BM_TrainPhases(benchmark::State& state, const std::string& name, bool hybrid)
{
    Step step(name, hybrid);
    for (int i = 0; i < 5; ++i)
        step.run();
    std::vector<double> fwd, bwd, upd;
    for (auto _ : state) {
        auto t0 = Clock::now();
        Tensor l = step.forward();
        fwd.push_back(msSince(t0));
        t0 = Clock::now();
        autograd::backward(l);
        bwd.push_back(msSince(t0));
        t0 = Clock::now();
        step.trainer->step(kBatch);
        upd.push_back(msSince(t0));
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
    state.counters["forward_ms"] = median(std::move(fwd));
    state.counters["backward_ms"] = median(std::move(bwd));
    state.counters["update_ms"] = median(std::move(upd));
}

// Where forward and backward spend their time, by layer: an op hook notes the time between one
// reported output and the next and charges it to the layer whose op produced it (executor overhead
// included; a backward op reports all its gradients at once, so the first one takes its time).
// Counters "<layer> forward" / "<layer> backward": ms per step.
void BM_TrainOps(benchmark::State& state, const std::string& name)
{
    Step step(name, true);
    std::map<std::string, double> perLayer;
    auto last = Clock::now();
    auto handle
        = step.sample.block->register_op_hook([&](std::string_view tensor, std::string_view, const TensorView&) {
              const auto now = Clock::now();
              // "hybridsequential0_conv1_fwd_backward_data_grad" -> "conv1 backward"
              std::string_view layer = tensor.substr(tensor.find('_') + 1);
              layer = layer.substr(0, layer.find("_fwd"));
              const bool backward = tensor.find("_backward") != std::string_view::npos;
              perLayer[std::string(layer) + (backward ? " backward" : " forward")]
                  += std::chrono::duration<double, std::milli>(now - last).count();
              last = now;
          });
    for (int i = 0; i < 5; ++i)
        step.run();
    perLayer.clear();
    for (auto _ : state) {
        last = Clock::now();
        Tensor l = step.forward();
        last = Clock::now();
        autograd::backward(l);
        step.trainer->step(kBatch);
    }
    for (auto& [layer, ms] : perLayer)
        state.counters[layer] = ms / static_cast<double>(state.iterations());
}

// The same step as a debug-session run (Session::startTrainStep: forward, loss and backward as one
// graph on the session's worker, then the update), waited for by the calling thread. `what`: "plain"
// (no breakpoint: the session still watches every node), "watch" (a "grad naninf" watchpoint: the
// statistics of every gradient), "record" (RecordLevel::Tensors, the window's default: statistics,
// histogram and a copy of every output). Counters: median_ms, wall time per step; median_cpu_ms, the
// process's CPU time per step (the worker's work: the waiting thread sleeps; compare with
// BM_TrainStep's median_cpu_ms with one OpenMP thread).
void BM_TrainStepSession(benchmark::State& state, const std::string& name, const std::string& what)
{
    Step step(name, true);
    step.sample.block->call(step.x); // parameters of deferred shape initialised
    auto loss = std::make_shared<SoftmaxCrossEntropyLoss>();
    auto trainer = std::make_shared<Trainer>(
        step.sample.block->collect_params(), "sgd", std::map<std::string, double> { { "learning_rate", 0.01 } });
    debug::Session session;
    session.load(step.sample.block, step.sample.inputNames);
    session.setTraining(loss, trainer);
    session.setInputs({ step.x });
    session.setLabel(step.y);
    if (what == "watch") session.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("grad naninf")));
    if (what == "record") session.setOptions({ debug::RecordLevel::Tensors });
    auto one = [&] {
        session.startTrainStep();
        session.waitUntilIdle(std::chrono::minutes(1));
    };
    for (int i = 0; i < 5; ++i)
        one();
    std::vector<double> times, cpuTimes;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const double c0 = processCpuMs();
        one();
        cpuTimes.push_back(processCpuMs() - c0);
        times.push_back(msSince(t0));
    }
    state.counters["median_cpu_ms"] = median(std::move(cpuTimes));
    if (!session.lastTrainStep() || !session.lastTrainStep()->updated) state.SkipWithError("the step did not update");
    state.SetItemsProcessed(state.iterations() * kBatch);
    state.counters["median_ms"] = median(std::move(times));
}

BENCHMARK_CAPTURE(BM_TrainStep, lenet, std::string("lenet"), true)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep, mlp, std::string("mlp"), true)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep, lenet_eager, std::string("lenet"), false)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStep, mlp_eager, std::string("mlp"), false)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainPhases, lenet, std::string("lenet"), true)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainPhases, mlp, std::string("mlp"), true)->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainOps, lenet, std::string("lenet"))->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStepSession, lenet_plain, std::string("lenet"), std::string("plain"))->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStepSession, lenet_watch, std::string("lenet"), std::string("watch"))->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStepSession, lenet_record, std::string("lenet"), std::string("record"))->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStepSession, mlp_plain, std::string("mlp"), std::string("plain"))->MinTime(1.0)->UseRealTime();
BENCHMARK_CAPTURE(BM_TrainStepSession, mlp_watch, std::string("mlp"), std::string("watch"))->MinTime(1.0)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
