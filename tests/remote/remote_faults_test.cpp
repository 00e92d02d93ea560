// What a server refuses and survives: another protocol version, no or a wrong token, commands from
// a client that only watches, malformed and oversize messages, 1,000 commands at once, a client
// that vanishes (the detach policy), a client that drops a stream; and a 100 M-element tensor
// streamed bit-exact.

#include "remote_test_util.h"

#include "opscope_debug.grpc.pb.h"
#include "gluon/symbol_block.h"
#include "remote/protocol.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <future>
#include <random>

namespace opscope::remote::test {

namespace {
    // True once `pred` holds (polled every 10 ms for up to 30 s).
    template <class P> bool pollUntil(P pred)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!pred()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return true;
    }

    std::unique_ptr<pb::Debugger::Stub> rawStub(const std::string& address)
    {
        return pb::Debugger::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    }

}

TEST(RemoteFaults, AnotherProtocolVersionIsRefusedWithBothVersions)
{
    ServedSample served("mlp");
    auto stub = rawStub(served.server->address());
    grpc::ClientContext ctx;
    pb::HelloRequest req;
    req.set_protocol_version(kProtocolVersion + 1);
    pb::HelloReply reply;
    const grpc::Status s = stub->Hello(&ctx, req, &reply);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find("version " + std::to_string(kProtocolVersion + 1)), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("speaks version " + std::to_string(kProtocolVersion)), std::string::npos);
    EXPECT_EQ(served.server->clientCount(), 0u);
    // A call without Hello: refused, naming what is missing.
    grpc::ClientContext ctx2;
    pb::ModelInfo info;
    const grpc::Status s2 = stub->GetModel(&ctx2, pb::Empty(), &info);
    EXPECT_EQ(s2.error_code(), grpc::StatusCode::UNAUTHENTICATED); // not "refused": a command's own answer
    EXPECT_NE(s2.error_message().find("Hello"), std::string::npos);
}

TEST(RemoteFaults, NoTokenOrAWrongTokenIsRefusedAndLogged)
{
    debug::ServeOptions o;
    o.token = "s3cret-token";
    ServedSample served("mlp", o);
    ConnectOptions none = served.connect();
    try {
        Client c(none);
        FAIL() << "attached without a token";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::UNAUTHENTICATED);
        EXPECT_TRUE(e.refused());
        EXPECT_NE(std::string(e.what()).find("token"), std::string::npos);
    }
    ConnectOptions wrong = served.connect();
    wrong.token = "s3cret-tokeN";
    EXPECT_EQ(codeOf([&] { Client c(wrong); }), grpc::StatusCode::UNAUTHENTICATED);
    ConnectOptions right = served.connect();
    right.token = "s3cret-token";
    Client c(right);
    EXPECT_TRUE(c.breakpoints().empty());
    const std::vector<std::string> log = served.logLines();
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) { return l.find("no token") != std::string::npos; }));
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) { return l.find("wrong token") != std::string::npos; }));
}

TEST(RemoteFaults, AnAddressOtherThanLoopbackNeedsAToken)
{
    debug::Session session;
    debug::ServeOptions o;
    o.listen = "0.0.0.0:0";
    EXPECT_THROW(debug::serve(session, o), UsageError);
    EXPECT_TRUE(debug::isLoopback("127.0.0.1:5"));
    EXPECT_TRUE(debug::isLoopback("[::1]:5"));
    EXPECT_TRUE(debug::isLoopback("localhost:5"));
    EXPECT_FALSE(debug::isLoopback("10.0.0.1:5"));
    EXPECT_FALSE(debug::isLoopback("[::]:5"));
}

