// remote::Client: what a client gives a server to compute with, and what the server computes for
// it: inputs (SetInputs), comparisons (Compare, EndComparison, their tensors) and explanations (Explain).

#include "remote/client_impl.h"

#include <algorithm>

namespace opscope::remote {

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

debug::CompareOutcome Client::compare(const debug::CompareRequest& request)
{
    if (!request.inputsA.empty())
        throw RemoteError(grpc::StatusCode::INVALID_ARGUMENT, "a server compares on its own inputs (run A's cannot be sent)");
    pb::CompareRequest req;
    toProto(request, &req);
    pb::CompareReply reply;
    // Both runs are recorded there: as long as two runs of the model take.
    m_impl->call("Compare", [&](grpc::ClientContext* c) {
            ClientImpl::PendingCall pending(*m_impl, *c);
            return m_impl->stub->Compare(c, req, &reply);
        }, true, std::chrono::seconds(1800));
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

Tensor Client::fetchCompared(debug::CompareSide side, const std::string& tensorName, const Progress& progress, uint64_t comparison)
{
    pb::TensorRef ref;
    ref.set_pin_comparison(comparison);
    if (side == debug::CompareSide::B)
        ref.set_compared_b(tensorName);
    else
        ref.set_compared_a(tensorName);
    return m_impl->fetch(ref, progress);
}

debug::Explanation Client::explain(const debug::ExplainOptions& options)
{
    pb::ExplainRequest req;
    toProto(options, &req);
    grpc::ClientContext c;
    m_impl->prepare(&c, true);
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1800)); // occlusion of a large input
    ClientImpl::PendingCall pending(*m_impl, c);
    std::unique_ptr<grpc::ClientReader<pb::ExplainProgress>> reader(m_impl->stub->Explain(&c, req));
    pb::ExplainProgress message;
    std::optional<pb::Explanation> result;
    bool cancelled = false;
    while (reader->Read(&message)) {
        if (message.has_result()) {
            result = std::move(*message.mutable_result());
            continue;
        }
        if (options.progress && !cancelled && !options.progress(message.done(), message.total())) {
            cancelled = true;
            c.TryCancel(); // the server stops at its next progress
        }
    }
    const grpc::Status s = reader->Finish();
    if (cancelled) {
        debug::Explanation e;
        e.method = options.method;
        e.cancelled = true;
        return e;
    }
    if (!s.ok()) throw m_impl->error("Explain", s);
    if (!result) throw RemoteError(grpc::StatusCode::DATA_LOSS, "the server's explanation ended without its result");
    try {
        return fromProto(*result);
    } catch (const std::exception& e) {
        throw RemoteError(grpc::StatusCode::DATA_LOSS, std::string("the server's explanation: ") + e.what());
    }
}

void Client::cancelPending() { m_impl->cancelPending(); }

} // namespace opscope::remote
