// Dropout, as MXNet 1.x (src/operator/nn/dropout-inl.h):
// - Active when RunContext::training or mode == "always": each mask element keeps with probability
//   1 - p and holds the scale factor (1/(1 - p) when kept, 0 when dropped); output = data * mask.
//   The random bits come from RunContext::rng (the global generator when null), 32 per mask
//   element in row-major order, so a seeded generator reproduces the mask exactly.
// - `axes` (variational dropout): the mask has the data's shape with those axes set to 1 and is
//   broadcast along them. Negative axes count from the end (MXNet accepts only non-negative ones).
// - Inactive (inference with mode "training", or p == 0): output = data and mask = 1 everywhere
//   (MXNet leaves the hidden mask unwritten there; ones say "scaled by 1", which is what happened).
//   p == 0 draws no random numbers, as MXNet's pass-through.
// - p == 1 drops everything: output 0 and mask 0 (MXNet would compute 0 * inf).

#include "ops/nn/norm_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <Eigen/Core>
#include <array>
#include <cstdint>

namespace opscope {

namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

struct DropoutParams : OpParams {
    float p = 0.5f;
    bool always = false;
    std::vector<int64_t> axes;
};

ParamsPtr parseDropout(const AttrMap& attrs)
{
    AttrReader r(attrs, "Dropout");
    auto p = std::make_shared<DropoutParams>();
    const double prob = r.getFloat("p", 0.5);
    if (!(prob >= 0.0 && prob <= 1.0)) r.fail("p", "must be in [0, 1]");
    p->p = static_cast<float>(prob);
    p->always = r.getEnum("mode", { "training", "always" }, "training") == "always";
    p->axes = r.getTuple("axes", {});
    // optional<bool>, validated and ignored (no cuDNN here).
    if (const std::string* v = r.raw("cudnn_off"); v && *v != "None") (void)r.getBool("cudnn_off", false);
    return p;
}

Shape maskShape(const DropoutParams& p, const Shape& data)
{
    Shape mask = data;
    for (int64_t a : p.axes)
        mask[normutil::normalizeAxis(a, data, "axes")] = 1;
    return mask;
}

void inferDropout(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    if (in[0].ndim() == 0) return;
    out[0] = in[0];
    out[1] = maskShape(paramsAs<DropoutParams>(op), in[0]);
}

/// y = x * mask for x of shape `data`, the mask (shape `maskDims`) broadcast along its size-1 axes (an
/// odometer over the data's index).
void broadcastMultiply(const Shape& data, const Shape& maskDims, const float* x, const float* mask, float* y)
{
    const int nd = data.ndim();
    if (data.size() == 0) return;
    std::array<int64_t, Shape::kMaxDims> maskStride {};
    int64_t stride = 1;
    for (int d = nd - 1; d >= 0; --d) {
        maskStride[static_cast<size_t>(d)] = maskDims[d] == 1 ? 0 : stride;
        stride *= maskDims[d];
    }
    // The last axis is the inner loop; the others advance like an odometer.
    const int64_t last = data[nd - 1];
    const int64_t lastStride = maskStride[static_cast<size_t>(nd - 1)];
    std::array<int64_t, Shape::kMaxDims> index {};
    int64_t maskOffset = 0;
    for (int64_t base = 0; base < data.size(); base += last) {
        for (int64_t i = 0; i < last; ++i)
            y[base + i] = x[base + i] * mask[maskOffset + i * lastStride];
        for (int d = nd - 2; d >= 0; --d) {
            const auto du = static_cast<size_t>(d);
            maskOffset += maskStride[du];
            if (++index[du] < data[d]) break;
            maskOffset -= maskStride[du] * index[du];
            index[du] = 0;
        }
    }
}

class DropoutReference final : public Kernel {
public:
    DropoutReference(const DropoutParams& p, const Shape& data)
        : m_p(p)
        , m_data(data)
        , m_mask(maskShape(p, data))
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        const int64_t n = m_data.size();
        const ConstArrayMap x(in[0]->data(), n);
        ArrayMap y(out[0]->data(), n);
        ArrayMap mask(out[1]->data(), m_mask.size());
        if (!(ctx.training || m_p.always) || m_p.p == 0.0f) {
            y = x;
            mask.setOnes();
            return;
        }
        drawMask(ctx.rng ? *ctx.rng : globalGenerator(), mask);
        if (m_mask == m_data)
            y = x * mask;
        else
            broadcastMultiply(m_data, m_mask, x.data(), mask.data(), y.data());
    }

private:
    /// Each element keeps when a 32-bit draw falls below (1 - p) * 2^32; one 64-bit draw serves
    /// two consecutive elements (low half first), which halves the generator's cost.
    void drawMask(Generator& gen, ArrayMap& mask) const
    {
        const double keep = 1.0 - static_cast<double>(m_p.p);
        const auto threshold = static_cast<uint64_t>(keep * 4294967296.0);
        const float scale = keep > 0.0 ? static_cast<float>(1.0 / keep) : 0.0f;
        const int64_t n = mask.size();
        for (int64_t i = 0; i < n; i += 2) {
            const uint64_t bits = gen.next();
            mask[i] = (bits & 0xffffffffu) < threshold ? scale : 0.0f;
            if (i + 1 < n) mask[i + 1] = (bits >> 32) < threshold ? scale : 0.0f;
        }
    }

    DropoutParams m_p;
    Shape m_data;
    Shape m_mask;
};

// dx = dy * mask, the mask holding the forward's scale factors (1/(1 - p) or 0), broadcast along
// `axes`. The mask records what the forward did (ones when it passed through: inference in mode
// "training", or p == 0), so the gradient follows the forward as MXNet's stateful operator does.
void backwardDropout(const BackwardArgs& a)
{
    Tensor* dx = a.inGrad[0];
    if (!dx) return;
    if (!a.outGrad[0]) {
        dx->fill(0);
        return;
    }
    const Shape& data = a.in[0]->shape();
    const Tensor& mask = *a.out[1];
    if (mask.shape() == data)
        ArrayMap(dx->data(), data.size())
            = ConstArrayMap(a.outGrad[0]->data(), data.size()) * ConstArrayMap(mask.data(), data.size());
    else
        broadcastMultiply(data, mask.shape(), a.outGrad[0]->data(), mask.data(), dx->data());
}

} // namespace

void registerDropout(OpRegistry& r)
{
    OpDef d;
    d.name = "Dropout";
    d.parse = parseDropout;
    d.numInputs = [](const OpParams&) { return 1; };
    d.numOutputs = [](const OpParams&) { return 2; };
    d.numVisibleOutputs = [](const OpParams&) { return 1; };
    d.nameInputs({ "data" });
    d.nameOutputs({ "output", "mask" });
    d.inferShape = inferDropout;
    d.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<DropoutReference>(paramsAs<DropoutParams>(p), in[0]);
    };
    d.backward = backwardDropout;
    r.add(std::move(d), { "_npx_dropout" });
}

} // namespace opscope
