#pragma once

// The client's connection (remote/client.h): its channel and stub, the calls' metadata and
// deadlines, a tensor's stream and the event subscription. Private to the client's sources.

#include "remote/client.h"

#include "opscope_debug.grpc.pb.h"
#include "core/error.h"
#include "remote/convert.h"
#include "remote/protocol.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace opscope::remote {

/// How long a summary or a window of values may take (a 100 M-element summary takes well under one).
inline constexpr std::chrono::seconds kReadDeadline { 15 };

inline ControlInfo fromProto(const pb::ControlState& c)
{
    ControlInfo r;
    r.holder = c.holder();
    r.holderName = c.holder_name();
    r.youHold = c.you_hold();
    for (const pb::ClientInfo& ci : c.clients())
        r.clients.push_back({ ci.id(), ci.name(), ci.peer(), ci.subscribed() });
    return r;
}

inline std::string readPem(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) throw RemoteError(grpc::StatusCode::INVALID_ARGUMENT, path + ": cannot read the certificate");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

class ClientImpl {
public:
    explicit ClientImpl(ConnectOptions o)
        : options(std::move(o))
    {
        std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
        if (!options.tlsCaFile.empty()) {
            grpc::SslCredentialsOptions ssl;
            ssl.pem_root_certs = readPem(options.tlsCaFile);
            creds = grpc::SslCredentials(ssl);
        }
        grpc::ChannelArguments args;
        args.SetMaxReceiveMessageSize(kMaxReplyBytes);
        args.SetMaxSendMessageSize(kMaxRequestBytes);
        channel = grpc::CreateCustomChannel(options.address, creds, args);
        // Refused at once (nothing listens) or no answer within the timeout.
        const auto deadline = std::chrono::system_clock::now() + options.connectTimeout;
        for (grpc_connectivity_state st = channel->GetState(true); st != GRPC_CHANNEL_READY; st = channel->GetState(true)) {
            if (st == GRPC_CHANNEL_TRANSIENT_FAILURE || st == GRPC_CHANNEL_SHUTDOWN)
                throw RemoteError(grpc::StatusCode::UNAVAILABLE, "cannot connect to " + options.address + " (refused or unreachable)", true);
            if (!channel->WaitForStateChange(st, deadline))
                throw RemoteError(grpc::StatusCode::UNAVAILABLE,
                    "cannot connect to " + options.address + " (nothing answered within "
                        + std::to_string(options.connectTimeout.count()) + " ms)", true);
        }
        stub = pb::Debugger::NewStub(channel);
        pb::HelloRequest req;
        req.set_protocol_version(kProtocolVersion);
        req.set_client_name(options.clientName);
        req.set_watch_only(options.watchOnly);
        pb::HelloReply reply;
        try {
            call("Hello", [&](grpc::ClientContext* c) { return stub->Hello(c, req, &reply); }, false);
        } catch (const RemoteError& e) {
            throw RemoteError(e.code(), e.what(), true);
        }
        id = reply.client_id();
        instance = reply.instance();
        serverName = reply.server_name();
        programStartsRuns = reply.program_starts_runs();
        modelName = reply.model();
    }

    ~ClientImpl()
    {
        std::lock_guard life(lifeMutex);
        endSubscription();
    }

    void prepare(grpc::ClientContext* c, bool withId) const
    {
        if (!options.token.empty()) c->AddMetadata(kAuthorizationKey, "Bearer " + options.token);
        if (withId) c->AddMetadata(kClientIdKey, std::to_string(id));
        if (withId && !instance.empty()) c->AddMetadata(kInstanceKey, instance);
    }

    template <class F>
    void call(const char* what, F&& f, bool withId = true, std::chrono::seconds deadline = std::chrono::seconds(60))
    {
        grpc::ClientContext c;
        prepare(&c, withId);
        c.set_deadline(std::chrono::system_clock::now() + deadline);
        const grpc::Status s = f(&c);
        if (!s.ok()) throw error(what, s);
    }

