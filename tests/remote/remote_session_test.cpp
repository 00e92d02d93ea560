// A served session driven over loopback answers every command as the local session does: the same
// pauses, in the same order, with the same statistics, and tensors that are bit-identical.

#include "remote_test_util.h"

#include "debug/tensor_stats.h"

#include <cmath>
#include <cstring>
#include <grpcpp/grpcpp.h>

namespace opscope::remote::test {

namespace {
    using Command = std::function<void(debug::Session*, Client*)>;

    // Drives a local session and a served one through the same commands; each command is followed by
    // the pause it leads to (or the end of the run).
    struct Mirror {
        explicit Mirror(const std::string& sampleName)
            : served(sampleName)
            , local(samples::makeSample(sampleName))
        {
            local.block->hybridize();
            localSession.setListener(&recorder);
            localSession.load(local.block, local.inputNames);
            localSession.setInputs(local.defaultInputs);
            client = std::make_unique<Client>(served.connect());
            client->subscribe(&events);
        }
        ~Mirror()
        {
            client.reset();
            localSession.stop();
            localSession.waitUntilIdle(std::chrono::seconds(30));
        }
        ServedSample served;
        samples::Sample local;
        debug::test::Recorder recorder;
        debug::Session localSession;
        EventRecorder events;
        std::unique_ptr<Client> client;
    };

    std::string key(const debug::PauseEvent& e) { return debug::test::key(e); }
}

TEST(RemoteSession, EveryCommandPausesWhereTheLocalSessionDoes)
{
    Watchdog dog("remote commands");
    Mirror m("lenet");
    const std::shared_ptr<const Graph> g = m.local.block->trace({ m.local.defaultInputs[0].shape() });
    std::vector<std::string> ops;
    for (const Node& n : g->nodes())
        if (!n.isVariable()) ops.push_back(n.name);
    ASSERT_GE(ops.size(), 6u);

    // Breakpoint on the fourth op (after), a watchpoint that never holds.
    const debug::Breakpoint bp = debug::Breakpoint::onNode(ops[3], OpPhase::After);
    m.localSession.addBreakpoint(bp);
    const int remoteId = m.client->addBreakpoint(bp);
    EXPECT_EQ(remoteId, 1);
    const debug::Breakpoint watch = debug::Breakpoint::watch(debug::Condition::parse("max>1e30"));
    m.localSession.addBreakpoint(watch);
    m.client->addBreakpoint(watch);
    const std::vector<debug::Breakpoint> listed = m.client->breakpoints();
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0].str(), bp.str());
    EXPECT_EQ(listed[1].str(), watch.str());

    m.localSession.start(debug::StartMode::PauseAtEntry);
    m.client->start(debug::StartMode::PauseAtEntry);
    const std::vector<std::pair<const char*, std::function<void()>>> script = {
        { "step", [&] { m.localSession.step(); m.client->step(); } },
        { "step", [&] { m.localSession.step(); m.client->step(); } },
        { "step over", [&] { m.localSession.stepOver(); m.client->stepOver(); } },
        { "run to", [&] { m.localSession.runTo(ops[2]); m.client->runTo(ops[2]); } },
        { "continue", [&] { m.localSession.continueRun(); m.client->continueRun(); } },
        { "step out", [&] { m.localSession.stepOut(); m.client->stepOut(); } },
    };
    size_t n = 1;
    for (size_t i = 0;; ++i) {
        const debug::PauseEvent want = m.recorder.waitPause(n);
        ASSERT_TRUE(m.events.waitPauses(n)) << "no remote pause " << n;
        const RemotePause got = m.events.pause(n - 1);
        EXPECT_EQ(key(got.event), key(want)) << "pause " << n;
        EXPECT_EQ(got.event.reason, want.reason) << "pause " << n;
        EXPECT_EQ(got.event.breakpointIds, want.breakpointIds);
        ASSERT_EQ(got.event.tensors.size(), want.tensors.size());
        for (size_t t = 0; t < want.tensors.size(); ++t) {
            EXPECT_EQ(got.event.tensors[t].name, want.tensors[t].name);
            EXPECT_EQ(got.shapes[t], want.tensors[t].values.shape());
            const debug::TensorStats s = debug::computeStats(want.tensors[t].values.view());
            EXPECT_EQ(got.stats[t].count, s.count);
            EXPECT_DOUBLE_EQ(got.stats[t].mean, s.mean);
            EXPECT_DOUBLE_EQ(got.stats[t].max, s.max);
        }
        EXPECT_EQ(got.event.focus, want.focus);
        EXPECT_EQ(got.event.focusHistogram.bins, want.focusHistogram.bins);
        // The focus tensor, whole: bit-identical.
        if (const debug::PausedTensor* f = want.focusTensor()) {
            const Tensor t = m.client->fetch(f->name);
            ASSERT_EQ(t.shape(), f->values.shape());
            EXPECT_EQ(std::memcmp(t.raw(), f->values.raw(), t.bytes()), 0);
        }
        if (i >= script.size()) break;
        script[i].second();
        ++n;
    }
    m.localSession.stop();
    m.client->stop();
    ASSERT_TRUE(m.recorder.waitEnded());
    ASSERT_TRUE(m.events.waitFinished(1));
    EXPECT_TRUE(m.events.stopped.at(0));
    // The run is over: commands are refused with a status that says so.
    m.served.session.waitUntilIdle(std::chrono::seconds(10));
    try {
        m.client->step();
        FAIL() << "a step after the run ended was accepted";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
        EXPECT_NE(std::string(e.what()).find("has ended"), std::string::npos) << e.what();
    }
}

