// MXNet's test_op_hook_output_names (tests/python/unittest/test_gluon.py), whole-list equality,
// in every mode: eager, hybridized, static_alloc and static_shape.

#include "common/exec_graphs.h"
#include "common/hook_modes.h"
#include "common/tensor_match.h"
#include "exec/executor.h"
#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace opscope;
using namespace opscope::gluon;

namespace {
using Mode = test::HookMode;
using test::applyMode;
using test::modeName;

struct Recorded {
    std::vector<std::string> names;
    std::vector<std::string> ops;
};

Recorded runWithHook(const BlockPtr& model, Mode mode, bool monitorAll, const Shape& input = Shape({ 2, 3, 4 }))
{
    model->initialize();
    applyMode(*model, mode);
    Recorded r;
    model->register_op_hook(
        [&](std::string_view name, std::string_view op, const TensorView&) {
            r.names.emplace_back(name);
            r.ops.emplace_back(op);
        },
        monitorAll);
    model->call(Tensor::ones(input));
    return r;
}

// MXNet's test model: Dense(2) then a relu, named under "dense_".
std::shared_ptr<HybridSequential> denseRelu()
{
    auto model = std::make_shared<HybridSequential>("dense_");
    auto scope = model->name_scope();
    model->add(std::make_shared<nn::Dense>(2));
    model->add(std::make_shared<nn::Activation>("relu"));
    return model;
}

}

class OpHookNames : public ::testing::TestWithParam<Mode> {
protected:
    void SetUp() override { resetNaming(); }
};

TEST_P(OpHookNames, DenseOutputOnly)
{
    auto model = std::make_shared<HybridSequential>("dense_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(2));
    }
    Recorded r = runWithHook(model, GetParam(), false);
    EXPECT_EQ(r.names, std::vector<std::string> { "dense_dense0_fwd_output" });
    EXPECT_EQ(r.ops, std::vector<std::string> { "FullyConnected" });
}

TEST_P(OpHookNames, ReluOutputOnly)
{
    auto model = std::make_shared<HybridSequential>("relu_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Activation>("relu"));
    }
    Recorded r = runWithHook(model, GetParam(), false);
    EXPECT_EQ(r.names, std::vector<std::string> { "relu_relu0_fwd_output" });
    EXPECT_EQ(r.ops, std::vector<std::string> { "Activation" });
}

TEST_P(OpHookNames, AvgPoolMonitorAll)
{
    auto model = std::make_shared<HybridSequential>("pool_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::AvgPool1D>());
    }
    Recorded r = runWithHook(model, GetParam(), true);
    EXPECT_EQ(r.names, (std::vector<std::string> { "pool_pool0_fwd_data", "pool_pool0_fwd_output" }));
    EXPECT_EQ(r.ops, (std::vector<std::string> { "Pooling", "Pooling" }));
}

TEST_P(OpHookNames, DenseReluMonitorAll)
{
    Recorded r = runWithHook(denseRelu(), GetParam(), true);
    EXPECT_EQ(r.names,
        (std::vector<std::string> { "dense_dense0_fwd_data", "dense_dense0_fwd_weight", "dense_dense0_fwd_bias",
            "dense_dense0_fwd_output", "dense_relu0_fwd_input0", "dense_relu0_fwd_output" }));
    EXPECT_EQ(r.ops,
        (std::vector<std::string> { "FullyConnected", "FullyConnected", "FullyConnected", "FullyConnected",
            "Activation", "Activation" }));
}

// The seed: HybridSequential("dense_") + Dense(2), monitor_all: the spec's 8 lines.
TEST_P(OpHookNames, SeedModelMonitorAllThenOutputsOnly)
{
    for (bool monitorAll : { true, false }) {
        resetNaming();
        auto model = std::make_shared<HybridSequential>("dense_");
        {
            auto scope = model->name_scope();
            model->add(std::make_shared<nn::Dense>(2));
        }
        Recorded r = runWithHook(model, GetParam(), monitorAll);
        if (monitorAll)
            EXPECT_EQ(r.names, (std::vector<std::string> { "dense_dense0_fwd_data", "dense_dense0_fwd_weight",
                                   "dense_dense0_fwd_bias", "dense_dense0_fwd_output" }));
        else
            EXPECT_EQ(r.names, (std::vector<std::string> { "dense_dense0_fwd_output" }));
    }
}

