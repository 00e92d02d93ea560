// The gradient graph: a forward graph followed by `_backward_<Op>` nodes, run by the executor, gives
// the same gradients as central differences of the forward graph.

#include "common/grad_check.h"
#include "core/error.h"
#include "exec/executor.h"
#include "exec/gradient.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>

using namespace opscope;

namespace {

Tensor rnd(const Shape& s, uint64_t seed)
{
    Generator g(seed);
    return Tensor::uniform(s, -1, 1, &g);
}

// Runs `graph` with variables bound by name.
std::vector<Tensor> runByName(const Graph& graph, const std::map<std::string, Tensor>& values)
{
    auto shared = std::make_shared<Graph>(graph);
    Executor exec(shared, {}, KernelKind::Reference);
    std::vector<Tensor> vars;
    for (uint32_t v : shared->variables())
        vars.push_back(values.at(shared->node(v).name));
    RunContext ctx;
    ctx.training = true;
    std::vector<Tensor> out;
    for (const Tensor& t : exec.run(vars, ctx).outputs)
        out.push_back(t.copy());
    return out;
}

// data is used by two FullyConnected nodes (its gradient is a sum); fc0 feeds fc2.
Graph twoBranchGraph()
{
    Graph g;
    const uint32_t data = g.addVariable("data");
    const uint32_t w0 = g.addVariable("w0"), b0 = g.addVariable("b0"), w1 = g.addVariable("w1");
    const uint32_t w2 = g.addVariable("w2");
    const uint32_t fc0 = g.addOp(
        "FullyConnected", "fc0", { { "num_hidden", "4" } }, { { data, 0, 0 }, { w0, 0, 0 }, { b0, 0, 0 } }, "net/a");
    const uint32_t fc1 = g.addOp("FullyConnected", "fc1", { { "num_hidden", "2" }, { "no_bias", "True" } },
        { { data, 0, 0 }, { w1, 0, 0 } }, "net/b");
    const uint32_t fc2 = g.addOp("FullyConnected", "fc2", { { "num_hidden", "2" }, { "no_bias", "True" } },
        { { fc0, 0, 0 }, { w2, 0, 0 } }, "net/a");
    g.setHeads({ { fc2, 0, 0 }, { fc1, 0, 0 } });
    g.finalize();
    return g;
}

} // namespace

TEST(GradientGraph, NamesBackwardNodesAfterTheirForwardNodes)
{
    const Graph fwd = twoBranchGraph();
    const GradientGraph gg = buildGradientGraph(fwd, { "data", "w0", "b0", "w1", "w2" });
    const Graph& g = gg.graph;
    ASSERT_EQ(gg.numForwardHeads, 2u);
    EXPECT_EQ(gg.headGradNames, (std::vector<std::string> { "fc2_output_head_grad", "fc1_output_head_grad" }));
    // Forward nodes first, in the forward order; then the backward nodes, each named <node>_backward.
    std::vector<std::string> ops;
    for (const Node& n : g.nodes())
        if (!n.isVariable()) ops.push_back(n.name);
    ASSERT_GE(ops.size(), 7u);
    EXPECT_EQ(
        std::vector<std::string>(ops.begin(), ops.begin() + 3), (std::vector<std::string> { "fc0", "fc2", "fc1" }));
    for (const char* name : { "fc0_backward", "fc1_backward", "fc2_backward" }) {
        const auto id = g.findNode(name);
        ASSERT_TRUE(id) << name;
        EXPECT_EQ(g.node(*id).op, "_backward_FullyConnected");
    }
    EXPECT_EQ(g.node(*g.findNode("fc0_backward")).blockPath, "net/a");
    EXPECT_EQ(g.node(*g.findNode("fc0_backward")).outputSlots,
        (std::vector<std::string> { "data_grad", "weight_grad", "bias_grad" }));
    // With only w2 wanted, fc2's backward gives that one gradient.
    const GradientGraph only = buildGradientGraph(fwd, { "w2" });
    EXPECT_EQ(only.graph.node(*only.graph.findNode("fc2_backward")).outputSlots,
        (std::vector<std::string> { "weight_grad" }));
    // data's two gradients are summed.
    EXPECT_TRUE(g.findNode("data_grad_sum1"));
    EXPECT_EQ(g.heads().size(), 2u + 5u);
    // Which nodes and inputs are gradients.
    const Node& sum = g.node(*g.findNode("data_grad_sum1"));
    const Node& fc0b = g.node(*g.findNode("fc0_backward"));
    EXPECT_TRUE(isGradientNode(sum));
    EXPECT_TRUE(isGradientInput(sum, 0) && isGradientInput(sum, 1));
    EXPECT_TRUE(isGradientNode(fc0b));
    EXPECT_TRUE(isGradientInput(fc0b, 0)); // output_grad
    EXPECT_FALSE(isGradientInput(fc0b, 1)); // data
    EXPECT_FALSE(isGradientNode(g.node(*g.findNode("fc0"))));
    EXPECT_FALSE(isGradientNode(g.node(*g.findNode("data"))));
}

