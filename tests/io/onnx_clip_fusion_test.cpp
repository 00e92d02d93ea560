// ONNX's Clip fused into the convolution before it, in the forms the CLI's fixture does not cover:
// bounds as attributes (opset < 11), bounds crossed (lo > hi), bounds as graph inputs changed
// between runs of one executor, and a watched clip whose bounds are inputs (not fused: its hook
// sees its inputs and output as unfused).

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "exec/executor.h"
#include "io/onnx_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace opscope;

namespace {
using test::fusedNames;
using test::idOf;
using test::staticFlags;

OnnxGraph build(const std::string& file, std::vector<Shape> shapes)
{
    return OnnxDocument::read(test::fixture("onnx/" + file)).build(shapes);
}

/// The variables in the graph's order: inputs by name, the rest from the constants.
std::vector<Tensor> variables(const OnnxGraph& b, const std::map<std::string, Tensor>& inputs)
{
    std::vector<Tensor> vars;
    for (uint32_t v : b.graph.variables()) {
        const std::string& n = b.graph.node(v).name;
        vars.push_back(inputs.count(n) ? inputs.at(n) : b.constants.at(n));
    }
    return vars;
}

/// Values beyond any bound, with a NaN and both infinities.
Tensor wideInput()
{
    Tensor x = Tensor::uniform(Shape({ 1, 8, 12, 12 }), -20, 20);
    x.at(5) = std::numeric_limits<float>::quiet_NaN();
    x.at(300) = std::numeric_limits<float>::infinity();
    x.at(900) = -std::numeric_limits<float>::infinity();
    return x;
}

Tensor scalar(float v)
{
    Tensor t(Shape::scalar());
    t.at(0) = v;
    return t;
}

/// Runs both on `in`, expects the same output, and counts the NaNs in the fused one's.
int nansIfFusedIsPlain(Executor& plain, Executor& fused, const std::vector<Tensor>& in)
{
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    int nans = 0;
    for (float v : got.view().values())
        nans += std::isnan(v) ? 1 : 0;
    return nans;
}

/// Records the inputs and output of the nodes it watches.
struct ArgsWatcher : ExecutionObserver {
    std::string node;
    std::vector<Tensor> inputs;
    Tensor output;
    PhaseMask wants(const Graph& g, uint32_t id) override
    {
        return g.node(id).name == node ? PhaseMask::After : PhaseMask::None;
    }
    ObserverAction onOp(const OpEvent& ev) override
    {
        inputs.clear();
        for (const TensorView& v : ev.inputs)
            inputs.push_back(Tensor::copyOf(v));
        output = Tensor::copyOf(ev.outputs[0]);
        return ObserverAction::Continue;
    }
};
}

TEST(OnnxClipFusion, BoundsAsAttributesFuseAndCrossedBoundsGiveOnnxsValues)
{
    OnnxGraph b = build("conv_clip_attrs.onnx", { Shape({ 1, 8, 12, 12 }) });
    const auto g = std::make_shared<Graph>(b.graph);
    const std::vector<Tensor> in = variables(b, { { "x", wideInput() } });
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    if (fused.kernelBackends()[idOf(*g, "conv1")] != "dnnl") GTEST_SKIP() << "oneDNN runs no convolution here: nothing to fuse";
    using V = std::vector<std::string>;
    EXPECT_EQ(fusedNames(fused, *g, "conv1"), (V { "clip1" }));
    EXPECT_EQ(fusedNames(fused, *g, "dwconv2"), (V { "clip2" })) << "ONNX's formula fused whatever the bounds";
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
    // lo = 0.5 > hi = -0.5: below 0.5 gives 0.5, anything else -0.5; NaN stays NaN.
    int nans = 0, low = 0, high = 0;
    for (float v : expected.view().values()) {
        if (std::isnan(v))
            ++nans;
        else if (v == 0.5f)
            ++low;
        else if (v == -0.5f)
            ++high;
        else
            ADD_FAILURE() << "a value between crossed bounds: " << v;
    }
    EXPECT_GT(nans, 0) << "the NaN reached the output";
    EXPECT_GT(low, 0);
    EXPECT_GT(high, 0);
}