TEST(RemoteSession, SummariesSlicesAndTheRecordMatchTheLocalSession)
{
    Watchdog dog("remote tensors");
    ServedSample served("lenet");
    EventRecorder events;
    Client c(served.connect());
    c.subscribe(&events);
    debug::SessionOptions o;
    o.record = debug::RecordLevel::Tensors;
    c.setOptions(o);
    EXPECT_EQ(c.state().options.record, debug::RecordLevel::Tensors);
    const uint64_t run = c.start();
    ASSERT_TRUE(events.waitFinished(1));
    EXPECT_EQ(events.finished.at(0), run);
    const debug::RunRecord local = served.session.record();
    const debug::RunRecord remote = c.record();
    ASSERT_EQ(remote.ops.size(), local.ops.size());
    ASSERT_FALSE(local.ops.empty());
    for (size_t i = 0; i < local.ops.size(); ++i) {
        EXPECT_EQ(remote.ops[i].node, local.ops[i].node);
        EXPECT_EQ(remote.ops[i].timeNs, local.ops[i].timeNs);
        EXPECT_EQ(remote.ops[i].outputShapes, local.ops[i].outputShapes);
        ASSERT_EQ(remote.ops[i].outputStats.size(), local.ops[i].outputStats.size());
        EXPECT_DOUBLE_EQ(remote.ops[i].outputStats[0].std, local.ops[i].outputStats[0].std);
        EXPECT_EQ(remote.ops[i].outputHistograms[0].bins, local.ops[i].outputHistograms[0].bins);
    }
    const std::string name = local.ops[0].outputNames[0];
    const debug::Session::TensorSummary s = c.summary(name, 32, debug::HistogramScale::LogMagnitude);
    const Tensor t = *served.session.tensor(name);
    EXPECT_EQ(s.shape, t.shape());
    EXPECT_DOUBLE_EQ(s.stats.l2, debug::computeStats(t.view()).l2);
    EXPECT_EQ(s.histogram.bins, debug::computeHistogram(t.view(), debug::computeStats(t.view()), 32,
                                    debug::HistogramScale::LogMagnitude).bins);
    debug::SliceRequest req;
    req.index = { 0, 3 };
    req.rowBegin = 2;
    req.rowCount = 5;
    req.colBegin = 1;
    req.colCount = 7;
    const debug::TensorSlice got = c.slice(name, req);
    const debug::TensorSlice want = debug::sliceOf(t.view(), req);
    EXPECT_EQ(got.rows, 5);
    EXPECT_EQ(got.cols, 7);
    EXPECT_EQ(got.values, want.values);
    // The run's outputs, by index.
    ASSERT_EQ(events.outputs.size(), 1u);
    const Tensor out = c.fetchOutput(0);
    EXPECT_EQ(out.shape(), events.outputs[0].shape);
    EXPECT_DOUBLE_EQ(debug::computeStats(out.view()).mean, events.outputs[0].stats.mean);

    // What cannot be answered is a status naming it.
    try {
        c.fetch("no_such_tensor");
        FAIL();
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find("no_such_tensor"), std::string::npos);
    }
    try {
        req.index = { 0, 99 };
        c.slice(name, req);
        FAIL();
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::OUT_OF_RANGE) << e.what();
    }
    // A histogram over an infinite range is refused (it once sent a NaN bin index out of bounds).
    EXPECT_EQ(codeOf([&] { c.summary(name, 64, debug::HistogramScale::Linear, -INFINITY, 1); }),
        grpc::StatusCode::INVALID_ARGUMENT);
    try {
        c.fetchOutput(5);
        FAIL();
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
    }
    try {
        c.updateBreakpoint(77, debug::Breakpoint::onNode("x"));
        FAIL();
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find("#77"), std::string::npos);
    }
}

