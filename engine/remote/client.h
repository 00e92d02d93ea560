#pragma once

#include "core/error.h"
#include "debug/breakpoint.h"
#include "debug/engine.h"
#include "debug/model_description.h"
#include "debug/run_record.h"
#include "debug/session.h"
#include "debug/session_options.h"
#include "debug/tensor_slice.h"
#include "remote/convert.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace opscope::remote {

/// A call the server refused or could not answer: gRPC's status code and the server's message.
class RemoteError : public Error {
public:
    RemoteError(int code, const std::string& message, bool atConnect = false);
    int code() const { return m_code; }
    /// The server will not talk to this client: no connection, no or a wrong token, another protocol
    /// version (all when connecting), or another client holds control.
    bool refused() const;

private:
    int m_code;
    bool m_atConnect;
};

struct ConnectOptions {
    std::string address; ///< HOST:PORT
    std::string token; ///< sent as "authorization: Bearer <token>" when set
    std::string tlsCaFile; ///< PEM: TLS, trusting this certificate authority (a self-signed server's certificate)
    std::string clientName = "opscope";
    bool watchOnly = false;
    std::chrono::milliseconds connectTimeout { 5000 };
};

/// The token in `path` (its first line, trailing blanks cut), as opscope-server writes it. Throws
/// UsageError naming the file when it cannot be read or holds no token.
std::string readTokenFile(const std::string& path);

using ControlInfo = debug::ControlInfo;
using OutputInfo = debug::OutputInfo;

/// What a server's session reports, on the client's event thread (one at a time, in order): the
/// engine's listener. On a Client's own subscription, `disconnected` comes also after unsubscribe()
/// (why: "unsubscribed"); RemoteEngine keeps that to itself.
using RemoteListener = debug::EngineListener;

class ClientImpl;

/// A debug session on a server (opscope-server, or a program that called debug::serve): the
/// Session's commands, breakpoints and paused-state questions as calls. Every method may be called
/// from any thread; each throws RemoteError for what the server refuses (its message names what
/// and why) or when it is gone.
class Client {
public:
    /// Connects and says Hello (the version handshake). Throws RemoteError: refused() when the
    /// server cannot be reached within the timeout, wants another token or speaks another version.
    explicit Client(ConnectOptions options);
    /// Unsubscribes and detaches (the server keeps its state).
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    uint64_t clientId() const;
    std::string serverName() const;
    /// The served program starts every run itself (a training loop): start() is refused there.
    bool programStartsRuns() const;
    std::string modelName() const;
    const ConnectOptions& options() const;

    debug::ModelDescription model();
    void setOptions(const debug::SessionOptions& options);
    /// The inputs of the next runs (Engine::setInputs), streamed; nothing: the server's own.
    void setInputs(const std::vector<std::optional<Tensor>>& inputs);
    uint64_t start(debug::StartMode mode = debug::StartMode::Run, bool trainStep = false);

    void continueRun();
    void step();
    void stepOver();
    void stepOut();
    void runTo(const std::string& node);
    void pause();
    void stop();

    int addBreakpoint(const debug::Breakpoint& b);
    void updateBreakpoint(int id, const debug::Breakpoint& b);
    void removeBreakpoint(int id);
    void clearBreakpoints();
    std::vector<debug::Breakpoint> breakpoints();

    struct State {
        bool running = false;
        uint64_t lastRunId = 0;
        std::optional<RemotePause> pause;
        ControlInfo control;
        debug::SessionOptions options; ///< what travels (not the reference run)
    };
    State state();
    ControlInfo control();
    ControlInfo takeControl();
    ControlInfo releaseControl();
    ControlInfo handOver(uint64_t toClient);

    /// By tensor name ("<node>_<slot>") or, with output >= 0, output `output` of the last run.
    debug::Session::TensorSummary summary(const std::string& tensorName, int bins = 64,
        debug::HistogramScale scale = debug::HistogramScale::Linear, double lo = 0, double hi = 0,
        const debug::TensorPin& pin = {});
    /// `pin`: only from where the tensor was seen (FAILED_PRECONDITION when the server moved on).
    debug::TensorSlice slice(const std::string& tensorName, const debug::SliceRequest& request = {}, const debug::TensorPin& pin = {});
    /// The whole tensor, streamed in chunks; `progress(received, total)` after each.
    using Progress = std::function<void(size_t received, size_t total)>;
    Tensor fetch(const std::string& tensorName, const Progress& progress = {}, const debug::TensorPin& pin = {});
    Tensor fetchOutput(int index, const Progress& progress = {});
    debug::RunRecord record();

    /// A comparison computed on the server (on its own inputs; files are the server's); the runs'
    /// names come back, their tensors stay there: fetchCompared.
    debug::CompareOutcome compare(const debug::CompareRequest& request);
    void endComparison();
    /// `comparison`: a CompareOutcome::id to read from that comparison only (0: the one kept now).
    Tensor fetchCompared(debug::CompareSide side, const std::string& tensorName, const Progress& progress = {}, uint64_t comparison = 0);
    /// An explanation computed on the server, of the input its runs take now (Explanation::input).
    /// `options.progress` hears the server's progress; returning false cancels the call (the result
    /// then has `cancelled` set).
    debug::Explanation explain(const debug::ExplainOptions& options);
    /// Cancels the comparisons and explanations this client waits for, and those asked for later,
    /// from any thread (the client is being let go: a detach, a window closing): their calls end at
    /// once (CANCELLED); the server stops an explanation, and drops a comparison's answer.
    void cancelPending();

    /// Starts the event thread (one subscription at a time; a second call replaces the first). The
    /// listener must outlive the subscription: unsubscribe(), detach() or the client's destructor.
    /// Returns once the server has registered the stream (or after the connect timeout): a run
    /// started afterwards is heard from its start.
    void subscribe(RemoteListener* listener);
    void unsubscribe();
    /// Gives up control and leaves the server running; the client cannot be used afterwards.
    void detach();

private:
    std::unique_ptr<ClientImpl> m_impl;
};

} // namespace opscope::remote
