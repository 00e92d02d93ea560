// GELU as ONNX exporters write it (Div by √2, Erf, Add 1, Mul by the input, Mul by ½) fused into the
// matrix product before it (ExecFlags::fuse) as one post-op that repeats the five nodes' float
// arithmetic, so fused values equal unfused ones exactly; its three constants are read at each run;
// a group that is not exactly that shape, or whose input something else reads, stays apart; a
// watched node of the five ends the fused part before the group.

#include "common/exec_graphs.h"
#include "common/tensor_match.h"
#include "common/test_paths.h"
#include "core/error.h"
#include "exec/executor.h"
#include "exec/fusion_rules.h"
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
using V = std::vector<std::string>;

struct Built {
    std::shared_ptr<Graph> graph;
    std::vector<Tensor> variables;
};

Built geluModel()
{
    OnnxGraph b = OnnxDocument::read(test::fixture("onnx/matmul_gelu.onnx")).build({ Shape({ 2, 5, 16 }) });
    Tensor x = Tensor::uniform(Shape({ 2, 5, 16 }), -3, 3);
    x.at(7) = std::numeric_limits<float>::quiet_NaN();
    x.at(50) = std::numeric_limits<float>::infinity();
    x.at(121) = -std::numeric_limits<float>::infinity();
    Built out { std::make_shared<Graph>(b.graph), {} };
    for (uint32_t v : b.graph.variables()) {
        const std::string& n = b.graph.node(v).name;
        out.variables.push_back(n == "x" ? x : b.constants.at(n));
    }
    return out;
}

Tensor& variable(Built& b, const std::string& name)
{
    const Graph& g = *b.graph;
    for (size_t v = 0; v < b.variables.size(); ++v)
        if (g.node(g.variables()[v]).name == name) return b.variables[v];
    throw std::runtime_error("no variable " + name);
}

void expectSameOutputs(Executor& fused, Executor& plain, const std::vector<Tensor>& variables)
{
    const std::vector<Tensor> want = plain.run(variables).outputs;
    std::vector<Tensor> expected;
    for (const Tensor& t : want)
        expected.push_back(t.copy());
    const std::vector<Tensor> got = fused.run(variables).outputs;
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k)
        EXPECT_TRUE(test::tensorsNear(got[k], expected[k], 0, 0)) << "output " << k << ": the same arithmetic";
}
}

TEST(OnnxGeluFusion, TheFiveNodesRunInsideTheProductWithTheSameValues)
{
    Built b = geluModel();
    const Graph& g = *b.graph;
    Executor plain(b.graph, staticFlags(false));
    Executor fused(b.graph, staticFlags(true));
    expectSameOutputs(fused, plain, b.variables);
    EXPECT_EQ(fusedNames(fused, g, "mm1"), (V { "bias1", "div1", "erf1", "plus1", "mul1", "half1" }));
    EXPECT_EQ(fusedNames(fused, g, "mm2"), (V { "bias2", "div2", "erf2", "plus2", "mul2", "half2", "residual2" }))
        << "operands in the other order, ½ from a Constant node, a residual after the group";
    EXPECT_EQ(fusedNames(fused, g, "gemm3"), V {}) << "a divisor of 8 values is no GELU";
    EXPECT_EQ(fusedNames(fused, g, "mm4"), V {}) << "the product is also a graph output: it must exist";
    for (const char* n : { "div3", "erf3", "plus3", "mul3", "half3", "div4", "half4" })
        EXPECT_EQ(fused.fusedInto(idOf(g, n)), -1) << n;

    int nans = 0;
    for (float v : plain.run(b.variables).outputs.at(0).view().values())
        nans += std::isnan(v) ? 1 : 0;
    EXPECT_GT(nans, 0) << "the NaN reached the output unfused (and, compared above, fused)";

    // Other constants are read at the next run, the plan unchanged: x·(erf(x / 2) + 0.25)·3.
    variable(b, "sqrt2") = Tensor::full(Shape::scalar(), 2.0f);
    variable(b, "one") = Tensor::full(Shape::scalar(), 0.25f);
    variable(b, "half") = Tensor::full(Shape::scalar(), 3.0f);
    expectSameOutputs(fused, plain, b.variables);
    EXPECT_EQ(fusedNames(fused, g, "mm1").size(), 6u);
}

TEST(OnnxGeluFusion, AWatchedNodeOfTheGroupKeepsAllFiveApart)
{
    Built b = geluModel();
    const Graph& g = *b.graph;
    test::OutputWatcher all, some;
    all.nodes = { "bias1", "erf1", "half1", "mul2", "residual2" };
    some.nodes = { "erf1", "mul2" };
    Executor plain(b.graph, staticFlags(false));
    Executor fused(b.graph, staticFlags(true));
    plain.attach(&all);
    fused.attach(&some);
    expectSameOutputs(fused, plain, b.variables);
    EXPECT_EQ(fusedNames(fused, g, "mm1"), (V { "bias1" })) << "the watched erf1 ends the chain before its group";
    EXPECT_EQ(fusedNames(fused, g, "mm2"), (V { "bias2" }));
    for (const std::string& n : some.nodes) {
        ASSERT_TRUE(some.seen.count(n)) << n;
        EXPECT_TRUE(test::tensorsNear(some.seen[n], all.seen[n], 0, 0)) << n;
    }

    // Unwatched again: the plan is made again once, with the groups fused.
    fused.detach(&some);
    expectSameOutputs(fused, plain, b.variables);
    EXPECT_EQ(fusedNames(fused, g, "mm2").size(), 7u);
}

