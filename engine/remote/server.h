#pragma once

#include "debug/compare_request.h"
#include "debug/explain.h"
#include "debug/model_description.h"
#include "debug/session.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace opscope::debug {

/// What a served session does when the client holding control vanishes (its event stream breaks
/// without a Detach) while a run is paused.
enum class OnDetach : uint8_t { Pause, Continue };

struct ServeOptions {
    /// ADDR:PORT; port 0 picks a free one (Server::address() tells which). Loopback by default.
    std::string listen = "127.0.0.1:0";
    /// Every call must carry "authorization: Bearer <token>" when set. Required to listen on an
    /// address other than loopback.
    std::string token;
    /// PEM files: TLS when both are given.
    std::string tlsCertFile;
    std::string tlsKeyFile;
    /// What the session does when the client in control vanishes: its event stream broke without a
    /// Detach, or it held control with no event stream and said nothing for staleHolder.
    OnDetach onDetach = OnDetach::Pause;
    /// A holder with no event stream that makes no call for this long has gone: control is freed
    /// (within a second) and onDetach applies.
    std::chrono::milliseconds staleHolder { 30000 };
    /// Clients attached at once; Hello beyond it is refused (RESOURCE_EXHAUSTED).
    size_t maxClients = 64;
    /// A client with no event stream that makes no call for this long is forgotten (a command line
    /// that died without detaching); its next call is refused: it attaches again.
    std::chrono::seconds idleClientExpiry { 600 };
    /// What GetModel answers; without it, the session's graph and shapes of its last run.
    std::optional<ModelDescription> model;
    std::string modelName; ///< Hello's `model` (default: model->source)
    std::string serverName; ///< Hello's `server_name` (default: "opscope <version> on <host>")
    /// False: Start is refused, the program starts the runs itself (its training loop does; clients
    /// set breakpoints, and step through the runs it starts).
    bool clientsStart = true;
    /// What Compare runs (debug/compare_request.h): run A is the served model loaded again, on the
    /// server's inputs. Null: Compare is refused (a program serving a session it built itself).
    Comparer comparer;
    /// What Explain runs (debug/explain.h), with a model of its own, on the session's current inputs.
    /// Null: Explain is refused (a program serving a session it built itself, a training loop).
    Explainer explainer;
    /// Gets every session event too, after the clients (the session has one listener: the server's).
    SessionListener* forward = nullptr;
    /// Refused requests and client comings and goings (default: stderr).
    std::function<void(const std::string&)> log;
};

class ServerImpl;

/// A session served over gRPC (remote/proto/opscope_debug.proto). Destroying it shuts the server
/// down (open streams end, a run going on is stopped) and gives the session ServeOptions::forward as
/// its listener.
class Server {
public:
    explicit Server(std::unique_ptr<ServerImpl> impl);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// "ADDR:PORT" with the port bound.
    std::string address() const;
    int port() const;
    /// Blocks until shutdown() (from another thread or a signal handler's thread).
    void wait();
    void shutdown();
    /// Clients attached now (tests, the server's log).
    size_t clientCount() const;

private:
    std::unique_ptr<ServerImpl> m_impl;
};

/// Serves `session` (which must outlive the server, and be idle: the server becomes its listener).
/// Throws UsageError for a non-loopback address without a token, an address that cannot be bound
/// or TLS files that cannot be read.
std::unique_ptr<Server> serve(Session& session, ServeOptions options);

/// True for 127.0.0.0/8, ::1 and "localhost" (what needs no token).
bool isLoopback(const std::string& hostPort);

} // namespace opscope::debug
