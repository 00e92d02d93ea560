#include "ops/dnnl/post_ops.h"

#include "ops/dnnl/dnnl_common.h"
#include "ops/elemwise/clip_value.h"

#include <algorithm>

namespace opscope::dnnlutil {

bool PostOpList::takes(std::span<const PostOp> ops)
{
    const auto isSum = [](const PostOp& o) { return o.kind == PostOp::Kind::Sum; };
    const auto keepsNaN = [](const PostOp& o) { return o.keepNaN; };
    // A matrix product's: a bias along the last axis, a GELU in pieces.
    const auto isProducts = [](const PostOp& o) {
        return o.kind == PostOp::Kind::Bias || o.kind == PostOp::Kind::GeluParts || o.kind == PostOp::Kind::Depthwise;
    };
    return std::count_if(ops.begin(), ops.end(), isSum) <= 1 && std::none_of(ops.begin(), ops.end(), isProducts)
        && (ops.empty() || std::none_of(ops.begin(), ops.end() - 1, keepsNaN));
}

void PostOpList::set(std::span<const PostOp> ops, int outputRank, int64_t channels)
{
    m_ops.assign(ops.begin(), ops.end());
    m_attr = dnnl::primitive_attr();
    m_binaryArgs.clear();
    m_binaryMemory.clear();
    m_sum = false;
    m_own = !m_ops.empty() && m_ops.back().keepNaN;
    m_clipLo = m_clipHi = nullptr;
    m_finishesFinite = false;
    if (m_ops.empty()) return;
    if (m_own) {
        const auto finiteOnFinite = [](const PostOp& o) {
            return o.kind == PostOp::Kind::Relu || o.kind == PostOp::Kind::Sigmoid || o.kind == PostOp::Kind::Tanh;
        };
        const PostOp& last = m_ops.back();
        m_finishesFinite = (last.kind == PostOp::Kind::Relu || last.kind == PostOp::Kind::Clip)
            && std::all_of(m_ops.begin(), m_ops.end() - 1, finiteOnFinite);
    }
    Shape channel(std::vector<int64_t>(static_cast<size_t>(outputRank), 1));
    channel[1] = channels;
    m_perChannel = plainDesc(channel);
    const size_t count = m_ops.size() - (m_own ? 1 : 0);
    // Where each per-channel operand sits in the list: one post-op per op, two for an Affine.
    int position = 0;
    for (const PostOp& op : std::span<const PostOp>(m_ops).first(count)) {
        m_sum = m_sum || op.kind == PostOp::Kind::Sum;
        if (op.kind != PostOp::Kind::Affine) {
            ++position;
            continue;
        }
        for (int k = 0; k < 2; ++k) {
            m_binaryArgs.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(position++) | DNNL_ARG_SRC_1);
            m_binaryMemory.push_back(dnnl::memory(m_perChannel, cpuEngine(), DNNL_MEMORY_NONE));
        }
    }
    m_attr.set_post_ops(build(count));
}

namespace {
    dnnl::algorithm eltwise(PostOp::Kind k)
    {
        switch (k) {
        case PostOp::Kind::Sigmoid:
            return dnnl::algorithm::eltwise_logistic;
        case PostOp::Kind::Tanh:
            return dnnl::algorithm::eltwise_tanh;
        case PostOp::Kind::Gelu:
            return dnnl::algorithm::eltwise_gelu_erf;
        case PostOp::Kind::Clip:
            return dnnl::algorithm::eltwise_clip;
        default:
            return dnnl::algorithm::eltwise_relu;
        }
    }
}

dnnl::post_ops PostOpList::build(size_t count) const
{
    dnnl::post_ops list;
    for (const PostOp& op : std::span<const PostOp>(m_ops).first(count)) {
        if (op.kind == PostOp::Kind::Sum)
            list.append_sum(1.0f);
        else if (op.kind == PostOp::Kind::Affine)
            for (auto alg : { dnnl::algorithm::binary_mul, dnnl::algorithm::binary_add })
                list.append_binary(alg, m_perChannel);
        else
            list.append_eltwise(1.0f, eltwise(op.kind), op.lo, op.hi);
    }
    return list;
}

std::pair<float, float> PostOpList::finishBounds() const
{
    const PostOp& op = m_ops.back();
    if (op.kind != PostOp::Kind::Clip) return { 0.0f, 0.0f };
    return { m_clipLo ? m_clipLo->view().data()[0] : op.lo, m_clipHi ? m_clipHi->view().data()[0] : op.hi };
}

dnnl::primitive_attr PostOpList::attrWithFinish(std::pair<float, float> bounds) const
{
    dnnl::post_ops list = build(m_ops.size() - 1);
    const PostOp& op = m_ops.back();
    list.append_eltwise(1.0f, eltwise(op.kind), op.kind == PostOp::Kind::Clip ? bounds.first : 0.0f, bounds.second);
    dnnl::primitive_attr attr;
    attr.set_post_ops(list);
    return attr;
}

void PostOpList::addArgs(std::unordered_map<int, dnnl::memory>& args) const
{
    for (size_t k = 0; k < m_binaryArgs.size(); ++k)
        args[m_binaryArgs[k]] = m_binaryMemory[k]; // a handle: bind() reaches the same object
}

int PostOpList::residualIndex(size_t own) const
{
    size_t extra = own;
    for (const PostOp& op : m_ops) {
        if (op.kind == PostOp::Kind::Sum) return static_cast<int>(extra);
        extra += static_cast<size_t>(op.extraInputs());
    }
    return -1;
}

const Tensor* PostOpList::bind(std::span<const Tensor* const> in, size_t own)
{
    size_t extra = own, binary = 0;
    const Tensor* residual = nullptr;
    for (const PostOp& op : m_ops) {
        if (op.kind == PostOp::Kind::Sum) residual = in[extra];
        if (op.kind == PostOp::Kind::Affine) {
            m_binaryMemory[binary++].set_data_handle(in[extra]->data());
            m_binaryMemory[binary++].set_data_handle(in[extra + 1]->data());
        }
        if (op.kind == PostOp::Kind::Clip) {
            size_t k = extra;
            m_clipLo = (op.boundInputs & 1) ? in[k++] : nullptr;
            m_clipHi = (op.boundInputs & 2) ? in[k] : nullptr;
        }
        extra += static_cast<size_t>(op.extraInputs());
    }
    return residual;
}

void PostOpList::finish(Tensor& out) const
{
    if (m_own) finish(out.data(), out.size());
}

void PostOpList::finish(float* y, int64_t n) const
{
    if (!m_own) return;
    const PostOp& op = m_ops.back();
    if (op.kind == PostOp::Kind::Clip) {
        const float lo = m_clipLo ? m_clipLo->view().data()[0] : op.lo;
        const float hi = m_clipHi ? m_clipHi->view().data()[0] : op.hi;
        for (int64_t i = 0; i < n; ++i)
            y[i] = clipValue(y[i], lo, hi);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        y[i] = y[i] > 0.0f ? y[i] : y[i] * 0.0f;
}

} // namespace opscope::dnnlutil