INSTANTIATE_TEST_SUITE_P(AllModes, OpHookNames,
    ::testing::Values(Mode::Eager, Mode::Hybrid, Mode::StaticAlloc, Mode::StaticShape),
    [](const auto& info) { return modeName(info.param); });

// MXNet's fifth case: the same model after hybridize(static_alloc=True) gives the same six names,
// and so does every other mode, call after call.
TEST(OpHook, SameSequenceInEveryModeAndEveryCall)
{
    std::vector<std::vector<std::string>> seen;
    for (Mode m : { Mode::Eager, Mode::Hybrid, Mode::StaticAlloc, Mode::StaticShape }) {
        resetNaming();
        auto model = denseRelu();
        model->initialize();
        applyMode(*model, m);
        std::vector<std::string> names;
        model->register_op_hook([&](std::string_view n, std::string_view, const TensorView&) { names.emplace_back(n); },
            true);
        for (int call = 0; call < 3; ++call)
            model->call(Tensor::ones(Shape({ 2, 3, 4 })));
        ASSERT_EQ(names.size(), 18u) << modeName(m);
        seen.push_back(names);
    }
    for (size_t i = 1; i < seen.size(); ++i)
        EXPECT_EQ(seen[i], seen[0]);
}

// Each new plan (here: another batch at every call) lists every node's hook calls again; the lists
// of earlier plans are dropped from time to time. Every call must see the whole list, in order.
TEST(OpHook, ManyPlansInARowEachReportTheWholeList)
{
    resetNaming();
    auto model = denseRelu();
    model->initialize();
    model->hybridize();
    std::vector<std::string> names;
    model->register_op_hook([&](std::string_view n, std::string_view, const TensorView&) { names.emplace_back(n); }, true);
    model->call(Tensor::ones(Shape({ 1, 3 })));
    const std::vector<std::string> first = names;
    ASSERT_EQ(first.size(), 6u);
    for (int call = 0; call < 500; ++call) {
        names.clear();
        model->call(Tensor::ones(Shape({ 1 + call % 2, 3 })));
        ASSERT_EQ(names, first) << "call " << call;
    }
}

TEST(OpHook, TensorValuesEqualASeparateEagerRun)
{
    resetNaming();
    Generator gen(11);
    Tensor x = Tensor::uniform(Shape({ 3, 5 }), -1, 1, &gen);
    auto model = std::make_shared<HybridSequential>();
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(4, "tanh"));
        model->add(std::make_shared<nn::Dense>(3));
    }
    model->initialize(std::make_shared<Xavier>());
    model->hybridize(true, true);
    std::map<std::string, Tensor> hooked;
    model->register_op_hook(
        [&](std::string_view n, std::string_view, const TensorView& v) { hooked[std::string(n)] = Tensor::copyOf(v); },
        true);
    Tensor out = model->call(x);
    // Independent eager computation with the same parameters.
    auto w0 = model->collect_params().at("hybridsequential0_dense0_weight")->data();
    auto b0 = model->collect_params().at("hybridsequential0_dense0_bias")->data();
    auto w1 = model->collect_params().at("hybridsequential0_dense1_weight")->data();
    auto b1 = model->collect_params().at("hybridsequential0_dense1_bias")->data();
    Tensor h(Shape({ 3, 4 }));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
            float s = b0.at(j);
            for (int k = 0; k < 5; ++k)
                s += x.at(i * 5 + k) * w0.at(j * 5 + k);
            h.at(i * 4 + j) = s;
        }
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense0_fwd_output"), h));
    for (float& v : h.values())
        v = std::tanh(v);
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense0_tanh_fwd_output"), h));
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense1_fwd_data"), h));
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense1_fwd_weight"), w1));
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense1_fwd_output"), out));
    EXPECT_TRUE(test::tensorsNear(hooked.at("hybridsequential0_dense1_fwd_bias"), b1));
}

