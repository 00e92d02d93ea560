// The Explain call of the Debugger service: ServeOptions::explainer on a thread of the server's
// (the session's worker goes on), on the inputs the session runs on now, with progress streamed and
// the client's cancel heard.

#include "remote/protocol.h"
#include "remote/server_impl.h"

#include <chrono>

namespace opscope::debug {

using grpc::Status;
using grpc::StatusCode;

Status ServerImpl::Explain(grpc::ServerContext* ctx, const pb::ExplainRequest* req, grpc::ServerWriter<pb::ExplainProgress>* writer)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, false); !s.ok()) return s;
    LongCall busy(*this, id);
    if (!m_options.explainer)
        return { StatusCode::UNIMPLEMENTED,
            "this server cannot explain: it serves a session without a model it can load again (a training loop, or a program's own session)" };
    ExplainOptions options;
    if (Status s = guarded([&] {
            options = remote::fromProto(*req);
            return Status::OK;
        });
        !s.ok())
        return s;
    // Progress at most every 100 ms (and the last); a cancelled call stops the work.
    auto last = std::chrono::steady_clock::time_point {};
    options.progress = [&](int64_t done, int64_t total) {
        if (ctx->IsCancelled()) return false;
        if (total == 0) return true; // waiting to begin: nothing to report
        const auto now = std::chrono::steady_clock::now();
        if (done < total && now - last < std::chrono::milliseconds(100)) return true;
        last = now;
        pb::ExplainProgress p;
        p.set_done(done);
        p.set_total(total);
        return writer->Write(p);
    };
    Explanation e;
    if (Status s = guarded([&] {
            e = m_options.explainer(m_session.inputs(), options);
            return Status::OK;
        }, "out of memory explaining");
        !s.ok())
        return s;
    if (e.cancelled || ctx->IsCancelled()) return { StatusCode::CANCELLED, "the explanation was cancelled" };
    pb::ExplainProgress done;
    remote::toProto(e, done.mutable_result());
    if (done.ByteSizeLong() > static_cast<size_t>(remote::kMaxReplyBytes) - 1024)
        return { StatusCode::RESOURCE_EXHAUSTED,
            "the explanation and its input take " + std::to_string(done.ByteSizeLong()) + " bytes, more than a reply may ("
                + std::to_string(remote::kMaxReplyBytes) + ")" };
    writer->Write(done);
    return Status::OK;
}

} // namespace opscope::debug
