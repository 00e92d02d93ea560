// Convolution's oneDNN backward (backward-data and backward-weights primitives) against the
// reference gradient (im2col, GEMM, col2im), over geometries large enough for oneDNN to run:
// groups, strides, dilation, padding, 1-D, no bias, and gradients not wanted.

#include "exec/invoke.h"
#include "ops/nn/convolution.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace opscope;

namespace {

struct Case {
    const char* name;
    AttrMap attrs;
    Shape data;
    Shape weight;
    std::vector<bool> wanted; // data, weight, bias
};

Tensor rnd(const Shape& s, uint64_t seed)
{
    Generator g(seed);
    return Tensor::uniform(s, -1, 1, &g);
}

// The gradients by one implementation, into tensors prefilled with NaN (an element left unwritten
// shows).
std::vector<Tensor> gradients(const Case& c, const std::vector<Tensor>& in, const Tensor& out, const Tensor& dy,
    bool dnnl, bool* ran = nullptr)
{
    const OpDef& def = OpRegistry::instance().get("Convolution");
    const ParamsPtr params = def.parse(c.attrs);
    std::vector<Tensor> grads;
    std::vector<Tensor*> ig;
    for (size_t i = 0; i < in.size(); ++i)
        grads.push_back(Tensor::full(in[i].shape(), std::nanf("")));
    for (size_t i = 0; i < in.size(); ++i)
        ig.push_back(i < c.wanted.size() && !c.wanted[i] ? nullptr : &grads[i]);
    std::vector<const Tensor*> inPtrs, outPtrs { &out }, og { &dy };
    for (const Tensor& t : in)
        inPtrs.push_back(&t);
    RunContext ctx;
    const BackwardArgs args { *params, inPtrs, outPtrs, og, ig, ctx };
    if (dnnl) {
        const bool r = backwardConvolutionDnnl(args);
        if (ran) *ran = r;
    } else {
        backwardConvolutionReference(args);
    }
    return grads;
}

} // namespace

TEST(ConvolutionDnnlGrad, MatchesTheReference)
{
    const std::vector<Case> cases {
        { "lenet conv1", { { "kernel", "(5, 5)" }, { "num_filter", "25" } }, { 16, 10, 12, 12 }, { 25, 10, 5, 5 }, {} },
        { "first layer: no data gradient", { { "kernel", "(5, 5)" }, { "num_filter", "10" } }, { 16, 1, 28, 28 },
            { 10, 1, 5, 5 }, { false, true, true } },
        { "stride 2, pad 1", { { "kernel", "(3, 3)" }, { "num_filter", "32" }, { "stride", "(2, 2)" }, { "pad", "(1, 1)" } },
            { 4, 16, 17, 17 }, { 32, 16, 3, 3 }, {} },
        { "dilation 2, no bias",
            { { "kernel", "(3, 3)" }, { "num_filter", "16" }, { "dilate", "(2, 2)" }, { "pad", "(2, 2)" },
                { "no_bias", "True" } },
            { 4, 8, 20, 20 }, { 16, 8, 3, 3 }, {} },
        { "groups 4", { { "kernel", "(3, 3)" }, { "num_filter", "32" }, { "num_group", "4" }, { "pad", "(1, 1)" } },
            { 4, 16, 16, 16 }, { 32, 4, 3, 3 }, {} },
        { "1-D", { { "kernel", "(5,)" }, { "num_filter", "32" }, { "pad", "(2,)" } }, { 8, 16, 100 }, { 32, 16, 5 }, {} },
        { "only the bias", { { "kernel", "(3, 3)" }, { "num_filter", "32" } }, { 4, 16, 16, 16 }, { 32, 16, 3, 3 },
            { false, false, true } },
    };
    uint64_t seed = 1;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        std::vector<Tensor> in { rnd(c.data, seed++), rnd(c.weight, seed++) };
        const bool bias = c.attrs.count("no_bias") == 0;
        if (bias) in.push_back(rnd(Shape { c.weight[0] }, seed++));
        const Tensor out = invokeOp("Convolution", c.attrs, in, KernelKind::Reference).at(0);
        const Tensor dy = rnd(out.shape(), seed++);
        bool ran = false;
        const std::vector<Tensor> got = gradients(c, in, out, dy, true, &ran);
        ASSERT_TRUE(ran) << "oneDNN did not run for this geometry";
        const std::vector<Tensor> want = gradients(c, in, out, dy, false);
        for (size_t i = 0; i < in.size(); ++i) {
            const bool wanted = i >= c.wanted.size() || c.wanted[i];
            if (!wanted) continue;
            double scale = 0, worst = 0;
            for (int64_t k = 0; k < want[i].size(); ++k) {
                scale = std::max(scale, std::fabs(static_cast<double>(want[i].at(k))));
                worst = std::max(worst, std::fabs(static_cast<double>(got[i].at(k)) - want[i].at(k)));
                ASSERT_FALSE(std::isnan(got[i].at(k))) << "gradient " << i << " element " << k << " not written";
            }
            EXPECT_LE(worst, 1e-4 * std::max(1.0, scale)) << "gradient " << i;
        }
    }
}

TEST(ConvolutionDnnlGrad, SmallConvolutionsStayOnTheReference)
{
    const Case c { "tiny", { { "kernel", "(2, 2)" }, { "num_filter", "2" } }, { 1, 1, 4, 4 }, { 2, 1, 2, 2 }, {} };
    const std::vector<Tensor> in { rnd(c.data, 1), rnd(c.weight, 2), rnd(Shape { 2 }, 3) };
    const Tensor out = invokeOp("Convolution", c.attrs, in, KernelKind::Reference).at(0);
    bool ran = true;
    gradients(c, in, out, rnd(out.shape(), 4), true, &ran);
    EXPECT_FALSE(ran);
}