TEST(OpHook, RemovingOneOfTwoHooks)
{
    resetNaming();
    auto model = std::make_shared<HybridSequential>("dense_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(2));
    }
    model->initialize();
    model->hybridize();
    int a = 0, b = 0;
    HookHandle ha = model->register_op_hook([&](std::string_view, std::string_view, const TensorView&) { ++a; });
    HookHandle hb = model->register_op_hook([&](std::string_view, std::string_view, const TensorView&) { ++b; }, true);
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 4);
    ha.remove();
    EXPECT_FALSE(ha.active());
    EXPECT_TRUE(hb.active());
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 8);
    hb.detach();
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(b, 8);
}

// A hook added and removed on another block makes the set of active hooks anew; a hybridized block
// whose own hooks are the same keeps calling them (the executor calls them where they are), with
// the same names, in every mode.
TEST(OpHook, AHookAddedAndRemovedElsewhereLeavesABlocksHooksCalledAsBefore)
{
    for (const Mode mode : { Mode::Eager, Mode::Hybrid, Mode::StaticAlloc, Mode::StaticShape }) {
        resetNaming();
        auto model = denseRelu();
        model->initialize();
        applyMode(*model, mode);
        auto other = denseRelu();
        other->initialize();
        std::vector<std::string> names;
        HookHandle h = model->register_op_hook(
            [&names, tag = std::string("seen ")](std::string_view name, std::string_view, const TensorView&) { names.push_back(tag + std::string(name)); });
        model->call(Tensor::ones(Shape({ 2, 3 })));
        const std::vector<std::string> first = names;
        ASSERT_EQ(first.size(), 2u) << modeName(mode);
        EXPECT_EQ(first[0], "seen dense_dense0_fwd_output") << modeName(mode);
        for (int round = 0; round < 3; ++round) {
            HookHandle elsewhere = other->register_op_hook([](std::string_view, std::string_view, const TensorView&) {});
            other->call(Tensor::ones(Shape({ 2, 3 })));
            elsewhere.remove();
            names.clear();
            model->call(Tensor::ones(Shape({ 2, 3 })));
            EXPECT_EQ(names, first) << modeName(mode) << ", round " << round;
        }
        h.remove();
    }
}

// Two hooks, one monitor_all, in every mode: the inputs go to that one only before the op, then
// each output to both in the order they were registered; the sequence is the same in every mode,
// and again after the outputs-only hook is removed and registered anew.
TEST(OpHook, TwoHooksSeeEachTensorInTheOrderTheyWereRegistered)
{
    std::vector<std::vector<std::string>> logs;
    for (Mode mode : { Mode::Eager, Mode::Hybrid, Mode::StaticAlloc, Mode::StaticShape }) {
        SCOPED_TRACE(modeName(mode));
        resetNaming();
        auto model = std::make_shared<HybridSequential>("net_");
        {
            auto scope = model->name_scope();
            model->add(std::make_shared<nn::Dense>(3));
            model->add(std::make_shared<nn::Activation>("relu"));
        }
        model->initialize();
        applyMode(*model, mode);
        std::vector<std::string> log;
        const auto hook = [&log](const char* who) {
            return [&log, who](std::string_view name, std::string_view, const TensorView&) {
                log.push_back(std::string(who) + ":" + std::string(name));
            };
        };
        HookHandle a = model->register_op_hook(hook("a"));
        HookHandle b = model->register_op_hook(hook("b"), true);
        model->call(Tensor::ones(Shape({ 2, 4 })));
        a.remove();
        HookHandle c = model->register_op_hook(hook("c"));
        model->call(Tensor::ones(Shape({ 2, 4 })));
        logs.push_back(log);
    }
    // The first call: a then b on each output; the second: b then c.
    const std::vector<std::string> expected { "b:net_dense0_fwd_data", "b:net_dense0_fwd_weight",
        "b:net_dense0_fwd_bias", "a:net_dense0_fwd_output", "b:net_dense0_fwd_output", "b:net_relu0_fwd_input0",
        "a:net_relu0_fwd_output", "b:net_relu0_fwd_output", "b:net_dense0_fwd_data", "b:net_dense0_fwd_weight",
        "b:net_dense0_fwd_bias", "b:net_dense0_fwd_output", "c:net_dense0_fwd_output", "b:net_relu0_fwd_input0",
        "b:net_relu0_fwd_output", "c:net_relu0_fwd_output" };
    EXPECT_EQ(logs[0], expected);
    for (size_t m = 1; m < logs.size(); ++m)
        EXPECT_EQ(logs[m], logs[0]) << "mode " << m;
}

