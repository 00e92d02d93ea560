#pragma once

// The gRPC service behind debug::serve(): clients and control (server.cpp), the session's events
// fanned out to subscribers (server.cpp), the calls (service.cpp).

#include "opscope_debug.grpc.pb.h"
#include "core/error.h"
#include "debug/comparison_slot.h"
#include "remote/convert.h"
#include "remote/server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace opscope::debug {

namespace pb = opscope::remote::v1;

/// Runs `f`, turning what the engine throws into a status naming it.
template <class F> grpc::Status guarded(F&& f, const char* outOfMemory = "out of memory")
{
    try {
        return f();
    } catch (const UsageError& e) {
        return { grpc::StatusCode::INVALID_ARGUMENT, e.what() };
    } catch (const FileError& e) {
        return { grpc::StatusCode::INVALID_ARGUMENT, e.what() };
    } catch (const MovedOnError& e) {
        return { grpc::StatusCode::FAILED_PRECONDITION, e.what() };
    } catch (const ResourceError& e) {
        return { grpc::StatusCode::RESOURCE_EXHAUSTED, e.what() };
    } catch (const std::bad_alloc&) {
        return { grpc::StatusCode::RESOURCE_EXHAUSTED, outOfMemory };
    } catch (const std::exception& e) {
        return { grpc::StatusCode::INTERNAL, e.what() };
    }
}

class ServerImpl final : public pb::Debugger::Service, public SessionListener {
public:
    ServerImpl(Session& session, ServeOptions options);
    ~ServerImpl() override;
    void start(); // binds; throws UsageError
    void shutdown();
    void wait();
    std::string address() const { return m_address; }
    int port() const { return m_port; }
    size_t clientCount() const;

    // SessionListener (the worker thread).
    void runStarted(uint64_t runId) override;
    void paused(const PauseEvent& event) override;
    void runFinished(uint64_t runId, const std::vector<Tensor>& outputs, const RunRecord& record) override;
    void runFailed(uint64_t runId, const std::string& error) override;

    // The calls (service.cpp).
    grpc::Status Hello(grpc::ServerContext*, const pb::HelloRequest*, pb::HelloReply*) override;
    grpc::Status Detach(grpc::ServerContext*, const pb::Empty*, pb::Empty*) override;
    grpc::Status Unsubscribe(grpc::ServerContext*, const pb::Empty*, pb::Empty*) override;
    grpc::Status Control(grpc::ServerContext*, const pb::ControlRequest*, pb::ControlState*) override;
    grpc::Status GetModel(grpc::ServerContext*, const pb::Empty*, pb::ModelInfo*) override;
    grpc::Status GetState(grpc::ServerContext*, const pb::Empty*, pb::SessionState*) override;
    grpc::Status Subscribe(grpc::ServerContext*, const pb::Empty*, grpc::ServerWriter<pb::Event>*) override;
    grpc::Status SetOptions(grpc::ServerContext*, const pb::Options*, pb::Empty*) override;
    grpc::Status Start(grpc::ServerContext*, const pb::StartRequest*, pb::StartReply*) override;
    grpc::Status SetInputs(grpc::ServerContext*, grpc::ServerReader<pb::TensorChunk>*, pb::Empty*) override; // service_inputs.cpp
    grpc::Status readInputs(grpc::ServerReader<pb::TensorChunk>* reader);
    grpc::Status Command(grpc::ServerContext*, const pb::CommandRequest*, pb::CommandReply*) override;
    grpc::Status AddBreakpoint(grpc::ServerContext*, const pb::Breakpoint*, pb::Breakpoint*) override;
    grpc::Status UpdateBreakpoint(grpc::ServerContext*, const pb::Breakpoint*, pb::Empty*) override;
    grpc::Status RemoveBreakpoint(grpc::ServerContext*, const pb::BreakpointId*, pb::Empty*) override;
    grpc::Status ClearBreakpoints(grpc::ServerContext*, const pb::Empty*, pb::Empty*) override;
    grpc::Status ListBreakpoints(grpc::ServerContext*, const pb::Empty*, pb::BreakpointList*) override;
    grpc::Status GetSummary(grpc::ServerContext*, const pb::SummaryRequest*, pb::TensorSummary*) override;
    grpc::Status GetSlice(grpc::ServerContext*, const pb::SliceRequest*, pb::Slice*) override;
    grpc::Status FetchTensor(grpc::ServerContext*, const pb::TensorRef*, grpc::ServerWriter<pb::TensorChunk>*) override;
    grpc::Status GetRecord(grpc::ServerContext*, const pb::Empty*, pb::Record*) override;
    // service_compare.cpp
    grpc::Status Compare(grpc::ServerContext*, const pb::CompareRequest*, pb::CompareReply*) override;
    grpc::Status EndComparison(grpc::ServerContext*, const pb::Empty*, pb::Empty*) override;
    // service_explain.cpp
    grpc::Status Explain(grpc::ServerContext*, const pb::ExplainRequest*, grpc::ServerWriter<pb::ExplainProgress>*) override;

private:
    struct Client {
        std::string name;
        std::string peer;
        bool watchOnly = false;
        int subscriptions = 0;
        int closing = 0; ///< streams the client said it ends (Unsubscribe): not a vanishing
        int longCalls = 0; ///< Compare, Explain, SetInputs, FetchTensor going on: not silent
        std::chrono::steady_clock::time_point lastSeen;
    };
    struct Subscriber {
        uint64_t client = 0;
        std::deque<std::shared_ptr<const pb::Event>> queue;
        bool overflow = false;
        bool ended = false; ///< its client detached: end the stream
        /// The pause it was given when it subscribed (run id, sequence): the broadcast of that same
        /// pause, when the subscription came between the gate stopping and listeners hearing, is skipped.
        std::optional<std::pair<uint64_t, uint64_t>> givenPause;
    };

