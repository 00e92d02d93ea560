#include "remote/client.h"

#include "opscope_debug.grpc.pb.h"
#include "core/error.h"
#include "remote/protocol.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

namespace opscope::remote {

namespace {
/// How long a summary or a window of values may take (a 100 M-element summary takes well under one).
constexpr std::chrono::seconds kReadDeadline { 15 };
} // namespace


RemoteError::RemoteError(int code, const std::string& message, bool atConnect)
    : Error(message)
    , m_code(code)
    , m_atConnect(atConnect)
{
}

bool RemoteError::refused() const
{
    return m_atConnect || m_code == grpc::StatusCode::UNAUTHENTICATED || m_code == grpc::StatusCode::PERMISSION_DENIED;
}

namespace {
    ControlInfo fromProto(const pb::ControlState& c)
    {
        ControlInfo r;
        r.holder = c.holder();
        r.holderName = c.holder_name();
        r.youHold = c.you_hold();
        for (const pb::ClientInfo& ci : c.clients())
            r.clients.push_back({ ci.id(), ci.name(), ci.peer(), ci.subscribed() });
        return r;
    }

    std::string readPem(const std::string& path)
    {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw RemoteError(grpc::StatusCode::INVALID_ARGUMENT, path + ": cannot read the certificate");
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
    }
}

std::string readTokenFile(const std::string& path)
{
    std::ifstream f(path);
    if (!f) throw UsageError("--token-file " + path + ": cannot be read");
    std::string token;
    std::getline(f, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
        token.pop_back();
    if (token.empty()) throw UsageError("--token-file " + path + ": the file holds no token (its first line is empty)");
    return token;
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

    ConnectOptions options;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<pb::Debugger::Stub> stub;
    uint64_t id = 0;
    std::string instance; // the server's run that gave the id
    std::string serverName, modelName;
    bool programStartsRuns = false;
    bool detached = false;

    std::mutex lifeMutex; // subscribe / unsubscribe, one at a time
    std::shared_ptr<Subscription> current;
    std::atomic<std::thread::id> eventThread {}; // the current subscription's (read without the lock)
};

Client::Client(ConnectOptions options)
    : m_impl(std::make_unique<ClientImpl>(std::move(options)))
{
}

Client::~Client()
{
    if (!m_impl->detached) {
        try {
            detach();
        } catch (const std::exception&) { // the server is gone: nothing to leave
        }
    }
}

uint64_t Client::clientId() const { return m_impl->id; }
std::string Client::serverName() const { return m_impl->serverName; }
bool Client::programStartsRuns() const { return m_impl->programStartsRuns; }
std::string Client::modelName() const { return m_impl->modelName; }
const ConnectOptions& Client::options() const { return m_impl->options; }

debug::ModelDescription Client::model()
{
    pb::ModelInfo m;
    m_impl->call("GetModel", [&](grpc::ClientContext* c) { return m_impl->stub->GetModel(c, pb::Empty(), &m); });
    try {
        return fromProto(m);
    } catch (const std::exception& e) {
        throw RemoteError(grpc::StatusCode::DATA_LOSS, std::string("the server's model: ") + e.what());
    }
}

void Client::setOptions(const debug::SessionOptions& options)
{
    pb::Options o;
    toProto(options, &o);
    pb::Empty r;
    m_impl->call("SetOptions", [&](grpc::ClientContext* c) { return m_impl->stub->SetOptions(c, o, &r); });
}

uint64_t Client::start(debug::StartMode mode, bool trainStep)
{
    pb::StartRequest req;
    req.set_pause_at_entry(mode == debug::StartMode::PauseAtEntry);
    req.set_train_step(trainStep);
    pb::StartReply reply;
    m_impl->call("Start", [&](grpc::ClientContext* c) { return m_impl->stub->Start(c, req, &reply); });
    return reply.run_id();
}

void Client::setInputs(const std::vector<std::optional<Tensor>>& inputs)
{
    grpc::ClientContext c;
    m_impl->prepare(&c, true);
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(600));
    pb::Empty reply;
    std::unique_ptr<grpc::ClientWriter<pb::TensorChunk>> writer(m_impl->stub->SetInputs(&c, &reply));
    // A write fails once the server has refused: Finish() then says why.
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i]) continue;
        const Tensor& t = *inputs[i];
        pb::TensorChunk head;
        pb::TensorInfo* info = head.mutable_header();
        info->set_index(static_cast<int32_t>(i));
        toProto(t.shape(), info->mutable_shape());
        info->set_dtype(toProto(t.dtype()));
        head.set_total_bytes(t.bytes());
        bool ok = writer->Write(head);
        const char* data = static_cast<const char*>(t.raw());
        pb::TensorChunk chunk;
        for (size_t offset = 0; ok && offset < t.bytes(); offset += kRequestChunkBytes) {
            const size_t n = std::min(kRequestChunkBytes, t.bytes() - offset);
            chunk.set_offset(offset);
            chunk.mutable_data()->assign(data + offset, n);
            ok = writer->Write(chunk);
        }
        if (!ok) break;
    }
    writer->WritesDone();
    const grpc::Status s = writer->Finish();
    // A server older than SetInputs runs on its own inputs: what was asked when none was given.
    const bool ownAsked = std::none_of(inputs.begin(), inputs.end(), [](const std::optional<Tensor>& t) { return t.has_value(); });
    if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED && ownAsked) return;
    if (!s.ok()) throw m_impl->error("SetInputs", s);
}