TEST(RemoteFaults, OneClientHoldsControlTheOthersWatchUntilItIsHandedOver)
{
    Watchdog dog("control");
    ServedSample served("mlp");
    EventRecorder aEvents, bEvents; // outlive the clients, whose event threads call them
    Client a(served.connect("a"));
    Client b(served.connect("b"));
    a.subscribe(&aEvents);
    b.subscribe(&bEvents);
    EXPECT_TRUE(a.control().youHold);
    EXPECT_FALSE(b.control().youHold);
    EXPECT_EQ(b.control().holderName, "a");
    EXPECT_EQ(codeOf([&] { b.start(debug::StartMode::PauseAtEntry); }), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(codeOf([&] { b.takeControl(); }), grpc::StatusCode::PERMISSION_DENIED);
    a.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(aEvents.waitPauses(1));
    ASSERT_TRUE(bEvents.waitPauses(1)); // watchers see every pause
    EXPECT_EQ(codeOf([&] { b.step(); }), grpc::StatusCode::PERMISSION_DENIED);
    const ControlInfo after = a.handOver(b.clientId());
    EXPECT_FALSE(after.youHold);
    EXPECT_EQ(after.holder, b.clientId());
    ASSERT_TRUE(bEvents.waitFor([&] { return !bEvents.controls.empty() && bEvents.controls.back().holder == b.clientId(); }));
    b.step();
    ASSERT_TRUE(aEvents.waitPauses(2));
    EXPECT_EQ(codeOf([&] { a.step(); }), grpc::StatusCode::PERMISSION_DENIED);
    b.releaseControl();
    a.takeControl();
    a.stop();
    ASSERT_TRUE(bEvents.waitFinished(1));
}

TEST(RemoteFaults, TheDetachPolicyAppliesWhenTheClientInControlVanishes)
{
    Watchdog dog("detach policy");
    for (const debug::OnDetach policy : { debug::OnDetach::Pause, debug::OnDetach::Continue }) {
        debug::ServeOptions o;
        o.onDetach = policy;
        ServedSample served("mlp", o);
        {
            Client c(served.connect("vanishing"));
            // Its event stream, opened by hand so that it can break without the Unsubscribe notice.
            auto stub = rawStub(served.server->address());
            grpc::ClientContext ctx;
            ctx.AddMetadata(kClientIdKey, std::to_string(c.clientId()));
            std::unique_ptr<grpc::ClientReader<pb::Event>> stream = stub->Subscribe(&ctx, pb::Empty());
            c.start(debug::StartMode::PauseAtEntry);
            pb::Event e;
            do {
                ASSERT_TRUE(stream->Read(&e));
            } while (!e.has_paused());
            ctx.TryCancel(); // the stream breaks: the client vanished
            (void)stream->Finish();
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (served.server->clientCount() > 0 && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            ASSERT_EQ(served.server->clientCount(), 0u) << "the server did not notice the client vanish";
        } // (its Detach now finds no such client, and is ignored)
        if (policy == debug::OnDetach::Continue) {
            EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
        } else {
            // Still paused; a new client takes over from where it was.
            EXPECT_TRUE(served.session.isPaused());
            Client next(served.connect("next"));
            EXPECT_TRUE(next.control().youHold);
            ASSERT_TRUE(next.state().pause.has_value());
            next.continueRun();
            EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
        }
        EXPECT_EQ(served.server->clientCount(), 0u);
    }
}

TEST(RemoteFaults, AHolderSilentWithoutAnEventStreamLosesControlAndThePolicyApplies)
{
    Watchdog dog("silent holder");
    for (const debug::OnDetach policy : { debug::OnDetach::Pause, debug::OnDetach::Continue }) {
        debug::ServeOptions o;
        o.onDetach = policy;
        o.staleHolder = std::chrono::seconds(2);
        ServedSample served("mlp", o);
        Client quiet(served.connect("quiet")); // a command line that died without detaching, say
        quiet.start(debug::StartMode::PauseAtEntry);
        ASSERT_TRUE(pollUntil([&] { return served.session.isPaused(); }));
        (void)quiet.control(); // its last call, at the pause
        // Nobody else calls: the server notices by itself.
        ASSERT_TRUE(pollUntil([&] { return served.server->clientCount() == 0; })) << "the silent holder kept control";
        EXPECT_TRUE(pollUntil([&] {
            for (const std::string& line : served.logLines())
                if (line.find("(quiet) went quiet: control is free") != std::string::npos) return true;
            return false;
        }));
        if (policy == debug::OnDetach::Continue) {
            EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30))) << "the run did not go on";
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            EXPECT_TRUE(served.session.isPaused()) << "the run went on under --on-detach pause";
            Client next(served.connect("next"));
            EXPECT_TRUE(next.control().youHold);
            next.continueRun();
            EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
        }
    }
}

