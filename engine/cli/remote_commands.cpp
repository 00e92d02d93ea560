#include "cli/remote_commands.h"

#include "cli/hook_line.h"
#include "cli/model_info.h"
#include "cli/pause_output.h"
#include "core/error.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "remote/client.h"

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

namespace opscope::cli {

namespace fs = std::filesystem;

namespace {

// The events of one run, for the thread that waits on them.
class RunWaiter : public remote::RemoteListener {
public:
    void paused(const remote::RemotePause& p) override
    {
        std::lock_guard lock(m_mutex);
        m_pauses.push_back(p);
        m_cv.notify_all();
    }
    void runFinished(uint64_t runId, bool stopped, const std::vector<remote::OutputInfo>& outputs) override
    {
        std::lock_guard lock(m_mutex);
        m_ends.push_back({ runId, stopped, outputs, {} });
        m_cv.notify_all();
    }
    void runFailed(uint64_t runId, const std::string& error) override
    {
        std::lock_guard lock(m_mutex);
        m_ends.push_back({ runId, false, {}, error.empty() ? "the run failed" : error });
        m_cv.notify_all();
    }
    void disconnected(const std::string& why) override
    {
        std::lock_guard lock(m_mutex);
        m_gone = why;
        m_cv.notify_all();
    }

    struct End {
        uint64_t runId = 0;
        bool stopped = false;
        std::vector<remote::OutputInfo> outputs;
        std::string error;
    };
    /// Waits for run `runId` to pause after its pause `after` (a sequence number), or to end: the
    /// pause, or nothing when it ended.
    std::optional<remote::RemotePause> waitPause(uint64_t runId, uint64_t after = 0)
    {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return findPause(runId, after) || findEnd(runId) || !m_gone.empty(); });
        if (const remote::RemotePause* p = findPause(runId, after)) return *p;
        if (!findEnd(runId)) throw remote::RemoteError(kGone, "the server went away during the run: " + m_gone);
        return std::nullopt;
    }
    End waitEnd(uint64_t runId)
    {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return findEnd(runId) || !m_gone.empty(); });
        if (const End* e = findEnd(runId)) return *e;
        throw remote::RemoteError(kGone, "the server went away during the run: " + m_gone);
    }

private:
    static constexpr int kGone = 10; // ABORTED: a failed run, not a refusal
    const remote::RemotePause* findPause(uint64_t runId, uint64_t after) const
    {
        for (const remote::RemotePause& p : m_pauses)
            if (p.event.runId == runId && p.event.sequence > after) return &p;
        return nullptr;
    }
    const End* findEnd(uint64_t runId) const
    {
        for (const End& e : m_ends)
            if (e.runId == runId) return &e;
        return nullptr;
    }

    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<remote::RemotePause> m_pauses;
    std::vector<End> m_ends;
    std::string m_gone;
};

// The client's event thread calls the waiter: it ends before the waiter does.
struct Subscription {
    Subscription(remote::Client& c, RunWaiter& w)
        : client(c)
    {
        c.subscribe(&w);
    }
    ~Subscription() { client.unsubscribe(); }
    remote::Client& client;
};

std::unique_ptr<remote::Client> connect(const ConnectArgs& args)
{
    remote::ConnectOptions o;
    o.address = args.address;
    o.clientName = "opscope-cli";
    o.tlsCaFile = args.tlsCa;
    if (!args.tokenFile.empty()) o.token = remote::readTokenFile(args.tokenFile);
    return std::make_unique<remote::Client>(o);
}

int remoteFailure(const remote::RemoteError& e)
{
    return fail(e.refused() ? kRefused : kRunFailed, e.what());
}

void printOutputs(const std::vector<remote::OutputInfo>& outputs, std::ostream& report)
{
    for (size_t i = 0; i < outputs.size(); ++i) {
        const debug::TensorStats& s = outputs[i].stats;
        report << "output" << i << " " << outputs[i].shape.str() << " min " << s.min << " max " << s.max << " mean "
               << s.mean << " nan " << s.nan << " inf " << s.inf() << "\n";
    }
}

void writeOutputs(remote::Client& c, const RunOptions& o, size_t count)
{
    if (!o.output.empty() && count > 0) writeNpy(o.output, c.fetchOutput(0).view());
    if (!o.outputs.empty())
        for (size_t i = 0; i < count; ++i)
            writeNpy((fs::path(o.outputs) / ("output" + std::to_string(i) + ".npy")).string(),
                c.fetchOutput(static_cast<int>(i)).view());
}