namespace {
    void command(ClientImpl& impl, pb::CommandRequest::Kind kind, const std::string& node = {})
    {
        pb::CommandRequest req;
        req.set_kind(kind);
        req.set_node(node);
        pb::CommandReply reply;
        impl.call("Command", [&](grpc::ClientContext* c) { return impl.stub->Command(c, req, &reply); });
    }

    pb::TensorRef refOf(const std::string& name, int output = -1, const debug::TensorPin& pin = {})
    {
        pb::TensorRef r;
        if (output >= 0)
            r.set_output(output);
        else
            r.set_name(name);
        r.set_pin_run(pin.run);
        r.set_pin_pause(pin.pauseSequence);
        return r;
    }
}

void Client::continueRun() { command(*m_impl, pb::CommandRequest::CONTINUE); }
void Client::step() { command(*m_impl, pb::CommandRequest::STEP); }
void Client::stepOver() { command(*m_impl, pb::CommandRequest::STEP_OVER); }
void Client::stepOut() { command(*m_impl, pb::CommandRequest::STEP_OUT); }
void Client::runTo(const std::string& node) { command(*m_impl, pb::CommandRequest::RUN_TO, node); }
void Client::pause() { command(*m_impl, pb::CommandRequest::PAUSE); }
void Client::stop() { command(*m_impl, pb::CommandRequest::STOP); }

int Client::addBreakpoint(const debug::Breakpoint& b)
{
    pb::Breakpoint req, reply;
    toProto(b, &req);
    m_impl->call("AddBreakpoint", [&](grpc::ClientContext* c) { return m_impl->stub->AddBreakpoint(c, req, &reply); });
    return reply.id();
}

void Client::updateBreakpoint(int id, const debug::Breakpoint& b)
{
    pb::Breakpoint req;
    toProto(b, &req);
    req.set_id(id);
    pb::Empty r;
    m_impl->call("UpdateBreakpoint", [&](grpc::ClientContext* c) { return m_impl->stub->UpdateBreakpoint(c, req, &r); });
}

void Client::removeBreakpoint(int id)
{
    pb::BreakpointId req;
    req.set_id(id);
    pb::Empty r;
    m_impl->call("RemoveBreakpoint", [&](grpc::ClientContext* c) { return m_impl->stub->RemoveBreakpoint(c, req, &r); });
}

void Client::clearBreakpoints()
{
    pb::Empty r;
    m_impl->call("ClearBreakpoints", [&](grpc::ClientContext* c) { return m_impl->stub->ClearBreakpoints(c, pb::Empty(), &r); });
}

std::vector<debug::Breakpoint> Client::breakpoints()
{
    pb::BreakpointList list;
    m_impl->call("ListBreakpoints", [&](grpc::ClientContext* c) { return m_impl->stub->ListBreakpoints(c, pb::Empty(), &list); });
    std::vector<debug::Breakpoint> r;
    for (const pb::Breakpoint& b : list.breakpoints())
        r.push_back(fromProto(b));
    return r;
}

Client::State Client::state()
{
    pb::SessionState s;
    m_impl->call("GetState", [&](grpc::ClientContext* c) { return m_impl->stub->GetState(c, pb::Empty(), &s); });
    State r;
    r.running = s.running();
    r.lastRunId = s.last_run_id();
    if (s.has_pause()) r.pause = fromProto(s.pause());
    r.control = fromProto(s.control());
    r.options = fromProto(s.options(), {});
    return r;
}

namespace {
    ControlInfo controlCall(ClientImpl& impl, pb::ControlRequest::Action action, uint64_t to = 0)
    {
        pb::ControlRequest req;
        req.set_action(action);
        req.set_to_client(to);
        pb::ControlState s;
        impl.call("Control", [&](grpc::ClientContext* c) { return impl.stub->Control(c, req, &s); });
        return fromProto(s);
    }
}

