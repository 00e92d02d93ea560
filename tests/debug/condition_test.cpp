// Breakpoint conditions: parsing, and each test on small hand-made data, alone and inside a
// session (a one-op HybridLambda watched on its output).

#include "core/error.h"
#include "debug/session_test_util.h"
#include "gluon/nn/basic_layers.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace opscope;
using namespace opscope::debug;
using namespace opscope::debug::test;
using Kind = Condition::Kind;

namespace {

TensorStats statsOf(std::vector<float> v)
{
    return computeStats(Tensor::fromValues(Shape({ static_cast<int64_t>(v.size()) }), v).view());
}

struct Case {
    const char* text;
    std::vector<float> hits;
    std::vector<float> misses;
};

const std::vector<Case> kCases = {
    { "nan", { 1, NAN, 2 }, { 1, INFINITY, 2 } },
    { "inf", { 1, -INFINITY }, { 1, NAN } },
    { "naninf", { 1, INFINITY }, { 1, 2, 3 } },
    { "naninf", { NAN }, { 0 } },
    { "absmax>3", { 1, -4 }, { 3, -3 } },
    { "max>1e3", { 1, 1001 }, { 1000, -5000 } },
    { "min<-5", { 0, -6 }, { -5, 10 } },
    { "mean>1", { 1, 2 }, { 1, 1 } },
    { "mean<0", { -1, 0.5 }, { 0, 0 } },
    { "std>1", { 0, 4 }, { 1, 2 } },
    { "std<0.1", { 2, 2, 2 }, { 0, 1 } },
    { "zero", { 0, 0, 0 }, { 0, 1e-30f } },
    { "zeros>0.5", { 0, 0, 1 }, { 0, 1 } },
    { "norm>5", { 3, 4.5f }, { 3, 4, NAN } },
};

} // namespace

TEST(Condition, EachTestOnHandMadeData)
{
    for (const Case& c : kCases) {
        const Condition cond = Condition::parse(c.text);
        EXPECT_TRUE(cond.test(statsOf(c.hits))) << c.text;
        EXPECT_FALSE(cond.test(statsOf(c.misses))) << c.text;
    }
}

TEST(Condition, ThresholdsIgnoreNonFiniteValues)
{
    EXPECT_FALSE(Condition::parse("max>0").test(statsOf({ NAN, INFINITY })));
    EXPECT_TRUE(Condition::parse("max>0").test(statsOf({ NAN, 1 })));
    EXPECT_TRUE(Condition::always().test(statsOf({})));
}

TEST(Condition, ParseAndPrintRoundTrip)
{
    EXPECT_EQ(Condition::parse("max>1e3"), Condition::of(Kind::MaxAbove, 1000));
    EXPECT_EQ(Condition::parse(" MIN < -5 "), Condition::of(Kind::MinBelow, -5));
    EXPECT_EQ(Condition::parse("NaNInf").kind, Kind::NanOrInf);
    for (const char* t : { "nan", "inf", "naninf", "zero", "always", "absmax>2", "max>1000", "min<-5", "mean>0.5",
             "mean<0.5", "std>2", "std<2", "zeros>0.25", "norm>10", "diff>0.001" })
        EXPECT_EQ(Condition::parse(Condition::parse(t).str()), Condition::parse(t)) << t;
    for (const char* bad :
        { "", "nan>", "max<3", "min>3", "max>x", "foo>1", "zeros>2", "mean>1e3x", ">3", "max>nan", "norm<3", "diff<1",
            "diff>-1" })
        EXPECT_THROW(Condition::parse(bad), UsageError) << bad;
}

TEST(Condition, ADiffWatchpointPausesWhereTheRunLeavesItsReference)
{
    Watchdog dog("ConditionDiff");
    // x -> a = x * 1 -> b = a * 2 -> c = b * 3; the reference has a and c as they will be, and b
    // off by 1 % in one element of four.
    auto net = std::make_shared<gluon::nn::HybridLambda>(
        [](const gluon::F& F, const std::vector<gluon::Value>& x) {
            const gluon::Value a = F.mul_scalar(x[0], 1.0, "a");
            const gluon::Value b = F.mul_scalar(a, 2.0, "b");
            return std::vector<gluon::Value> { F.mul_scalar(b, 3.0, "c") };
        },
        "d_");
    const Tensor x = Tensor::fromValues(Shape({ 1, 4 }), std::vector<float> { 1, 2, 3, 4 });
    auto reference = std::make_shared<RecordedRun>();
    reference->add("d_a_0", x.view()); // _mul_scalar names no output: slot "0"
    const Tensor b = Tensor::fromValues(Shape({ 1, 4 }), std::vector<float> { 2, 4, 6.06f, 8 });
    reference->add("d_b_0", b.view());
    for (double threshold : { 1e-3, 1e-2 }) {
        Recorder listener;
        Session session(&listener);
        SessionOptions o = session.options();
        o.reference = reference;
        session.setOptions(o);
        session.load(net, { "data" });
        session.setInputs({ x });
        session.addBreakpoint(Breakpoint::watch(Condition::parse("diff>" + std::to_string(threshold))));
        session.start();
        // ‖b − ref‖ / ‖b‖ = 0.06 / sqrt(120) = 0.0055: beyond 1e-3, within 1e-2; c is not in the
        // reference, so it never holds there.
        if (threshold < 0.005) {
            const PauseEvent e = listener.waitPause(1);
            EXPECT_EQ(e.node, "d_b");
            session.continueRun();
        }
        EXPECT_TRUE(listener.waitEnded(1));
        EXPECT_EQ(listener.pauseCount(), threshold < 0.005 ? 1u : 0u);
    }
}

