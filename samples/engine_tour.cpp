// engine_tour: builds a LeNet-shaped graph from operators, runs it with the cached executor and an
// execution observer that prints every op's output statistics, then checks the oneDNN kernels
// against the reference kernels. The most complete program until the window exists.

#include "core/error.h"
#include "exec/executor.h"
#include "tensor/random.h"

#include <cmath>
#include <cstdio>
#include <memory>

using namespace opscope;

namespace {

std::shared_ptr<Graph> lenetGraph()
{
    auto g = std::make_shared<Graph>();
    auto var = [&](const std::string& name) { return NodeEntry { g->addVariable(name), 0, 0 }; };
    auto op = [&](const std::string& o, const std::string& name, AttrMap attrs, std::vector<NodeEntry> in) {
        return NodeEntry { g->addOp(o, name, std::move(attrs), std::move(in), "lenet"), 0, 0 };
    };
    NodeEntry x = var("data");
    x = op("Convolution", "conv0_fwd", { { "kernel", "(5, 5)" }, { "num_filter", "6" }, { "pad", "(2, 2)" } },
        { x, var("conv0_weight"), var("conv0_bias") });
    x = op("Activation", "conv0_relu_fwd", { { "act_type", "relu" } }, { x });
    x = op("Pooling", "pool0_fwd", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" } }, { x });
    x = op("Convolution", "conv1_fwd", { { "kernel", "(5, 5)" }, { "num_filter", "16" } },
        { x, var("conv1_weight"), var("conv1_bias") });
    x = op("Activation", "conv1_relu_fwd", { { "act_type", "relu" } }, { x });
    x = op("Pooling", "pool1_fwd", { { "kernel", "(2, 2)" }, { "stride", "(2, 2)" }, { "pool_type", "max" } }, { x });
    x = op("Flatten", "flatten0_flatten0", {}, { x });
    x = op("FullyConnected", "dense0_fwd", { { "num_hidden", "120" } }, { x, var("dense0_weight"), var("dense0_bias") });
    x = op("Activation", "dense0_relu_fwd", { { "act_type", "relu" } }, { x });
    x = op("FullyConnected", "dense1_fwd", { { "num_hidden", "84" } }, { x, var("dense1_weight"), var("dense1_bias") });
    x = op("Activation", "dense1_relu_fwd", { { "act_type", "relu" } }, { x });
    x = op("FullyConnected", "dense2_fwd", { { "num_hidden", "10" } }, { x, var("dense2_weight"), var("dense2_bias") });
    x = op("softmax", "softmax0", {}, { x });
    g->setHeads({ x });
    g->finalize();
    return g;
}

struct Printer : ExecutionObserver {
    PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::After; }
    ObserverAction onOp(const OpEvent& ev) override
    {
        const TensorView& out = ev.outputs[0];
        double mn = INFINITY, mx = -INFINITY, sum = 0;
        for (float v : out.values()) {
            mn = std::min<double>(mn, v);
            mx = std::max<double>(mx, v);
            sum += v;
        }
        std::printf("%-20s %-15s %-16s min %9.4f  max %9.4f  mean %9.4f\n", ev.node.name.c_str(), ev.node.op.c_str(),
            out.shape().str().c_str(), mn, mx, sum / static_cast<double>(out.size()));
        return ObserverAction::Continue;
    }
};

}

int main()
{
    try {
        auto graph = lenetGraph();
        Generator gen(1);
        std::vector<Shape> shapes(graph->variables().size());
        shapes[0] = Shape({ 8, 1, 28, 28 });
        const auto inferred = graph->inferShapes(shapes);
        std::vector<Tensor> vars;
        for (uint32_t v : graph->variables()) {
            const Shape& s = inferred[graph->entryId(v, 0)];
            vars.push_back(v == graph->variables()[0] ? Tensor::uniform(s, 0, 1, &gen)
                                                      : Tensor::normal(s, 0, 0.1f, &gen));
        }
        std::printf("LeNet-shaped graph: %zu nodes, %zu variables\n\n", graph->size(), vars.size());

        Executor fast(graph, {}, KernelKind::Auto);
        Printer printer;
        fast.attach(&printer);
        RunResult r = fast.run(vars);
        const auto backends = fast.kernelBackends();
        std::printf("\nkernels:");
        for (uint32_t i = 0; i < graph->size(); ++i)
            if (!backends[i].empty())
                std::printf(" %s=%s", graph->node(i).name.c_str(), backends[i].c_str());

        Executor reference(graph, {}, KernelKind::Reference);
        RunResult ref = reference.run(vars);
        double maxDiff = 0;
        for (int64_t i = 0; i < r.outputs[0].size(); ++i)
            maxDiff = std::max<double>(maxDiff, std::fabs(r.outputs[0].at(i) - ref.outputs[0].at(i)));
        std::printf("\n\noutput %s; largest difference between oneDNN and reference kernels: %.3g\n",
            r.outputs[0].shape().str().c_str(), maxDiff);
        return maxDiff < 1e-4 ? 0 : 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "engine_tour: %s\n", e.what());
        return 1;
    }
}
