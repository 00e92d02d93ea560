// ONNX's Gemm on oneDNN: a float32 Gemm shaped as a FullyConnected layer (alpha 1, B transposed,
// C absent or one row with beta 1) runs on the inner product, with the reference kernel's values;
// every other Gemm, another type, or one that takes post-ops, runs on the reference kernel.

#include "common/tensor_match.h"
#include "ops/onnx/onnx_op.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <optional>

#include <gtest/gtest.h>

using namespace opscope;

namespace {
struct GemmCase {
    const char* name;
    AttrMap attrs;
    Shape a, b;
    std::optional<Shape> c;
    bool onednn; // the inner product takes it
    DType type = DType::Float32;
};

AttrMap gemmAttrs(AttrMap extra, int inputs)
{
    extra["__domain__"] = "ai.onnx";
    extra["__opset__"] = "13";
    extra["__ninputs__"] = std::to_string(inputs);
    return extra;
}

std::vector<GemmCase> cases()
{
    const AttrMap tb { { "transB", "1" } };
    return {
        { "classifier", tb, Shape({ 1, 1280 }), Shape({ 1000, 1280 }), Shape({ 1000 }), true },
        { "batch_of_8", tb, Shape({ 8, 512 }), Shape({ 1000, 512 }), Shape({ 1000 }), true },
        { "c_as_a_row", tb, Shape({ 3, 256 }), Shape({ 300, 256 }), Shape({ 1, 300 }), true },
        { "no_c", tb, Shape({ 4, 256 }), Shape({ 200, 256 }), std::nullopt, true },
        { "b_not_transposed", {}, Shape({ 4, 256 }), Shape({ 256, 200 }), Shape({ 200 }), false },
        { "a_transposed", { { "transA", "1" }, { "transB", "1" } }, Shape({ 256, 4 }), Shape({ 200, 256 }), Shape({ 200 }), false },
        { "alpha_2", { { "alpha", "2" }, { "transB", "1" } }, Shape({ 4, 256 }), Shape({ 200, 256 }), Shape({ 200 }), false },
        { "beta_half", { { "beta", "0.5" }, { "transB", "1" } }, Shape({ 4, 256 }), Shape({ 200, 256 }), Shape({ 200 }), false },
        { "c_per_element", tb, Shape({ 4, 256 }), Shape({ 200, 256 }), Shape({ 4, 200 }), false },
        { "c_a_column", tb, Shape({ 4, 256 }), Shape({ 200, 256 }), Shape({ 4, 1 }), false },
        { "no_units", tb, Shape({ 4, 256 }), Shape({ 0, 256 }), Shape({ 0 }), false },
        { "no_rows", tb, Shape({ 0, 256 }), Shape({ 200, 256 }), Shape({ 200 }), false },
        // float64: the kernel is made for the shapes; the type, known at run, takes the reference loop.
        { "float64", tb, Shape({ 2, 256 }), Shape({ 200, 256 }), Shape({ 200 }), true, DType::Float64 },
    };
}

std::unique_ptr<Kernel> make(const GemmCase& c, KernelKind kind)
{
    const OpDef& gemm = OpRegistry::instance().get(onnx_ops::registryName("Gemm"));
    std::vector<Shape> in { c.a, c.b };
    if (c.c) in.push_back(*c.c);
    std::vector<Shape> out(1);
    const ParamsPtr params = gemm.parse(gemmAttrs(c.attrs, c.c ? 3 : 2));
    gemm.inferShape(*params, in, out);
    return gemm.makeKernel(*params, in, out, kind);
}

Tensor run(Kernel& k, const GemmCase& c, const std::vector<Tensor>& in)
{
    const Shape out { c.attrs.count("transA") ? c.a[1] : c.a[0], c.attrs.count("transB") ? c.b[0] : c.b[1] };
    Tensor y(out, c.type);
    std::vector<const Tensor*> ins;
    for (const Tensor& t : in)
        ins.push_back(&t);
    Tensor* outs[] = { &y };
    RunContext ctx;
    k.run(ins, outs, ctx);
    return y;
}

std::vector<Tensor> inputs(const GemmCase& c)
{
    Generator gen(11);
    std::vector<Tensor> in { Tensor::uniform(c.a, -1, 1, &gen), Tensor::uniform(c.b, -1, 1, &gen) };
    if (c.c) in.push_back(Tensor::uniform(*c.c, -1, 1, &gen));
    if (c.type != DType::Float32)
        for (Tensor& t : in)
            t = t.astype(c.type);
    return in;
}
}

TEST(OnnxGemm, AFullyConnectedShapedGemmRunsOnOnednnWithTheReferenceValues)
{
    for (const GemmCase& c : cases()) {
        SCOPED_TRACE(c.name);
        const std::unique_ptr<Kernel> fast = make(c, KernelKind::Dnnl);
        const std::unique_ptr<Kernel> reference = make(c, KernelKind::Reference);
        ASSERT_TRUE(fast && reference);
        EXPECT_EQ(std::string(fast->backend()), c.onednn ? "dnnl" : "reference");
        const std::vector<Tensor> in = inputs(c);
        const Tensor expected = run(*reference, c, in).astype(DType::Float32);
        EXPECT_TRUE(test::tensorsNear(run(*fast, c, in).astype(DType::Float32), expected, 1e-5f, 1e-5f));
    }
}

// Post-ops fused into a Gemm (MatrixEpilogue's) run on the reference kernel, with its values; a
// list emptied again goes back to oneDNN.
TEST(OnnxGemm, AGemmWithPostOpsRunsOnTheReferenceKernel)
{
    const GemmCase c = cases()[1];
    const std::unique_ptr<Kernel> fast = make(c, KernelKind::Dnnl);
    const std::unique_ptr<Kernel> reference = make(c, KernelKind::Reference);
    const PostOp relu[] = { PostOp { PostOp::Kind::Relu } };
    ASSERT_TRUE(fast->setPostOps(relu));
    ASSERT_TRUE(reference->setPostOps(relu));
    EXPECT_EQ(std::string(fast->backend()), "reference");
    const std::vector<Tensor> in = inputs(c);
    const Tensor got = run(*fast, c, in);
    EXPECT_TRUE(test::tensorsNear(got, run(*reference, c, in), 0.0f, 0.0f));
    float lowest = 0;
    for (int64_t i = 0; i < got.size(); ++i)
        lowest = std::min(lowest, got.at(i));
    EXPECT_EQ(lowest, 0.0f) << "the relu ran";
    ASSERT_TRUE(fast->setPostOps({}));
    EXPECT_EQ(std::string(fast->backend()), "dnnl");
}
