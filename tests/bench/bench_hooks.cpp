// Cost of op hooks: the seed model scaled up (64 Dense(16) layers, batch 2), and the `lenet` and
// `mlp` samples, with no hook, a no-op hook and a no-op hook with monitor_all, eager and
// hybridized. tests/bench/report.py derives ns per hook call and the hybrid/eager ratios.

#include "bench/paired.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/sequential.h"
#include "models/registry.h"

#include <benchmark/benchmark.h>

#include <algorithm>

using namespace opscope;
using namespace opscope::gluon;

namespace {

struct Model {
    std::shared_ptr<HybridBlock> block;
    std::vector<Tensor> inputs;
};

Model makeModel(int which)
{
    if (which == 0) {
        resetNaming();
        auto net = std::make_shared<HybridSequential>("dense_");
        {
            auto scope = net->name_scope();
            for (int i = 0; i < 64; ++i)
                net->add(std::make_shared<nn::Dense>(16));
        }
        net->initialize();
        return { net, { Tensor::ones(Shape({ 2, 16 })) } };
    }
    samples::Sample s = samples::makeSample(which == 1 ? "lenet" : "mlp");
    return { s.block, s.defaultInputs };
}

// arg 0: model (0 seed×64, 1 lenet, 2 mlp); arg 1: 0 eager, 1 hybridized (static_alloc); arg 2: 0 no
// hook, 1 no-op, 2 no-op monitor_all, 3 no hook and no fusion (the plan a hook on every op runs: the
// baseline of its cost per call)
void BM_Hooks(benchmark::State& state)
{
    Model m = makeModel(static_cast<int>(state.range(0)));
    if (state.range(1) == 1) {
        ExecFlags flags;
        flags.static_alloc = true;
        flags.fuse = state.range(2) != 3;
        m.block->hybridize(true, flags);
    }
    uint64_t calls = 0;
    if (state.range(2) == 1 || state.range(2) == 2)
        m.block->register_op_hook(
            [&calls](std::string_view, std::string_view, const TensorView& v) {
                ++calls;
                benchmark::DoNotOptimize(v.data());
            },
            state.range(2) == 2);
    m.block->call(m.inputs);
    calls = 0;
    for (auto _ : state) {
        auto out = m.block->call(m.inputs);
        benchmark::DoNotOptimize(out);
    }
    state.counters["hook_calls_per_iter"] = static_cast<double>(calls) / static_cast<double>(state.iterations());
}

// The hook's cost measured in pairs: each iteration runs the model with a no-op hook and a copy of
// it without, in alternating order, timing each call; the difference of the sums over the hook
// calls is the cost per call. Both halves of a pair run in the same moment of the machine, so
// other work on it slows both alike. arg 0: model; arg 1: 0 eager, 1 hybridized (static_alloc;
// the copy without hook unfused, the plan a hook on every op runs); arg 2: monitor_all.
void BM_HookPaired(benchmark::State& state)
{
    const int which = static_cast<int>(state.range(0));
    Model with = makeModel(which), without = makeModel(which);
    if (state.range(1) == 1) {
        ExecFlags flags;
        flags.static_alloc = true;
        flags.fuse = false;
        with.block->hybridize(true, flags);
        without.block->hybridize(true, flags);
    }
    uint64_t calls = 0;
    with.block->register_op_hook(
        [&calls](std::string_view, std::string_view, const TensorView& v) {
            ++calls;
            benchmark::DoNotOptimize(v.data());
        },
        state.range(2) == 1);
    with.block->call(with.inputs);
    without.block->call(without.inputs);
    calls = 0;
    const bench::PairedTimes t = bench::timePaired(
        state,
        [&] {
            auto out = with.block->call(with.inputs);
            benchmark::DoNotOptimize(out);
        },
        [&] {
            auto out = without.block->call(without.inputs);
            benchmark::DoNotOptimize(out);
        });
    state.counters["hook_calls_per_iter"] = static_cast<double>(calls) / static_cast<double>(state.iterations());
    state.counters["ns_per_hook_call"] = calls ? (t.aNs - t.bNs) / static_cast<double>(calls) : 0.0;
    state.counters["us_with_hook"] = t.aNs / 1e3 / static_cast<double>(state.iterations());
    state.counters["us_without"] = t.bNs / 1e3 / static_cast<double>(state.iterations());
}

BENCHMARK(BM_HookPaired)
    ->ArgsProduct({ { 0, 1, 2 }, { 0, 1 }, { 0, 1 } })
    ->ArgNames({ "model", "hybrid", "monitor_all" })
    ->MinTime(0.5)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

BENCHMARK(BM_Hooks)
    ->ArgsProduct({ { 0, 1, 2 }, { 0, 1 }, { 0, 1, 2, 3 } })
    ->ArgNames({ "model", "hybrid", "hook" })
    ->MinTime(0.3)
    ->Repetitions(9) // report.py interleaves the repetitions of all configurations in random order
    // The fastest repetition: other work on the machine only ever slows a repetition down.
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
    ->ReportAggregatesOnly(true);

}

BENCHMARK_MAIN();
