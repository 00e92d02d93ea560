// autograd: record, backward, grad_req, marked variables, eager and hybridized blocks alike, and op
// hooks that see the backward pass as `<node>_backward`.

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/sequential.h"
#include "tensor/allocator.h"
#include "tensor/random.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::gluon;

namespace {

Tensor rnd(const Shape& s, uint64_t seed)
{
    Generator g(seed);
    return Tensor::uniform(s, -1, 1, &g);
}

std::shared_ptr<HybridSequential> makeNet()
{
    autograd::clear_record();
    NameManager::resetGlobalCounters();
    auto net = std::make_shared<HybridSequential>();
    net->add(std::make_shared<nn::Dense>(4));
    net->add(std::make_shared<nn::Dense>(2));
    globalGenerator().seed(3);
    net->initialize();
    return net;
}

double weighted(const Tensor& y, const Tensor& w)
{
    double l = 0;
    for (int64_t i = 0; i < y.size(); ++i)
        l += double(y.at(i)) * w.at(i);
    return l;
}

// Parameter gradients of Σ hg·net(x), by central differences (no recording).
std::map<std::string, Tensor> numericGrads(HybridSequential& net, const Tensor& x, const Tensor& hg)
{
    std::map<std::string, Tensor> out;
    for (const ParamPtr& p : net.collect_params().values()) {
        Tensor g(p->shape());
        for (int64_t e = 0; e < p->data().size(); ++e) {
            const float keep = p->data().at(e);
            p->data().at(e) = keep + 1e-2f;
            const double lp = weighted(net.call(x), hg);
            p->data().at(e) = keep - 1e-2f;
            const double lm = weighted(net.call(x), hg);
            p->data().at(e) = keep;
            g.at(e) = static_cast<float>((lp - lm) / 2e-2);
        }
        out[p->name()] = g;
    }
    return out;
}

} // namespace

class AutogradModes : public ::testing::TestWithParam<int> { };

TEST_P(AutogradModes, ParameterGradientsEqualCentralDifferences)
{
    auto net = makeNet();
    const int mode = GetParam();
    if (mode >= 1) net->hybridize(true, mode == 2);
    const Tensor x = rnd({ 3, 5 }, 1), hg = rnd({ 3, 2 }, 2);
    net->call(x); // deferred shapes, and the cached graph
    const auto expected = numericGrads(*net, x, hg);
    Tensor y;
    {
        auto r = autograd::record();
        EXPECT_TRUE(autograd::is_recording());
        y = net->call(x);
    }
    EXPECT_FALSE(autograd::is_recording());
    EXPECT_GT(autograd::recorded_count(), 0u);
    autograd::backward(y, hg);
    EXPECT_EQ(autograd::recorded_count(), 0u);
    for (const ParamPtr& p : net->collect_params().values()) {
        const Tensor& g = p->grad();
        const Tensor& n = expected.at(p->name());
        ASSERT_EQ(g.shape(), n.shape()) << p->name();
        for (int64_t e = 0; e < g.size(); ++e)
            EXPECT_NEAR(g.at(e), n.at(e), 2e-3 + 1e-2 * std::fabs(n.at(e))) << p->name() << "[" << e << "]";
    }
}

INSTANTIATE_TEST_SUITE_P(
    Autograd, AutogradModes, ::testing::Values(0, 1, 2), [](const ::testing::TestParamInfo<int>& i) {
        return std::string(i.param == 0 ? "eager" : i.param == 1 ? "hybrid" : "static_alloc");
    });

TEST(Autograd, EagerAndHybridizedGiveTheSameGradients)
{
    const Tensor x = rnd({ 2, 5 }, 4);
    std::vector<std::vector<float>> grads[2];
    for (int hybrid = 0; hybrid < 2; ++hybrid) {
        auto net = makeNet();
        if (hybrid) net->hybridize();
        Tensor y;
        {
            auto r = autograd::record();
            y = net->call(x);
        }
        autograd::backward(y);
        for (const ParamPtr& p : net->collect_params().values())
            grads[hybrid].push_back(p->grad().toVector());
    }
    ASSERT_EQ(grads[0].size(), grads[1].size());
    for (size_t i = 0; i < grads[0].size(); ++i)
        for (size_t e = 0; e < grads[0][i].size(); ++e)
            EXPECT_NEAR(grads[0][i][e], grads[1][i][e], 1e-5);
}