// Eager: a monitor_all hook that removes itself while the op reports its inputs, then runs an op of
// its own (which takes the active hooks again, without it). The op that called it goes on
// reporting to the set it started with (held, not freed under it: ASan checks); the next op and the
// next call report to no one.
TEST(OpHook, AHookRemovingItselfAndRunningAnOpInsideAnEagerOp)
{
    resetNaming();
    auto model = std::make_shared<HybridSequential>("net_");
    auto inner = std::make_shared<nn::Dense>(3);
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(4));
        model->add(std::make_shared<nn::Dense>(4));
    }
    model->initialize();
    inner->initialize();
    std::vector<std::string> names;
    auto big = std::make_shared<std::vector<float>>(1 << 16, 1.0f); // a capture worth freeing
    HookHandle self;
    self = model->register_op_hook(
        [&, big](std::string_view n, std::string_view, const TensorView&) {
            names.emplace_back(n);
            if (names.size() == 1) {
                self.remove();
                EXPECT_EQ(inner->call(Tensor::ones(Shape({ 2, 5 }))).shape(), Shape({ 2, 3 }));
                EXPECT_EQ((*big)[12345], 1.0f);
            }
        },
        true);
    big.reset();
    model->call(Tensor::ones(Shape({ 2, 3 })));
    const std::vector<std::string> firstOp { "net_dense0_fwd_data", "net_dense0_fwd_weight", "net_dense0_fwd_bias",
        "net_dense0_fwd_output" };
    EXPECT_EQ(names, firstOp) << "the op that removed it finishes with the set it began with; dense1 sees none";
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(names, firstOp);
}

TEST(OpHook, SurvivesRehybridizingAndUnhybridizing)
{
    resetNaming();
    auto model = std::make_shared<HybridSequential>("dense_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(2));
    }
    model->initialize();
    std::vector<std::string> names;
    model->register_op_hook([&](std::string_view n, std::string_view, const TensorView&) { names.emplace_back(n); });
    model->call(Tensor::ones(Shape({ 2, 3 })));
    model->hybridize();
    model->call(Tensor::ones(Shape({ 2, 3 })));
    model->hybridize(true, true, true);
    model->call(Tensor::ones(Shape({ 2, 3 })));
    model->hybridize(false);
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(names, std::vector<std::string>(4, "dense_dense0_fwd_output"));
}

TEST(OpHook, NonHybridSequentialPassesItToEveryHybridBlockBelow)
{
    resetNaming();
    auto net = std::make_shared<Sequential>();
    {
        auto scope = net->name_scope();
        auto inner = std::make_shared<HybridSequential>();
        {
            auto s2 = inner->name_scope();
            inner->add(std::make_shared<nn::Dense>(3, "relu"));
        }
        net->add(inner);
        net->add(std::make_shared<nn::Dense>(2));
    }
    net->initialize();
    for (bool hybrid : { false, true }) {
        net->hybridize(hybrid);
        std::vector<std::string> names;
        HookHandle h = net->register_op_hook(
            [&](std::string_view n, std::string_view, const TensorView&) { names.emplace_back(n); });
        net->call(Tensor::ones(Shape({ 2, 4 })));
        EXPECT_EQ(names,
            (std::vector<std::string> { "sequential0_hybridsequential0_dense0_fwd_output",
                "sequential0_hybridsequential0_dense0_relu_fwd_output", "sequential0_dense0_fwd_output" }))
            << (hybrid ? "hybridized" : "eager");
        h.remove();
        names.clear();
        net->call(Tensor::ones(Shape({ 2, 4 })));
        EXPECT_TRUE(names.empty());
    }
}


