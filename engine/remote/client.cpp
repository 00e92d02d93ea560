// remote::Client: attaching, the session's commands, breakpoints, control and reads (the
// connection itself: client_impl.h; inputs, comparisons and explanations: client_compute.cpp).

#include "remote/client_impl.h"

namespace opscope::remote {

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

Tensor Client::fetch(const std::string& tensorName, const Progress& progress, const debug::TensorPin& pin)
{
    return m_impl->fetch(refOf(tensorName, -1, pin), progress);
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