TEST(OnnxClipFusion, BoundsGivenAsInputsAreReadAtEachRun)
{
    OnnxGraph b = build("conv_clip_inputs.onnx", { Shape({ 1, 8, 12, 12 }), Shape::scalar(), Shape::scalar() });
    const auto g = std::make_shared<Graph>(b.graph);
    const Tensor x = wideInput();
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const std::pair<float, float> bounds[] = { { 0.0f, 6.0f }, { -0.1f, 0.2f }, { 1.0f, -1.0f }, { 0.0f, 6.0f } };
    for (const auto& [lo, hi] : bounds) {
        SCOPED_TRACE(std::to_string(lo) + ", " + std::to_string(hi));
        const std::vector<Tensor> in = variables(b, { { "x", x }, { "lo", scalar(lo) }, { "hi", scalar(hi) } });
        const Tensor expected = plain.run(in).outputs.at(0).copy();
        const Tensor got = fused.run(in).outputs.at(0).copy();
        EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
        float top = -std::numeric_limits<float>::infinity();
        for (float v : expected.view().values())
            if (!std::isnan(v)) top = std::max(top, v);
        EXPECT_EQ(top, lo <= hi ? hi : lo) << "the bounds of this run bit";
    }
    if (fused.kernelBackends()[idOf(*g, "conv1")] != "dnnl") GTEST_SKIP() << "oneDNN runs no convolution here: nothing fused";
    EXPECT_EQ(fusedNames(fused, *g, "conv1"), (std::vector<std::string> { "clip1" }));
}

TEST(OnnxClipFusion, AWatchedClipWithInputBoundsSeesItsInputsAsUnfused)
{
    OnnxGraph b = build("conv_clip_inputs.onnx", { Shape({ 1, 8, 12, 12 }), Shape::scalar(), Shape::scalar() });
    const auto g = std::make_shared<Graph>(b.graph);
    const std::vector<Tensor> in = variables(b, { { "x", wideInput() }, { "lo", scalar(-0.25f) }, { "hi", scalar(0.75f) } });
    ArgsWatcher unfused, watched;
    unfused.node = watched.node = "clip1";
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    plain.attach(&unfused);
    fused.attach(&watched);
    const Tensor expected = plain.run(in).outputs.at(0).copy();
    const Tensor got = fused.run(in).outputs.at(0).copy();
    EXPECT_TRUE(fused.fusedWith(idOf(*g, "conv1")).empty()) << "a watched clip is not fused away";
    ASSERT_EQ(watched.inputs.size(), 3u);
    ASSERT_EQ(unfused.inputs.size(), 3u);
    for (size_t k = 0; k < 3; ++k)
        EXPECT_TRUE(test::tensorsNear(watched.inputs[k], unfused.inputs[k], 1e-6f, 1e-5f)) << "input " << k;
    EXPECT_EQ(watched.inputs[1].at(0), -0.25f);
    EXPECT_EQ(watched.inputs[2].at(0), 0.75f);
    EXPECT_TRUE(test::tensorsNear(watched.output, unfused.output, 1e-6f, 1e-5f));
    EXPECT_TRUE(test::tensorsNear(got, expected, 1e-6f, 1e-5f));
}

