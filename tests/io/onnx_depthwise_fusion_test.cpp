// An inverted residual block as exported ONNX writes it (tests/fixtures/onnx/inverted_residual.onnx:
// a 1x1 Conv, Clip with its bounds as inputs, a depthwise Conv of stride 2, Clip, a 1x1 Conv): the
// depthwise convolution runs inside the first one (PostOp::Kind::Depthwise) with the values of the
// nodes apart, the bounds read at each run, a NaN kept.

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "exec/executor.h"
#include "io/onnx_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace opscope;

namespace {
using test::fusedNames;
using test::staticFlags;
using V = std::vector<std::string>;
}

TEST(OnnxDepthwiseFusion, AnInvertedResidualBlockRunsItsDepthwiseConvolutionInsideThe1x1)
{
    // Odd sides: the stride-2 depthwise convolution's output rounds up (56 of 111).
    const Shape input({ 3, 16, 111, 111 });
    OnnxGraph b = OnnxDocument::read(test::fixture("onnx/inverted_residual.onnx")).build({ input });
    auto graph = std::make_shared<Graph>(b.graph);
    const Graph& g = *graph;
    std::vector<Tensor> variables;
    for (uint32_t v : g.variables()) {
        const std::string& n = g.node(v).name;
        variables.push_back(n == "x" ? Tensor::uniform(input, -1, 1) : b.constants.at(n));
    }
    const auto variable = [&](const std::string& name) -> Tensor& {
        for (size_t v = 0; v < variables.size(); ++v)
            if (g.node(g.variables()[v]).name == name) return variables[v];
        throw std::runtime_error("no variable " + name);
    };
    Executor plain(graph, staticFlags(false));
    Executor fused(graph, staticFlags(true));
    const auto exact = [&](const std::string& what) {
        const Tensor want = plain.run(variables).outputs.at(0).copy();
        const Tensor got = fused.run(variables).outputs.at(0).copy();
        EXPECT_EQ(got.shape(), Shape({ 3, 16, 56, 56 })) << what;
        EXPECT_TRUE(test::tensorsNear(got, want, 0.0f, 0.0f)) << what;
    };
    exact("first run");
    if (fused.kernelBackends()[test::idOf(g, "expand")] != std::string("dnnl")) GTEST_SKIP() << "oneDNN runs no convolution on this machine";
    const V whole { "expand_clip", "dw", "dw_clip" };
    if (fusedNames(fused, g, "expand") != whole && !__builtin_cpu_supports("avx512f"))
        GTEST_SKIP() << "oneDNN fuses no depthwise convolution into a 1x1 one without AVX-512 here";
    ASSERT_EQ(fusedNames(fused, g, "expand"), whole);

    // The clips' bounds are inputs, read at each run (the fused primitive is made again for them).
    variable("hi").data()[0] = 0.5f;
    exact("clipped at 0.5");
    variable("lo").data()[0] = 0.25f;
    exact("clipped to [0.25, 0.5]");
    // lo > hi: ONNX's Clip gives hi everywhere; oneDNN's clip orders them otherwise: apart.
    variable("lo").data()[0] = 1.0f;
    exact("lo above hi");
    variable("lo").data()[0] = 0.0f;
    variable("hi").data()[0] = 6.0f;
    exact("back to ReLU6");
    variable("x").data()[5 * 111 + 7] = std::numeric_limits<float>::infinity();
    exact("an infinity in");
    variable("x").data()[5 * 111 + 7] = std::numeric_limits<float>::quiet_NaN();
    exact("a NaN in");
    variable("x").data()[5 * 111 + 7] = 0.5f;
    exact("finite again");
    EXPECT_EQ(fusedNames(fused, g, "expand"), whole);
}
