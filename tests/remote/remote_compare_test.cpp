// A comparison over the wire: the server computes it (its model loaded again, on its own inputs),
// the client gets the same comparison as one computed here and fetches either run's tensors
// bit-exact; run B becomes the served session's reference for `diff>T`, until EndComparison.
// Refusals: a watcher, a bad request, a missing file, a server that cannot compare.

#include "remote_test_util.h"

#include "compare/compare_job.h"
#include "remote/remote_engine.h"
#include "debug/condition.h"

#include <cmath>
#include <cstring>
#include <grpcpp/grpcpp.h>

namespace opscope::remote::test {

namespace {
    // A served LeNet whose comparer is opscope-server's, with the outcomes it gave kept for the test.
    struct ComparingServer {
        ComparingServer()
            : served("lenet", options())
        {
        }
        debug::ServeOptions options()
        {
            debug::ServeOptions o;
            const debug::Comparer compare
                = debug::comparerFor("sample:lenet", "", 0, samples::makeSample("lenet").defaultInputs);
            o.comparer = [this, compare](const debug::CompareRequest& r) {
                auto outcome = compare(r);
                std::lock_guard lock(mutex);
                given.push_back(outcome);
                return outcome;
            };
            return o;
        }
        std::shared_ptr<const debug::CompareOutcome> last()
        {
            std::lock_guard lock(mutex);
            return given.empty() ? nullptr : given.back();
        }
        std::mutex mutex;
        std::vector<std::shared_ptr<const debug::CompareOutcome>> given;
        ServedSample served;
    };

    debug::CompareRequest halfEverywhere()
    {
        debug::CompareRequest r;
        r.precisionB = { { "all", Precision::Float16 } };
        return r;
    }

