// One interface for an engine here and an engine on a server: the same script through LocalEngine
// and RemoteEngine writes the same transcript (model, breakpoints, every pause with its statistics,
// summaries, slices, fetched bytes, outputs, the record, and what each refuses).

#include "remote_test_util.h"

#include "debug/local_engine.h"
#include "remote/remote_engine.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace opscope::remote::test {

namespace {

    class EngineEvents : public debug::EngineListener {
    public:
        void runStarted(uint64_t runId) override { add("started " + std::to_string(runId)); }
        void paused(const debug::PauseReport& p) override
        {
            std::ostringstream s;
            s << "paused run " << p.event.runId << " #" << p.event.sequence << " at " << p.event.node
              << (p.event.phase == OpPhase::After ? ":after" : ":before") << " reason " << static_cast<int>(p.event.reason);
            for (size_t i = 0; i < p.event.tensors.size(); ++i)
                s << "\n  " << p.event.tensors[i].name << " " << p.shapes.at(i).str() << " " << dtypeName(p.dtypes.at(i))
                  << " min " << p.stats.at(i).min << " max " << p.stats.at(i).max << " mean " << p.stats.at(i).mean
                  << " zeros " << p.stats.at(i).zeros;
            s << "\n  focus " << p.event.focus << " bins " << p.event.focusHistogram.bins.size();
            add(s.str(), true);
        }
        void runFinished(uint64_t runId, bool stopped, const std::vector<debug::OutputInfo>& outputs) override
        {
            std::ostringstream s;
            s << "finished " << runId << (stopped ? " stopped" : "");
            for (const debug::OutputInfo& o : outputs)
                s << " " << o.shape.str() << " mean " << o.stats.mean;
            add(s.str(), false, true);
        }
        void runFailed(uint64_t runId, const std::string& error) override { add("failed " + std::to_string(runId) + ": " + error, false, true); }

        bool waitPauses(size_t n) { return wait([&] { return pauses >= n; }); }
        bool waitEnds(size_t n) { return wait([&] { return ends >= n; }); }
        std::vector<std::string> lines()
        {
            std::lock_guard lock(m_mutex);
            return m_lines;
        }

    private:
        void add(std::string line, bool pause = false, bool end = false)
        {
            {
                std::lock_guard lock(m_mutex);
                m_lines.push_back(std::move(line));
                pauses += pause;
                ends += end;
            }
            m_cv.notify_all();
        }
        template <class P> bool wait(P pred)
        {
            std::unique_lock lock(m_mutex);
            return m_cv.wait_for(lock, std::chrono::seconds(30), pred);
        }
        std::mutex m_mutex;
        std::condition_variable m_cv;
        std::vector<std::string> m_lines;
        size_t pauses = 0, ends = 0;
    };

    std::string bytesOf(const std::optional<Tensor>& t)
    {
        if (!t) return "none";
        std::string b(t->bytes(), '\0');
        std::memcpy(b.data(), t->raw(), t->bytes());
        return t->shape().str() + " " + std::to_string(std::hash<std::string> {}(b));
    }

