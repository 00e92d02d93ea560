// Between an explanation's options and result (debug/explain.h) and the wire's messages.

#include "remote/convert.h"

#include "core/error.h"
#include "tensor/memory_limit.h"

#include <cstring>

namespace opscope::remote {

void toProto(const debug::ExplainOptions& o, pb::ExplainRequest* out)
{
    out->set_method(debug::methodName(o.method));
    out->set_class_index(o.classIndex);
    out->set_layer(o.layer);
    out->set_patch(o.patch);
    out->set_stride(o.stride);
    out->set_fill(o.fill);
    out->set_batch(o.batch);
    out->set_top_k(o.topK);
}

debug::ExplainOptions fromProto(const pb::ExplainRequest& m)
{
    debug::ExplainOptions o;
    o.method = debug::parseMethod(m.method());
    o.classIndex = m.class_index();
    o.layer = m.layer();
    if (m.patch() < 0 || m.stride() < 0 || m.batch() < 0 || m.top_k() < 0)
        throw UsageError("patch, stride, batch and top_k cannot be negative");
    o.patch = m.patch();
    o.stride = m.stride();
    o.fill = m.fill();
    if (m.batch() > 0) o.batch = m.batch();
    if (m.top_k() > 0) o.topK = m.top_k();
    return o;
}

void toProto(const Tensor& t, pb::DenseTensor* out)
{
    toProto(t.shape(), out->mutable_shape());
    out->set_dtype(toProto(t.dtype()));
    out->set_data(static_cast<const char*>(t.raw()), t.bytes());
}

Tensor fromProto(const pb::DenseTensor& m)
{
    const Shape shape = fromProto(m.shape());
    const DType dtype = fromProto(m.dtype());
    const int64_t bytes = tensorBytes(shape, static_cast<int64_t>(dtypeSize(dtype)));
    if (bytes < 0 || static_cast<uint64_t>(bytes) != m.data().size())
        throw UsageError("a tensor of " + shape.str() + " came with " + std::to_string(m.data().size()) + " bytes");
    Tensor t(shape, dtype);
    if (bytes > 0) std::memcpy(t.raw(), m.data().data(), static_cast<size_t>(bytes));
    return t;
}

void toProto(const debug::Explanation& e, pb::Explanation* out)
{
    out->set_method(debug::methodName(e.method));
    out->set_class_index(e.classIndex);
    out->set_score(e.score);
    for (const auto& [k, score] : e.top) {
        pb::ClassScore* c = out->add_top();
        c->set_class_index(k);
        c->set_score(score);
    }
    if (e.heat.defined()) toProto(e.heat, out->mutable_heat());
    if (e.raw.defined()) toProto(e.raw, out->mutable_raw());
    out->set_layer(e.layer);
    if (e.input.defined()) toProto(e.input, out->mutable_input());
}

debug::Explanation fromProto(const pb::Explanation& m)
{
    debug::Explanation e;
    e.method = debug::parseMethod(m.method());
    e.classIndex = m.class_index();
    e.score = m.score();
    for (const pb::ClassScore& c : m.top())
        e.top.emplace_back(c.class_index(), c.score());
    if (m.has_heat()) e.heat = fromProto(m.heat());
    if (m.has_raw()) e.raw = fromProto(m.raw());
    e.layer = m.layer();
    if (m.has_input()) e.input = fromProto(m.input());
    return e;
}

} // namespace opscope::remote