TEST(RemoteFaults, UnsubscribingOrDetachingIsNotVanishing)
{
    Watchdog dog("unsubscribe");
    debug::ServeOptions o;
    o.onDetach = debug::OnDetach::Continue;
    ServedSample served("mlp", o);
    EventRecorder events, again;
    Client c(served.connect());
    c.subscribe(&events);
    c.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1));
    c.unsubscribe();
    c.subscribe(&again); // a new subscription replaces none and sees the pause going on
    ASSERT_TRUE(again.waitPauses(1));
    EXPECT_TRUE(served.session.isPaused()) << "an unsubscribe applied the detach policy";
    EXPECT_TRUE(c.control().youHold);
    c.detach();
    EXPECT_TRUE(served.session.isPaused()) << "a detach applied the detach policy";
    EXPECT_EQ(served.server->clientCount(), 0u);
}

TEST(RemoteFaults, TheServerTakesAtMostItsClients)
{
    Watchdog dog("client cap and expiry");
    debug::ServeOptions capped;
    capped.maxClients = 2;
    ServedSample s("mlp", capped);
    Client a(s.connect("a"));
    Client b(s.connect("b"));
    try {
        Client c(s.connect("c"));
        ADD_FAILURE() << "a third client attached to a server that takes two";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        EXPECT_TRUE(e.refused());
        EXPECT_NE(std::string(e.what()).find("2 clients are attached"), std::string::npos) << e.what();
    }
    b.detach();
    Client c(s.connect("c")); // a place was freed
}

TEST(RemoteFaults, ASilentClientWithoutAnEventStreamIsForgotten)
{
    Watchdog dog("client expiry");
    // A client without an event stream that says nothing is forgotten when another attaches; one
    // with a stream stays.
    debug::ServeOptions quick;
    quick.idleClientExpiry = std::chrono::seconds(0);
    ServedSample q("mlp", quick);
    EventRecorder events; // outlives the subscription
    Client silent(q.connect("silent"));
    Client listening(q.connect("listening"));
    listening.subscribe(&events);
    Client late(q.connect("late"));
    try {
        silent.breakpoints();
        ADD_FAILURE() << "an expired client was answered";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::UNAUTHENTICATED);
        EXPECT_NE(std::string(e.what()).find("attach again"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(listening.breakpoints());
    bool logged = false;
    for (const std::string& line : q.logLines())
        logged = logged || line.find("(silent) expired") != std::string::npos;
    EXPECT_TRUE(logged);
}

TEST(RemoteFaults, AThousandRapidCommandsLeaveTheServerConsistent)
{
    Watchdog dog("rapid commands", std::chrono::seconds(120));
    ServedSample served("lenet");
    EventRecorder events;
    Client c(served.connect());
    c.subscribe(&events);
    c.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1));
    int refused = 0;
    for (int i = 0; i < 1000; ++i) {
        try {
            switch (i % 4) {
            case 0: c.step(); break;
            case 1: c.pause(); break;
            case 2: c.stepOver(); break;
            default: c.step(); break;
            }
        } catch (const RemoteError& e) { // the run may end on the way: then commands are refused
            EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION) << e.what();
            ++refused;
        }
    }
    // Either still paused somewhere, or ended: the server answers, and a stop ends it.
    const Client::State st = c.state();
    if (st.running) c.stop();
    ASSERT_TRUE(events.waitFinished(1));
    EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
    EXPECT_NO_THROW(c.start());
    ASSERT_TRUE(events.waitFinished(2));
    EXPECT_GE(events.pauses.size(), 2u);
    (void)refused;
}