    bool sameBytes(const Tensor& a, const Tensor& b)
    {
        return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
    }
}

TEST(RemoteCompare, TheServersComparisonIsTheOneComputedHereAndItsTensorsComeBitExact)
{
    Watchdog dog("remote compare");
    ComparingServer s;
    Client client(s.served.connect());
    const debug::CompareOutcome remote = client.compare(halfEverywhere());
    EXPECT_FALSE(remote.valuesHere);
    ASSERT_TRUE(remote.graph);
    const samples::Sample lenet = samples::makeSample("lenet");
    const std::shared_ptr<debug::CompareOutcome> here
        = debug::runComparison("sample:lenet", "", lenet.defaultInputs, halfEverywhere());

    // The same graph, the same tensors in the same order, the same verdicts.
    EXPECT_EQ(remote.graph->size(), here->graph->size());
    EXPECT_EQ(remote.a.order, here->a.order);
    EXPECT_EQ(remote.b.order, here->b.order);
    EXPECT_TRUE(remote.a.tensors.empty()) << "the values stay on the server";
    ASSERT_EQ(remote.comparison.diffs.size(), here->comparison.diffs.size());
    ASSERT_FALSE(remote.comparison.diffs.empty());
    for (size_t i = 0; i < here->comparison.diffs.size(); ++i) {
        const debug::TensorDiff &r = remote.comparison.diffs[i], &h = here->comparison.diffs[i];
        EXPECT_EQ(r.name, h.name);
        EXPECT_EQ(r.shapeA, h.shapeA);
        EXPECT_EQ(r.diverges, h.diverges) << r.name;
        EXPECT_NEAR(r.relL2, h.relL2, 1e-6 * std::max(1.0, h.relL2)) << r.name;
        EXPECT_EQ(std::isinf(r.sqnrDb), std::isinf(h.sqnrDb)) << r.name;
    }
    ASSERT_TRUE(remote.comparison.firstDivergentNode);
    EXPECT_EQ(remote.comparison.firstDivergentNode, here->comparison.firstDivergentNode);
    EXPECT_EQ(*remote.comparison.firstDivergentNode, "hybridsequential0_conv0_fwd");
    ASSERT_EQ(remote.comparison.top1.size(), here->comparison.top1.size());

    // Either run's tensor, streamed: the bytes the server's comparison holds.
    const auto kept = s.last();
    ASSERT_TRUE(kept);
    const std::string conv0 = "hybridsequential0_conv0_fwd_output";
    const Tensor a = client.fetchCompared(debug::CompareSide::A, conv0);
    const Tensor b = client.fetchCompared(debug::CompareSide::B, conv0);
    EXPECT_TRUE(sameBytes(a, kept->a.tensors.at(conv0)));
    EXPECT_TRUE(sameBytes(b, kept->b.tensors.at(conv0)));
    EXPECT_FALSE(sameBytes(a, b)) << "B computed in float16";
    // A name neither run has: NOT_FOUND naming it and the run.
    try {
        client.fetchCompared(debug::CompareSide::B, "no_such_tensor");
        ADD_FAILURE() << "fetched a tensor no run has";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find("no_such_tensor"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("run B"), std::string::npos) << e.what();
    }
}

TEST(RemoteCompare, RunBIsTheServedSessionsReferenceUntilTheComparisonEnds)
{
    Watchdog dog("remote compare reference");
    ComparingServer s;
    EventRecorder events; // outlives the subscription
    Client client(s.served.connect());
    client.subscribe(&events);
    debug::CompareRequest r;
    r.precisionB = { { "hybridsequential0_conv1_fwd", Precision::Float16 } };
    client.compare(r);
    // A watchpoint on every op pauses the server's run where it leaves B by more than 1e-5: the
    // node B computed in float16.
    const int watch = client.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("diff>1e-5")));
    client.start();
    ASSERT_TRUE(events.waitPauses(1));
    EXPECT_EQ(events.pause(0).event.node, "hybridsequential0_conv1_fwd");
    // Every op after it differs too: the watchpoint is disabled to run to the end.
    debug::Breakpoint off = debug::Breakpoint::watch(debug::Condition::parse("diff>1e-5"));
    off.enabled = false;
    client.updateBreakpoint(watch, off);
    client.continueRun();
    ASSERT_TRUE(events.waitFinished(1));

    // Ended: nothing to compare with, the run goes through; the runs are gone.
    client.endComparison();
    off.enabled = true;
    client.updateBreakpoint(watch, off);
    client.start();
    ASSERT_TRUE(events.waitFinished(2));
    EXPECT_EQ(events.pauses.size(), 1u);
    EXPECT_EQ(codeOf([&] { client.fetchCompared(debug::CompareSide::A, "hybridsequential0_conv0_fwd_output"); }),
        grpc::StatusCode::NOT_FOUND);
}

