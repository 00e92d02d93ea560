// A 1x1 convolution and the depthwise convolution after it in one oneDNN primitive
// (PostOp::Kind::Depthwise), as MobileNet's inverted residual blocks have them: the same values as
// with every node apart, the two apart again while someone watches a node between them or the input
// could make a NaN, and fused again after.

#include "common/exec_graphs.h"
#include "common/op_test_util.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace opscope;

namespace {
using test::idOf;
using test::staticFlags;
using Watcher = test::OutputWatcher;

// data (3, 16, side, side) -> expand (1x1, 96) -> clip -> dw (3x3, 96 groups, `stride`) -> clip
// -> project (1x1, 16). The expanded tensor is large (3 x 96 x 112 x 112 floats, 14 MB): oneDNN
// fuses the depthwise convolution into the 1x1 only where that tensor outgrows the caches.
struct Block {
    std::shared_ptr<Graph> g = std::make_shared<Graph>();
    std::vector<Shape> shapes;

    Block(int stride, int64_t side)
    {
        const uint32_t data = g->addVariable("data");
        shapes.push_back(Shape({ 3, 16, side, side }));
        const auto conv = [&](const std::string& name, uint32_t in, int filters, int kernel, int s, int inChannels, int groups) {
            const uint32_t w = g->addVariable(name + "_weight");
            const uint32_t b = g->addVariable(name + "_bias");
            shapes.push_back(Shape({ filters, inChannels / groups, kernel, kernel }));
            shapes.push_back(Shape({ filters }));
            const std::string k = std::to_string(kernel), st = std::to_string(s), p = std::to_string(kernel / 2);
            return g->addOp("Convolution", name,
                { { "kernel", "(" + k + ", " + k + ")" }, { "stride", "(" + st + ", " + st + ")" }, { "pad", "(" + p + ", " + p + ")" },
                    { "num_filter", std::to_string(filters) }, { "num_group", std::to_string(groups) } },
                { { in, 0, 0 }, { w, 0, 0 }, { b, 0, 0 } });
        };
        const auto clip = [&](const std::string& name, uint32_t in) {
            return g->addOp("clip", name, { { "a_min", "0" }, { "a_max", "6" } }, { { in, 0, 0 } });
        };
        const uint32_t expand = clip("expand_clip", conv("expand", data, 96, 1, 1, 16, 1));
        const uint32_t dw = clip("dw_clip", conv("dw", expand, 96, 3, stride, 96, 96));
        g->setHeads({ { conv("project", dw, 16, 1, 1, 96, 1), 0, 0 } });
        g->finalize();
    }
    std::vector<Tensor> inputs() const
    {
        Generator gen(5);
        std::vector<Tensor> v;
        for (const Shape& s : shapes)
            v.push_back(Tensor::uniform(s, -0.5f, 0.5f, &gen));
        return v;
    }
};

std::vector<uint32_t> ids(const Graph& g, std::initializer_list<const char*> names)
{
    std::vector<uint32_t> out;
    for (const char* n : names)
        out.push_back(idOf(g, n));
    return out;
}
}

TEST(DepthwiseFusion, TheDepthwiseConvolutionRunsInsideThe1x1BeforeItWithTheSameValues)
{
    for (const int stride : { 1, 2 }) {
        SCOPED_TRACE("stride " + std::to_string(stride));
        // Odd sides with stride 2: the output rounds up (56 of 111).
        const int64_t side = stride == 1 ? 112 : 111;
        const Block b(stride, side);
        const Graph& g = *b.g;
        auto in = b.inputs();
        Executor plain(b.g, staticFlags(false));
        Executor fused(b.g, staticFlags(true));
        const auto exact = [&](const std::string& what) {
            const Tensor want = plain.run(in).outputs.at(0).copy();
            EXPECT_TRUE(test::tensorsNear(fused.run(in).outputs.at(0), want, 0.0f, 0.0f)) << what;
        };
        exact("first run");
        if (fused.kernelBackends()[idOf(g, "expand")] != std::string("dnnl")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
        const std::vector<uint32_t> whole = ids(g, { "expand_clip", "dw", "dw_clip" });
        if (fused.fusedWith(idOf(g, "expand")) != whole && !__builtin_cpu_supports("avx512f"))
            GTEST_SKIP() << "oneDNN fuses no depthwise convolution into a 1x1 one without AVX-512 here";
        ASSERT_EQ(fused.fusedWith(idOf(g, "expand")), whole);
        EXPECT_TRUE(fused.fusedWith(idOf(g, "dw")).empty());
        // The expanded tensor is never written; the depthwise output stays in nChw16c for project.
        const int64_t out = stride == 1 ? 112 : 56;
        EXPECT_EQ(fused.nativeElements(g.entryId(idOf(g, "dw_clip"), 0)), 3 * 96 * out * out);
        EXPECT_FALSE(fused.nativeLayout(g.entryId(idOf(g, "expand_clip"), 0)));

        // A watched node between them, or the depthwise convolution itself: apart, its values
        // those of the plain run.
        for (const char* node : { "expand_clip", "dw" }) {
            Watcher all, one;
            all.nodes = one.nodes = { node };
            plain.attach(&all);
            fused.attach(&one);
            exact(std::string(node) + " watched");
            plain.detach(&all);
            fused.detach(&one);
            // Only what comes before the watched node is fused (none of it when that is the clip).
            const std::vector<uint32_t> before = node == std::string("dw") ? ids(g, { "expand_clip" }) : std::vector<uint32_t> {};
            EXPECT_EQ(fused.fusedWith(idOf(g, "expand")), before) << node;
            ASSERT_TRUE(one.seen.count(node)) << node;
            EXPECT_TRUE(test::tensorsNear(one.seen[node], all.seen[node], 0.0f, 0.0f)) << node;
            exact(std::string(node) + " unwatched again");
            EXPECT_EQ(fused.fusedWith(idOf(g, "expand")), whole) << node << ": fused again";
        }

        // A NaN in: oneDNN's clip inside the primitive would make it a bound, the two apart keep it.
        in[0].data()[3 * side * side + 40 * side + 41] = std::numeric_limits<float>::quiet_NaN();
        const Tensor withNaN = plain.run(in).outputs.at(0).copy();
        ASSERT_TRUE(std::any_of(withNaN.view().data(), withNaN.view().data() + withNaN.size(), [](float v) { return std::isnan(v); }));
        exact("a NaN in");
        in[0].data()[3 * side * side + 40 * side + 41] = 0.25f;
        exact("finite again");
        // Weights written since the last run are reordered again, the depthwise ones too.
        for (const char* w : { "dw_weight", "expand_weight" }) {
            const auto& vars = g.variables();
            Tensor& t = in[static_cast<size_t>(std::find(vars.begin(), vars.end(), idOf(g, w)) - vars.begin())];
            t.data()[7] = 1.5f;
            exact(std::string(w) + " written");
        }
        EXPECT_EQ(fused.fusedWith(idOf(g, "expand")), whole);
    }
}
