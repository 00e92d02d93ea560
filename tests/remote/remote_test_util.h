#pragma once

// Helpers of the remote tests: a served session of a sample over loopback, and a listener that
// records a client's events and lets the test wait on them (with timeouts, never sleeps).

#include "../debug/session_test_util.h"
#include "models/registry.h"
#include "remote/client.h"
#include "remote/server.h"

#include <condition_variable>
#include <mutex>

namespace opscope::remote::test {

using debug::test::Watchdog;

class EventRecorder : public RemoteListener {
public:
    static constexpr std::chrono::seconds kTimeout { 30 };

    void runStarted(uint64_t runId) override { add([&] { started.push_back(runId); }); }
    void paused(const RemotePause& p) override { add([&] { pauses.push_back(p); }); }
    void runFinished(uint64_t runId, bool stopped, const std::vector<OutputInfo>& outs) override
    {
        add([&] {
            finished.push_back(runId);
            this->stopped.push_back(stopped);
            outputs = outs;
        });
    }
    void runFailed(uint64_t runId, const std::string& error) override { add([&] { failures.push_back(error); }); }
    void controlChanged(const ControlInfo& c) override { add([&] { controls.push_back(c); }); }
    void disconnected(const std::string& why) override { add([&] { gone = why.empty() ? "?" : why; }); }

    /// Waits until `pred` holds (under the lock); false after `limit`.
    template <class P> bool waitFor(P pred, std::chrono::seconds limit = kTimeout)
    {
        std::unique_lock lock(mutex);
        return cv.wait_for(lock, limit, [&] { return pred(); });
    }
    bool waitPauses(size_t n, std::chrono::seconds limit = kTimeout)
    {
        return waitFor([&] { return pauses.size() >= n; }, limit);
    }
    bool waitFinished(size_t n, std::chrono::seconds limit = kTimeout)
    {
        return waitFor([&] { return finished.size() >= n; }, limit);
    }
    RemotePause pause(size_t i)
    {
        std::lock_guard lock(mutex);
        return pauses.at(i);
    }

    std::mutex mutex;
    std::condition_variable cv;
    std::vector<uint64_t> started, finished;
    std::vector<bool> stopped;
    std::vector<RemotePause> pauses;
    std::vector<OutputInfo> outputs;
    std::vector<std::string> failures;
    std::vector<ControlInfo> controls;
    std::string gone;

private:
    template <class F> void add(F f)
    {
        {
            std::lock_guard lock(mutex);
            f();
        }
        cv.notify_all();
    }
};

/// The gRPC status code of what `f` throws (RemoteError), or 0 when it does not throw.
/// The status code `f` was refused with (0: not refused); `message` gets the reason.
inline int codeOf(const std::function<void()>& f, std::string* message = nullptr)
{
    try {
        f();
    } catch (const RemoteError& e) {
        if (message) *message = e.what();
        return e.code();
    }
    return 0;
}

/// A sample's session, served on a free loopback port. `describe`: the server describes the model
/// before its first run (as opscope-server does), not only from the graph of the last run.
struct ServedSample {
    explicit ServedSample(const std::string& name, debug::ServeOptions options = {}, bool describe = false)
        : sample(samples::makeSample(name))
    {
        sample.block->hybridize();
        session.load(sample.block, sample.inputNames);
        session.setInputs(sample.defaultInputs);
        if (describe && !options.model) {
            debug::ModelDescription d;
            d.source = "sample:" + name;
            d.graph = sample.block->trace({ sample.defaultInputs[0].shape() });
            d.inputs.push_back({ sample.inputNames[0], sample.defaultInputs[0].shape(), {} });
            for (const auto& prm : sample.block->collect_params().values())
                d.parameters.push_back({ prm->name(), prm->initialized() ? prm->data().shape() : Shape() });
            // Output shapes by node, as opscope-server describes a model it loaded.
            const Graph& g = *d.graph;
            std::vector<Shape> vars;
            for (uint32_t v : g.variables())
                vars.push_back(g.node(v).name == sample.inputNames[0] ? sample.defaultInputs[0].shape() : Shape());
            const std::vector<Shape> entries = g.inferShapes(vars);
            for (uint32_t i = 0; i < g.size(); ++i)
                for (int k = 0; k < g.node(i).numOutputs; ++k)
                    d.shapes[g.node(i).name].push_back(entries[g.entryId(i, static_cast<uint32_t>(k))]);
            options.model = d;
        }
        options.log = [this](const std::string& line) {
            std::lock_guard lock(logMutex);
            log.push_back(line);
        };
        server = debug::serve(session, options);
    }
    ~ServedSample()
    {
        server.reset();
        session.stop();
        session.waitUntilIdle(std::chrono::seconds(30));
    }
    ConnectOptions connect(const std::string& name = "test") const
    {
        ConnectOptions o;
        o.address = server->address();
        o.clientName = name;
        return o;
    }
    std::vector<std::string> logLines()
    {
        std::lock_guard lock(logMutex);
        return log;
    }

    samples::Sample sample;
    debug::Session session;
    std::unique_ptr<debug::Server> server;
    std::mutex logMutex;
    std::vector<std::string> log;
};

} // namespace opscope::remote::test
