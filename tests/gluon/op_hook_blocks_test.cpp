// Hooks on blocks inside others: each block's hook sees the ops that block made, in every mode
// (eager, hybridized, static_alloc, static_shape), forward and backward.

#include "common/hook_modes.h"
#include "gluon/autograd.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/sequential.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace opscope;
using namespace opscope::gluon;
using test::applyMode;
using Mode = test::HookMode;

class OpHookBlocks : public ::testing::TestWithParam<Mode> {
protected:
    void SetUp() override { resetNaming(); }
};

// A block's hook sees only its own ops, in every mode: eager, an op of the outer block after the
// inner one has returned reports to the outer block's hook alone, in every call (the set the op
// before took is reused only while the same blocks are active); hybridized, the inner block runs
// no forward of its own inside the outer one's graph, and that graph reports each node to the
// hooks of the blocks that made it (MXNet calls no inner block's hook there). Under
// autograd::record too (the forward of the training program).
TEST_P(OpHookBlocks, AnInnerBlocksHookSeesOnlyItsOwnOps)
{
    resetNaming();
    auto outer = std::make_shared<HybridSequential>("outer_");
    std::shared_ptr<HybridSequential> inner;
    std::shared_ptr<nn::Dense> last;
    {
        auto scope = outer->name_scope();
        inner = std::make_shared<HybridSequential>("inner_");
        {
            auto s2 = inner->name_scope();
            inner->add(std::make_shared<nn::Dense>(3));
            inner->add(std::make_shared<nn::Activation>("relu"));
        }
        outer->add(inner);
        last = std::make_shared<nn::Dense>(2);
        outer->add(last);
    }
    outer->initialize();
    applyMode(*outer, GetParam());
    std::vector<std::string> outerSaw, innerSaw, innerAllSaw, lastSaw;
    const auto into = [](std::vector<std::string>& v) {
        return [&v](std::string_view n, std::string_view, const TensorView&) { v.emplace_back(n); };
    };
    HookHandle a = outer->register_op_hook(into(outerSaw));
    HookHandle b = inner->register_op_hook(into(innerSaw));
    const std::vector<std::string> innerOps { "outer_inner_dense0_fwd_output", "outer_inner_relu0_fwd_output" };
    const auto call = [&](bool record) {
        outerSaw.clear();
        innerSaw.clear();
        innerAllSaw.clear();
        lastSaw.clear();
        Tensor x = Tensor::ones(Shape({ 2, 4 }));
        if (!record) return outer->call(x);
        auto r = autograd::record();
        return outer->call(x);
    };
    for (int round = 0; round < 3; ++round) {
        const bool record = round == 2;
        call(record);
        EXPECT_EQ(outerSaw, (std::vector<std::string> { innerOps[0], innerOps[1], "outer_dense0_fwd_output" }))
            << "round " << round;
        EXPECT_EQ(innerSaw, innerOps) << "round " << round;
    }
    // Hooks registered on inner blocks after the graph was made report from the next call, in the
    // order eager takes them: the outer block's first, then each inner block's, outermost first.
    std::vector<std::string> order;
    HookHandle c = last->register_op_hook([&](std::string_view n, std::string_view, const TensorView&) {
        lastSaw.emplace_back(n);
        order.push_back("last");
    });
    HookHandle d = inner->register_op_hook(
        [&](std::string_view n, std::string_view, const TensorView&) {
            innerAllSaw.emplace_back(n);
            order.push_back("inner");
        },
        true);
    HookHandle e = outer->register_op_hook([&](std::string_view, std::string_view, const TensorView&) { order.push_back("outer"); });
    call(false);
    EXPECT_EQ(lastSaw, (std::vector<std::string> { "outer_dense0_fwd_output" }));
    EXPECT_EQ(innerAllSaw,
        (std::vector<std::string> { "outer_inner_dense0_fwd_data", "outer_inner_dense0_fwd_weight", "outer_inner_dense0_fwd_bias",
            "outer_inner_dense0_fwd_output", "outer_inner_relu0_fwd_input0", "outer_inner_relu0_fwd_output" }));
    EXPECT_EQ(innerSaw, innerOps);
    EXPECT_EQ(order,
        (std::vector<std::string> { "inner", "inner", "inner", "outer", "inner", "inner", "outer", "inner", "outer", "last" }));
    // Removed, they stop from the next call; the outer block's hook goes on.
    b.remove();
    c.remove();
    d.remove();
    call(false);
    EXPECT_TRUE(innerSaw.empty());
    EXPECT_TRUE(lastSaw.empty());
    EXPECT_TRUE(innerAllSaw.empty());
    EXPECT_EQ(outerSaw.size(), 3u);
}