TEST(RemoteSession, ABreakpointWithAConditionAndATrainingSampleOverTheWire)
{
    Watchdog dog("remote watchpoint");
    ServedSample served("mlp");
    EventRecorder events;
    Client c(served.connect());
    c.subscribe(&events);
    // Every op output's absolute maximum is above 0: the first op pauses, after.
    const int id = c.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("absmax>0")));
    c.start();
    ASSERT_TRUE(events.waitPauses(1));
    const RemotePause p = events.pause(0);
    EXPECT_EQ(p.event.reason, debug::PauseReason::Watchpoint);
    EXPECT_EQ(p.event.breakpointIds, std::vector<int> { id });
    EXPECT_EQ(p.event.phase, OpPhase::After);
    // A second client attaching now sees the pause and the breakpoint.
    Client watcher(served.connect("watcher"));
    const Client::State st = watcher.state();
    ASSERT_TRUE(st.pause.has_value());
    EXPECT_EQ(st.pause->event.node, p.event.node);
    EXPECT_EQ(watcher.breakpoints().size(), 1u);
    c.removeBreakpoint(id);
    EXPECT_TRUE(c.breakpoints().empty());
    c.continueRun();
    ASSERT_TRUE(events.waitFinished(1));
    EXPECT_FALSE(events.stopped.at(0));
}

TEST(RemoteSession, ARunStartedRightAfterSubscribeIsHeardFromItsStart)
{
    Watchdog dog("subscribe then start");
    ServedSample served("mlp");
    EventRecorder first; // outlives `c`, whose event thread calls it
    Client c(served.connect());
    // A new subscription each time, the run started at once: every run's start and end arrive.
    for (int i = 0; i < 25; ++i) {
        EventRecorder events;
        c.subscribe(&events);
        const uint64_t run = c.start();
        EXPECT_TRUE(events.waitFinished(1)) << "run " << run << " (subscription " << i << ")";
        c.unsubscribe();
        std::lock_guard lock(events.mutex);
        EXPECT_EQ(events.started, std::vector<uint64_t> { run });
        EXPECT_EQ(events.finished, std::vector<uint64_t> { run });
    }
    // A client subscribing during a pause hears that pause first, once.
    c.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("absmax>0")));
    c.subscribe(&first);
    c.start();
    ASSERT_TRUE(first.waitPauses(1));
    for (int i = 0; i < 10; ++i) {
        EventRecorder later; // outlives the client whose event thread calls it
        Client watcher(served.connect("watcher"));
        watcher.subscribe(&later);
        EXPECT_TRUE(later.waitPauses(1));
        watcher.unsubscribe();
        std::lock_guard lock(later.mutex);
        ASSERT_EQ(later.pauses.size(), 1u);
        EXPECT_EQ(later.pauses[0].event.sequence, first.pause(0).event.sequence);
    }
    c.clearBreakpoints();
    c.continueRun();
    EXPECT_TRUE(first.waitFinished(1));
}

TEST(RemoteSession, TheModelOfAProgramThatStartsItsRunsIsAnsweredOnceItsFirstRunBegins)
{
    Watchdog dog("model before the first run");
    debug::ServeOptions program; // a program's own session: no description, its runs its own
    program.clientsStart = false;
    ServedSample served("mlp", program);
    Client c(served.connect());
    // Asked before the program's first run, the model is answered when that run has traced it.
    const auto asked = std::chrono::steady_clock::now();
    std::thread firstRun([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        served.session.start();
    });
    const debug::ModelDescription d = c.model();
    firstRun.join();
    ASSERT_TRUE(d.graph);
    EXPECT_GE(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(250)) << "answered before the run began";
    EXPECT_EQ(d.graph->size(), served.session.graph()->size());

    // A session whose clients start the runs says so at once.
    ServedSample idle("mlp");
    Client i(idle.connect());
    try {
        i.model();
        ADD_FAILURE() << "a session that never ran described its graph";
    } catch (const RemoteError& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
        EXPECT_NE(std::string(e.what()).find("start one"), std::string::npos) << e.what();
    }
}

} // namespace opscope::remote::test