TEST(Autograd, GradReqAddAccumulatesAndNullLeavesAlone)
{
    auto net = makeNet();
    net->hybridize();
    const Tensor x = rnd({ 2, 5 }, 5);
    auto params = net->collect_params();
    const ParamPtr w0 = params.values()[0], b1 = params.values()[3];
    w0->set_grad_req("add");
    b1->set_grad_req("null");
    for (int pass = 0; pass < 2; ++pass) {
        Tensor y;
        {
            auto r = autograd::record();
            y = net->call(x);
        }
        autograd::backward(y);
        if (pass == 0) {
            const std::vector<float> once = w0->grad().toVector();
            (void)once;
        }
    }
    // Two passes on the same input: twice the single gradient.
    auto single = makeNet();
    single->hybridize();
    Tensor y;
    {
        auto r = autograd::record();
        y = single->call(x);
    }
    autograd::backward(y);
    const Tensor& one = single->collect_params().values()[0]->grad();
    for (int64_t e = 0; e < one.size(); ++e)
        EXPECT_NEAR(w0->grad().at(e), 2 * one.at(e), 1e-5);
    EXPECT_FALSE(b1->grad_req() != "null");
}

TEST(Autograd, MarkedInputsGetTheirGradients)
{
    auto net = makeNet();
    const Tensor x = rnd({ 2, 5 }, 6), gx = Tensor::zeros({ 2, 5 });
    net->call(x);
    autograd::mark_variables({ x }, { gx });
    Tensor y;
    {
        auto r = autograd::record();
        y = net->call(x);
    }
    const Tensor hg = rnd({ 2, 2 }, 7);
    autograd::backward(y, hg);
    for (int64_t e = 0; e < x.size(); ++e) {
        Tensor xp = x.copy(), xm = x.copy();
        xp.at(e) += 1e-2f;
        xm.at(e) -= 1e-2f;
        const double numeric = (weighted(net->call(xp), hg) - weighted(net->call(xm), hg)) / 2e-2;
        EXPECT_NEAR(gx.at(e), numeric, 2e-3 + 1e-2 * std::fabs(numeric));
    }
}

TEST(Autograd, BackwardWithoutARecordedHeadIsAClearError)
{
    auto net = makeNet();
    const Tensor y = net->call(rnd({ 1, 5 }, 8));
    EXPECT_THROW(autograd::backward(y), UsageError);
}

TEST(Autograd, HooksSeeTheBackwardNodes)
{
    for (int hybrid = 0; hybrid < 2; ++hybrid) {
        auto net = makeNet();
        if (hybrid) net->hybridize();
        std::vector<std::string> names;
        auto handle = net->register_op_hook(
            [&](std::string_view name, std::string_view, const TensorView&) { names.emplace_back(name); }, false);
        Tensor y;
        {
            auto r = autograd::record();
            y = net->call(rnd({ 2, 5 }, 9));
        }
        autograd::backward(y);
        // Forward outputs, then the backward nodes in reverse order with the gradients they compute.
        const std::vector<std::string> expected { "dense0_fwd_output", "dense1_fwd_output",
            "dense1_fwd_backward_data_grad", "dense1_fwd_backward_weight_grad", "dense1_fwd_backward_bias_grad",
            "dense0_fwd_backward_weight_grad", "dense0_fwd_backward_bias_grad" };
        EXPECT_EQ(names, expected) << (hybrid ? "hybridized" : "eager");
    }
}

TEST(Autograd, StaticAllocKeepsTheBackwardBuffers)
{
    uint64_t during[2] = { 0, 0 };
    for (int staticAlloc = 0; staticAlloc < 2; ++staticAlloc) {
        auto net = makeNet();
        net->hybridize(true, staticAlloc == 1);
        const Tensor x = rnd({ 8, 5 }, 10);
        for (int pass = 0; pass < 2; ++pass) {
            Tensor y;
            {
                auto r = autograd::record();
                y = net->call(x);
            }
            const uint64_t before = allocatorStats().allocations;
            autograd::backward(y);
            if (pass == 1) during[staticAlloc] = allocatorStats().allocations - before;
        }
    }
    // The second backward of a static_alloc block reuses the backward graph's buffers.
    EXPECT_LT(during[1], during[0]);
}

TEST(Autograd, MonitorAllSeesTheSameBackwardInputsEagerAndHybridized)
{
    std::vector<std::string> seen[2];
    for (int hybrid = 0; hybrid < 2; ++hybrid) {
        auto net = makeNet();
        if (hybrid) net->hybridize();
        auto handle = net->register_op_hook(
            [&](std::string_view name, std::string_view, const TensorView&) { seen[hybrid].emplace_back(name); }, true);
        Tensor y;
        {
            auto r = autograd::record();
            y = net->call(rnd({ 2, 5 }, 11));
        }
        autograd::backward(y);
    }
    EXPECT_EQ(seen[0], seen[1]);
    for (const char* name : { "dense1_fwd_backward_output_grad", "dense1_fwd_backward_data",
             "dense1_fwd_backward_weight", "dense1_fwd_backward_out_output", "dense1_fwd_backward_weight_grad" })
        EXPECT_NE(std::find(seen[1].begin(), seen[1].end(), name), seen[1].end()) << name;
}