// The active hooks are taken once per op when eager and once per call when hybridized (shared
// between ops until a hook is added or removed or another block's scope opens): a hook that adds
// another sees it from the next op eager, from the next call hybridized; a removed one stops alike.
TEST_P(OpHookNames, AHookAddedByAHookReportsFromTheNextOpEagerAndTheNextCallHybridized)
{
    auto model = std::make_shared<HybridSequential>("net_");
    {
        auto scope = model->name_scope();
        for (int i = 0; i < 3; ++i)
            model->add(std::make_shared<nn::Dense>(4));
    }
    model->initialize();
    applyMode(*model, GetParam());
    std::vector<std::string> a, b;
    HookHandle added;
    model->register_op_hook([&](std::string_view n, std::string_view, const TensorView&) {
        a.emplace_back(n);
        if (a.size() == 1)
            added = model->register_op_hook([&](std::string_view m, std::string_view, const TensorView&) { b.emplace_back(m); });
    });
    const bool eager = GetParam() == Mode::Eager;
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(a.size(), 3u);
    EXPECT_EQ(b, eager ? (std::vector<std::string> { "net_dense1_fwd_output", "net_dense2_fwd_output" })
                       : std::vector<std::string> {});
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(b.size(), eager ? 5u : 3u);
    added.remove();
    model->call(Tensor::ones(Shape({ 2, 3 })));
    EXPECT_EQ(a.size(), 9u);
    EXPECT_EQ(b.size(), eager ? 5u : 3u) << "removed: no more calls";
}

// A name longer than the stack buffer the eager report builds names in.
TEST_P(OpHookNames, LongNamesAreReportedWhole)
{
    const std::string prefix(300, 'p');
    auto model = std::make_shared<HybridSequential>(prefix + "_");
    {
        auto scope = model->name_scope();
        model->add(std::make_shared<nn::Dense>(2));
    }
    Recorded r = runWithHook(model, GetParam(), true, Shape({ 2, 3 }));
    const std::string node = prefix + "_dense0_fwd";
    EXPECT_EQ(r.names, (std::vector<std::string> { node + "_data", node + "_weight", node + "_bias", node + "_output" }));
}

// Observers may not attach during a run (the Executor's contract); should one attach from inside a
// hook, in any mode, the hook observer's calls are listed anew meanwhile: every call still names
// the tensor it is given, and the nodes after the change see each of their tensors once.
TEST(OpHook, AnObserverAttachedFromAHookLeavesEveryNameWithItsTensor)
{
    struct Nobody : ExecutionObserver {
        PhaseMask wants(const Graph&, uint32_t) override { return PhaseMask::Both; }
        ObserverAction onOp(const OpEvent&) override { return ObserverAction::Continue; }
    };
    for (const int mode : { 0, 1, 2 }) {
        ExecFlags flags;
        flags.static_alloc = mode >= 1;
        flags.static_shape = mode >= 2;
        flags.fuse = false;
        Executor exec(test::mlpGraph(), flags);
        HookObserver hooks;
        Nobody nobody;
        std::vector<std::string> names;
        std::vector<int64_t> sizes;
        bool attached = false;
        std::vector<OpHook> list;
        list.push_back(OpHook { 1,
            [&](std::string_view name, std::string_view, const TensorView& v) {
                names.emplace_back(name);
                sizes.push_back(v.size());
                if (!attached) exec.attach(&nobody), attached = true;
            },
            false });
        hooks.setHooks(std::move(list));
        exec.attach(&hooks);
        ASSERT_EQ(exec.run(test::mlpInputs(2)).status, RunStatus::Completed);
        // fc1 and relu1 write 2 × 8 values, fc2 2 × 4.
        const std::map<std::string, int64_t> sizeOf { { "fc1_output", 16 }, { "relu1_output", 16 }, { "fc2_output", 8 } };
        ASSERT_FALSE(names.empty());
        for (size_t k = 0; k < names.size(); ++k) {
            ASSERT_TRUE(sizeOf.count(names[k])) << names[k];
            EXPECT_EQ(sizes[k], sizeOf.at(names[k])) << names[k] << ", mode " << mode;
        }
        EXPECT_EQ(std::count(names.begin(), names.end(), "relu1_output"), 1) << "mode " << mode;
        EXPECT_EQ(std::count(names.begin(), names.end(), "fc2_output"), 1) << "mode " << mode;
        EXPECT_EQ(names.back(), "fc2_output");
    }
}
