// SetInputs: a client gives the served session the inputs of its next runs, streamed as tensors by
// position; those it does not give are the server's own (what it started with).

#include "core/error.h"
#include "remote/protocol.h"
#include "remote/server_impl.h"

#include "core/checked.h"

#include <cstring>

namespace {
// The elements of a shape, or nothing when their count overflows.
std::optional<int64_t> shapeElements(const opscope::Shape& shape)
{
    int64_t n = 1;
    for (int64_t d : shape.dims()) {
        const std::optional<int64_t> m = opscope::checkedMul(n, d);
        if (!m) return std::nullopt;
        n = *m;
    }
    return n;
}
}

namespace opscope::debug {

using grpc::Status;
using grpc::StatusCode;

Status ServerImpl::SetInputs(grpc::ServerContext* ctx, grpc::ServerReader<pb::TensorChunk>* reader, pb::Empty*)
{
    uint64_t id = 0;
    if (Status s = admit(ctx, &id, true); !s.ok()) return s;
    LongCall busy(*this, id);
    // Whatever the engine throws (a bad type, a shape it cannot hold) is a status naming it.
    try {
        return readInputs(reader);
    } catch (const std::bad_alloc&) {
        return { StatusCode::RESOURCE_EXHAUSTED, "out of memory for the inputs" };
    } catch (const ResourceError& e) {
        return { StatusCode::RESOURCE_EXHAUSTED, e.what() };
    } catch (const std::exception& e) {
        return { StatusCode::INVALID_ARGUMENT, e.what() };
    }
}

Status ServerImpl::readInputs(grpc::ServerReader<pb::TensorChunk>* reader)
{
    if (!m_options.clientsStart)
        return { StatusCode::FAILED_PRECONDITION, "this server's program feeds the model its own inputs (a training loop's batches)" };
    const std::vector<std::string> names = m_session.inputNames();
    std::vector<std::optional<Tensor>> given;
    size_t total = 0;
    std::optional<size_t> current; // the input whose bytes arrive
    size_t received = 0;
    pb::TensorChunk chunk;
    auto what = [&](size_t i) { return "input " + std::to_string(i) + (i < names.size() ? " (" + names[i] + ")" : std::string()); };
    while (reader->Read(&chunk)) {
        if (chunk.has_header()) {
            if (current && received != given[*current]->bytes())
                return { StatusCode::INVALID_ARGUMENT, what(*current) + ": its bytes ended after " + std::to_string(received) + " of "
                        + std::to_string(given[*current]->bytes()) };
            const pb::TensorInfo& h = chunk.header();
            if (h.index() < 0 || static_cast<size_t>(h.index()) >= names.size())
                return { StatusCode::INVALID_ARGUMENT,
                    "input index " + std::to_string(h.index()) + ": the model has " + std::to_string(names.size())
                        + (names.size() == 1 ? " input" : " inputs") };
            const size_t i = static_cast<size_t>(h.index());
            if (i < given.size() && given[i]) return { StatusCode::INVALID_ARGUMENT, what(i) + " was given twice" };
            Shape shape;
            try {
                shape = remote::fromProto(h.shape());
                if (!shape.known()) throw UsageError("shape " + shape.str() + " has an unknown dimension");
            } catch (const std::exception& e) {
                return { StatusCode::INVALID_ARGUMENT, what(i) + ": " + e.what() };
            }
            const DType dtype = remote::fromProto(h.dtype());
            const std::optional<int64_t> elements = shapeElements(shape);
            const std::optional<int64_t> product = elements ? checkedMul(*elements, static_cast<int64_t>(dtypeSize(dtype))) : std::nullopt;
            if (!product)
                return { StatusCode::RESOURCE_EXHAUSTED, what(i) + ": shape " + shape.str() + " has more elements than an input may" };
            const uint64_t bytes = static_cast<uint64_t>(*product);
            if (chunk.total_bytes() != bytes)
                return { StatusCode::INVALID_ARGUMENT, what(i) + ": " + std::to_string(chunk.total_bytes()) + " bytes announced for "
                        + shape.str() + " " + dtypeName(dtype) + " (" + std::to_string(bytes) + ")" };
            if (bytes > remote::kMaxInputBytes - total)
                return { StatusCode::RESOURCE_EXHAUSTED,
                    "the inputs exceed " + std::to_string(remote::kMaxInputBytes >> 20) + " MiB (at " + what(i) + ")" };
            total += bytes;
            if (given.size() <= i) given.resize(i + 1);
            given[i] = Tensor(shape, dtype);
            current = i;
            received = 0;
            continue;
        }
        if (!current || chunk.offset() != received || chunk.data().size() > given[*current]->bytes() - received)
            return { StatusCode::INVALID_ARGUMENT, "an input's bytes arrived out of order or beyond its size" };
        std::memcpy(static_cast<char*>(given[*current]->raw()) + received, chunk.data().data(), chunk.data().size());
        received += chunk.data().size();
    }
    if (current && received != given[*current]->bytes())
        return { StatusCode::INVALID_ARGUMENT, what(*current) + ": its bytes ended after " + std::to_string(received) + " of "
                + std::to_string(given[*current]->bytes()) };
    std::lock_guard lock(m_inputsMutex);
    if (!m_ownInputs) m_ownInputs = m_session.inputs();
    try {
        m_session.setInputs(mergeInputs(*m_ownInputs, given, names.size()));
    } catch (const UsageError& e) {
        return { StatusCode::FAILED_PRECONDITION, e.what() };
    }
    return Status::OK;
}

} // namespace opscope::debug
