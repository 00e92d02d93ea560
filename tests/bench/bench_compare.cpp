// What comparing two runs costs (engine/debug/compare.h), on ResNet-50 at batch 1: one run with
// every op's inputs and outputs recorded (what a comparison runs twice), the comparison of two such
// runs with every tensor matched (the metrics: one pass over both tensors), and the whole job as
// the window runs it (A and B recorded at the same time on two threads, then compared) against one
// recorded run. tests/bench/report.py writes the figures into docs/BENCHMARKS.md.

#include "debug/compare.h"
#include "exec/executor.h"
#include "nets.h"

#include <benchmark/benchmark.h>

#include <thread>

using namespace opscope;

namespace {

// Records every op's inputs and outputs under the op hooks' names, as diff's runs do.
struct Recorder : ExecutionObserver {
    debug::RecordedRun* run = nullptr;
    PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::After; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        for (size_t i = 0; i < ev.inputs.size(); ++i)
            run->add(ev.graph.inputName(ev.nodeId, i), ev.inputs[i]);
        for (size_t k = 0; k < ev.outputs.size(); ++k)
            run->add(ev.graph.outputName({ ev.nodeId, static_cast<uint32_t>(k), 0 }), ev.outputs[k]);
        return ObserverAction::Continue;
    }
};

struct Net {
    std::shared_ptr<Graph> graph = bench::resnet50();
    std::vector<Tensor> vars = bench::randomVariables(*graph, Shape({ 1, 3, 224, 224 }));
};

const Net& net()
{
    static const Net n;
    return n;
}

// One recorded run on an executor of its own (kernels prepared by a first run).
struct RecordingExecutor {
    Executor exec { net().graph, [] {
                       ExecFlags f;
                       f.static_alloc = true;
                       f.static_shape = true;
                       return f;
                   }() };
    Recorder recorder;
    RecordingExecutor()
    {
        exec.attach(&recorder);
        debug::RecordedRun warm;
        record(warm);
    }
    void record(debug::RecordedRun& run)
    {
        recorder.run = &run;
        exec.run(net().vars);
    }
};

void BM_RecordedRun(benchmark::State& state)
{
    RecordingExecutor r;
    for (auto _ : state) {
        debug::RecordedRun run;
        r.record(run);
        benchmark::DoNotOptimize(run.tensors.size());
    }
}
BENCHMARK(BM_RecordedRun)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

void BM_CompareRecordedRuns(benchmark::State& state)
{
    RecordingExecutor r;
    debug::RecordedRun a, b;
    r.record(a);
    r.record(b);
    size_t matched = 0;
    for (auto _ : state) {
        const debug::Comparison c = debug::compareRuns(*net().graph, a, b, {});
        matched = c.diffs.size();
        benchmark::DoNotOptimize(c.firstDivergentNode);
    }
    state.counters["tensors"] = static_cast<double>(matched);
    double elements = 0;
    for (const auto& [name, t] : a.tensors)
        elements += static_cast<double>(t.size());
    state.counters["Melements"] = elements / 1e6;
}
BENCHMARK(BM_CompareRecordedRuns)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

// The metrics alone: one pass over two tensors of 16 M floats (the memory both span: 128 MB).
void BM_CompareTensors(benchmark::State& state)
{
    Generator gen(2);
    const Tensor a = Tensor::normal(Shape({ 16 << 20 }), 0, 1, &gen);
    Tensor b = a.copy();
    for (int64_t i = 0; i < b.size(); i += 97)
        b.data()[i] += 1e-3f;
    for (auto _ : state) {
        const debug::TensorDiff d = debug::compareTensors("t", a.view(), b.view(), {});
        benchmark::DoNotOptimize(d.relL2);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * a.size() * 8);
}
BENCHMARK(BM_CompareTensors)->Unit(benchmark::kMillisecond)->UseRealTime();

// The window's job: A and B recorded at the same time, then compared.
void BM_CompareJob(benchmark::State& state)
{
    RecordingExecutor ra, rb;
    for (auto _ : state) {
        debug::RecordedRun a, b;
        std::thread tb([&] { rb.record(b); });
        ra.record(a);
        tb.join();
        const debug::Comparison c = debug::compareRuns(*net().graph, a, b, {});
        benchmark::DoNotOptimize(c.diffs.size());
    }
}
BENCHMARK(BM_CompareJob)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

} // namespace
BENCHMARK_MAIN();