namespace {
// Two inputs, two inner blocks, joined in the other order: the graph's order (MXNet's, from the
// heads) is not the order the blocks were traced in, and the second input's variable moves.
struct Branches : HybridBlock {
    Branches()
        : HybridBlock("branches", std::nullopt)
    {
        auto scope = name_scope();
        a = std::make_shared<HybridSequential>("a_");
        {
            auto s = a->name_scope();
            a->add(std::make_shared<nn::Dense>(3));
        }
        b = std::make_shared<HybridSequential>("b_");
        {
            auto s = b->name_scope();
            b->add(std::make_shared<nn::Dense>(3));
            b->add(std::make_shared<nn::Activation>("relu"));
        }
        register_child(a);
        register_child(b);
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
    {
        const Value ya = (*a)(x[0]);
        const Value yb = (*b)(x[1]);
        return { F.elemwise_add(yb, ya) };
    }
    std::shared_ptr<HybridSequential> a, b;
};

struct BranchesSaw {
    std::vector<std::string> outer, a, b;
};

// What each block's hook sees in one call of a fresh model, and in its backward under record.
BranchesSaw branchesSee(Mode mode, bool train)
{
    resetNaming();
    auto net = std::make_shared<Branches>();
    net->initialize();
    applyMode(*net, mode);
    BranchesSaw saw;
    const auto into = [](std::vector<std::string>& v) {
        return [&v](std::string_view n, std::string_view, const TensorView&) { v.emplace_back(n); };
    };
    HookHandle ho = net->register_op_hook(into(saw.outer));
    HookHandle ha = net->a->register_op_hook(into(saw.a));
    HookHandle hb = net->b->register_op_hook(into(saw.b));
    const std::vector<Tensor> in { Tensor::ones(Shape({ 2, 4 })), Tensor::ones(Shape({ 2, 5 })) };
    if (!train) {
        net->call(in);
        return saw;
    }
    net->call(in); // parameters ready
    saw = {};
    Tensor out;
    {
        auto r = autograd::record();
        out = net->call(in).at(0);
    }
    saw = {};
    autograd::backward(out);
    return saw;
}
}

// The nodes' ids change when the traced graph is put in MXNet's order; each inner block's hook
// still sees only its own ops, in every mode, forward and backward, as eagerly.
TEST_P(OpHookBlocks, InnerBlocksHooksFollowTheirNodesIntoTheGraphsOrder)
{
    for (const bool train : { false, true }) {
        SCOPED_TRACE(train ? "backward" : "forward");
        const BranchesSaw eager = branchesSee(Mode::Eager, train);
        const BranchesSaw got = branchesSee(GetParam(), train);
        ASSERT_FALSE(eager.a.empty());
        ASSERT_FALSE(eager.b.empty());
        for (const std::string& n : eager.a)
            EXPECT_NE(n.find("_a_"), std::string::npos) << n;
        for (const std::string& n : eager.b)
            EXPECT_NE(n.find("_b_"), std::string::npos) << n;
        EXPECT_EQ(got.a, eager.a);
        EXPECT_EQ(got.b, eager.b);
        // The outer block's hook sees every op; hybridized in the graph's order (b's branch first).
        auto sorted = [](std::vector<std::string> v) {
            std::sort(v.begin(), v.end());
            return v;
        };
        EXPECT_EQ(sorted(got.outer), sorted(eager.outer));
    }
}
INSTANTIATE_TEST_SUITE_P(AllModes, OpHookBlocks,
    ::testing::Values(Mode::Eager, Mode::Hybrid, Mode::StaticAlloc, Mode::StaticShape),
    [](const auto& info) { return test::modeName(info.param); });