    // The script: everything a front end does, written down as it answers.
    std::vector<std::string> drive(debug::Engine& engine)
    {
        std::vector<std::string> t;
        auto say = [&](std::string line) { t.push_back(std::move(line)); };
        const debug::ModelDescription m = engine.model();
        say("model " + m.source + " nodes " + std::to_string(m.graph ? m.graph->size() : 0));
        for (const auto& in : m.inputs)
            say("input " + in.name + " " + in.shape.str());
        if (!m.graph) return t;
        std::vector<std::string> ops;
        for (const Node& n : m.graph->nodes())
            if (!n.isVariable()) ops.push_back(n.name);

        const int bp = engine.addBreakpoint(debug::Breakpoint::onNode(ops.at(2), OpPhase::After));
        const int watch = engine.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("nan")));
        say("breakpoints " + std::to_string(engine.breakpoints().size()) + " ids " + std::to_string(bp) + "," + std::to_string(watch));
        const bool disabled = engine.setBreakpointEnabled(watch, false);
        say("disable " + std::to_string(disabled) + " enabled " + std::to_string(engine.breakpoint(watch)->enabled));
        say("no such breakpoint " + std::to_string(engine.breakpoint(999).has_value()));
        debug::SessionOptions o = engine.options();
        o.record = debug::RecordLevel::Tensors;
        engine.setOptions(o);
        say("record level " + std::to_string(static_cast<int>(engine.options().record)));
        say("update unknown " + std::to_string(engine.updateBreakpoint(999, debug::Breakpoint::onNode(ops[0]))));
        say("remove unknown " + std::to_string(engine.removeBreakpoint(999)));
        const bool c = engine.continueRun(), st = engine.step(), sp = engine.stop();
        say("idle commands " + std::to_string(c) + std::to_string(st) + std::to_string(sp));

        EngineEvents events;
        struct Unlisten { // however the script ends, before `events` goes
            debug::Engine& e;
            ~Unlisten() { e.setListener(nullptr); }
        } unlisten { engine };
        engine.setListener(&events);
        const uint64_t run = engine.start(debug::StartMode::Run, false);
        say("run " + std::to_string(run));
        if (!events.waitPauses(1)) return t;
        const std::optional<debug::PauseReport> now = engine.currentPause();
        say("current " + (now ? now->event.node : std::string("none")) + " running " + std::to_string(engine.isRunning()));
        const std::string focus = now->event.focusTensor()->name;
        if (std::optional<debug::Session::TensorSummary> s = engine.summary(focus, 16, debug::HistogramScale::Linear, 0, 0)) {
            std::ostringstream line;
            line << "summary " << focus << " " << s->shape.str() << " l2 " << s->stats.l2 << " bins";
            for (uint64_t b : s->histogram.bins)
                line << " " << b;
            say(line.str());
        }
        debug::SliceRequest req;
        req.index = { 0, 0 };
        req.rowCount = 2;
        req.colCount = 3;
        if (std::optional<debug::TensorSlice> sl = engine.slice(focus, req)) {
            std::ostringstream line;
            line << "slice " << sl->rows << "x" << sl->cols;
            for (double v : sl->values)
                line << " " << v;
            say(line.str());
        }
        size_t lastProgress = 0;
        say("fetch " + bytesOf(engine.fetch(focus, [&](size_t got, size_t) { lastProgress = got; })));
        say("progress reached " + std::to_string(lastProgress));
        const bool summaryOfNothing = engine.summary("nosuch_output0", 8, debug::HistogramScale::Linear, 0, 0).has_value();
        const bool fetchOfNothing = engine.fetch("nosuch_output0", {}).has_value();
        say("unknown tensor " + std::to_string(summaryOfNothing) + std::to_string(fetchOfNothing));

        say("step " + std::to_string(engine.step()));
        events.waitPauses(2);
        say("step over " + std::to_string(engine.stepOver()));
        events.waitPauses(3);
        say("run to unknown " + std::to_string(engine.runTo("nosuchnode")));
        say("run to " + std::to_string(engine.runTo(ops.at(ops.size() - 2))));
        events.waitPauses(4);
        say("continue " + std::to_string(engine.continueRun()));
        events.waitEnds(1);
        engine.setListener(nullptr);
        const bool late = engine.continueRun();
        say("after the run " + std::to_string(late) + " last " + std::to_string(engine.lastRunId()));
        const std::string output = bytesOf(engine.fetchOutput(0, {}));
        say("output " + output + " beyond " + std::to_string(engine.fetchOutput(7, {}).has_value()));
        const debug::RunRecord r = engine.record();
        say("record ops " + std::to_string(r.ops.size()) + " status " + std::to_string(static_cast<int>(r.status)));
        // Kept tensors are fetched by name wherever the engine runs.
        for (const debug::OpRecord& op : r.ops)
            say(op.node + " " + op.op + " " + op.outputNames.at(0) + " " + op.outputShapes.at(0).str() + " "
                + bytesOf(engine.fetch(op.outputNames.at(0), {})));
        say("control " + std::to_string(engine.control().youHold));
        if (const std::shared_ptr<const Graph> g = engine.graph()) {
            const std::vector<Shape> shapes = engine.graphShapes();
            std::string line = "graph " + std::to_string(g->size()) + " nodes, entries";
            for (const Shape& sh : shapes)
                line += " " + sh.str();
            say(line);
        }
        for (const std::string& line : events.lines())
            say(line);

        // A second run, stopped at its first pause.
        engine.setListener(&events);
        engine.start(debug::StartMode::PauseAtEntry, false);
        events.waitPauses(5);
        say("stop " + std::to_string(engine.stop()));
        events.waitEnds(2);
        engine.setListener(nullptr);
        say(events.lines().back());
        engine.clearBreakpoints();
        say("cleared " + std::to_string(engine.breakpoints().size()));
        return t;
    }
}

TEST(EngineParity, TheSameScriptThroughALocalAndARemoteEngineWritesTheSameTranscript)
{
    Watchdog dog("engine parity", std::chrono::seconds(120));
    samples::Sample local = samples::makeSample("lenet");
    local.block->hybridize();
    debug::Session session;
    session.load(local.block, local.inputNames);
    session.setInputs(local.defaultInputs);
    debug::ModelDescription description;
    description.source = "sample:lenet";
    description.graph = local.block->trace({ local.defaultInputs[0].shape() });
    description.inputs.push_back({ local.inputNames[0], local.defaultInputs[0].shape(), {} });
    std::vector<std::string> here;
    {
        debug::LocalEngine engine(session, description);
        EXPECT_FALSE(engine.isRemote());
        EXPECT_EQ(engine.where(), "this process");
        here = drive(engine);
    }

    // The server describes its model as opscope-server does: graph, every entry's shape, inputs.
    debug::ServeOptions options;
    options.model = debug::describeSession(session, "sample:lenet");
    ServedSample served("lenet", options);
    std::vector<std::string> there;
    {
        RemoteEngine engine(served.connect());
        EXPECT_TRUE(engine.isRemote());
        EXPECT_EQ(engine.where(), served.server->address());
        there = drive(engine);
    }
    ASSERT_GT(here.size(), 30u);
    EXPECT_TRUE(std::any_of(here.begin(), here.end(), [](const std::string& l) { return l.rfind("graph 19 nodes", 0) == 0; }));
    for (const std::string& line : here) // every tensor asked for by name was found
        EXPECT_EQ(line.find(" none"), std::string::npos) << line;
    EXPECT_EQ(there, here);
    for (size_t i = 0; i < std::min(here.size(), there.size()); ++i)
        if (here[i] != there[i]) ADD_FAILURE() << "line " << i << "\n  here:  " << here[i] << "\n  there: " << there[i];
}

} // namespace opscope::remote::test