TEST(RemoteFaults, MalformedAndOversizeMessagesGetAStatusNotACrash)
{
    Watchdog dog("fuzzed messages", std::chrono::seconds(120));
    ServedSample served("mlp");
    Client c(served.connect());
    Client fuzzer(served.connect("fuzzer")); // it watches: the fuzzed calls come as it
    auto channel = grpc::CreateChannel(served.server->address(), grpc::InsecureChannelCredentials());
    grpc::GenericStub generic(channel);
    const char* methods[] = { "Hello", "Detach", "Control", "GetModel", "GetState", "SetOptions", "Start", "Command",
        "AddBreakpoint", "UpdateBreakpoint", "RemoveBreakpoint", "ClearBreakpoints", "ListBreakpoints", "GetSummary",
        "GetSlice", "GetRecord" };
    std::mt19937 rng(7);
    int calls = 0;
    for (int round = 0; round < 40; ++round) {
        for (const char* m : methods) {
            std::string bytes(rng() % 64, '\0');
            for (char& ch : bytes)
                ch = static_cast<char>(rng());
            grpc::Slice slice(bytes);
            grpc::ByteBuffer request(&slice, 1);
            grpc::ByteBuffer response;
            grpc::ClientContext ctx;
            ctx.AddMetadata(kClientIdKey, std::to_string(fuzzer.clientId()));
            ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            std::promise<grpc::Status> done;
            generic.UnaryCall(&ctx, std::string("/opscope.remote.v1.Debugger/") + m, grpc::StubOptions(), &request,
                &response, [&](grpc::Status s) { done.set_value(s); });
            const grpc::Status s = done.get_future().get();
            EXPECT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE) << m << ": the server is gone";
            EXPECT_NE(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << m;
            ++calls;
        }
    }
    EXPECT_EQ(calls, 40 * 16);
    // Oversize: a breakpoint whose location is 2 MiB.
    debug::Breakpoint huge = debug::Breakpoint::onNode(std::string(2 << 20, 'x'));
    EXPECT_EQ(codeOf([&] { c.addBreakpoint(huge); }), grpc::StatusCode::RESOURCE_EXHAUSTED);
    // A bad condition and an unknown record level: the engine's message.
    auto stub = rawStub(served.server->address());
    {
        grpc::ClientContext ctx;
        ctx.AddMetadata(kClientIdKey, std::to_string(c.clientId()));
        pb::Breakpoint b;
        b.set_kind(pb::Breakpoint::WATCH);
        b.set_condition("max>>3");
        pb::Breakpoint out;
        const grpc::Status s = stub->AddBreakpoint(&ctx, b, &out);
        EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        EXPECT_NE(s.error_message().find("max>>3"), std::string::npos) << s.error_message();
    }
    {
        grpc::ClientContext ctx;
        ctx.AddMetadata(kClientIdKey, std::to_string(c.clientId()));
        pb::Options o;
        o.set_record(static_cast<pb::Options::RecordLevel>(9));
        pb::Empty out;
        EXPECT_EQ(stub->SetOptions(&ctx, o, &out).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    }
    // Still serving.
    EXPECT_NO_THROW(c.start());
    EXPECT_TRUE(served.session.waitUntilIdle(std::chrono::seconds(30)));
}

TEST(RemoteFaults, AClientThatDropsAStreamMidwayLeavesTheServerServing)
{
    Watchdog dog("dropped stream");
    ServedSample served("lenet");
    EventRecorder events;
    Client c(served.connect());
    c.subscribe(&events);
    c.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1));
    const std::string name = events.pause(0).event.tensors.at(0).name;
    struct Dropped { };
    // The first chunk arrives, then the client gives up: the call is cancelled.
    EXPECT_THROW(c.fetch(name, [](size_t, size_t) { throw Dropped {}; }), Dropped);
    EXPECT_EQ(c.fetch(name).shape(), events.pause(0).shapes.at(0));
    c.stop();
    ASSERT_TRUE(events.waitFinished(1));
}

