// The comparison's calls of the Debugger service: Compare runs ServeOptions::comparer on a thread
// of the server's (the session's worker goes on), keeps both runs and makes run B the session's
// reference; EndComparison forgets them.

#include "core/error.h"
#include "remote/server_impl.h"

namespace opscope::debug {

using grpc::Status;
using grpc::StatusCode;

Status ServerImpl::Compare(grpc::ServerContext* ctx, const pb::CompareRequest* req, pb::CompareReply* reply)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    LongCall busy(*this, id);
    if (!m_options.comparer)
        return { StatusCode::UNIMPLEMENTED,
            "this server cannot compare: it serves a session without a model it can load again (a training loop, or a program's own session)" };
    CompareRequest request;
    try {
        request = remote::fromProto(*req);
    } catch (const std::exception& e) {
        return { StatusCode::INVALID_ARGUMENT, e.what() };
    }
    // Run A on the inputs the served session runs on now (a client may have given others).
    request.inputsA = m_session.inputs();
    const uint64_t ticket = m_comparison.begin();
    log("client " + std::to_string(id) + " compares"
        + (request.source == CompareRequest::Source::OtherModel ? " with " + request.modelB
                : request.source == CompareRequest::Source::Saved ? " with the saved run " + request.savedB
                                                                  : std::string(" the model with itself computing otherwise")));
    std::shared_ptr<CompareOutcome> outcome;
    if (Status s = guarded([&] {
            outcome = m_options.comparer(request);
            return Status::OK;
        }, "out of memory comparing the runs");
        !s.ok())
        return s;
    if (ctx->IsCancelled()) return { StatusCode::CANCELLED, "the comparison was cancelled: not kept" };
    outcome->id = ticket;
    m_comparison.finish(ticket, outcome);
    remote::toProto(*outcome, reply);
    return Status::OK;
}

Status ServerImpl::EndComparison(grpc::ServerContext* ctx, const pb::Empty*, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    m_comparison.end();
    return Status::OK;
}

} // namespace opscope::debug
