// The debugger's costs: statistics + histogram of 100 M floats against a plain summing pass over
// the same memory (the goal: at most twice its time), and a debug session on `lenet` with no
// breakpoint, with a node breakpoint whose condition never holds, and with a NaN/Inf watchpoint
// on every op (never hit either).

#include "debug/session.h"
#include "debug/tensor_stats.h"
#include "models/registry.h"
#include "tensor/random.h"

#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <cstdlib>

using namespace opscope;
using namespace opscope::debug;

namespace {

const Tensor& bigTensor()
{
    static const Tensor t = [] {
        Generator gen(1);
        return Tensor::normal(Shape({ 100'000'000 }), 0.0f, 1.0f, &gen);
    }();
    return t;
}

void BM_PlainSum(benchmark::State& state)
{
    const Tensor& t = bigTensor();
    for (auto _ : state) {
        const Eigen::Map<const Eigen::ArrayXf> a(t.data(), t.size());
        float s = a.sum();
        benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * t.size() * 4);
}
BENCHMARK(BM_PlainSum)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StatsAndHistogram(benchmark::State& state)
{
    const Tensor& t = bigTensor();
    for (auto _ : state) {
        TensorStats s = computeStats(t.view());
        Histogram h = computeHistogram(t.view(), s, 64);
        benchmark::DoNotOptimize(h);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * t.size() * 4);
}
BENCHMARK(BM_StatsAndHistogram)->Unit(benchmark::kMillisecond)->UseRealTime();

// The two passes apart.
void BM_Stats(benchmark::State& state)
{
    const Tensor& t = bigTensor();
    for (auto _ : state) {
        TensorStats s = computeStats(t.view());
        benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * t.size() * 4);
}
BENCHMARK(BM_Stats)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Histogram(benchmark::State& state)
{
    const Tensor& t = bigTensor();
    const TensorStats s = computeStats(t.view());
    for (auto _ : state) {
        Histogram h = computeHistogram(t.view(), s, 64);
        benchmark::DoNotOptimize(h);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * t.size() * 4);
}
BENCHMARK(BM_Histogram)->Unit(benchmark::kMillisecond)->UseRealTime();

// As BM_StatsAndHistogram on the AVX2 code (what a CPU without AVX-512 runs).
void BM_StatsAndHistogramAvx2(benchmark::State& state)
{
    const Tensor& t = bigTensor();
    setenv("OPSCOPE_STATS_MAX_ISA", "avx2", 1);
    for (auto _ : state) {
        TensorStats s = computeStats(t.view());
        Histogram h = computeHistogram(t.view(), s, 64);
        benchmark::DoNotOptimize(h);
    }
    unsetenv("OPSCOPE_STATS_MAX_ISA");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * t.size() * 4);
}
BENCHMARK(BM_StatsAndHistogramAvx2)->Unit(benchmark::kMillisecond)->UseRealTime();

// arg: 0 no breakpoint, 1 a node breakpoint whose condition never holds, 2 NaN/Inf watchpoint on every op
void BM_LenetSession(benchmark::State& state)
{
    samples::Sample s = samples::makeSample("lenet");
    Session session;
    session.load(s.block, s.inputNames);
    session.setInputs(s.defaultInputs);
    if (state.range(0) == 1)
        session.addBreakpoint(
            Breakpoint::onNode("hybridsequential0_dense1_fwd", OpPhase::After, Condition::parse("max>1e9")));
    if (state.range(0) == 2) session.addBreakpoint(Breakpoint::watch(Condition::of(Condition::Kind::NanOrInf)));
    session.start();
    session.waitUntilIdle(std::chrono::seconds(60));
    for (auto _ : state) {
        session.start();
        session.waitUntilIdle(std::chrono::seconds(60));
    }
}
BENCHMARK(BM_LenetSession)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