// The local run's options that choose the model, its inputs or how it executes: the server chose.
std::string localOnlyOption(const RunOptions& o)
{
    if (!o.model.empty()) return "MODEL";
    if (!o.params.empty()) return "--params";
    if (!o.inputs.empty()) return "--input";
    if (o.seed) return "--seed";
    if (o.mode != "hybrid") return "--mode";
    if (o.noFuse) return "--no-fuse";
    if (!o.reference.empty()) return "--reference";
    return {};
}

// The server's own inputs for this run (a window may have given it others), where clients start runs.
void restoreOwnInputs(remote::Client& c)
{
    if (!c.programStartsRuns()) c.setInputs({});
}

// Breakpoints and watchpoints: stop at the first hit, print it, dump its tensors.
int runBreaking(remote::Client& c, const RunOptions& o, const debug::ModelDescription& model,
    std::vector<debug::Breakpoint> breaks)
{
    for (const debug::Breakpoint& b : breaks) {
        if (b.kind != debug::Breakpoint::Kind::Node) continue;
        auto id = model.graph->findNode(b.location);
        if (!id) return fail(kUsage, "--break " + b.location + ": the model has no node of that name");
        if (model.graph->node(*id).isVariable() && !model.graph->firstReader(*id))
            return fail(kUsage, "--break " + b.location + ": no operator reads this variable");
    }
    RunWaiter waiter;
    Subscription subscription(c, waiter);
    std::vector<int> added;
    for (debug::Breakpoint& b : breaks) {
        b.id = c.addBreakpoint(b);
        added.push_back(b.id);
    }
    auto removeOurs = [&] {
        for (int id : added)
            c.removeBreakpoint(id);
    };
    uint64_t run = 0;
    try {
        restoreOwnInputs(c);
        run = c.start();
    } catch (...) {
        removeOurs();
        throw;
    }
    std::optional<remote::RemotePause> pause = waiter.waitPause(run);
    if (pause) {
        const std::vector<debug::Breakpoint> all = c.breakpoints();
        printPause(std::cout, pause->event, all, pause->shapes, pause->stats);
        if (!o.dump.empty()) {
            FileNamer names;
            for (const debug::PausedTensor& t : pause->event.tensors)
                writeNpy((fs::path(o.dump) / names.fileFor(t.name, ".npy")).string(), c.fetch(t.name).view());
        }
        c.stop();
        waiter.waitEnd(run);
        removeOurs();
        return kOk;
    }
    const RunWaiter::End end = waiter.waitEnd(run);
    removeOurs();
    if (!end.error.empty()) return fail(kRunFailed, end.error);
    printOutputs(end.outputs, std::cout);
    writeOutputs(c, o, end.outputs.size());
    std::cout << "no breakpoint hit\n";
    return kNoHit;
}

