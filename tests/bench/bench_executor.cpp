// Executor cost per op (a chain of 128 tiny ops) with and without observers, and whole networks
// (LeNet- and ResNet-18-shaped) with oneDNN and with reference kernels. tests/bench/report.py turns
// one run of this program into docs/BENCHMARKS.md.

#include "bench/nets.h"
#include "exec/executor.h"
#include "ops/registry.h"

#include <benchmark/benchmark.h>

using namespace opscope;

namespace {

struct NothingObserver : ExecutionObserver {
    PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::None; }
    ObserverAction onOp(const OpEvent&) override { return ObserverAction::Continue; }
};

struct NoopObserver : ExecutionObserver {
    uint64_t calls = 0;
    PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::Both; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        ++calls;
        benchmark::DoNotOptimize(ev.nodeId);
        return ObserverAction::Continue;
    }
};

// The prepared kernels of the chain called in a plain loop: the cost of the ops themselves.
void BM_Chain_KernelsOnly(benchmark::State& state)
{
    auto g = bench::tinyChain();
    auto vars = bench::randomVariables(*g, Shape({ 2, 16 }));
    std::vector<Shape> vs;
    for (auto& v : vars)
        vs.push_back(v.shape());
    const auto shapes = g->inferShapes(vs);
    std::vector<Tensor> values(g->numEntries());
    for (size_t i = 0; i < vars.size(); ++i)
        values[g->entryId(g->variables()[i], 0)] = vars[i];
    struct Call {
        std::unique_ptr<Kernel> k;
        std::vector<const Tensor*> in;
        std::vector<Tensor*> out;
    };
    std::vector<Call> calls;
    for (uint32_t id = 0; id < g->size(); ++id) {
        const Node& n = g->node(id);
        if (n.isVariable())
            continue;
        Call c;
        std::vector<Shape> ins, outs;
        for (auto& e : n.inputs) {
            c.in.push_back(&values[g->entryId(e)]);
            ins.push_back(shapes[g->entryId(e)]);
        }
        values[g->entryId(id, 0)] = Tensor(shapes[g->entryId(id, 0)]);
        outs.push_back(shapes[g->entryId(id, 0)]);
        c.out.push_back(&values[g->entryId(id, 0)]);
        c.k = n.def->makeKernel(*n.params, ins, outs, KernelKind::Auto);
        calls.push_back(std::move(c));
    }
    RunContext ctx;
    for (auto _ : state) {
        for (auto& c : calls)
            c.k->run(c.in, c.out, ctx);
        benchmark::ClobberMemory();
    }
    state.counters["ns_per_op"] = benchmark::Counter(
        static_cast<double>(calls.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Chain_KernelsOnly);

// arg 0: 0 no observer, 1 an observer wanting nothing, 2 a no-op observer on every op (both phases)
// arg 1: 0 dynamic, 1 static_alloc
void BM_Chain_Executor(benchmark::State& state)
{
    auto g = bench::tinyChain();
    auto vars = bench::randomVariables(*g, Shape({ 2, 16 }));
    ExecFlags flags;
    flags.static_alloc = state.range(1) == 1;
    Executor exec(g, flags);
    NothingObserver nothing;
    NoopObserver noop;
    if (state.range(0) == 1)
        exec.attach(&nothing);
    if (state.range(0) == 2)
        exec.attach(&noop);
    RunContext ctx;
    exec.run(vars, ctx);
    for (auto _ : state) {
        auto r = exec.run(vars, ctx);
        benchmark::DoNotOptimize(r);
    }
    state.counters["ns_per_op"] = benchmark::Counter(
        128.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Chain_Executor)->ArgsProduct({ { 0, 1, 2 }, { 0, 1 } })->ArgNames({ "observer", "static_alloc" });

// arg 0: 0 lenet, 1 resnet18; arg 1: batch; arg 2: 0 oneDNN (Auto), 1 reference kernels
void BM_Network(benchmark::State& state)
{
    const bool resnet = state.range(0) == 1;
    const int batch = static_cast<int>(state.range(1));
    auto g = resnet ? bench::resnet18() : bench::lenet();
    const Shape data = resnet ? Shape({ batch, 3, 224, 224 }) : Shape({ batch, 1, 28, 28 });
    auto vars = bench::randomVariables(*g, data);
    ExecFlags flags;
    flags.static_alloc = true;
    Executor exec(g, flags, state.range(2) == 1 ? KernelKind::Reference : KernelKind::Auto);
    RunContext ctx;
    exec.run(vars, ctx);
    const double flops = bench::countFlops(*g, exec.entryShapes());
    for (auto _ : state) {
        auto r = exec.run(vars, ctx);
        benchmark::DoNotOptimize(r);
    }
    state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Network)
    ->Args({ 0, 1, 0 })
    ->Args({ 0, 1, 1 })
    ->Args({ 0, 8, 0 })
    ->Args({ 0, 8, 1 })
    ->Args({ 1, 1, 0 })
    ->Args({ 1, 8, 0 })
    ->Args({ 1, 1, 1 })
    ->ArgNames({ "resnet", "batch", "reference" })
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}

BENCHMARK_MAIN();
