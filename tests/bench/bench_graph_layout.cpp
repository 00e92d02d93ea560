// The graph view's layout: Graphviz dot on what the view shows. A graph of thousands of ops opens
// collapsed to at most ~150 items (GraphModel::expandToFit), which dot lays out in a fraction of
// the time the fully expanded graph takes; both measured here, in one run.

#include "gui/graph/graph_layout.h"
#include "gui/graph/graph_model.h"

#include <QGuiApplication>
#include <benchmark/benchmark.h>

using namespace opscope;
using namespace opscope::gui;

namespace {

// `blocks` blocks of `ops` relu nodes each, chained, with a skip connection around every block.
std::shared_ptr<Graph> chain(int blocks, int ops)
{
    auto g = std::make_shared<Graph>();
    NodeEntry last { g->addVariable("data"), 0, 0 };
    for (int b = 0; b < blocks; ++b) {
        const NodeEntry in = last;
        for (int i = 0; i < ops; ++i)
            last = { g->addOp("relu", "b" + std::to_string(b) + "_relu" + std::to_string(i), {}, { last },
                         "net/block" + std::to_string(b)),
                0, 0 };
        last = { g->addOp("elemwise_add", "b" + std::to_string(b) + "_add", {}, { last, in }, "net/block" + std::to_string(b)), 0, 0 };
    }
    g->setHeads({ last });
    g->finalize();
    return g;
}

LayoutRequest requestOf(const GraphModel& m)
{
    LayoutRequest r;
    r.generation = 1;
    r.items = m.items();
    r.edges = m.edges();
    return r;
}

void layout(benchmark::State& state, int blocks, int ops, bool fit)
{
    GraphModel model;
    model.setGraph(chain(blocks, ops));
    if (!fit)
        for (const QString& p : model.blockPaths())
            model.setExpanded(p, true);
    const LayoutRequest r = requestOf(model);
    for (auto _ : state) {
        LayoutResult result = computeLayout(r);
        if (!result.error.isEmpty()) state.SkipWithError(result.error.toStdString().c_str());
        benchmark::DoNotOptimize(result.bounds);
    }
    state.counters["items"] = static_cast<double>(model.visibleCount());
}

void BM_LayoutOpened3000Ops(benchmark::State& s) { layout(s, 60, 50, true); }
void BM_LayoutExpanded450Ops(benchmark::State& s) { layout(s, 9, 50, false); }
void BM_LayoutExpanded150Ops(benchmark::State& s) { layout(s, 3, 50, false); }
void BM_LayoutExpanded3000Ops(benchmark::State& s) { layout(s, 60, 50, false); }

} // namespace

BENCHMARK(BM_LayoutOpened3000Ops)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LayoutExpanded150Ops)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LayoutExpanded450Ops)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_LayoutExpanded3000Ops)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv); // fonts for the item sizes
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