    /// The token, then the client id; with `control`, that the client holds control (given to it
    /// when nobody holds it). OK or the status to return.
    grpc::Status admit(grpc::ServerContext* ctx, uint64_t* client, bool control);
    grpc::Status checkToken(grpc::ServerContext* ctx);
    void controlState(uint64_t client, pb::ControlState* out) const; // m_mutex held
    void broadcast(std::shared_ptr<pb::Event> event);
    void broadcastControl(); // m_mutex not held
    /// The client's event stream broke without a Detach: forget it, apply the detach policy.
    void clientVanished(uint64_t client);
    /// Frees control from a holder that is gone or has been silent without an event stream for
    /// ServeOptions::staleHolder (m_mutex held); what to log, or empty; `freed` when it was silent.
    std::string freeStaleHolder(bool* freed);
    /// Control's holder has gone (m_mutex not held): logs `note`, tells the clients and, with
    /// `applyPolicy` (nobody took control in the same step), applies ServeOptions::onDetach.
    void holderGone(const std::string& note, bool applyPolicy = true);
    /// A call that may last (a comparison, an explanation, a stream of bytes): its client is not
    /// silent meanwhile, and has just been seen when it ends.
    class LongCall {
    public:
        LongCall(ServerImpl& server, uint64_t client);
        ~LongCall();
        LongCall(const LongCall&) = delete;
        LongCall& operator=(const LongCall&) = delete;

    private:
        ServerImpl& m_server;
        uint64_t m_client;
    };
    /// The reaper's thread: frees control from a holder silent for ServeOptions::staleHolder.
    void reapStaleHolder();
    /// Forgets the clients without an event stream that have made no call for
    /// ServeOptions::idleClientExpiry (m_mutex held); what to log; `holderExpired` when control's
    /// holder was one.
    std::vector<std::string> expireIdleClients(bool* holderExpired);
    /// A tensor by name (the session: paused node or record), an output of the last run, or a
    /// tensor of the comparison.
    std::optional<Tensor> findTensor(const pb::TensorRef& ref, std::string* what) const;
    void log(const std::string& message) const;

    Session& m_session;
    ServeOptions m_options;
    std::unique_ptr<grpc::Server> m_server;
    std::string m_address;
    int m_port = 0;

    mutable std::mutex m_mutex; // guards everything below
    std::condition_variable m_eventCv;
    std::condition_variable m_reaperCv;
    std::thread m_reaper;
    std::map<uint64_t, Client> m_clients;
    uint64_t m_nextClient = 1;
    std::string m_instance; // random, per server: ids of another run of it are refused
    uint64_t m_holder = 0;
    std::list<std::shared_ptr<Subscriber>> m_subscribers;
    bool m_shutdown = false;
    bool m_shutdownDone = false;
    std::condition_variable m_shutdownCv;
    uint64_t m_outputsRun = 0;
    std::vector<Tensor> m_outputs; // of the last finished run

    ComparisonSlot m_comparison;
    std::mutex m_inputsMutex; // guards m_ownInputs
    std::optional<std::vector<Tensor>> m_ownInputs; // the session's before a client first set some
};

} // namespace opscope::debug