TEST(Condition, WatchpointsInASessionOnHandMadeData)
{
    Watchdog dog("ConditionWatchpoints");
    // One op, y = x * 1: the watched output is the hand-made input.
    auto ident = std::make_shared<gluon::nn::HybridLambda>(
        [](const gluon::F& F, const std::vector<gluon::Value>& x) {
            return std::vector<gluon::Value> { F.mul_scalar(x[0], 1.0, "ident") };
        },
        "cond_");
    for (const Case& c : kCases) {
        for (bool expectHit : { true, false }) {
            const std::vector<float>& v = expectHit ? c.hits : c.misses;
            Recorder listener;
            Session session(&listener);
            session.load(ident, { "data" });
            session.setInputs({ Tensor::fromValues(Shape({ 1, static_cast<int64_t>(v.size()) }), v) });
            session.addBreakpoint(Breakpoint::watch(Condition::parse(c.text)));
            session.start();
            if (expectHit) {
                const PauseEvent e = listener.waitPause(1);
                EXPECT_EQ(e.node, "cond_ident") << c.text;
                EXPECT_EQ(e.reason, PauseReason::Watchpoint) << c.text;
                session.continueRun();
            }
            ASSERT_TRUE(listener.waitEnded()) << c.text;
            EXPECT_EQ(listener.pauseCount(), expectHit ? 1u : 0u) << c.text << (expectHit ? " hits" : " misses");
        }
    }
}

TEST(Condition, NodeBreakpointConditionTestsInputsBeforeAndOutputsAfter)
{
    Watchdog dog("NodeBreakpointCondition");
    auto neg = std::make_shared<gluon::nn::HybridLambda>(
        [](const gluon::F& F, const std::vector<gluon::Value>& x) {
            return std::vector<gluon::Value> { F.mul_scalar(x[0], -1.0, "neg") };
        },
        "cnd_");
    Recorder listener;
    Session session(&listener);
    session.load(neg, { "data" });
    session.setInputs({ Tensor::fromValues(Shape({ 1, 3 }), std::vector<float> { 1, 2, 3 }) });
    // The input is positive, the output negative: only the after breakpoint's condition holds.
    session.addBreakpoint(Breakpoint::onNode("cnd_neg", OpPhase::Before, Condition::parse("min<0")));
    const int after = session.addBreakpoint(Breakpoint::onNode("cnd_neg", OpPhase::After, Condition::parse("min<0")));
    session.start();
    const PauseEvent e = listener.waitPause(1);
    EXPECT_EQ(key(e), "cnd_neg:after");
    EXPECT_EQ(e.breakpointIds, std::vector<int> { after });
    EXPECT_DOUBLE_EQ(e.focusStats.min, -3);
    session.continueRun();
    ASSERT_TRUE(listener.waitEnded());
    EXPECT_EQ(listener.pauseCount(), 1u);
}

TEST(Condition, GradientsOnly)
{
    const Condition c = Condition::parse("grad naninf");
    EXPECT_TRUE(c.gradientsOnly);
    EXPECT_EQ(c.kind, Condition::Kind::NanOrInf);
    EXPECT_EQ(c.str(), "grad naninf");
    EXPECT_EQ(Condition::parse(c.str()), c);
    const Condition n = Condition::parse(" grad: norm > 10 ");
    EXPECT_EQ(n, Condition::onGradients(Condition::Kind::NormAbove, 10));
    EXPECT_EQ(n.str(), "grad norm>10");
    EXPECT_EQ(Condition::parse("grad"), Condition::onGradients(Condition::Kind::Always));
    EXPECT_EQ(Condition::parse("grad").str(), "grad");
    EXPECT_NE(Condition::parse("norm>10"), n); // the same test on every tensor
    EXPECT_THROW(Condition::parse("grad grad nan"), UsageError);
    EXPECT_THROW(Condition::parse("grad norm<3"), UsageError);
    try {
        Condition::parse("grad foo");
        ADD_FAILURE() << "expected a UsageError";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("'grad foo'"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(c.needsStats());
}