TEST(RemoteFaults, AHundredMillionElementTensorStreamsBitExact)
{
    Watchdog dog("100M tensor", std::chrono::seconds(600));
    // Each step moves 400 MB; under a sanitizer on a loaded machine one takes minutes, not seconds.
    constexpr std::chrono::seconds kLimit { 240 };
    // A model that reads a (100, 1000, 1000) input: the entry pause holds it.
    debug::Session session;
    {
        Graph graph;
        const NodeEntry x { graph.addVariable("data"), 0, 0 };
        const NodeEntry r { graph.addOp("Activation", "relu0", { { "act_type", "relu" } }, { x }), 0, 0 };
        graph.setHeads({ r });
        graph.finalize();
        session.load(std::make_shared<gluon::SymbolBlock>(std::move(graph), std::vector<std::string> { "data" }),
            { "data" });
    }
    Tensor big(Shape { 100, 1000, 1000 });
    std::mt19937 rng(3);
    uint32_t* bits = static_cast<uint32_t*>(big.raw());
    for (int64_t i = 0; i < big.size(); ++i)
        bits[i] = rng(); // every bit pattern, NaNs included
    session.setInputs({ big });
    std::unique_ptr<debug::Server> server = debug::serve(session, {});
    ConnectOptions o;
    o.address = server->address();
    EventRecorder events;
    Client c(o);
    c.subscribe(&events);
    c.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1, kLimit));
    size_t progressCalls = 0, lastTotal = 0;
    const Tensor got = c.fetch(events.pause(0).event.tensors.at(0).name, [&](size_t, size_t total) {
        ++progressCalls;
        lastTotal = total;
    });
    ASSERT_EQ(got.shape(), big.shape());
    EXPECT_EQ(std::memcmp(got.raw(), big.raw(), big.bytes()), 0);
    EXPECT_EQ(lastTotal, big.bytes());
    EXPECT_EQ(progressCalls, (big.bytes() + kChunkBytes - 1) / kChunkBytes);
    c.stop();
    ASSERT_TRUE(events.waitFinished(1, kLimit));
    c.unsubscribe();
    server.reset();
}

TEST(RemoteFaults, OverTlsWithATokenOnlyAClientTrustingTheCertificateAttaches)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("opscope_tls_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string key = (dir / "key.pem").string(), cert = (dir / "cert.pem").string();
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " + cert
        + " -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "no openssl command to make a test certificate";
    debug::ServeOptions o;
    o.tlsCertFile = cert;
    o.tlsKeyFile = key;
    o.token = "tls-token";
    ServedSample served("mlp", o);
    ConnectOptions tls = served.connect();
    tls.tlsCaFile = cert;
    tls.token = "tls-token";
    tls.connectTimeout = std::chrono::milliseconds(3000);
    {
        Client c(tls);
        EXPECT_TRUE(c.control().youHold);
        EXPECT_NO_THROW(c.start());
    }
    // Without TLS the handshake never completes: refused when connecting.
    ConnectOptions plain = tls;
    plain.tlsCaFile.clear();
    plain.connectTimeout = std::chrono::milliseconds(1000);
    try {
        Client c(plain);
        FAIL() << "a plain client attached to a TLS server";
    } catch (const RemoteError& e) {
        EXPECT_TRUE(e.refused());
    }
    // TLS files that cannot be read are a usage error naming them.
    debug::Session session;
    debug::ServeOptions missing;
    missing.tlsCertFile = (dir / "none.pem").string();
    missing.tlsKeyFile = key;
    try {
        debug::serve(session, missing);
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("none.pem"), std::string::npos);
    }
    fs::remove_all(dir);
}

} // namespace opscope::remote::test
