#include "ops/onnx/matrix_epilogue.h"

#include "core/error.h"
#include "ops/elemwise/clip_value.h"
#include "ops/onnx/activation_values.h"

#include <algorithm>
#include <cmath>

namespace opscope::onnx_ops {

bool MatrixEpilogue::set(std::span<const PostOp> ops)
{
    using K = PostOp::Kind;
    m_ops.clear();
    m_steps.clear();
    m_extra = 0;
    for (const PostOp& op : ops)
        if (op.kind == K::Affine || op.kind == K::Gelu || op.kind == K::Depthwise || (op.kind == K::Relu && op.keepNaN))
            return ops.empty();
    m_ops.assign(ops.begin(), ops.end());
    for (const PostOp& op : m_ops)
        m_extra += static_cast<size_t>(op.extraInputs());
    m_steps.assign(m_ops.size(), Step {});
    return true;
}

void MatrixEpilogue::apply(Tensor& out, std::span<const Tensor* const> extra)
{
    using K = PostOp::Kind;
    if (m_ops.empty()) return;
    if (out.dtype() != DType::Float32)
        throw TypeError("fused post-ops need a float32 output, not " + std::string(dtypeName(out.dtype())));
    if (extra.size() != m_extra)
        throw UsageError("fused post-ops read " + std::to_string(m_extra) + " inputs, " + std::to_string(extra.size()) + " given");
    const int64_t size = out.size();
    const int64_t n = out.ndim() > 0 ? out.shape()[out.ndim() - 1] : 1;
    if (size == 0 || n == 0) return;
    // What each post-op reads at this run.
    size_t k = 0;
    for (size_t i = 0; i < m_ops.size(); ++i) {
        const PostOp& op = m_ops[i];
        Step& s = m_steps[i];
        s = Step { op };
        if (op.kind == K::Bias || op.kind == K::Sum) {
            const Tensor& t = *extra[k];
            const int64_t want = op.kind == K::Bias ? n : size;
            if (t.dtype() != DType::Float32 || t.size() != want)
                throw ShapeError(std::string("fused ") + (op.kind == K::Bias ? "bias" : "residual") + " " + t.shape().str()
                    + " " + dtypeName(t.dtype()) + ": expected " + std::to_string(want) + " float32 values for an output "
                    + out.shape().str());
            s.operand = t.view().data();
        } else if (op.kind == K::Clip) {
            size_t b = k;
            s.lo = (op.boundInputs & 1) ? extra[b++]->view().data()[0] : op.lo;
            s.hi = (op.boundInputs & 2) ? extra[b]->view().data()[0] : op.hi;
        } else if (op.kind == K::GeluParts) {
            for (size_t j = 0; j < 3; ++j) {
                const Tensor& t = *extra[k + j];
                if (t.dtype() != DType::Float32 || t.size() != 1)
                    throw ShapeError("fused GELU's " + std::string(j == 0 ? "divisor" : j == 1 ? "addend" : "factor") + " "
                        + t.shape().str() + " " + dtypeName(t.dtype()) + ": expected one float32 value");
            }
            s.divisor = extra[k]->view().data()[0];
            s.addend = extra[k + 1]->view().data()[0];
            s.factor = extra[k + 2]->view().data()[0];
        }
        k += static_cast<size_t>(op.extraInputs());
    }
    float* y = out.data();
    // Row by row, every post-op in turn, while the row is in cache.
    for (int64_t row = 0; row < size; row += n) {
        float* r = y + row;
        for (const Step& s : m_steps) {
            switch (s.op.kind) {
            case K::Bias:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = r[j] + s.operand[j];
                break;
            case K::Sum:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = r[j] + s.operand[row + j];
                break;
            case K::Relu:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = reluValue(r[j]);
                break;
            case K::Sigmoid:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = sigmoidValue(r[j]);
                break;
            case K::Tanh:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = std::tanh(r[j]);
                break;
            case K::Clip:
                for (int64_t j = 0; j < n; ++j)
                    r[j] = clipValue(r[j], s.lo, s.hi);
                break;
            case K::GeluParts: // Div, Erf, Add, Mul, Mul: the operands' order changes no float sum or product
                for (int64_t j = 0; j < n; ++j) {
                    const float x = r[j];
                    const float e = std::erf(x / s.divisor) + s.addend;
                    r[j] = (x * e) * s.factor;
                }
                break;
            case K::Gelu:
            case K::Affine:
            case K::Depthwise:
                break; // refused by set()
            }
        }
    }
}

std::span<const Tensor* const> MatrixEpilogue::apart(const Tensor& out, std::span<const Tensor* const> extra)
{
    if (std::none_of(extra.begin(), extra.end(), [&out](const Tensor* t) { return t->sharesStorageWith(out); }))
        return extra;
    m_copies.clear();
    m_copies.reserve(extra.size());
    m_apart.assign(extra.begin(), extra.end());
    for (const Tensor*& t : m_apart)
        if (t->sharesStorageWith(out)) t = &m_copies.emplace_back(t->copy());
    return m_apart;
}

} // namespace opscope::onnx_ops