    RemoteError error(const char* what, const grpc::Status& s) const
    {
        std::string message = s.error_message();
        if (s.error_code() == grpc::StatusCode::UNAVAILABLE)
            message = "the server at " + options.address + " is gone (" + message + ")";
        else if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED)
            message = options.address + " refused the client: " + message;
        return RemoteError(s.error_code(), message);
    }

    Tensor fetch(const pb::TensorRef& ref, const Client::Progress& progress)
    {
        grpc::ClientContext c;
        prepare(&c, true);
        std::unique_ptr<grpc::ClientReader<pb::TensorChunk>> reader(stub->FetchTensor(&c, ref));
        // However this ends early (a bad chunk, the progress callback throwing), the call is cancelled.
        struct Cancel {
            grpc::ClientContext& c;
            bool done = false;
            ~Cancel()
            {
                if (!done) c.TryCancel();
            }
        } cancel { c };
        pb::TensorChunk chunk;
        Tensor t;
        size_t received = 0, total = 0;
        bool header = false;
        while (reader->Read(&chunk)) {
            if (chunk.has_header()) {
                if (header) throw RemoteError(grpc::StatusCode::DATA_LOSS, "the server sent a second tensor header");
                try {
                    t = Tensor(fromProto(chunk.header().shape()), fromProto(chunk.header().dtype()));
                } catch (const std::exception& e) {
                    throw RemoteError(grpc::StatusCode::DATA_LOSS, std::string("the server's tensor header: ") + e.what());
                }
                total = chunk.total_bytes();
                if (total != t.bytes())
                    throw RemoteError(grpc::StatusCode::DATA_LOSS, "the server announced " + std::to_string(total)
                            + " bytes for a tensor of " + std::to_string(t.bytes()));
                header = true;
                continue;
            }
            if (!header || chunk.offset() != received || chunk.data().size() > total - received)
                throw RemoteError(grpc::StatusCode::DATA_LOSS, "the tensor's chunks arrived out of order");
            std::memcpy(static_cast<char*>(t.raw()) + received, chunk.data().data(), chunk.data().size());
            received += chunk.data().size();
            if (progress) progress(received, total);
        }
        cancel.done = true;
        const grpc::Status s = reader->Finish();
        if (!s.ok()) throw error("FetchTensor", s);
        if (!header || received != total)
            throw RemoteError(grpc::StatusCode::DATA_LOSS, "the tensor stream ended after " + std::to_string(received)
                    + " of " + std::to_string(total) + " bytes");
        return t;
    }

    // One subscription: its call, its reader and the thread reading it, shared with that thread (which
    // may outlive the client when a listener destroys it from an event).
    struct Subscription {
        grpc::ClientContext context;
        std::unique_ptr<grpc::ClientReader<pb::Event>> reader;
        std::thread thread;
    };

    void subscribe(RemoteListener* listener)
    {
        std::lock_guard life(lifeMutex);
        endSubscription();
        auto sub = std::make_shared<Subscription>();
        prepare(&sub->context, true);
        sub->reader = stub->Subscribe(&sub->context, pb::Empty());
        const std::string address = options.address;
        // The server answers once it has registered the stream: from then on no event is missed
        // (a run started right after subscribe() is heard from its start).
        auto registered = std::make_shared<std::promise<void>>();
        std::future<void> ready = registered->get_future();
        sub->thread = std::thread([sub, listener, address, registered] {
            sub->reader->WaitForInitialMetadata();
            registered->set_value();
            readEvents(*sub, listener, address);
        });
        (void)ready.wait_for(options.connectTimeout); // a server that does not answer: its events come when they come
        eventThread = sub->thread.get_id();
        current = std::move(sub);
    }

    void unsubscribe()
    {
        if (std::this_thread::get_id() == eventThread.load())
            throw UsageError("a RemoteListener cannot end its own subscription (unsubscribe, detach) from an event");
        std::lock_guard life(lifeMutex);
        endSubscription();
    }

    // lifeMutex held: tells the server (so that the broken stream is not a client that vanished),
    // cancels, joins.
    void endSubscription()
    {
        if (!current) return;
        std::shared_ptr<Subscription> sub = std::move(current);
        if (!detached) {
            grpc::ClientContext c;
            prepare(&c, true);
            c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
            pb::Empty r;
            (void)stub->Unsubscribe(&c, pb::Empty(), &r); // a server that is gone needs no notice
        }
        sub->context.TryCancel();
        if (sub->thread.get_id() == std::this_thread::get_id())
            sub->thread.detach(); // destroyed from its own event: it ends by itself
        else
            sub->thread.join();
    }

    static void readEvents(Subscription& sub, RemoteListener* l, const std::string& address)
    {
        // A listener's exception is its own: reported nowhere else, never blamed on the server.
        auto call = [](auto&& f) {
            try {
                f();
            } catch (...) {
            }
        };
        pb::Event e;
        while (sub.reader->Read(&e)) {
            std::optional<RemotePause> pause;
            std::vector<OutputInfo> outs;
            try { // decode first: a malformed event is the server's
                if (e.what_case() == pb::Event::kPaused) pause = fromProto(e.paused());
                if (e.what_case() == pb::Event::kRunFinished)
                    for (const pb::TensorInfo& t : e.run_finished().outputs())
                        outs.push_back({ fromProto(t.shape()), fromProto(t.dtype()), fromProto(t.stats()) });
            } catch (const std::exception& ex) {
                const std::string what = std::string("malformed event from the server: ") + ex.what();
                call([&] { l->runFailed(0, what); });
                continue;
            }
            switch (e.what_case()) {
            case pb::Event::kRunStarted: call([&] { l->runStarted(e.run_started()); }); break;
            case pb::Event::kPaused: call([&] { l->paused(*pause); }); break;
            case pb::Event::kRunFinished:
                call([&] { l->runFinished(e.run_finished().run_id(), e.run_finished().stopped(), outs); });
                break;
            case pb::Event::kRunFailed: call([&] { l->runFailed(e.failed_run_id(), e.run_failed()); }); break;
            case pb::Event::kControl: call([&] { l->controlChanged(fromProto(e.control())); }); break;
            case pb::Event::kTrainStep: {
                debug::Session::TrainStepResult r;
                r.runId = e.train_step().run_id();
                r.completed = e.train_step().completed();
                r.updated = e.train_step().updated();
                r.lossSum = e.train_step().loss_sum();
                r.batch = e.train_step().batch();
                r.error = e.train_step().error();
                call([&] { l->trainStep(r); });
                break;
            }
            default: break; // a newer server's event: ignored
            }
        }
        const grpc::Status s = sub.reader->Finish();
        const std::string why = s.ok() ? "the server ended the event stream"
            : s.error_code() == grpc::StatusCode::CANCELLED ? "unsubscribed"
            : s.error_code() == grpc::StatusCode::UNAVAILABLE ? "the server at " + address + " is gone (" + s.error_message() + ")"
                                                             : s.error_message();
        call([&] { l->disconnected(why); });
    }

    // A long call (a comparison, an explanation) that cancelPending() ends: registered for its life.
    struct PendingCall {
        PendingCall(ClientImpl& impl, grpc::ClientContext& c)
            : impl(impl)
            , c(c)
        {
            std::lock_guard lock(impl.pendingMutex);
            if (impl.cancelled) c.TryCancel(); // let go before it began
            impl.pending.insert(&c);
        }
        ~PendingCall()
        {
            std::lock_guard lock(impl.pendingMutex);
            impl.pending.erase(&c);
        }
        ClientImpl& impl;
        grpc::ClientContext& c;
    };

    void cancelPending()
    {
        std::lock_guard lock(pendingMutex);
        cancelled = true;
        for (grpc::ClientContext* c : pending)
            c->TryCancel();
    }

    ConnectOptions options;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<pb::Debugger::Stub> stub;
    uint64_t id = 0;
    std::string instance; // the server's run that gave the id
    std::string serverName, modelName;
    bool programStartsRuns = false;
    bool detached = false;

    std::mutex pendingMutex; // guards pending
    std::set<grpc::ClientContext*> pending;
    bool cancelled = false; // cancelPending() came: later long calls end at once too
    std::mutex lifeMutex; // subscribe / unsubscribe, one at a time
    std::shared_ptr<Subscription> current;
    std::atomic<std::thread::id> eventThread {}; // the current subscription's (read without the lock)
};

} // namespace opscope::remote