TEST(RemoteCompare, ATensorFetchedForAComparisonComesFromItOrNotAtAll)
{
    Watchdog dog("remote compare pinned");
    ComparingServer s;
    Client client(s.served.connect());
    const std::string conv0 = "hybridsequential0_conv0_fwd_output";
    const debug::CompareOutcome first = client.compare(halfEverywhere());
    ASSERT_NE(first.id, 0u);
    EXPECT_TRUE(sameBytes(client.fetchCompared(debug::CompareSide::B, conv0, {}, first.id), s.last()->b.tensors.at(conv0)));
    // Another comparison (bfloat16 now) replaces it: the first one's tensors are refused, not the second's given.
    debug::CompareRequest bf16;
    bf16.precisionB = { { "all", Precision::BFloat16 } };
    const debug::CompareOutcome second = client.compare(bf16);
    EXPECT_GT(second.id, first.id);
    std::string message;
    EXPECT_EQ(codeOf([&] { client.fetchCompared(debug::CompareSide::B, conv0, {}, first.id); }, &message),
        grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(message.find("replaced by comparison " + std::to_string(second.id)), std::string::npos) << message;
    EXPECT_TRUE(sameBytes(client.fetchCompared(debug::CompareSide::B, conv0, {}, second.id), s.last()->b.tensors.at(conv0)));
    EXPECT_NO_THROW(client.fetchCompared(debug::CompareSide::A, conv0)) << "unpinned: whichever is kept";
    // Ended: the pinned read says so.
    client.endComparison();
    EXPECT_EQ(codeOf([&] { client.fetchCompared(debug::CompareSide::A, conv0, {}, second.id); }, &message),
        grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(message.find("has ended"), std::string::npos) << message;
    // Through the engine interface, the same refusal is a MovedOnError naming it.
    RemoteEngine engine(s.served.connect("engine"));
    EXPECT_THROW(engine.fetchCompared(debug::CompareSide::A, conv0, {}, second.id), debug::MovedOnError);
}

TEST(RemoteCompare, ACallStillWaitingIsLetGoWhenTheClientCancelsIt)
{
    Watchdog dog("remote compare cancelled");
    // A comparison and an explanation that take a while there.
    std::atomic<bool> release { false };
    debug::ServeOptions o;
    auto hold = [&release] {
        for (int i = 0; i < 3000 && !release; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    };
    o.comparer = [hold](const debug::CompareRequest&) {
        hold();
        return std::make_shared<debug::CompareOutcome>();
    };
    o.explainer = [hold](const std::vector<Tensor>&, const debug::ExplainOptions&) {
        hold();
        return debug::Explanation {};
    };
    ServedSample served("mlp", o);
    for (int call = 0; call < 2; ++call) {
        Client client(served.connect(call == 0 ? "comparing" : "explaining"));
        std::atomic<int> code { -1 };
        const auto began = std::chrono::steady_clock::now();
        std::thread waiting([&] {
            code = codeOf([&] {
                if (call == 0)
                    (void)client.compare(halfEverywhere());
                else
                    (void)client.explain({});
            });
        });
        // Cancelled (again, should the call not have begun yet) until it ends.
        while (code == -1 && std::chrono::steady_clock::now() - began < std::chrono::seconds(20)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            client.cancelPending();
        }
        waiting.join();
        SCOPED_TRACE(call == 0 ? "compare" : "explain");
        EXPECT_EQ(code, grpc::StatusCode::CANCELLED);
        EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10)) << "it waited for the server";
        // Let go for good: a later long call ends at once; the others are answered.
        EXPECT_EQ(codeOf([&] { (void)client.explain({}); }), grpc::StatusCode::CANCELLED);
        EXPECT_NO_THROW(client.breakpoints());
    }
    release = true;
}

TEST(RemoteCompare, WhatCannotBeComparedIsRefusedWithTheReason)
{
    Watchdog dog("remote compare refusals");
    ComparingServer s;
    Client holder(s.served.connect("holder"));
    ConnectOptions watching = s.served.connect("watcher");
    watching.watchOnly = true;
    Client watcher(watching);
    // A watcher does not start the server's work.
    EXPECT_NE(codeOf([&] { watcher.compare(halfEverywhere()); }), 0);
    EXPECT_EQ(s.last(), nullptr);

    auto messageOf = [&](const debug::CompareRequest& r, int* code) {
        try {
            holder.compare(r);
        } catch (const RemoteError& e) {
            *code = e.code();
            return std::string(e.what());
        }
        *code = 0;
        return std::string();
    };
    int code = 0;
    debug::CompareRequest missing;
    missing.source = debug::CompareRequest::Source::Saved;
    missing.savedB = "/nonexistent/run.npz";
    std::string m = messageOf(missing, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.find("/nonexistent/run.npz"), std::string::npos) << m;

    debug::CompareRequest unknownNode;
    unknownNode.precisionB = { { "no_such_node", Precision::Float16 } };
    m = messageOf(unknownNode, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.find("no_such_node"), std::string::npos) << m;

    // Run A's own inputs do not travel.
    debug::CompareRequest withInputs;
    withInputs.inputsA = samples::makeSample("lenet").defaultInputs;
    m = messageOf(withInputs, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.find("own inputs"), std::string::npos) << m;

    // A server serving a session it built itself has nothing to load again.
    ServedSample plain("mlp");
    Client c(plain.connect());
    try {
        c.compare(halfEverywhere());
        ADD_FAILURE() << "a server without a comparer compared";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::UNIMPLEMENTED);
        EXPECT_NE(std::string(e.what()).find("cannot compare"), std::string::npos) << e.what();
    }
}

} // namespace opscope::remote::test