TEST(OnnxClipFusion, AClipRunsInsideTheConvolutionOnlyOnRunsWhoseProductCannotBeNaN)
{
    // A clip left after the store keeps NaN; oneDNN's clip post-op would turn it into the lower
    // bound. The convolution applies the clip inside its primitive on runs whose every input value
    // is finite and small enough that no sum overflows (dnnlutil::FiniteInput), and after the store
    // otherwise: runs alternate between the two, and each gives the unfused values.
    OnnxGraph b = build("conv_clip_inputs.onnx", { Shape({ 1, 8, 12, 12 }), Shape::scalar(), Shape::scalar() });
    const auto g = std::make_shared<Graph>(b.graph);
    const Tensor finite = Tensor::uniform(Shape({ 1, 8, 12, 12 }), -3, 3);
    Tensor oneNaN = finite.copy();
    oneNaN.at(2 * 144 + 5 * 12 + 6) = std::numeric_limits<float>::quiet_NaN(); // channel 2, inside
    // Finite, but the sums overflow: +inf or -inf (a bound either way), or NaN where a kernel adds
    // partial sums of both signs.
    const Tensor huge = Tensor::uniform(Shape({ 1, 8, 12, 12 }), -3e38f, 3e38f);
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    struct Run {
        const Tensor* x;
        float lo, hi;
        int nans;
    };
    const Run runs[] = { { &finite, 0.0f, 6.0f, 0 }, { &oneNaN, 0.0f, 6.0f, 16 * 9 }, { &finite, -0.1f, 0.2f, 0 },
        { &huge, -1.0f, 1.0f, -1 }, { &oneNaN, -0.1f, 0.2f, 16 * 9 }, { &finite, 0.0f, 6.0f, 0 } };
    for (const Run& r : runs) {
        SCOPED_TRACE((r.x == &huge ? "huge, " : r.x == &oneNaN ? "a NaN, " : "finite, ") + std::to_string(r.lo));
        const std::vector<Tensor> in = variables(b, { { "x", *r.x }, { "lo", scalar(r.lo) }, { "hi", scalar(r.hi) } });
        const int nans = nansIfFusedIsPlain(plain, fused, in);
        if (r.nans >= 0) {
            EXPECT_EQ(nans, r.nans) << "the NaN reaches the 3x3 outputs around it in every channel";
        }
    }
    if (fused.kernelBackends()[idOf(*g, "conv1")] != "dnnl") GTEST_SKIP() << "oneDNN runs no convolution here: nothing fused";
    EXPECT_EQ(fusedNames(fused, *g, "conv1"), (std::vector<std::string> { "clip1" }));
}

// A convolution whose clip ran inside its primitive leaves values the next convolution need not
// read to know they are finite and bounded (dnnlutil::recordedBounds), but only for that run:
// after a run whose input holds a NaN, the first convolution's clip runs after the store and the
// NaN reaches the second, which must see it. Runs alternate; each gives the unfused values.
TEST(OnnxClipFusion, BoundsLeftByAClippedConvolutionHoldOnlyForTheRunThatLeftThem)
{
    OnnxGraph b = build("conv_clip_chain.onnx", { Shape({ 1, 8, 12, 12 }) });
    const auto g = std::make_shared<Graph>(b.graph);
    const Tensor finite = Tensor::uniform(Shape({ 1, 8, 12, 12 }), -3, 3);
    Tensor oneNaN = finite.copy();
    oneNaN.at(3 * 144 + 6 * 12 + 6) = std::numeric_limits<float>::quiet_NaN();
    Executor plain(g, staticFlags(false));
    Executor fused(g, staticFlags(true));
    const Tensor* const order[] = { &finite, &oneNaN, &finite, &oneNaN, &oneNaN, &finite };
    for (const Tensor* x : order) {
        SCOPED_TRACE(x == &finite ? "finite" : "a NaN");
        const std::vector<Tensor> in = variables(b, { { "x", *x } });
        const int nans = nansIfFusedIsPlain(plain, fused, in);
        // Through three convolutions (3x3, depthwise 3x3, 1x1) the NaN spreads to 5x5 positions.
        EXPECT_EQ(nans, x == &finite ? 0 : 8 * 25);
    }
    if (fused.kernelBackends()[idOf(*g, "conv1")] != "dnnl") GTEST_SKIP() << "oneDNN runs no convolution here: nothing fused";
    EXPECT_EQ(fusedNames(fused, *g, "dwconv2"), (std::vector<std::string> { "clip2" }));
}