ControlInfo Client::control() { return controlCall(*m_impl, pb::ControlRequest::QUERY); }
ControlInfo Client::takeControl() { return controlCall(*m_impl, pb::ControlRequest::TAKE); }
ControlInfo Client::releaseControl() { return controlCall(*m_impl, pb::ControlRequest::RELEASE); }
ControlInfo Client::handOver(uint64_t toClient) { return controlCall(*m_impl, pb::ControlRequest::HAND_OVER, toClient); }

debug::Session::TensorSummary Client::summary(
    const std::string& tensorName, int bins, debug::HistogramScale scale, double lo, double hi, const debug::TensorPin& pin)
{
    pb::SummaryRequest req;
    *req.mutable_tensor() = refOf(tensorName, -1, pin);
    req.set_bins(bins);
    req.set_log_magnitude(scale == debug::HistogramScale::LogMagnitude);
    req.set_lo(lo);
    req.set_hi(hi);
    pb::TensorSummary s;
    // A view waits for these (and a window closing waits for the one in flight): a server that no
    // longer answers is given up sooner than a command.
    m_impl->call("GetSummary", [&](grpc::ClientContext* c) { return m_impl->stub->GetSummary(c, req, &s); }, true, kReadDeadline);
    return { fromProto(s.shape()), fromProto(s.stats()), fromProto(s.histogram()) };
}

debug::TensorSlice Client::slice(const std::string& tensorName, const debug::SliceRequest& request, const debug::TensorPin& pin)
{
    pb::SliceRequest req;
    *req.mutable_tensor() = refOf(tensorName, -1, pin);
    for (int64_t i : request.index)
        req.add_index(i);
    req.set_row_begin(request.rowBegin);
    req.set_row_count(request.rowCount);
    req.set_col_begin(request.colBegin);
    req.set_col_count(request.colCount);
    pb::Slice s;
    m_impl->call("GetSlice", [&](grpc::ClientContext* c) { return m_impl->stub->GetSlice(c, req, &s); }, true, kReadDeadline);
    return fromProto(s);
}

Tensor Client::fetch(const std::string& tensorName, const Progress& progress)
{
    return m_impl->fetch(refOf(tensorName), progress);
}

Tensor Client::fetchOutput(int index, const Progress& progress)
{
    return m_impl->fetch(refOf({}, index), progress);
}

debug::RunRecord Client::record()
{
    pb::Record r;
    m_impl->call("GetRecord", [&](grpc::ClientContext* c) { return m_impl->stub->GetRecord(c, pb::Empty(), &r); });
    return fromProto(r);
}

debug::CompareOutcome Client::compare(const debug::CompareRequest& request)
{
    if (!request.inputsA.empty())
        throw RemoteError(grpc::StatusCode::INVALID_ARGUMENT, "a server compares on its own inputs (run A's cannot be sent)");
    pb::CompareRequest req;
    toProto(request, &req);
    pb::CompareReply reply;
    // Both runs are recorded there: as long as two runs of the model take.
    m_impl->call("Compare", [&](grpc::ClientContext* c) { return m_impl->stub->Compare(c, req, &reply); }, true,
        std::chrono::seconds(1800));
    try {
        return fromProto(reply);
    } catch (const std::exception& e) {
        throw RemoteError(grpc::StatusCode::DATA_LOSS, std::string("the server's comparison: ") + e.what());
    }
}

void Client::endComparison()
{
    pb::Empty r;
    m_impl->call("EndComparison", [&](grpc::ClientContext* c) { return m_impl->stub->EndComparison(c, pb::Empty(), &r); });
}

Tensor Client::fetchCompared(debug::CompareSide side, const std::string& tensorName, const Progress& progress)
{
    pb::TensorRef ref;
    if (side == debug::CompareSide::B)
        ref.set_compared_b(tensorName);
    else
        ref.set_compared_a(tensorName);
    return m_impl->fetch(ref, progress);
}

void Client::subscribe(RemoteListener* listener) { m_impl->subscribe(listener); }
void Client::unsubscribe() { m_impl->unsubscribe(); }

void Client::detach()
{
    // Detach first: the server ends the client's event streams itself.
    pb::Empty r;
    m_impl->detached = true;
    try {
        m_impl->call("Detach", [&](grpc::ClientContext* c) { return m_impl->stub->Detach(c, pb::Empty(), &r); });
    } catch (...) {
        m_impl->unsubscribe();
        throw;
    }
    m_impl->unsubscribe();
}

} // namespace opscope::remote
