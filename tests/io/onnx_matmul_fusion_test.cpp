// ONNX's MatMul and Gemm with what follows them fused into their kernel (ExecFlags::fuse): a bias
// along the last axis, a residual, Relu, Tanh, Sigmoid and Clip, applied row by row with the
// arithmetic of the nodes they replace, so that fused values equal unfused ones exactly, NaN and
// infinities included; a broadcast that is not a bias stays apart; a watched node is not fused; a
// residual in the output's own buffer is read before the product overwrites it.

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "exec/executor.h"
#include "io/onnx_model.h"
#include "ops/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace opscope;

namespace {
using test::fusedNames;
using test::idOf;
using test::staticFlags;

struct Built {
    std::shared_ptr<Graph> graph;
    std::vector<Tensor> variables;
};

Built matmulChain()
{
    OnnxGraph b = OnnxDocument::read(test::fixture("onnx/matmul_chain.onnx")).build({ Shape({ 2, 5, 16 }) });
    Tensor x = Tensor::uniform(Shape({ 2, 5, 16 }), -2, 2);
    x.at(3) = std::numeric_limits<float>::quiet_NaN();
    x.at(40) = std::numeric_limits<float>::infinity();
    x.at(117) = -std::numeric_limits<float>::infinity();
    Built out { std::make_shared<Graph>(b.graph), {} };
    for (uint32_t v : b.graph.variables()) {
        const std::string& n = b.graph.node(v).name;
        out.variables.push_back(n == "x" ? x : b.constants.at(n));
    }
    return out;
}
}

TEST(OnnxMatMulFusion, BiasResidualAndActivationsRunInsideTheProductWithTheSameValues)
{
    const Built b = matmulChain();
    const Graph& g = *b.graph;
    Executor plain(b.graph, staticFlags(false));
    Executor fused(b.graph, staticFlags(true));
    const Tensor expected = plain.run(b.variables).outputs.at(0).copy();
    const Tensor got = fused.run(b.variables).outputs.at(0).copy();
    using V = std::vector<std::string>;
    EXPECT_EQ(fusedNames(fused, g, "mm1"), (V { "bias1", "relu1" }));
    EXPECT_EQ(fusedNames(fused, g, "mm2"), (V { "residual2", "tanh2" }));
    EXPECT_EQ(fusedNames(fused, g, "gemm3"), (V { "sigmoid3" }));
    EXPECT_EQ(fusedNames(fused, g, "mm4"), (V { "bias4", "clip4" }));
    EXPECT_EQ(fused.fusedInto(idOf(g, "column5")), -1) << "a (10, 1) column is no bias along the last axis";
    EXPECT_TRUE(test::tensorsNear(got, expected, 0, 0)) << "the same arithmetic in the same order";
    int nans = 0;
    for (float v : expected.view().values())
        nans += std::isnan(v) ? 1 : 0;
    EXPECT_GT(nans, 0) << "the NaN reached the output unfused (and, compared above, fused)";

    // Changed weights and biases are read at the next run.
    auto changed = b.variables;
    for (size_t v = 0; v < changed.size(); ++v) {
        const std::string& n = g.node(g.variables()[v]).name;
        if (n == "b1" || n == "w2" || n == "c3") changed[v] = Tensor::uniform(changed[v].shape(), -1, 1);
    }
    EXPECT_TRUE(test::tensorsNear(fused.run(changed).outputs.at(0), plain.run(changed).outputs.at(0), 0, 0));
}

TEST(OnnxMatMulFusion, AWatchedNodeIsNotFusedAndSeesTheUnfusedValues)
{
    const Built b = matmulChain();
    const Graph& g = *b.graph;
    test::OutputWatcher all, some;
    all.nodes = { "mm1", "bias1", "relu1", "mm2", "residual2", "tanh2", "gemm3", "sigmoid3", "mm4", "bias4", "clip4" };
    some.nodes = { "bias1", "tanh2", "gemm3" };
    Executor plain(b.graph, staticFlags(false));
    Executor fused(b.graph, staticFlags(true));
    plain.attach(&all);
    fused.attach(&some);
    const Tensor expected = plain.run(b.variables).outputs.at(0).copy();
    const Tensor got = fused.run(b.variables).outputs.at(0).copy();
    using V = std::vector<std::string>;
    EXPECT_EQ(fusedNames(fused, g, "mm1"), V {}) << "its first consumer is watched";
    EXPECT_EQ(fusedNames(fused, g, "mm2"), (V { "residual2" })) << "the watched tanh2 ends the chain";
    EXPECT_EQ(fusedNames(fused, g, "gemm3"), V {}) << "a watched producer takes nothing";
    EXPECT_EQ(fusedNames(fused, g, "mm4"), (V { "bias4", "clip4" }));
    for (const std::string& n : some.nodes) {
        ASSERT_TRUE(some.seen.count(n)) << n;
        EXPECT_TRUE(test::tensorsNear(some.seen[n], all.seen[n], 0, 0)) << n;
    }
    EXPECT_TRUE(test::tensorsNear(got, expected, 0, 0));
}

TEST(OnnxMatMulFusion, AResidualInTheOutputsOwnBufferIsReadBeforeTheProductOverwritesIt)
{
    // A caller feeding a static_alloc output back as the next run's residual hands the kernel its
    // destination as an input: y = a·b + y must still add the old y.
    const OpDef& def = OpRegistry::instance().get("onnx::MatMul");
    const ParamsPtr params = def.parse({ { "__opset__", "13" } });
    const std::vector<Shape> in { Shape({ 3, 4 }), Shape({ 4, 5 }) }, out { Shape({ 3, 5 }) };
    std::unique_ptr<Kernel> k = def.makeKernel(*params, in, out, KernelKind::Auto);
    ASSERT_TRUE(k->setPostOps(std::vector<PostOp> { PostOp { PostOp::Kind::Sum }, PostOp { PostOp::Kind::Tanh } }));
    const Tensor a = Tensor::uniform(in[0], -1, 1), b = Tensor::uniform(in[1], -1, 1);
    Tensor y = Tensor::uniform(out[0], -1, 1);
    const Tensor before = y.copy();
    Tensor product(out[0]);
    RunContext ctx;
    {
        std::unique_ptr<Kernel> plain = def.makeKernel(*params, in, out, KernelKind::Auto);
        const Tensor* args[] = { &a, &b };
        Tensor* o[] = { &product };
        plain->run(args, o, ctx);
    }
    const Tensor* args[] = { &a, &b, &y };
    Tensor* o[] = { &y };
    k->run(args, o, ctx);
    for (int64_t i = 0; i < y.size(); ++i)
        EXPECT_EQ(y.at(i), std::tanh(product.at(i) + before.at(i))) << i;
    // A residual apart from the output is read in place, as before.
    Tensor z(out[0]);
    const Tensor* args2[] = { &a, &b, &before };
    Tensor* o2[] = { &z };
    k->run(args2, o2, ctx);
    EXPECT_TRUE(test::tensorsNear(z, y, 0, 0));
}