TEST(OnnxGeluFusion, TheChainNamesTheGroupAndListsItsNodesInOrder)
{
    const Built b = geluModel();
    const Graph& g = *b.graph;
    std::vector<Shape> variableShapes;
    std::vector<DType> variableTypes;
    for (const Tensor& t : b.variables) {
        variableShapes.push_back(t.shape());
        variableTypes.push_back(t.dtype());
    }
    const std::vector<fusion::Chain> chains
        = fusion::chains(g, g.inferShapes(variableShapes), g.inferTypes(variableTypes), false);
    const fusion::Chain* mm1 = nullptr;
    for (const fusion::Chain& c : chains)
        if (c.producer == idOf(g, "mm1")) mm1 = &c;
    ASSERT_NE(mm1, nullptr);
    EXPECT_EQ(fusion::describe(g, *mm1), "add (the bias), gelu (Div, Erf, Add, Mul, Mul)");
    std::vector<std::string> names;
    for (uint32_t id : mm1->nodes())
        names.push_back(g.node(id).name);
    EXPECT_EQ(names, (V { "bias1", "div1", "erf1", "plus1", "mul1", "half1" }));
    ASSERT_EQ(mm1->bounds.size(), 3u);
    const auto variableOf = [&](uint32_t entry) -> std::string {
        for (uint32_t v : g.variables())
            if (g.entryId(v, 0) == entry) return g.node(v).name;
        return "not a variable";
    };
    EXPECT_EQ(variableOf(mm1->bounds[0]), "sqrt2");
    EXPECT_EQ(variableOf(mm1->bounds[1]), "one");
    EXPECT_EQ(variableOf(mm1->bounds[2]), "half");
}

TEST(OnnxGeluFusion, TheProductsKernelComputesEachStepAsTheNodesDoAndNamesAWrongConstant)
{
    const OpDef& def = OpRegistry::instance().get("onnx::MatMul");
    const ParamsPtr params = def.parse({ { "__opset__", "13" } });
    const std::vector<Shape> in { Shape({ 8, 4 }), Shape({ 4, 16 }) }, out { Shape({ 8, 16 }) };
    std::unique_ptr<Kernel> k = def.makeKernel(*params, in, out, KernelKind::Auto);
    ASSERT_TRUE(k->setPostOps(std::vector<PostOp> { PostOp { PostOp::Kind::GeluParts } }));
    const Tensor a = Tensor::uniform(in[0], -2, 2), w = Tensor::uniform(in[1], -2, 2);
    const Tensor div = Tensor::full(Shape { 1 }, 1.4142135f), add = Tensor::full(Shape::scalar(), 1.0f),
                 mul = Tensor::full(Shape { 1, 1 }, 0.5f);
    RunContext ctx;
    Tensor product(out[0]);
    {
        std::unique_ptr<Kernel> plain = def.makeKernel(*params, in, out, KernelKind::Auto);
        const Tensor* args[] = { &a, &w };
        Tensor* o[] = { &product };
        plain->run(args, o, ctx);
    }
    Tensor y(out[0]);
    const Tensor* args[] = { &a, &w, &div, &add, &mul };
    Tensor* o[] = { &y };
    k->run(args, o, ctx);
    for (int64_t i = 0; i < y.size(); ++i) {
        const float x = product.at(i);
        const float d = x / 1.4142135f;
        const float e = std::erf(d);
        const float s = e + 1.0f;
        const float m = x * s;
        EXPECT_EQ(y.at(i), m * 0.5f) << i;
        EXPECT_NEAR(y.at(i), 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-5) << i;
    }
    // A factor that is not a power of two rounds (x * s) * c and (x * c) * s apart: the order counts.
    const Tensor third = Tensor::full(Shape { 1 }, 0.3f);
    const Tensor* again[] = { &a, &w, &div, &add, &third };
    k->run(again, o, ctx);
    for (int64_t i = 0; i < y.size(); ++i) {
        const float x = product.at(i);
        const float m = x * (std::erf(x / 1.4142135f) + 1.0f);
        EXPECT_EQ(y.at(i), m * 0.3f) << i;
    }

    const Tensor two = Tensor::full(Shape { 2 }, 1.0f);
    const Tensor* wrong[] = { &a, &w, &div, &two, &mul };
    try {
        k->run(wrong, o, ctx);
        FAIL() << "a constant of two values was taken";
    } catch (const ShapeError& e) {
        EXPECT_NE(std::string(e.what()).find("fused GELU's addend (2,)"), std::string::npos) << e.what();
    }
}
