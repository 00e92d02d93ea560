#include "ops/reduced_precision.h"

#include "core/error.h"

#include <algorithm>
#include <vector>

namespace opscope {

const char* precisionName(Precision p)
{
    switch (p) {
    case Precision::Float16:
        return "float16";
    case Precision::BFloat16:
        return "bfloat16";
    case Precision::Float32:
        break;
    }
    return "float32";
}

void roundToPrecision(const Tensor& t, Precision p)
{
    if (p == Precision::Float32 || !t.defined() || t.dtype() != DType::Float32) return;
    float* d = t.data();
    const int64_t n = t.size();
    if (p == Precision::Float16)
        std::transform(d, d + n, d, roundToHalf);
    else
        std::transform(d, d + n, d, roundToBFloat16);
}

namespace {

class ReducedPrecisionKernel final : public Kernel {
public:
    ReducedPrecisionKernel(std::unique_ptr<Kernel> inner, Precision p)
        : m_inner(std::move(inner))
        , m_precision(p)
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        // A training kernel may update an input in place (BatchNorm's moving statistics): a rounded
        // copy would lose that, so the emulation is for inference only.
        if (ctx.training)
            throw UsageError(std::string("reduced precision (") + precisionName(m_precision)
                + ") is emulated for inference runs, not training");
        m_rounded.resize(in.size());
        m_in.assign(in.begin(), in.end());
        for (size_t i = 0; i < in.size(); ++i) {
            const Tensor* t = in[i];
            if (!t || !t->defined() || t->dtype() != DType::Float32) continue;
            Tensor& r = m_rounded[i];
            if (!r.defined() || r.shape() != t->shape()) r = Tensor(t->shape(), DType::Float32);
            std::copy(t->data(), t->data() + t->size(), r.data());
            roundToPrecision(r, m_precision);
            m_in[i] = &r;
        }
        m_inner->run(m_in, out, ctx);
        for (Tensor* t : out)
            if (t) roundToPrecision(*t, m_precision);
    }

    const char* backend() const override { return m_inner->backend(); }

    bool setPostOps(std::span<const PostOp> ops) override { return ops.empty(); }
    // Its tensors stay plain (it counts as watched), but the network's choice of layout is the
    // same in any precision, and so is the primitive the kernel inside runs.
    bool favoursBlocked() const override { return m_inner->favoursBlocked(); }
    void computeBlocked(bool on) override { m_inner->computeBlocked(on); }

private:
    std::unique_ptr<Kernel> m_inner;
    Precision m_precision;
    std::vector<Tensor> m_rounded;
    std::vector<const Tensor*> m_in;
};

} // namespace

std::unique_ptr<Kernel> withPrecision(std::unique_ptr<Kernel> inner, Precision p)
{
    if (p == Precision::Float32 || !inner) return inner;
    return std::make_unique<ReducedPrecisionKernel>(std::move(inner), p);
}

} // namespace opscope
