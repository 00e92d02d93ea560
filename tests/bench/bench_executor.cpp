// Executor cost per op (a chain of 128 tiny ops) with and without observers, and whole networks
// (LeNet- and ResNet-18-shaped) with oneDNN and with reference kernels. tests/bench/report.py turns
// one run of this program into docs/BENCHMARKS.md.

#include "bench/nets.h"
#include "bench/paired.h"
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

// The prepared kernels of the chain, called in a plain loop: the cost of the ops themselves.
class ChainKernels {
public:
    explicit ChainKernels(const Graph& g, const std::vector<Tensor>& vars)
        : m_values(g.numEntries())
    {
        std::vector<Shape> vs;
        for (auto& v : vars)
            vs.push_back(v.shape());
        const auto shapes = g.inferShapes(vs);
        for (size_t i = 0; i < vars.size(); ++i)
            m_values[g.entryId(g.variables()[i], 0)] = vars[i];
        for (uint32_t id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            if (n.isVariable()) continue;
            Call c;
            std::vector<Shape> ins, outs;
            for (auto& e : n.inputs) {
                c.in.push_back(&m_values[g.entryId(e)]);
                ins.push_back(shapes[g.entryId(e)]);
            }
            m_values[g.entryId(id, 0)] = Tensor(shapes[g.entryId(id, 0)]);
            outs.push_back(shapes[g.entryId(id, 0)]);
            c.out.push_back(&m_values[g.entryId(id, 0)]);
            c.k = n.def->makeKernel(*n.params, ins, outs, KernelKind::Auto);
            m_calls.push_back(std::move(c));
        }
    }
    size_t size() const { return m_calls.size(); }
    void run()
    {
        for (auto& c : m_calls)
            c.k->run(c.in, c.out, m_ctx);
        benchmark::ClobberMemory();
    }

private:
    struct Call {
        std::unique_ptr<Kernel> k;
        std::vector<const Tensor*> in;
        std::vector<Tensor*> out;
    };
    std::vector<Tensor> m_values;
    std::vector<Call> m_calls;
    RunContext m_ctx;
};

void BM_Chain_KernelsOnly(benchmark::State& state)
{
    auto g = bench::tinyChain();
    ChainKernels kernels(*g, bench::randomVariables(*g, Shape({ 2, 16 })));
    for (auto _ : state)
        kernels.run();
    state.counters["ns_per_op"] = benchmark::Counter(
        static_cast<double>(kernels.size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
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

// The executor's cost over the bare kernels measured in pairs: each iteration runs the chain's
// kernels in a plain loop and the executor (static_alloc, no observer) over the same chain, in
// alternating order, timing each; both halves of a pair run in the same moment of the machine, so
// other work on it slows both alike. arg 0: fuse. Either way the executor runs the very kernels of
// the plain loop: a 16→16 fully connected layer runs on the reference kernel, which takes no
// post-ops; with fuse, tensors nobody watches share buffers (as in BM_Chain_Executor).
void BM_Chain_Paired(benchmark::State& state)
{
    auto g = bench::tinyChain();
    const std::vector<Tensor> vars = bench::randomVariables(*g, Shape({ 2, 16 }));
    ChainKernels kernels(*g, vars);
    ExecFlags flags;
    flags.static_alloc = true;
    flags.fuse = state.range(0) == 1;
    Executor exec(g, flags);
    RunContext ctx;
    exec.run(vars, ctx);
    kernels.run();
    size_t fused = 0;
    for (uint32_t id = 0; id < g->size(); ++id)
        fused += exec.fusedInto(id) >= 0 ? 1 : 0;
    const bench::PairedTimes t = bench::timePaired(
        state, [&] { kernels.run(); },
        [&] {
            auto r = exec.run(vars, ctx);
            benchmark::DoNotOptimize(r);
        });
    const auto perOp = [&](double ns) {
        return ns / static_cast<double>(state.iterations()) / static_cast<double>(kernels.size());
    };
    state.counters["kernels_ns_per_op"] = perOp(t.aNs);
    state.counters["executor_ns_per_op"] = perOp(t.bNs);
    state.counters["overhead_pct"] = 100.0 * (t.bNs / t.aNs - 1.0);
    state.counters["fused_nodes"] = static_cast<double>(fused);
}
BENCHMARK(BM_Chain_Paired)->Arg(0)->Arg(1)->ArgName("fuse")->MinTime(0.5)->Repetitions(5)->ReportAggregatesOnly(true);

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