TEST(GradientGraph, GradientsEqualCentralDifferences)
{
    const Graph fwd = twoBranchGraph();
    const std::vector<std::string> wrt { "data", "w0", "b0", "w1", "w2" };
    const GradientGraph gg = buildGradientGraph(fwd, wrt);
    std::map<std::string, Tensor> values {
        { "data", rnd({ 3, 5 }, 1) },
        { "w0", rnd({ 4, 5 }, 2) },
        { "b0", rnd({ 4 }, 3) },
        { "w1", rnd({ 2, 5 }, 4) },
        { "w2", rnd({ 2, 4 }, 5) },
    };
    const Tensor hg0 = rnd({ 3, 2 }, 6), hg1 = rnd({ 3, 2 }, 7);
    std::map<std::string, Tensor> all = values;
    all[gg.headGradNames[0]] = hg0;
    all[gg.headGradNames[1]] = hg1;
    const std::vector<Tensor> out = runByName(gg.graph, all);
    ASSERT_EQ(out.size(), 2u + wrt.size());

    auto loss = [&](const std::map<std::string, Tensor>& v) {
        const std::vector<Tensor> y = runByName(fwd, v);
        double l = 0;
        for (int64_t i = 0; i < y[0].size(); ++i)
            l += double(hg0.at(i)) * y[0].at(i) + double(hg1.at(i)) * y[1].at(i);
        return l;
    };
    for (size_t w = 0; w < wrt.size(); ++w) {
        const Tensor& grad = out[2 + w];
        ASSERT_EQ(grad.shape(), values[wrt[w]].shape()) << wrt[w];
        for (int64_t e = 0; e < grad.size(); ++e) {
            auto plus = values, minus = values;
            plus[wrt[w]] = values[wrt[w]].copy();
            minus[wrt[w]] = values[wrt[w]].copy();
            plus[wrt[w]].at(e) += 1e-2f;
            minus[wrt[w]].at(e) -= 1e-2f;
            const double numeric
                = (loss(plus) - loss(minus)) / (double(plus[wrt[w]].at(e)) - double(minus[wrt[w]].at(e)));
            EXPECT_NEAR(grad.at(e), numeric, 1e-3 + 1e-2 * std::fabs(numeric)) << wrt[w] << "[" << e << "]";
        }
    }
}

TEST(GradientGraph, OnlyWhatIsAskedForAndClearErrors)
{
    const Graph fwd = twoBranchGraph();
    // Only w2: fc1 does not lead to it, so it gets no backward node; fc0's backward computes no input gradient.
    const GradientGraph gg = buildGradientGraph(fwd, { "w2" });
    EXPECT_FALSE(gg.graph.findNode("fc1_backward"));
    EXPECT_FALSE(gg.graph.findNode("fc0_backward"));
    EXPECT_TRUE(gg.graph.findNode("fc2_backward"));
    EXPECT_THROW(buildGradientGraph(fwd, { "nope" }), GraphError);
    EXPECT_THROW(buildGradientGraph(fwd, { "fc0" }), GraphError);
}

TEST(GradientGraph, TheBackwardPassAloneReadsWhatTheForwardRunKept)
{
    const Graph fwd = twoBranchGraph();
    const std::vector<std::string> wrt { "data", "w0", "b0", "w1", "w2" };
    const GradientGraph combined = buildGradientGraph(fwd, wrt);
    const GradientGraph alone = buildGradientGraph(fwd, wrt, true);
    EXPECT_EQ(alone.numForwardHeads, 0u);
    for (const Node& n : alone.graph.nodes())
        EXPECT_TRUE(n.isVariable() || n.op.rfind("_backward_", 0) == 0 || n.op == "elemwise_add") << n.name;
    ASSERT_FALSE(alone.saved.empty());
    EXPECT_NE(std::find(alone.savedNames.begin(), alone.savedNames.end(), "fc0_output"), alone.savedNames.end());

    std::map<std::string, Tensor> values {
        { "data", rnd({ 3, 5 }, 1) },
        { "w0", rnd({ 4, 5 }, 2) },
        { "b0", rnd({ 4 }, 3) },
        { "w1", rnd({ 2, 5 }, 4) },
        { "w2", rnd({ 2, 4 }, 5) },
    };
    // The forward run keeps the saved entries as extra heads.
    const Graph kept = withExtraHeads(fwd, alone.saved);
    const std::vector<Tensor> fout = runByName(kept, values);
    ASSERT_EQ(fout.size(), fwd.heads().size() + alone.saved.size());
    std::map<std::string, Tensor> bind = values;
    for (size_t i = 0; i < alone.saved.size(); ++i)
        bind[alone.savedNames[i]] = fout[fwd.heads().size() + i];
    bind[alone.headGradNames[0]] = rnd({ 3, 2 }, 6);
    bind[alone.headGradNames[1]] = rnd({ 3, 2 }, 7);
    // Bind only what the backward graph has (the data variable may be gone).
    std::map<std::string, Tensor> needed;
    for (uint32_t v : alone.graph.variables())
        needed[alone.graph.node(v).name] = bind.at(alone.graph.node(v).name);
    const std::vector<Tensor> a = runByName(alone.graph, needed);
    std::map<std::string, Tensor> all = values;
    all[combined.headGradNames[0]] = bind[alone.headGradNames[0]];
    all[combined.headGradNames[1]] = bind[alone.headGradNames[1]];
    const std::vector<Tensor> c = runByName(combined.graph, all);
    ASSERT_EQ(a.size(), wrt.size());
    for (size_t w = 0; w < wrt.size(); ++w)
        for (int64_t e = 0; e < a[w].size(); ++e)
            EXPECT_FLOAT_EQ(a[w].at(e), c[2 + w].at(e)) << wrt[w];
}