// Op-hook lines and dumped tensors from the server's run record: every op's outputs in order, with
// --monitor-all its inputs before them (as they were before it ran), as MXNet's monitor_all reports.
int runRecorded(remote::Client& c, const RunOptions& o)
{
    std::ofstream hookFile;
    std::ostream* hookOut = nullptr;
    if (o.hooks == "-") {
        hookOut = &std::cout;
    } else if (!o.hooks.empty()) {
        hookFile.open(o.hooks, std::ios::trunc);
        if (!hookFile) return fail(kUsage, o.hooks + ": cannot open for writing");
        hookOut = &hookFile;
    }
    std::ostream& report = hookOut == &std::cout ? std::cerr : std::cout;
    const bool record = hookOut || !o.dump.empty();
    const remote::Client::State before = c.state();
    if (record) {
        debug::SessionOptions opts = before.options;
        opts.record = o.dump.empty() ? debug::RecordLevel::Stats : debug::RecordLevel::Tensors;
        opts.recordInputs = o.monitorAll;
        opts.tensorBudgetBytes = std::max(opts.tensorBudgetBytes, size_t(4) << 30);
        c.setOptions(opts);
        if (o.monitorAll && !c.state().options.recordInputs) {
            c.setOptions(before.options);
            return fail(kUsage, "--monitor-all: the server does not record operator inputs (an older opscope-server)");
        }
    }
    RunWaiter waiter;
    Subscription subscription(c, waiter);
    uint64_t run = 0;
    RunWaiter::End end;
    try {
        restoreOwnInputs(c);
        run = c.start();
        // A breakpoint someone else set on the server: go on through it (this run only watches).
        uint64_t seen = 0;
        while (std::optional<remote::RemotePause> p = waiter.waitPause(run, seen)) {
            seen = p->event.sequence;
            c.continueRun();
        }
        end = waiter.waitEnd(run);
    } catch (...) {
        if (record) c.setOptions(before.options);
        throw;
    }
    if (!end.error.empty()) {
        if (record) c.setOptions(before.options);
        return fail(kRunFailed, end.error);
    }
    if (record) {
        const debug::RunRecord rec = c.record();
        if (o.monitorAll && !rec.ops.empty() && rec.ops.front().inputNames.empty() && !rec.ops.front().outputNames.empty())
            throw UsageError("--monitor-all: the server's record holds no operator inputs (an older server?)");
        FileNamer dumpNames;
        uint64_t seq = 0;
        auto emit = [&](const debug::OpRecord& op, const std::string& tensor, const char* phase, const Shape* shape,
                          const debug::TensorStats* stats) {
            if (hookOut) {
                HookLine line;
                line.seq = seq;
                line.name = tensor;
                line.op = op.op;
                line.node = op.node;
                line.slot = tensor.size() > op.node.size() + 1 ? tensor.substr(op.node.size() + 1) : std::string();
                line.phase = phase;
                if (shape) line.shape = *shape;
                if (stats) line.stats = *stats;
                if (!o.dump.empty()) line.file = dumpNames.fileFor(tensor, ".npy");
                *hookOut << hookLineJson(line) << "\n";
            }
            ++seq;
            if (!o.dump.empty())
                writeNpy((fs::path(o.dump) / dumpNames.fileFor(tensor, ".npy")).string(), c.fetch(tensor).view());
        };
        for (const debug::OpRecord& op : rec.ops) {
            for (size_t k = 0; k < op.inputNames.size(); ++k)
                emit(op, op.inputNames[k], "input", k < op.inputShapes.size() ? &op.inputShapes[k] : nullptr,
                    k < op.inputStats.size() ? &op.inputStats[k] : nullptr);
            for (size_t k = 0; k < op.outputNames.size(); ++k)
                emit(op, op.outputNames[k], "output", k < op.outputShapes.size() ? &op.outputShapes[k] : nullptr,
                    k < op.outputStats.size() ? &op.outputStats[k] : nullptr);
        }
        if (hookOut) hookOut->flush();
        c.setOptions(before.options);
    }
    printOutputs(end.outputs, report);
    writeOutputs(c, o, end.outputs.size());
    return kOk;
}

} // namespace

int infoRemote(const ConnectArgs& args)
{
    try {
        std::unique_ptr<remote::Client> c = connect(args);
        printModelInfo(std::cout, c->model());
        return kOk;
    } catch (const remote::RemoteError& e) {
        return remoteFailure(e);
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    }
}

int runRemote(const RunOptions& o, const ConnectArgs& args)
{
    if (const std::string opt = localOnlyOption(o); !opt.empty())
        return fail(kUsage, opt + " cannot be combined with --connect: the server runs its own model, inputs and mode");
    std::vector<debug::Breakpoint> breaks;
    try {
        for (const std::string& b : o.breaks)
            breaks.push_back(debug::parseBreakSpec(b));
        for (const std::string& cnd : o.breakOn)
            breaks.push_back(debug::Breakpoint::watch(debug::Condition::parse(cnd)));
    } catch (const Error& e) {
        return fail(kUsage, e.what());
    }
    if (!breaks.empty() && !o.hooks.empty()) return fail(kUsage, "--hooks cannot be combined with --break or --break-on");
    for (const debug::Breakpoint& b : breaks)
        if (b.condition.needsReference())
            return fail(kUsage, "diff>T compares with a reference run the server does not have over --connect");
    for (const std::string& dir : { o.dump, o.outputs }) {
        if (dir.empty()) continue;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return fail(kUsage, dir + ": cannot create directory: " + ec.message());
    }
    try {
        std::unique_ptr<remote::Client> c = connect(args);
        if (!breaks.empty()) return runBreaking(*c, o, c->model(), std::move(breaks));
        return runRecorded(*c, o);
    } catch (const remote::RemoteError& e) {
        return remoteFailure(e);
    } catch (const FileError& e) {
        return fail(kUsage, e.what());
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    }
}

} // namespace opscope::cli
