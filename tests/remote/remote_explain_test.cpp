// An explanation over the wire: the server explains the input its runs take (its own, or one a
// client gave) with the served model loaded again; the client gets the explanation computed here
// for that input, with progress, and can cancel it. Any attached client may ask; a layer or class
// the model lacks, or a server with no model to load again, is refused with the reason.

#include "remote_test_util.h"

#include "compare/explain_job.h"
#include "opscope_debug.grpc.pb.h"
#include "remote/protocol.h"

#include <cstring>
#include <grpcpp/grpcpp.h>

namespace opscope::remote::test {

namespace {
    debug::ServeOptions explaining()
    {
        debug::ServeOptions o;
        o.explainer = debug::explainerFor("sample:lenet", "");
        return o;
    }

    bool sameBytes(const Tensor& a, const Tensor& b)
    {
        return a.defined() && b.defined() && a.shape() == b.shape() && a.dtype() == b.dtype()
            && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
    }

    // The explanation computed in this process, on a LeNet of its own.
    debug::Explanation here(const Tensor& input, const debug::ExplainOptions& o)
    {
        samples::Sample s = samples::makeSample("lenet");
        s.block->hybridize();
        return debug::explain(*s.block, input, o);
    }

    std::string refusal(const std::function<void()>& f, int* code)
    {
        try {
            f();
        } catch (const RemoteError& e) {
            *code = e.code();
            return e.what();
        }
        *code = 0;
        return {};
    }
}

TEST(RemoteExplain, TheServersExplanationIsTheOneComputedHereForItsInput)
{
    Watchdog dog("remote explain");
    ServedSample served("lenet", explaining());
    Client watcher(served.connect("watcher")); // explaining needs no control
    watcher.releaseControl();
    const Tensor input = served.sample.defaultInputs[0];
    for (const debug::ExplainMethod m : { debug::ExplainMethod::Saliency, debug::ExplainMethod::GradCam }) {
        debug::ExplainOptions o;
        o.method = m;
        o.topK = 10;
        const debug::Explanation remote = watcher.explain(o);
        const debug::Explanation local = here(input, o);
        SCOPED_TRACE(debug::methodName(m));
        EXPECT_FALSE(remote.cancelled);
        EXPECT_EQ(remote.method, m);
        EXPECT_EQ(remote.classIndex, local.classIndex);
        EXPECT_EQ(remote.score, local.score);
        EXPECT_EQ(remote.top, local.top);
        ASSERT_EQ(remote.top.size(), 10u);
        EXPECT_EQ(remote.layer, local.layer);
        EXPECT_TRUE(sameBytes(remote.heat, local.heat)) << "the heat map comes bit-exact";
        EXPECT_TRUE(sameBytes(remote.input, input)) << "the input explained is the server's";
        if (m == debug::ExplainMethod::GradCam) {
            EXPECT_TRUE(sameBytes(remote.raw, local.raw));
            EXPECT_EQ(remote.layer, "hybridsequential0_conv1_tanh_fwd");
        } else {
            EXPECT_FALSE(remote.raw.defined());
        }
    }
    // Another class, as asked.
    debug::ExplainOptions third;
    third.classIndex = 3;
    EXPECT_EQ(watcher.explain(third).classIndex, 3);
    // The served session's run is untouched: it still runs and answers the same.
    EXPECT_GT(served.session.start(), 0u);
    EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
}

TEST(RemoteExplain, TheInputAClientGaveIsTheOneExplained)
{
    Watchdog dog("remote explain inputs");
    ServedSample served("lenet", explaining());
    Client holder(served.connect("holder"));
    Tensor other = served.sample.defaultInputs[0].copy();
    for (int64_t i = 0; i < other.size(); ++i)
        other.data()[i] = other.data()[other.size() - 1 - i] * 0.5f; // the digit turned half a turn, dimmer
    holder.setInputs({ other });
    const debug::Explanation e = holder.explain({});
    EXPECT_TRUE(sameBytes(e.input, other));
    const debug::Explanation local = here(other, {});
    EXPECT_EQ(e.classIndex, local.classIndex);
    EXPECT_TRUE(sameBytes(e.heat, local.heat));
    // Given back its own, the server explains that again.
    holder.setInputs({});
    EXPECT_TRUE(sameBytes(holder.explain({}).input, served.sample.defaultInputs[0]));
}

TEST(RemoteExplain, OcclusionReportsProgressAndACancelStopsIt)
{
    Watchdog dog("remote explain progress");
    ServedSample served("lenet", explaining());
    Client client(served.connect());
    debug::ExplainOptions o;
    o.method = debug::ExplainMethod::Occlusion;
    o.patch = 4;
    o.stride = 1;
    o.batch = 25; // 625 occluded inputs: 25 batches
    int64_t lastDone = -1, total = 0;
    int calls = 0;
    o.progress = [&](int64_t done, int64_t t) {
        EXPECT_GE(done, lastDone);
        lastDone = done;
        total = t;
        ++calls;
        return true;
    };
    const debug::Explanation whole = client.explain(o);
    EXPECT_FALSE(whole.cancelled);
    EXPECT_GE(calls, 1);
    EXPECT_EQ(lastDone, total) << "the last progress is the whole";
    EXPECT_EQ(whole.heat.shape(), Shape({ 28, 28 }));

    // Cancelled at its first progress: the call ends, cancelled; the server explains again at once.
    o.progress = [](int64_t, int64_t) { return false; };
    const debug::Explanation cancelled = client.explain(o);
    EXPECT_TRUE(cancelled.cancelled);
    EXPECT_FALSE(cancelled.heat.defined());
    EXPECT_EQ(client.explain({}).classIndex, whole.classIndex);
}

TEST(RemoteExplain, WhatCannotBeExplainedIsRefusedWithTheReason)
{
    Watchdog dog("remote explain refusals");
    ServedSample served("lenet", explaining());
    Client client(served.connect());
    int code = 0;
    debug::ExplainOptions cam;
    cam.method = debug::ExplainMethod::GradCam;
    cam.layer = "no_such_node";
    std::string m = refusal([&] { client.explain(cam); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.find("no_such_node"), std::string::npos) << m;
    debug::ExplainOptions beyond;
    beyond.classIndex = 10;
    m = refusal([&] { client.explain(beyond); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(m.find("10"), std::string::npos) << m;

    // A request from another client with a method this server does not know.
    auto channel = grpc::CreateChannel(served.server->address(), grpc::InsecureChannelCredentials());
    auto stub = pb::Debugger::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.AddMetadata(kClientIdKey, std::to_string(client.clientId()));
    pb::ExplainRequest req;
    req.set_method("tea-leaves");
    auto reader = stub->Explain(&ctx, req);
    pb::ExplainProgress p;
    while (reader->Read(&p)) {
    }
    const grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("tea-leaves"), std::string::npos) << s.error_message();

    // A server serving a session it built itself has no model to load again.
    ServedSample plain("lenet");
    Client c(plain.connect());
    m = refusal([&] { c.explain({}); }, &code);
    EXPECT_EQ(code, grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_NE(m.find("cannot explain"), std::string::npos) << m;
}

} // namespace opscope::remote::test
